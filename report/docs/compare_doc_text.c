/* compare's numbers as text, for every table of compare.md (compare_doc_md.h): a run's
 * time or throughput, a cell's median and range, and a ratio with its interval and verdict. */
#include "compare_doc_md.h"

#include "escape.h"
#include "findings.h"
#include "report.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void compare_md_metric_text(const compare_model *m, double v, char *out, size_t n)
{
    if (!isfinite(v))
        snprintf(out, n, "–");
    else if (m->throughput)
        snprintf(out, n, "%.1f TFLOP/s", v);
    else
        format_us_column(v, out, n);
}

/* "622 µs (620 µs – 627 µs, n=20)", or why there is no number. */
void compare_md_cell_text(const compare_model *m, const compare_cell *c, const stats *st, char *out, size_t n)
{
    if (!c->va) {
        snprintf(out, n, "*not run*");
        return;
    }
    if (c->va->result->status == VARIANT_UNAVAILABLE) {
        snprintf(out, n, "*unavailable*: %s", c->reason);
        return;
    }
    char med[48], lo[48], hi[48];
    if (st == &c->cpu_stats) {
        format_us_column(st->median, med, sizeof med);
        format_us_column(st->min, lo, sizeof lo);
        format_us_column(st->max, hi, sizeof hi);
    } else {
        compare_md_metric_text(m, st->median, med, sizeof med);
        compare_md_metric_text(m, st->min, lo, sizeof lo);
        compare_md_metric_text(m, st->max, hi, sizeof hi);
    }
    int len = st->n ? snprintf(out, n, "%s (%s – %s, n=%d)", med, lo, hi, st->n) : snprintf(out, n, "no forwards");
    if (c->va->result->status == VARIANT_FAILED && len >= 0 && (size_t)len < n)
        snprintf(out + len, n - (size_t)len, "; **FAILED**: %s", c->reason);
}

/* "0.93× [0.92–0.94] **faster**" */
void compare_md_ratio_text(const compare_ratio *r, char *out, size_t n)
{
    if (r->verdict == VERDICT_NONE) {
        snprintf(out, n, "–");
        return;
    }
    const char *w = compare_verdict_word(r->verdict);
    int bold = r->verdict == VERDICT_FASTER || r->verdict == VERDICT_SLOWER;
    int d = units_ratio_decimals(r->ci.lo, r->ci.hi);
    snprintf(out, n, "%.*f× [%.*f–%.*f] %s%s%s", d, r->ci.ratio, d, r->ci.lo, d, r->ci.hi, bold ? "**" : "", w,
             bold ? "**" : "");
}
