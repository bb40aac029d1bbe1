/* The backward summary of report.md (backward_section.h). Every number comes from run.json's
 * "backward" objects or from the attn_bwd ranges of trace.json. */
#include "backward_section.h"

#include "escape.h"

#include <math.h>
#include <string.h>

int backward_section_applies(const analysis *a) { return a->run && a->run->backward; }

int backward_ops(const trace *t, const char *variant, int *n_ranges)
{
    int n = 0;
    *n_ranges = 0;
    for (size_t i = 0; i < t->n_ranges; i++) {
        const host_range *h = &t->ranges[i];
        if (!h->name || !h->variant || strcmp(h->name, "attn_bwd") || strcmp(h->variant, variant))
            continue;
        (*n_ranges)++;
        for (size_t a = 0; a < t->n_apis; a++) {
            const api_call *c = &t->apis[a];
            if (c->start_ns < h->start_ns || c->end_ns > h->end_ns)
                continue;
            for (size_t o = 0; o < t->n_ops; o++)
                n += t->ops[o].correlation == c->correlation;
        }
    }
    return n;
}

static void kept_text(const backward_result *b, char *s, size_t n)
{
    if (!isfinite(b->kept_bytes))
        snprintf(s, n, "not recorded");
    else if (b->kept_bytes >= 1048576)
        snprintf(s, n, "%.1f MiB: %s", b->kept_bytes / 1048576.0, b->kept);
    else
        snprintf(s, n, "%.0f B: %s", b->kept_bytes, b->kept);
}

static void backward_row(FILE *f, const analysis *a, const variant_result *r)
{
    const backward_result *b = &r->bwd;
    char ops[64] = "–", t[32] = "–", err[96] = "–", kept[200];
    int n_ranges = 0, n_ops = a->trace ? backward_ops(a->trace, r->name, &n_ranges) : 0;
    if (n_ranges)
        snprintf(ops, sizeof ops, "%.3g (expected %d)", (double)n_ops / n_ranges, b->expected_ops);
    if (isfinite(b->event_us))
        snprintf(t, sizeof t, "%.1f µs", b->event_us);
    if (isfinite(b->rel_error_dq))
        snprintf(err, sizeof err, "%.2g / %.2g / %.2g (at most %.2g)", b->rel_error_dq, b->rel_error_dk,
                 b->rel_error_dv, b->tolerance);
    kept_text(b, kept, sizeof kept);
    fputs("| ", f);
    esc_md_code(f, r->name, 1);
    fprintf(f, " | %s", variant_status_name(b->status));
    if (b->error[0]) {
        fputs(": ", f);
        esc_md_text(f, b->error);
    }
    fprintf(f, " | %s | %s | %s | ", ops, t, err);
    esc_md_text(f, kept);
    fputs(" |\n", f);
}

/* naive and naive_inplace (the series' in-place advice): the same errors on every gradient. */
static void inplace_note(FILE *f, const run_info *r)
{
    const backward_result *x = NULL, *y = NULL;
    for (int i = 0; i < r->n_variants; i++) {
        if (!strcmp(r->variants[i].name, "naive"))
            x = &r->variants[i].bwd;
        if (!strcmp(r->variants[i].name, "naive_inplace"))
            y = &r->variants[i].bwd;
    }
    if (!x || !y || x->status != VARIANT_OK || y->status != VARIANT_OK)
        return;
    const int same = x->rel_error_dq == y->rel_error_dq && x->rel_error_dk == y->rel_error_dk &&
                     x->rel_error_dv == y->rel_error_dv;
    fprintf(f, "The series' in-place advice: naive_inplace's backward (masked_fill_) %s naive's errors on every "
               "gradient%s.\n\n", same ? "has exactly" : "does not have",
            same ? ": the in-place fill overwrote nothing its backward reads (softmax's backward reads P, "
                   "masked_fill's the mask)" : "");
}

void backward_section_md(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    fputs("## Backward\n\nEach variant's backward on a fixed random dO after its forwards (`attn_bwd` ranges; CUDA-event "
          "median; errors ‖g − ref‖/‖ref‖ of dQ / dK / dV against FP64 on the checked heads and rows).\n\n"
          "| Variant | Backward | Operations per backward | CUDA-event time | dQ / dK / dV error | Kept from the forward |\n"
          "|---|---|---|---|---|---|\n", f);
    for (int i = 0; i < r->n_variants; i++)
        if (r->variants[i].bwd.recorded)
            backward_row(f, a, &r->variants[i]);
    fputc('\n', f);
    inplace_note(f, r);
}
