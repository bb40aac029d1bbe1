/* How the forwards of an archive were measured, as sentences: the L2 state,
 * the stop rule, the passes, the throttle rule, the clock lock and the per-forward clock
 * range, from run.json's measurement plan and trace.json's per-forward samples; and
 * per variant how the stop rule ended and which forwards were throttled. Plain text
 * without markup, so the Markdown/HTML, LaTeX and terminal writers each escape it their
 * own way. An archive from before the plan says "not recorded", never a guess. */
#include "measurement_text.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define APPEND(...)                                                                  \
    do {                                                                             \
        if (len < n)                                                                 \
            len += (size_t)snprintf(out + len, n - len, __VA_ARGS__);                \
    } while (0)

static void mib(double bytes, char *out, size_t n)
{
    snprintf(out, n, "%.0f MiB", bytes / 1048576.0);
}

void measurement_plan_text(const analysis *a, char *out, size_t n)
{
    const measurement_plan *m = &a->run->measurement;
    size_t len = 0;
    char count[48];
    out[0] = '\0';
    if (!m->recorded) {
        APPEND("L2 state, stop rule, passes, per-forward clocks and clock lock: not recorded (this archive predates "
               "attnprof recording them)");
        return;
    }
    if (!strcmp(m->l2, "cold")) {
        char sz[32];
        mib((double)m->l2_flush_bytes, sz, sizeof sz);
        APPEND("cold L2: a write of %s flushed it before each recorded forward, outside the timed range", sz);
        if (isfinite(m->flush_us))
            APPEND(" (%.1f µs per flush, median)", m->flush_us);
    } else {
        APPEND("warm L2: forwards back to back, the L2 holding what the previous forward left");
    }
    APPEND("; ");
    if (!strcmp(m->iters_rule, "auto")) {
        APPEND("stop rule auto: forwards recorded until the relative standard error of the median CUDA time is below "
               "%.2g%% or the median stopped changing, at least %s",
               m->noise_target * 100, units_count_noun(m->min_forwards, "forward", count, sizeof count));
        if (isfinite(m->min_gpu_s) && m->min_gpu_s > 0)
            APPEND(" and %.3g s of GPU time", m->min_gpu_s);
        APPEND(", at most %s", units_count_noun(m->max_forwards, "forward", count, sizeof count));
        if (isfinite(m->time_cap_s) && m->time_cap_s > 0)
            APPEND(" or %.3g s", m->time_cap_s);
        APPEND(" per variant and pass");
    } else {
        APPEND("stop rule fixed: %s per variant and pass",
               units_count_noun(a->run->iters, "recorded forward", count, sizeof count));
    }
    int reps = m->replicates > 0 ? m->replicates : 1;
    if (reps > 1)
        APPEND("; %d passes of the batch (variants interleaved between passes)", reps);
    else
        APPEND("; one pass of the batch");
    if (isfinite(m->throttle_fraction) && m->throttle_fraction > 0) {
        APPEND("; a forward whose SM clock is below %.0f%% of the run's highest", m->throttle_fraction * 100);
        if (a->max_sm_mhz > 0)
            APPEND(" (%d MHz)", a->max_sm_mhz);
        APPEND(" is throttled: kept in samples.csv, left out of the medians");
    }
    int sampled = 0, smin = 0, smax = 0, mmin = 0, mmax = 0;
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        if (!va->n_sampled)
            continue;
        if (!sampled || va->sm_mhz_min < smin)
            smin = va->sm_mhz_min;
        if (!sampled || va->sm_mhz_max > smax)
            smax = va->sm_mhz_max;
        if (!sampled || va->mem_mhz_min < mmin)
            mmin = va->mem_mhz_min;
        if (!sampled || va->mem_mhz_max > mmax)
            mmax = va->mem_mhz_max;
        sampled += va->n_sampled;
    }
    if (sampled) {
        APPEND("; per-forward clocks (NVML, %s", units_count_noun(sampled, "forward", count, sizeof count));
        if (isfinite(m->nvml_sample_us))
            APPEND(", %.1f µs per sample, outside the timed range", m->nvml_sample_us);
        APPEND("): SM %d", smin);
        if (smax != smin)
            APPEND("–%d", smax);
        APPEND(" MHz, memory %d", mmin);
        if (mmax != mmin)
            APPEND("–%d", mmax);
        APPEND(" MHz");
    } else {
        APPEND("; per-forward clocks: not recorded");
    }
    if (m->lock_clocks_requested)
        APPEND("; clock lock requested: %s", m->lock_clocks[0] ? m->lock_clocks : "outcome not recorded");
    else
        APPEND("; clocks not locked (not requested)");
}

int measurement_variant_applies(const analysis *a)
{
    if (a->run->measurement.recorded)
        return 1;
    for (int i = 0; i < a->n; i++)
        if (a->v[i].n_sampled)
            return 1;
    return 0;
}

void measurement_stop_text(const analysis *a, const variant_analysis *va, char *out, size_t n)
{
    const stop_outcome *s = &va->result->stop;
    size_t len = 0;
    out[0] = '\0';
    if (!s->reason[0]) {
        APPEND("not recorded");
        return;
    }
    static const struct {
        const char *reason, *why;
    } WHY[] = {
        {"noise", "the median's noise fell below the target"},
        {"converged", "the median stopped changing"},
        {"max_forwards", "it reached the most forwards allowed"},
        {"time_cap", "it reached the time cap"},
        {"fixed", "a fixed count (--iters N)"},
        {"failed", "the variant failed while its forwards were recorded"},
    };
    const char *why = s->reason;
    for (size_t i = 0; i < sizeof WHY / sizeof WHY[0]; i++)
        if (!strcmp(s->reason, WHY[i].reason))
            why = WHY[i].why;
    APPEND("n = %d", s->forwards);
    if (isfinite(s->noise))
        APPEND(", noise %.2f%%", s->noise * 100);
    if (isfinite(s->gpu_s))
        APPEND(", %.3g s GPU time", s->gpu_s);
    APPEND("; stopped: %s", why);
    (void)a;
}

void measurement_clock_text(const variant_analysis *va, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    if (!va->n_sampled) {
        APPEND("not recorded");
        return;
    }
    APPEND("SM %d", va->sm_mhz_min);
    if (va->sm_mhz_max != va->sm_mhz_min)
        APPEND("–%d", va->sm_mhz_max);
    APPEND(" MHz, memory %d", va->mem_mhz_min);
    if (va->mem_mhz_max != va->mem_mhz_min)
        APPEND("–%d", va->mem_mhz_max);
    APPEND(" MHz");
}

void measurement_throttle_text(const analysis *a, const variant_analysis *va, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    if (!a->throttle_judged) {
        APPEND(va->n_sampled ? "not judged (no throttle rule recorded)" : "not recorded");
        return;
    }
    int total = va->n_forwards + va->n_throttled;
    int throttled = va->all_throttled ? va->n_forwards : va->n_throttled;
    if (!throttled) {
        APPEND("none of %d forwards throttled", total);
        return;
    }
    APPEND("%d of %d forwards throttled (SM clock below %.0f%% of %d MHz), ", throttled, total,
           a->throttle_fraction * 100, a->max_sm_mhz);
    if (va->all_throttled)
        APPEND("every one: the medians are over them all");
    else
        APPEND("left out of the medians");
}
