/* The analysis of one archive (analysis.h): each variant's records grouped into forwards
 * (its NVTX attn_fwd ranges, the API calls inside them, the GPU operations they launched),
 * each forward's CUDA and CPU time, the statistics over forwards with the throttle rule, and
 * the kernel classes. The findings are derived from the finished analysis (findings.c). */
#include "findings.h"
#include "analysis.h"
#include "alloc.h"
#include "err.h"
#include "escape.h"
#include "median.h"


#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

stats stats_of(const double *x, int n)
{
    stats s = {.n = n, .median = NAN, .min = NAN, .max = NAN, .mean = NAN};
    if (n <= 0)
        return s;
    double *c = malloc(sizeof(double) * (size_t)n);
    if (!c)
        attn_oom();
    memcpy(c, x, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), median_cmp_double);
    s.min = c[0];
    s.max = c[n - 1];
    s.median = median_sorted(c, n);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += c[i];
    s.mean = sum / n;
    free(c);
    return s;
}

static int has(const char *name, const char *needle) { return strcasestr(name, needle) != NULL; }

/* Here, with the kernel classes, so that every finding module can call it (findings.h declares it). */
int gemm_on_cuda_cores(const char *n)
{
    return has(n, "sgemm") || has(n, "ffma") || has(n, "simt") || has(n, "f32f32_f32f32");
}

int op_launched_in(const gpu_op *op, const char *cpu_op)
{
    const char *p = op->cpu_op_path;
    size_t n = strlen(cpu_op);
    for (; p && (p = strstr(p, cpu_op)) != NULL; p += n) {
        int starts = p == op->cpu_op_path || (p >= op->cpu_op_path + 3 && !strncmp(p - 3, " > ", 3));
        if (starts && (p[n] == '\0' || !strncmp(p + n, " > ", 3)))
            return 1;
    }
    return 0;
}

/* ATen ops that only carry out their caller's work (fill, copy, allocation): an op
 * is named after the first caller outside them. */
static int generic_aten(const char *s, size_t n)
{
    static const char *const generic[] = {"aten::fill_", "aten::copy_", "aten::_to_copy", "aten::clone",
                                          "aten::scalar_tensor", "aten::empty", "aten::empty_strided",
                                          "aten::as_strided", "aten::contiguous", "aten::zero_"};
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++)
        if (strlen(generic[i]) == n && !strncmp(s, generic[i], n))
            return 1;
    return 0;
}

int op_aten_name(const gpu_op *op, char *out, size_t n)
{
    const char *p = op->cpu_op_path;
    if (!p)
        return 0;
    const char *end = p + strlen(p);
    while (end > p) { /* innermost (last) element first */
        const char *start = end;
        while (start > p && !(start - p >= 3 && !strncmp(start - 3, " > ", 3)))
            start--;
        if (!generic_aten(start, (size_t)(end - start)) || start == p) {
            snprintf(out, n, "%.*s", (int)(end - start), start);
            if (generic_aten(start, (size_t)(end - start))) /* generic all the way out: the innermost */
                snprintf(out, n, "%s", op->cpu_op);
            return 1;
        }
        end = start - 3;
    }
    return 0;
}

/* PyTorch builds the causal mask with these ATen ops (SDPA math: ones → tril → where). */
int op_builds_mask_aten(const gpu_op *op)
{
    if (!op->cpu_op_path || op_launched_in(op, "aten::_safe_softmax"))
        return 0;
    return op_launched_in(op, "aten::tril") || op_launched_in(op, "aten::triu") || op_launched_in(op, "aten::ones") ||
           op_launched_in(op, "aten::where");
}

op_class classify_op(const gpu_op *op)
{
    if (op->kind == GPU_MEMCPY)
        return OPC_MEMCPY;
    if (op->kind == GPU_MEMSET)
        return OPC_MEMSET;
    const char *n = op->name;
    /* Inductor names a kernel after the ops it fused (triton_poi_fused__scaled_dot_product_…): one that feeds
     * attention is no attention kernel; only its template (triton_tem_) of flex_attention is */
    int inductor = n && !strncmp(n, "triton_", 7) && strstr(n, "_fused_");
    if (inductor ? has(n, "triton_tem_fused_flex_attention")
                 : has(n, "flash") || has(n, "fmha") || has(n, "sdpa") || has(n, "attnprof_efficient") ||
                       has(n, "attention"))
        return OPC_FUSED_ATTENTION;
    if (has(n, "gemm") || has(n, "nvjet") || has(n, "xmma") || has(n, "cutlass"))
        return OPC_GEMM;
    if (has(n, "softmax")) /* softmax_warp_forward, cunn_SoftMaxForward, ours */
        return OPC_SOFTMAX;
    if (op_builds_mask_aten(op))
        return OPC_MASK;
    if (op->cpu_op && (op_launched_in(op, "aten::all") || op_launched_in(op, "aten::any") ||
                       op_launched_in(op, "aten::sum") || op_launched_in(op, "aten::amax")))
        return OPC_REDUCTION;
    if (has(n, "mask") || has(n, "tril") || has(n, "triu") || has(n, "_ones") || has(n, "where_bias"))
        return OPC_MASK;
    if (has(n, "reduce") || has(n, "row_all") || has(n, "_all"))
        return OPC_REDUCTION;
    if (has(n, "elementwise") || has(n, "scale") || has(n, "cast") || has(n, "add") || has(n, "mul") ||
        has(n, "copy") || has(n, "fill") || has(n, "where") || has(n, "isneginf") || has(n, "functor"))
        return OPC_ELEMENTWISE;
    return OPC_OTHER;
}

const char *op_class_name(op_class c)
{
    static const char *names[OPC_COUNT] = {"GEMM", "elementwise", "softmax", "fused attention", "memcpy",
                                           "memset", "reduction", "mask", "other"};
    return c < OPC_COUNT ? names[c] : "?";
}

/* "void ns::kern<4>(float*, int)" → "kern<4>"; long template arguments become "<…>". */
void short_kernel_name(const char *name, char *out, size_t n)
{
    /* "(anonymous namespace)::" would read as a parameter list: drop it first. */
    static const char anon[] = "(anonymous namespace)::";
    char clean[1024];
    size_t j = 0;
    for (const char *p = name; *p && j + 1 < sizeof clean;) {
        if (!strncmp(p, anon, sizeof anon - 1)) {
            p += sizeof anon - 1;
            continue;
        }
        clean[j++] = *p++;
    }
    clean[j] = '\0';
    const char *s = clean;
    if (!strncmp(s, "void ", 5))
        s += 5;
    /* End of the identifier: the '(' of the parameter list at template depth 0. */
    const char *end = s;
    int depth = 0;
    for (; *end; end++) {
        if (*end == '<')
            depth++;
        else if (*end == '>')
            depth--;
        else if (*end == '(' && depth == 0)
            break;
    }
    /* Start after the last "::" at depth 0 (namespaces, not template arguments). */
    const char *start = s;
    depth = 0;
    for (const char *p = s; p < end; p++) {
        if (*p == '<')
            depth++;
        else if (*p == '>')
            depth--;
        else if (depth == 0 && p[0] == ':' && p[1] == ':')
            start = p + 2;
    }
    const char *lt = memchr(start, '<', (size_t)(end - start));
    size_t len = (size_t)(end - start);
    if (lt && len > 48)
        snprintf(out, n, "%.*s<…>", (int)(lt - start), start);
    else
        snprintf(out, n, "%.*s", (int)len, start);
    esc_utf8_trim(out); /* cut between characters: cairo refuses a partial one */
}

typedef struct corr_index {
    const gpu_op **ops; /* sorted by correlation */
    size_t n;
    uint32_t *mark;     /* per op of the trace: the forward that took it (its token) */
    uint32_t token;
} corr_index;

static int cmp_corr(const void *a, const void *b)
{
    const gpu_op *x = *(const gpu_op *const *)a, *y = *(const gpu_op *const *)b;
    if (x->correlation != y->correlation)
        return x->correlation < y->correlation ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int cmp_op_start(const void *a, const void *b)
{
    const gpu_op *x = *(const gpu_op *const *)a, *y = *(const gpu_op *const *)b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* Ops of one forward: every GPU op whose correlation id belongs to an API call made
 * inside the forward's host range. The API calls are sorted by start: a binary
 * search finds the first one in the range, so a forward costs its own calls, not
 * the whole trace's; an op already taken (a runtime call and its driver call share
 * the correlation id) is known by its mark, not by a search of the forward. */
static int group_forward(const trace *t, corr_index *idx, const host_range *r, forward *f)
{
    size_t cap = 16;
    f->ops = malloc(cap * sizeof *f->ops);
    f->n_ops = 0;
    if (!f->ops)
        attn_oom();
    /* API calls are sorted by start (trace_sort): only those starting inside the range. */
    uint32_t token = ++idx->token;
    size_t first = 0, last = t->n_apis;
    while (first < last) {
        size_t mid = first + (last - first) / 2;
        if (t->apis[mid].start_ns < r->start_ns)
            first = mid + 1;
        else
            last = mid;
    }
    for (size_t i = first; i < t->n_apis && t->apis[i].start_ns <= r->end_ns; i++) {
        const api_call *a = &t->apis[i];
        if (a->end_ns > r->end_ns || a->pid != r->pid)
            continue;
        /* lower bound of a->correlation in the index */
        size_t lo = 0, hi = idx->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (idx->ops[mid]->correlation < a->correlation)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < idx->n && idx->ops[lo]->correlation == a->correlation; lo++) {
            uint32_t *mark = &idx->mark[idx->ops[lo] - t->ops];
            if (*mark == token)
                continue;
            *mark = token;
            if ((size_t)f->n_ops == cap) {
                cap *= 2;
                f->ops = realloc(f->ops, cap * sizeof *f->ops);
                if (!f->ops)
                    attn_oom();
            }
            f->ops[f->n_ops++] = idx->ops[lo];
        }
    }
    if (f->n_ops)
        qsort(f->ops, (size_t)f->n_ops, sizeof *f->ops, cmp_op_start);
    f->launchers = malloc(sizeof *f->launchers * (size_t)(f->n_ops ? f->n_ops : 1));
    if (!f->launchers)
        attn_oom();
    double sum = 0;
    int64_t lo_ns = INT64_MAX, hi_ns = INT64_MIN;
    for (int k = 0; k < f->n_ops; k++) {
        f->launchers[k] = trace_launcher(t, f->ops[k]);
        sum += (double)(f->ops[k]->end_ns - f->ops[k]->start_ns);
        if (f->ops[k]->start_ns < lo_ns)
            lo_ns = f->ops[k]->start_ns;
        if (f->ops[k]->end_ns > hi_ns)
            hi_ns = f->ops[k]->end_ns;
    }
    f->range = r;
    f->iteration = r->iteration;
    f->cuda_us = sum / 1000.0;
    f->cpu_us = (double)(r->end_ns - r->start_ns) / 1000.0;
    f->gpu_span_us = f->n_ops ? (double)(hi_ns - lo_ns) / 1000.0 : 0.0;
    return 0;
}

static int median_int(int *x, int n)
{
    double *d = calloc((size_t)(n ? n : 1), sizeof(double));
    if (!d)
        attn_oom();
    for (int i = 0; i < n; i++)
        d[i] = x[i];
    stats s = stats_of(d, n);
    free(d);
    return n ? (int)lround(s.median) : 0;
}

static int cmp_forward_range(const void *a, const void *b)
{
    const host_range *x = *(const host_range *const *)a, *y = *(const host_range *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x > y) - (x < y);
}

/* A name from the archive for a one-line error: control characters dropped. */
static const char *plain(const char *s, char *buf, size_t n) { return esc_terminal(buf, n, s ? s : "(unnamed)"); }

/* Forwards of one process never overlap: an API call inside two of them would have its
 * operations counted in both (8000 overlapping forwards took 98 s and multiplied the
 * CUDA time). Sorting once makes the grouping below linear in the records. */
static int check_forwards_disjoint(const trace *t, char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_ranges; i++)
        n += t->ranges[i].iteration >= 0;
    if (n < 2)
        return 0;
    const host_range **f = malloc(n * sizeof *f);
    if (!f)
        attn_oom();
    n = 0;
    for (size_t i = 0; i < t->n_ranges; i++)
        if (t->ranges[i].iteration >= 0)
            f[n++] = &t->ranges[i];
    qsort(f, n, sizeof *f, cmp_forward_range);
    int bad = 0;
    const host_range *open = f[0];
    for (size_t i = 1; i < n && !bad; i++) {
        if (f[i]->pid != open->pid) {
            open = f[i];
            continue;
        }
        if (f[i]->start_ns < open->end_ns) {
            char a[48], b[48];
            snprintf(err, errlen, "trace.json: inconsistent: forwards %s #%d and %s #%d of process %d overlap "
                     "(%.3f us < %.3f us): an operation would be counted in both", plain(open->variant, a, sizeof a),
                     open->iteration, plain(f[i]->variant, b, sizeof b), f[i]->iteration, open->pid,
                     (double)f[i]->start_ns / 1e3, (double)open->end_ns / 1e3);
            bad = 1;
        }
        if (f[i]->end_ns > open->end_ns)
            open = f[i];
    }
    free(f);
    return bad ? EXIT_BAD_ARCHIVE : EXIT_OK;
}

/* run.json's GPU against trace.json's deviceProperties (when both say). */
static int check_device(const trace *t, const run_info *r, char *err, size_t errlen)
{
    const device_props *x = &r->device, *y = &t->device;
    if (!x->name[0] || !y->name[0])
        return 0;
    /* An SM count of 0 against the trace's is a contradiction too: occupancy and the
     * roofs are taken per SM (run.json's count of 0 beside a trace of 132 rendered). */
    const char *what = strcmp(x->name, y->name) ? "name"
                       : y->sm_count && x->sm_count != y->sm_count ? "SM count"
                       : (x->major || x->minor) && (y->major || y->minor) && (x->major != y->major || x->minor != y->minor)
                           ? "compute capability"
                       : x->total_mem && y->total_mem && x->total_mem != y->total_mem ? "memory size"
                                                                                     : NULL;
    if (!what)
        return 0;
    char a[64], b[64];
    return err_set(err, errlen, EXIT_BAD_ARCHIVE, "inconsistent: run.json's GPU (%s, %d SMs, %d.%d) and trace.json's "
                   "deviceProperties (%s, %d SMs, %d.%d) differ in %s: the files are of two recordings",
                   plain(x->name, a, sizeof a), x->sm_count, x->major, x->minor, plain(y->name, b, sizeof b),
                   y->sm_count, y->major, y->minor, what);
}

/* What a recording by `attnprof run` holds of itself: one process recorded every forward (a
 * forward of another pid has no launches of its own and entered the minimum as 0.0 us), one
 * GPU ran every operation (run.json describes one; occupancy of another's kernels would be
 * taken against its limits), and every forward's sample belongs to a pass of the plan
 * (samples.csv and the throttle rule read them). Imports and `attnprof record` hold several
 * processes and GPUs by design, and are checked by their own readers. */
static int check_recording(const trace *t, const run_info *r, char *err, size_t errlen)
{
    if (r->imported || r->producer != PRODUCER_ATTNPROF)
        return 0;
    char a[48];
    int passes = r->measurement.recorded && r->measurement.replicates > 0 ? r->measurement.replicates : 1;
    for (size_t i = 0; i < t->n_ranges; i++) {
        const host_range *h = &t->ranges[i];
        if (h->iteration < 0)
            continue;
        if (t->pid > 0 && h->pid != t->pid)
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "trace.json: inconsistent: forward %s #%d is in process %d, "
                           "but the run is process %d (trace.json's pid): its launches are not in the recording",
                           plain(h->variant, a, sizeof a), h->iteration, h->pid, t->pid);
        if (h->sample.recorded && !r->measurement.recorded)
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "inconsistent: forward %s #%d of trace.json carries a sample "
                           "(pass %d), but run.json has no measurement plan: the files are of two recordings",
                           plain(h->variant, a, sizeof a), h->iteration, h->sample.pass);
        if (h->sample.recorded && (h->sample.pass < 0 || h->sample.pass >= passes))
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "inconsistent: forward %s #%d of trace.json is in pass %d, "
                           "but run.json's measurement has replicates = %d (passes 0 to %d)",
                           plain(h->variant, a, sizeof a), h->iteration, h->sample.pass, passes, passes - 1);
    }
    for (size_t i = 1; i < t->n_ops; i++)
        if (t->ops[i].device != t->ops[0].device) {
            char b[48];
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "trace.json: inconsistent: GPU operation %s runs on "
                           "device %d and %s on device %d, but run.json describes one GPU (%s): the files are of "
                           "two recordings",
                           plain(t->ops[0].name, a, sizeof a), t->ops[0].device, plain(t->ops[i].name, b, sizeof b),
                           t->ops[i].device, r->device.name[0] ? r->device.name : "not named");
        }
    return 0;
}

/* One variant's forwards against run.json: iters, and whether it ran at all. */
static int check_variant(const variant_analysis *va, const run_info *r, char *err, size_t errlen)
{
    const variant_result *v = va->result;
    char name[48];
    plain(v->name, name, sizeof name);
    if ((v->status == VARIANT_SKIPPED || v->status == VARIANT_UNAVAILABLE) && va->n_forwards > 0)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "inconsistent: run.json says variant %s is \"%s\" (it did not "
                       "run), but trace.json holds %d of its forwards", name, variant_status_name(v->status),
                       va->n_forwards);
    /* An import takes iters as its longest file's count; a recording has exactly iters
     * forwards per variant that ran, fewer only when CUPTI dropped records. */
    int short_ok = r->imported || v->dropped_records > 0 || v->status != VARIANT_OK;
    int expected = analysis_expected_forwards(r, v), have = va->n_forwards + va->n_throttled;
    if (have > expected || (!short_ok && have != expected)) {
        if (v->stop.reason[0])
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "inconsistent: run.json says variant %s stopped after %d "
                           "forwards, but trace.json holds %d of its forwards", name, expected, have);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "inconsistent: run.json says iters = %d%s, but trace.json "
                       "holds %d forwards of variant %s", r->iters, expected != r->iters ? " per pass" : "", have,
                       name);
    }
    return 0;
}

int analysis_expected_forwards(const run_info *r, const variant_result *v)
{
    if (v->stop.reason[0])
        return v->stop.forwards;
    int passes = r->measurement.recorded && r->measurement.replicates > 1 ? r->measurement.replicates : 1;
    return r->iters * passes;
}

int analysis_sample_plausible(const analysis *a, const struct forward_sample *s)
{
    if (!s->recorded)
        return 0;
    if (s->sm_mhz < 0 || (a->clock_limit_mhz > 0 && s->sm_mhz > a->clock_limit_mhz) || s->mem_mhz < 0)
        return 0;
    if (!isfinite(s->event_us) ? !isnan(s->event_us) : (s->event_us < 0 || s->event_us > ANALYSIS_MAX_EVENT_US))
        return 0; /* NAN: no event time recorded */
    if (isinf(s->power_w) || s->power_w < 0)
        return 0;
    return s->temp_c >= -50 && s->temp_c <= 200;
}

int analysis_forward_throttled(const analysis *a, const host_range *h)
{
    return a->throttle_judged && analysis_sample_plausible(a, &h->sample) && h->sample.sm_mhz > 0 &&
           (double)h->sample.sm_mhz < a->throttle_fraction * (double)a->max_sm_mhz;
}

/* The throttle line of the run: its highest sampled SM clock, over every variant. */
static void throttle_rule(analysis *a, const trace *t, const run_info *r)
{
    a->clock_limit_mhz = r->device.clock_khz > 0 ? (int)ceil(r->device.clock_khz / 1000.0 * (1 + ANALYSIS_CLOCK_MARGIN)) : 0;
    for (size_t i = 0; i < t->n_ranges; i++)
        if (t->ranges[i].iteration >= 0 && analysis_sample_plausible(a, &t->ranges[i].sample) &&
            t->ranges[i].sample.sm_mhz > a->max_sm_mhz)
            a->max_sm_mhz = t->ranges[i].sample.sm_mhz;
    a->throttle_fraction = r->measurement.recorded ? r->measurement.throttle_fraction : 0;
    a->throttle_judged = a->max_sm_mhz > 0 && isfinite(a->throttle_fraction) && a->throttle_fraction > 0;
}

/* Moves the throttled forwards out of va->forwards (both keep the recorded order),
 * unless every one is throttled; records the clock range of the samples. */
static void set_throttled_apart(const analysis *a, variant_analysis *va)
{
    int n = va->n_forwards, kept = 0, out = 0;
    for (int i = 0; i < n; i++) {
        forward *f = &va->forwards[i];
        const struct forward_sample *s = &f->range->sample;
        f->throttled = analysis_forward_throttled(a, f->range);
        out += f->throttled;
        if (!s->recorded)
            continue;
        if (!analysis_sample_plausible(a, s)) {
            va->n_implausible++;
            continue;
        }
        if (!va->n_sampled++)
            va->sm_mhz_min = va->sm_mhz_max = s->sm_mhz, va->mem_mhz_min = va->mem_mhz_max = s->mem_mhz;
        if (s->sm_mhz < va->sm_mhz_min)
            va->sm_mhz_min = s->sm_mhz;
        if (s->sm_mhz > va->sm_mhz_max)
            va->sm_mhz_max = s->sm_mhz;
        if (s->mem_mhz < va->mem_mhz_min)
            va->mem_mhz_min = s->mem_mhz;
        if (s->mem_mhz > va->mem_mhz_max)
            va->mem_mhz_max = s->mem_mhz;
    }
    if (!out)
        return;
    if (out == n) {
        va->all_throttled = 1;
        return;
    }
    va->throttled = calloc((size_t)out, sizeof *va->throttled);
    if (!va->throttled)
        attn_oom();
    for (int i = 0; i < n; i++) {
        if (va->forwards[i].throttled)
            va->throttled[va->n_throttled++] = va->forwards[i];
        else
            va->forwards[kept++] = va->forwards[i];
    }
    va->n_forwards = kept;
}

static int is_backward_of(const host_range *h, const char *variant)
{
    return h->name && h->variant && !strcmp(h->name, "attn_bwd") && !strcmp(h->variant, variant);
}

/* The variant's attn_bwd ranges (run --backward) as backwards, each grouped as a forward is, and
 * their medians. */
static void group_backwards(const trace *t, corr_index *idx, variant_analysis *va)
{
    int n = 0;
    for (size_t i = 0; i < t->n_ranges; i++)
        n += is_backward_of(&t->ranges[i], va->result->name);
    if (!n)
        return;
    va->backwards = calloc((size_t)n, sizeof *va->backwards);
    double *cu = malloc(sizeof(double) * (size_t)n);
    int *ops = malloc(sizeof(int) * (size_t)n), *kn = malloc(sizeof(int) * (size_t)n);
    int *mc = malloc(sizeof(int) * (size_t)n), *ms = malloc(sizeof(int) * (size_t)n);
    if (!va->backwards || !cu || !ops || !kn || !mc || !ms)
        attn_oom();
    for (size_t i = 0; i < t->n_ranges; i++)
        if (is_backward_of(&t->ranges[i], va->result->name)) {
            forward *b = &va->backwards[va->n_backwards];
            group_forward(t, idx, &t->ranges[i], b);
            cu[va->n_backwards] = b->cuda_us;
            ops[va->n_backwards] = b->n_ops;
            kn[va->n_backwards] = mc[va->n_backwards] = ms[va->n_backwards] = 0;
            for (int k = 0; k < b->n_ops; k++) {
                kn[va->n_backwards] += b->ops[k]->kind == GPU_KERNEL;
                mc[va->n_backwards] += b->ops[k]->kind == GPU_MEMCPY;
                ms[va->n_backwards] += b->ops[k]->kind == GPU_MEMSET;
            }
            va->n_backwards++;
        }
    va->bwd_cuda_us = stats_of(cu, va->n_backwards);
    va->ops_per_backward = median_int(ops, va->n_backwards);
    va->kernels_per_backward = median_int(kn, va->n_backwards);
    va->memcpy_per_backward = median_int(mc, va->n_backwards);
    va->memset_per_backward = median_int(ms, va->n_backwards);
    free(cu), free(ops), free(kn), free(mc), free(ms);
}

int analysis_build(analysis *a, const trace *t, const run_info *r, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->trace = t;
    a->run = r;
    int rc = check_forwards_disjoint(t, err, errlen);
    if (rc == EXIT_OK)
        rc = check_device(t, r, err, errlen);
    if (rc == EXIT_OK)
        rc = check_recording(t, r, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    corr_index idx = {malloc(sizeof(gpu_op *) * (t->n_ops ? t->n_ops : 1)), t->n_ops,
                      calloc(t->n_ops ? t->n_ops : 1, sizeof(uint32_t)), 0};
    if (!idx.ops || !idx.mark)
        attn_oom();
    for (size_t i = 0; i < t->n_ops; i++)
        idx.ops[i] = &t->ops[i];
    qsort(idx.ops, idx.n, sizeof *idx.ops, cmp_corr);
    throttle_rule(a, t, r);

    for (int v = 0; v < r->n_variants; v++) {
        variant_analysis *va = &a->v[a->n++];
        va->result = &r->variants[v];
        int n = 0;
        for (size_t i = 0; i < t->n_ranges; i++)
            n += t->ranges[i].iteration >= 0 && !strcmp(t->ranges[i].variant, va->result->name);
        va->forwards = calloc((size_t)(n ? n : 1), sizeof *va->forwards);
        if (!va->forwards)
            attn_oom();
        for (size_t i = 0; i < t->n_ranges; i++) {
            const host_range *h = &t->ranges[i];
            if (h->iteration >= 0 && !strcmp(h->variant, va->result->name))
                group_forward(t, &idx, h, &va->forwards[va->n_forwards++]);
        }
        set_throttled_apart(a, va);
        double *cu = malloc(sizeof(double) * (size_t)(n ? n : 1)), *cp = malloc(sizeof(double) * (size_t)(n ? n : 1));
        double *sp = malloc(sizeof(double) * (size_t)(n ? n : 1));
        int *ops = malloc(sizeof(int) * (size_t)(n ? n : 1)), *mc = malloc(sizeof(int) * (size_t)(n ? n : 1));
        int *kn = malloc(sizeof(int) * (size_t)(n ? n : 1)), *ms = malloc(sizeof(int) * (size_t)(n ? n : 1));
        if (!cu || !cp || !sp || !ops || !mc || !kn || !ms)
            attn_oom();
        for (int i = 0; i < va->n_forwards; i++) {
            forward *f = &va->forwards[i];
            cu[i] = f->cuda_us;
            cp[i] = f->cpu_us;
            sp[i] = f->gpu_span_us;
            ops[i] = f->n_ops;
            mc[i] = kn[i] = ms[i] = 0;
            for (int k = 0; k < f->n_ops; k++) {
                mc[i] += f->ops[k]->kind == GPU_MEMCPY;
                ms[i] += f->ops[k]->kind == GPU_MEMSET;
                kn[i] += f->ops[k]->kind == GPU_KERNEL;
            }
        }
        va->cuda_us = stats_of(cu, va->n_forwards);
        va->cpu_us = stats_of(cp, va->n_forwards);
        va->span_us = stats_of(sp, va->n_forwards);
        va->ops_per_forward = median_int(ops, va->n_forwards);
        va->memcpy_per_forward = median_int(mc, va->n_forwards);
        va->kernels_per_forward = median_int(kn, va->n_forwards);
        va->memset_per_forward = median_int(ms, va->n_forwards);
        free(cu), free(cp), free(sp), free(ops), free(mc), free(kn), free(ms);
        group_backwards(t, &idx, va);
        if ((rc = check_variant(va, r, err, errlen)) == EXIT_OK && va->result->status == VARIANT_OK &&
            va->n_forwards == 0)
            rc = err_set(err, errlen, EXIT_BAD_ARCHIVE, "trace.json has no recorded forwards for variant %s, which "
                         "run.json says ran; the archive is incomplete", va->result->name);
        if (rc != EXIT_OK) {
            free(idx.ops);
            free(idx.mark);
            analysis_free(a);
            return rc;
        }
    }
    free(idx.ops);
    free(idx.mark);
    return EXIT_OK;
}

void analysis_free(analysis *a)
{
    for (int v = 0; v < a->n; v++) {
        for (int i = 0; i < a->v[v].n_forwards; i++) {
            free(a->v[v].forwards[i].ops);
            free(a->v[v].forwards[i].launchers);
        }
        for (int i = 0; i < a->v[v].n_throttled; i++) {
            free(a->v[v].throttled[i].ops);
            free(a->v[v].throttled[i].launchers);
        }
        for (int i = 0; i < a->v[v].n_backwards; i++) {
            free(a->v[v].backwards[i].ops);
            free(a->v[v].backwards[i].launchers);
        }
        free(a->v[v].forwards);
        free(a->v[v].throttled);
        free(a->v[v].backwards);
    }
    memset(a, 0, sizeof *a);
}

const variant_analysis *analysis_find(const analysis *a, const char *variant)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].result->name, variant))
            return &a->v[i];
    return NULL;
}

const char *analysis_plain_name(const char *variant)
{
    if (!strncmp(variant, "kineto_", 7))
        variant += 7;
    if (!strncmp(variant, "sdpa_", 5))
        variant += 5;
    return variant;
}

const variant_analysis *analysis_counterpart(const analysis *a, const char *variant)
{
    const variant_analysis *exact = analysis_find(a, variant);
    if (exact)
        return exact;
    const char *plain = analysis_plain_name(variant);
    for (int i = 0; i < a->n; i++)
        if (!strcmp(analysis_plain_name(a->v[i].result->name), plain))
            return &a->v[i];
    return NULL;
}

typedef struct ranked { double us; int i; } ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->us != y->us)
        return x->us < y->us ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int median_forward_of(const forward *fw, int n)
{
    if (n <= 0)
        return ATTN_NONE;
    ranked *r = malloc(sizeof *r * (size_t)n);
    if (!r)
        attn_oom();
    for (int i = 0; i < n; i++)
        r[i] = (ranked){fw[i].cuda_us, i};
    qsort(r, (size_t)n, sizeof *r, cmp_ranked);
    int pick = r[(n - 1) / 2].i;
    free(r);
    return pick;
}

int analysis_median_forward(const variant_analysis *va) { return median_forward_of(va->forwards, va->n_forwards); }
int analysis_median_backward(const variant_analysis *va) { return median_forward_of(va->backwards, va->n_backwards); }

void per_forward_median(const variant_analysis *va, op_predicate pred, int *count, double *us)
{
    int n = va->n_forwards;
    double *c = calloc((size_t)(n ? n : 1), sizeof(double)), *t = calloc((size_t)(n ? n : 1), sizeof(double));
    if (!c || !t)
        attn_oom();
    for (int i = 0; i < n; i++) {
        c[i] = t[i] = 0;
        for (int k = 0; k < va->forwards[i].n_ops; k++) {
            const gpu_op *o = va->forwards[i].ops[k];
            if (pred(o)) {
                c[i] += 1;
                t[i] += (double)(o->end_ns - o->start_ns) / 1000.0;
            }
        }
    }
    stats sc = stats_of(c, n), st = stats_of(t, n);
    *count = n ? (int)lround(sc.median) : 0;
    *us = n ? st.median : 0;
    free(c);
    free(t);
}

void findings_short_name(const char *name, char *out, size_t n)
{
    char full[1024];
    short_kernel_name(name, full, sizeof full);
    /* count characters, not bytes */
    size_t chars = 0, cut = 0;
    for (const unsigned char *p = (const unsigned char *)full; *p; p++)
        if ((*p & 0xc0) != 0x80 && ++chars == FINDING_NAME_MAX)
            cut = (size_t)((const char *)p - full);
    if (chars > FINDING_NAME_MAX && cut + 4 <= n)
        snprintf(out, n, "%.*s\xe2\x80\xa6", (int)cut, full);
    else if (!esc_copy_utf8(out, n, full) && n >= 4) {
        out[n - 4] = '\0';
        esc_utf8_trim(out);
        strcat(out, "\xe2\x80\xa6");
    }
}
