/* What an archive cannot say of itself: the contradictions inside run.json (a plan that
 * contradicts its stop outcomes, two variants of one name, a wrong result marked "ok"),
 * each refused with one line naming the field, so no number is derived from a
 * contradiction. */
#include "archive_checks.h"

#include "escape.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The words of the measurement plan and of each stop outcome. */
static int one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (!strcmp(s, *words))
            return 1;
    return 0;
}

static const char *const STOP_REASONS[] = {"noise", "converged", "max_forwards", "time_cap", "fixed", "failed", NULL};

/* Grouped-query heads divide the query heads; decode's new queries are at most the keys. */
static void shape_check(const run_info *r, json_reader *rd)
{
    char detail[96];
    if (r->shape.kv_heads > 0 && r->shape.heads > 0 && r->shape.heads % r->shape.kv_heads) {
        snprintf(detail, sizeof detail, "%d does not divide heads %d", r->shape.kv_heads, r->shape.heads);
        json_reader_inconsistent(rd, "shape's %s %s", "kv_heads", detail);
    }
    if (r->shape.q_seq > 0 && r->shape.seq > 0 && r->shape.q_seq > r->shape.seq) {
        snprintf(detail, sizeof detail, "%d exceeds seq %d (the keys)", r->shape.q_seq, r->shape.seq);
        json_reader_inconsistent(rd, "shape's %s %s", "q_seq", detail);
    }
}

/* What a measurement plan and the stop outcomes cannot say together: no medians
 * are drawn from a plan that contradicts itself. */
static void measurement_check(const run_info *r, json_reader *rd)
{
    const measurement_plan *m = &r->measurement;
    char detail[96];
    if (m->recorded) {
        static const char *const L2[] = {"warm", "cold", NULL}, *const RULES[] = {"auto", "fixed", NULL};
        if (!one_of(m->l2, L2))
            json_reader_bad(rd, "measurement", "l2", "\"warm\" or \"cold\"");
        if (!one_of(m->iters_rule, RULES))
            json_reader_bad(rd, "measurement", "iters_rule", "\"auto\" or \"fixed\"");
        if (m->replicates < 1)
            json_reader_bad(rd, "measurement", "replicates", "a whole number from 1 to 65536");
        if (!strcmp(m->l2, "cold") && m->l2_flush_bytes <= 0)
            json_reader_inconsistent(rd, "measurement says the L2 was %s but no flush bytes are recorded%s", "cold", "");
        if (!strcmp(m->l2, "warm") && m->l2_flush_bytes > 0) {
            snprintf(detail, sizeof detail, "%lld", (long long)m->l2_flush_bytes);
            json_reader_inconsistent(rd, "measurement says the L2 was %s but records a flush of %s bytes", "warm", detail);
        }
        if (m->min_forwards > m->max_forwards && m->max_forwards > 0) {
            snprintf(detail, sizeof detail, "%d above max_forwards %d", m->min_forwards, m->max_forwards);
            json_reader_inconsistent(rd, "measurement's %s is %s", "min_forwards", detail);
        }
    }
    for (int i = 0; i < r->n_variants; i++) {
        const stop_outcome *s = &r->variants[i].stop;
        char name[40];
        esc_terminal(name, sizeof name, r->variants[i].name);
        if (!s->reason[0])
            continue;
        if (!one_of(s->reason, STOP_REASONS)) {
            json_reader_bad(rd, name, "stop.reason", "\"noise\", \"converged\", \"max_forwards\", \"time_cap\", \"fixed\" or \"failed\"");
            continue;
        }
        if (!m->recorded) {
            json_reader_inconsistent(rd, "variant %s has a stop outcome but run.json has no measurement plan%s", name, "");
            continue;
        }
        /* "failed": the variant failed while recording, under either rule */
        int fixed_reason = !strcmp(s->reason, "fixed"), fixed_rule = !strcmp(m->iters_rule, "fixed");
        if (strcmp(s->reason, "failed") && fixed_reason != fixed_rule) {
            snprintf(detail, sizeof detail, "\"%s\" under the iters rule \"%s\"", s->reason, m->iters_rule);
            json_reader_inconsistent(rd, "variant %s stopped for %s", name, detail);
        }
        int reps = m->replicates > 0 ? m->replicates : 1;
        if (m->max_forwards > 0 && (long long)s->forwards > (long long)m->max_forwards * reps) {
            snprintf(detail, sizeof detail, "%d forwards, above max_forwards %d x %d passes", s->forwards,
                     m->max_forwards, reps);
            json_reader_inconsistent(rd, "variant %s recorded %s", name, detail);
        }
    }
}

void archive_check_run(const run_info *r, json_reader *rd)
{
    measurement_check(r, rd);
    shape_check(r, rd);
    for (int i = 0; i < r->n_variants; i++) {
        const variant_result *v = &r->variants[i];
        char name[40], detail[96];
        esc_terminal(name, sizeof name, v->name);
        for (int k = 0; k < i; k++)
            if (!strcmp(r->variants[k].name, v->name)) {
                snprintf(detail, sizeof detail, "%d and %d", k, i);
                json_reader_inconsistent(rd, "variants %2$s are both named %1$s (a name ties a variant to its records)", name,
                             detail);
            }
        if (v->status == VARIANT_OK && isfinite(v->rel_error) && isfinite(r->rel_error_threshold) &&
            v->rel_error > r->rel_error_threshold) {
            snprintf(detail, sizeof detail, "%.3g above the threshold %.3g", v->rel_error, r->rel_error_threshold);
            json_reader_inconsistent(rd, "variant %s has status \"ok\" with rel_error %s (that is a wrong result)", name, detail);
        }
        /* A forward takes time: a probe of 0 us (or less) made the overhead "+inf%". */
        const struct {
            const char *key;
            double us;
        } probe[] = {{"event_us_no_cupti", v->event_us_no_cupti}, {"event_us_cupti", v->event_us_cupti},
                     {"event_us_cupti_no_memset_records", v->event_us_cupti_no_memset},
                     {"host_us_no_cupti", v->host_us_no_cupti}, {"host_us_cupti", v->host_us_cupti}};
        for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++)
            if (isfinite(probe[k].us) && probe[k].us <= 0) {
                snprintf(detail, sizeof detail, "%s of %g us (a forward takes time; null when not measured)",
                         probe[k].key, probe[k].us);
                json_reader_inconsistent(rd, "variant %s has %s", name, detail);
                break;
            }
        if ((v->status == VARIANT_SKIPPED || v->status == VARIANT_UNAVAILABLE) &&
            (isfinite(v->rel_error) || isfinite(v->event_us_no_cupti) || isfinite(v->event_us_cupti) ||
             isfinite(v->event_us_cupti_no_memset) ||
             isfinite(v->host_us_no_cupti) || isfinite(v->host_us_cupti)))
            json_reader_inconsistent(rd, "variant %s is \"%s\" (it did not run) but has measured numbers", name,
                         variant_status_name(v->status));
    }
}
