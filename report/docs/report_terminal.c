/* The terminal's summaries: after run, import and report, one line per variant with its
 * counts, times, error and findings by id (what the archive did not record reads "not
 * recorded" or "–", never nan or -1); after compare, the headline, the ratio convention and
 * each variant's ratio and verdict, as the tables write them. */
#include "report.h"

#include "compare_doc.h"
#include "compare_doc_md.h"

#include "escape.h"
#include "model_roles.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char NOT_RECORDED[] = "not recorded";

void report_terminal_summary(FILE *f, const analysis *a)
{
    /* a training step (backward work in the range) is a step, not a forward */
    int step = strcmp(model_unit_word_of_run(a), "step") == 0;
    fprintf(f, "%-22s %-11s %8s %*s %*s %12s  %s\n", "variant", "status", step ? "ops/step" : "ops/fwd", 14,
            step ? "CUDA µs/step" : "CUDA µs/fwd", 14, step ? "CPU µs/step" : "CPU µs/fwd", "rel.err", "findings");
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        char name[64], ops[16] = "–", cuda[32] = "–", cpu[32] = "–", err[32];
        esc_terminal(name, sizeof name, va->result->name);
        if (va->n_forwards) {
            snprintf(ops, sizeof ops, "%d", va->ops_per_forward);
            snprintf(cuda, sizeof cuda, "%.1f", va->cuda_us.median);
            snprintf(cpu, sizeof cpu, "%.1f", va->cpu_us.median);
        }
        if (isfinite(va->result->rel_error))
            snprintf(err, sizeof err, "%.1e", va->result->rel_error);
        else
            snprintf(err, sizeof err, "%s", a->run->imported ? NOT_RECORDED : "–");
        /* "–" is three bytes and one column: pad by columns */
        fprintf(f, "%-22s %-11s %*s %*s %*s %*s  ", name, variant_status_name(va->result->status),
                8 + (int)(strlen(ops) - units_utf8_columns(ops)), ops, 14 + (int)(strlen(cuda) - units_utf8_columns(cuda)), cuda,
                14 + (int)(strlen(cpu) - units_utf8_columns(cpu)), cpu, 12 + (int)(strlen(err) - units_utf8_columns(err)), err);
        for (int k = 0; k < va->n_findings; k++)
            fprintf(f, "%s%s", k ? ", " : "", va->meta[k].id[0] ? va->meta[k].id : "finding");
        fputc('\n', f);
    }
}

void compare_terminal_summary(FILE *f, const compare_data *m)
{
    char shown[64], headline[512], safe[1024];
    compare_headline(m, headline, sizeof headline);
    if (headline[0])
        fprintf(f, "%s\n", esc_terminal(safe, sizeof safe, headline));
    fprintf(f, "%s against the baseline %s (%s)\n", m->throughput ? "throughput ratio" : "time ratio",
            esc_terminal(shown, sizeof shown, m->in[0]->label),
            m->throughput ? "above 1 is faster" : "below 1 is faster");
    fprintf(f, "%-14s", "variant");
    for (int i = 1; i < m->n; i++)
        fprintf(f, " %28.28s", esc_terminal(shown, sizeof shown, m->in[i]->label));
    fprintf(f, "\n");
    for (int v = 0; v < m->n_variants; v++) {
        fprintf(f, "%-14s", esc_terminal(shown, sizeof shown, m->variants[v].name));
        for (int i = 1; i < m->n; i++) {
            const compare_ratio *r = &m->variants[v].cell[i].metric_ratio;
            char cell[64] = "-";
            if (r->verdict != VERDICT_NONE) /* the decimals the tables print it with */
                snprintf(cell, sizeof cell, "%.*fx %s", units_ratio_decimals(r->ci.lo, r->ci.hi), r->ci.ratio,
                         compare_verdict_word(r->verdict));
            else if (r->too_few > 0)
                snprintf(cell, sizeof cell, "no verdict (%d forwards)", r->too_few);
            fprintf(f, " %28s", cell);
        }
        fprintf(f, "\n");
    }
    for (int k = 0; k < m->traces.n_pairs; k++) { /* model traces, step by step */
        const trace_pair *pr = &m->traces.pairs[k];
        char a[64], b[64];
        esc_terminal(a, sizeof a, pr->va[0]->result->name);
        esc_terminal(b, sizeof b, pr->va[1]->result->name);
        if (pr->step_ratio.verdict != VERDICT_NONE)
            fprintf(f, "model trace %s vs %s: step %.3fx %s (%d and %d steps", b, a, pr->step_ratio.ci.ratio,
                    compare_verdict_word(pr->step_ratio.verdict), pr->step[1].n, pr->step[0].n);
        else
            fprintf(f, "model trace %s vs %s: step %.3fx, no verdict (%d and %d steps, %d needed", b, a,
                    pr->step_ratio.ci.ratio, pr->step[1].n, pr->step[0].n, COMPARE_MIN_STEPS);
        if (pr->inputs_differ[0]) { /* the verdict is across what differs: said beside it */
            fputs("; across ", f);
            esc_terminal_fputs(pr->inputs_differ, f);
        }
        fputs(")\n", f);
    }
    esc_terminal_fputs(m->differs_sentence, f); /* GPU, driver, dtype from the archives */
    fputc('\n', f);
}
