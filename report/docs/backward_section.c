/* The backward summary of report.md (backward_section.h). Every number comes from run.json's
 * "backward" objects or from the attn_bwd ranges of trace.json. */
#include "backward_section.h"

#include "alloc.h"
#include "escape.h"
#include "model_roles.h"
#include "finding_phrases.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An imported training trace: a model trace whose steps have a backward phase (its view, built
 * into v; 0 when not). */
static int training_view(const variant_analysis *va, model_view *v)
{
    return model_is_step_trace(va) && model_view_build(va, v) == 0 && v->has_phase[MPHASE_BACKWARD];
}

static int any_training_trace(const analysis *a)
{
    model_view *v = malloc(sizeof *v);
    if (!v)
        attn_oom();
    int any = 0;
    for (int i = 0; i < a->n && !any; i++)
        any = training_view(&a->v[i], v);
    free(v);
    return any;
}

int backward_section_applies(const analysis *a) { return a->run && (a->run->backward || any_training_trace(a)); }

/* "8 (7 kernels + 1 Memset); expected 7", as the forward summary's kernel cell. */
static void ops_text(const variant_analysis *va, char *out, size_t n)
{
    const backward_result *b = &va->result->bwd;
    int len = snprintf(out, n, "%d", va->ops_per_backward);
    if (va->memcpy_per_backward || va->memset_per_backward) {
        len += snprintf(out + (size_t)len, n - (size_t)len, " (%d kernel%s", va->kernels_per_backward,
                        va->kernels_per_backward == 1 ? "" : "s");
        if (va->memcpy_per_backward)
            len += snprintf(out + (size_t)len, n - (size_t)len, " + %d Memcpy", va->memcpy_per_backward);
        if (va->memset_per_backward)
            len += snprintf(out + (size_t)len, n - (size_t)len, " + %d Memset", va->memset_per_backward);
        len += snprintf(out + (size_t)len, n - (size_t)len, ")");
    }
    if (b->expected_ops >= 0 && b->expected_ops != va->ops_per_backward)
        snprintf(out + (size_t)len, n - (size_t)len, "; expected %d", b->expected_ops);
}

static void kept_text(const backward_result *b, char *s, size_t n)
{
    char human[32];
    if (!isfinite(b->kept_bytes))
        snprintf(s, n, "not recorded");
    else
        snprintf(s, n, "%s: %s", human_bytes(b->kept_bytes, human, sizeof human), b->kept);
}

/* The backward's findings as phrases linked to their sentences in the variant's section. */
static void findings_cell(FILE *f, const variant_analysis *va, int variant)
{
    finding_cell c;
    finding_cell_build_backward(va, &c);
    finding_cell_write_md(f, va, variant, &c);
    if (!c.n && !c.more)
        fputs("–", f);
}

static void backward_row(FILE *f, const variant_analysis *va, int variant)
{
    const variant_result *r = va->result;
    const backward_result *b = &r->bwd;
    char ops[96] = "–", t[32] = "–", cuda[32] = "–", err[96] = "–", kept[200];
    if (va->n_backwards)
        ops_text(va, ops, sizeof ops);
    if (isfinite(b->event_us))
        snprintf(t, sizeof t, "%.1f µs", b->event_us);
    if (va->n_backwards)
        snprintf(cuda, sizeof cuda, "%.1f µs (n=%d)", va->bwd_cuda_us.median, va->n_backwards);
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
    fprintf(f, " | %s | %s | %s | %s | ", ops, t, cuda, err);
    esc_md_text(f, kept);
    fputs(" | ", f);
    findings_cell(f, va, variant);
    fputs(" |\n", f);
}

/* An imported training step's backward phase in the backward table's terms: its operations and
 * CUDA time per step (medians over steps, the Model section's roles), attention's own backward
 * among them, and what an import cannot say (no gradient check, no record of what autograd kept). */
static void training_rows(FILE *f, const analysis *a)
{
    model_view *v = malloc(sizeof *v);
    if (!v)
        attn_oom();
    int header = 0;
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        if (!training_view(va, v))
            continue;
        if (!header++)
            fputs("The backward phase of each imported training step (PyTorch's autograd, from the Model section's "
                  "roles: operations and CUDA time per step, the sums of the roles' medians over steps; an import checks "
                  "no gradient and "
                  "records not what autograd kept):\n\n"
                  "| Trace | Steps | Operations in the backward phase | Its CUDA time per step | Attention's backward "
                  "|\n|---|---|---|---|---|\n", f);
        double ops = 0, us = 0, share = 0, attn_ops = 0, attn_us = 0;
        const char *impl = "";
        for (int r = 0; r < v->n_rows; r++) {
            const model_role_row *x = &v->rows[r];
            if (x->phase != MPHASE_BACKWARD)
                continue;
            ops += x->ops, us += x->us, share += x->share;
            if (x->role == MROLE_ATTN_BACKWARD) {
                attn_ops += x->ops, attn_us += x->us;
                impl = x->implementation;
            }
        }
        char t[32], at[32];
        format_us(us, t, sizeof t);
        format_us(attn_us, at, sizeof at);
        fputs("| ", f);
        esc_md_code(f, va->result->name, 1);
        fprintf(f, " | %d | %.0f | %s (%.1f%% of the step) | ", v->n_steps, ops, t, 100 * share);
        if (attn_ops > 0) {
            fprintf(f, "%.0f operation%s, %s (%.1f%% of the step)", attn_ops, attn_ops == 1 ? "" : "s", at,
                    100 * v->attn_share[MPHASE_BACKWARD]);
            if (impl[0]) {
                fputs(", ", f);
                esc_md_text(f, impl);
            }
        } else
            fputs("none found", f);
        fputs(" |\n", f);
    }
    if (header)
        fputc('\n', f);
    free(v);
}

void backward_section_md(FILE *f, const analysis *a)
{
    if (!a->run->backward) { /* an import of training traces */
        fputs("## Backward\n\n", f);
        training_rows(f, a);
        return;
    }
    fputs("## Backward\n\nEach variant's backward on a fixed random dO after its forwards (`attn_bwd` ranges). "
          "CUDA-event time: the median per backward (CUPTI collecting); CUDA time: its GPU operations' durations "
          "summed, the median over the recorded backwards; errors ‖g − ref‖/‖ref‖ of dQ / dK / dV against FP64 on "
          "the checked heads and rows. The findings are the backward's (ids `bwd_*`, ranked as the summary's), each "
          "written out in its variant's section.\n\n"
          "| Variant | Backward | Operations per backward | CUDA-event time | CUDA time | dQ / dK / dV error | Kept from "
          "the forward | What the trace revealed |\n"
          "|---|---|---|---|---|---|---|---|\n", f);
    for (int i = 0; i < a->n; i++)
        if (a->v[i].result->bwd.recorded)
            backward_row(f, &a->v[i], i);
    fputc('\n', f);
}
