/* The raw file of `attnprof record` into an archive's trace and run.json
 * (record_convert.h). run.json says what the recording knows and no more: the GPU as
 * CUPTI's device record gives it, NVML's driver version and clock range while records
 * completed, CUPTI's version, the dropped records; the shape, dtype, correctness and
 * CUPTI-off times of a foreign program are not recorded. */
#include "record_convert.h"

#include "err.h"
#include "escape.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int is_interpreter(const char *base)
{
    static const char *const names[] = {"python", "python3", "bash", "sh", "node", "ruby", "perl", "julia"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strncmp(base, names[i], strlen(names[i])))
            return 1;
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

void record_variant_name(char *const *argv, int argc, char *out, size_t n)
{
    const char *pick = argc > 0 ? base_name(argv[0]) : "";
    if (is_interpreter(pick))
        for (int i = 1; i < argc; i++)
            if (argv[i][0] != '-') {
                pick = base_name(argv[i]);
                break;
            }
    size_t j = 0;
    for (const char *c = pick; *c && *c != '.' && j + 1 < n; c++)
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
            *c == '-')
            out[j++] = *c;
    out[j] = '\0';
    if (!j)
        snprintf(out, n, "program");
}

/* Why a recording is incomplete, or "" when it is not. */
static void incomplete_reason(const record_options *o, const inject_raw *m, char *out, size_t n)
{
    out[0] = '\0';
    if (o->child_signal)
        snprintf(out, n, "incomplete: the program was ended by signal %d (%s); the records CUPTI had completed "
                         "are kept", o->child_signal, strsignal(o->child_signal));
    else if (m->end == INJECT_END_SIGNAL)
        snprintf(out, n, "incomplete: the program's signal %d (%s) ended the recording; the records flushed then "
                         "are kept", m->end_signal, strsignal(m->end_signal));
    else if (m->past_raw_bound > 0)
        snprintf(out, n, "incomplete: the raw file reached its bound of %lld MiB and the last %lld records were "
                         "not written (raise ATTNPROF_INJECT_RAW_MB, or record fewer steps)",
                 (long long)m->raw_bound_mb, (long long)m->past_raw_bound);
    else if (m->end != INJECT_END_COMPLETE)
        snprintf(out, n, "incomplete: the recording has no end (the process left without running its exit "
                         "handlers: _exit, SIGKILL); the records CUPTI had completed are kept");
}

static void fill_run(const record_options *o, const trace *t, const inject_raw *m, const step_result *s, run_info *r)
{
    memset(r, 0, sizeof *r);
    r->producer = PRODUCER_INJECTION;
    r->provenance_recorded = 1;
    r->imported = 1; /* what a foreign program does not say is "not recorded", as for an import */
    snprintf(r->producer_evidence, sizeof r->producer_evidence,
             "CUPTI activity records taken inside process %d by libattnprof_inject.so (CUDA_INJECTION64_PATH)",
             m->pid);
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    r->device = t->device;
    esc_copy_utf8(r->gpu_uuid, sizeof r->gpu_uuid, m->gpu_uuid);
    esc_copy_utf8(r->driver_version, sizeof r->driver_version, m->driver);
    r->cuda_driver_version = t->cuda_driver_version;
    r->cupti_version = t->cupti_version;
    r->env.clock_samples = m->clock_samples;
    r->env.sm_clock_mhz_min = m->sm_min;
    r->env.sm_clock_mhz_max = m->sm_max;
    r->env.mem_clock_mhz_min = m->mem_min;
    r->env.mem_clock_mhz_max = m->mem_max;
    r->env.power_limit_w = m->power_limit_w;
    snprintf(r->marker_source, sizeof r->marker_source, "%s", s->rule_text);
    r->iters = s->kept;
    r->n_variants = 1;
    variant_result *v = &r->variants[0];
    snprintf(v->name, sizeof v->name, "%s", o->variant);
    snprintf(v->title, sizeof v->title, "program recorded by injection");
    snprintf(v->what_changed, sizeof v->what_changed, "%s", o->program);
    esc_utf8_trim(v->what_changed);
    v->expected_ops = v->expected_memcpy = -1;
    v->rel_error = v->event_us_no_cupti = v->event_us_cupti = v->event_us_cupti_no_memset = NAN;
    v->host_us_no_cupti = v->host_us_cupti = NAN;
    v->device_bytes = NAN;
    v->dropped_records = m->dropped;
    char why[ATTN_ERR_LEN];
    incomplete_reason(o, m, why, sizeof why);
    v->status = why[0] ? VARIANT_FAILED : VARIANT_OK;
    snprintf(v->error, sizeof v->error, "%s", why);
}

int record_convert(const char *raw_path, const record_options *o, trace *t, run_info *r, inject_raw *m,
                   step_result *steps, char *err, size_t errlen)
{
    memset(steps, 0, sizeof *steps);
    int rc = inject_raw_read(raw_path, o->variant, t, m, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    if (t->n_ops == 0) {
        trace_free(t);
        return err_set(err, errlen, EXIT_NOTHING_RECORDED,
                       "the program initialised CUDA but ran no GPU work (no kernel, memcpy or memset recorded)");
    }
    rc = record_steps_find(t, o->variant, &o->steps, steps, err, errlen);
    if (rc != EXIT_OK) {
        trace_free(t);
        return rc;
    }
    fill_run(o, t, m, steps, r);
    return EXIT_OK;
}
