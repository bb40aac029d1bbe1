/* The terminal's summary after run, import and report (the one table those three commands
 * print): one line per variant with its counts, times, error and findings by id; what the
 * archive did not record reads "not recorded" or "–", never nan or -1. */
#include "report.h"

#include "escape.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char NOT_RECORDED[] = "not recorded";

void report_terminal_summary(FILE *f, const analysis *a)
{
    fprintf(f, "%-22s %-11s %8s %14s %14s %12s  %s\n", "variant", "status", "ops/fwd", "CUDA µs/fwd", "CPU µs/fwd",
            "rel.err", "findings");
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
