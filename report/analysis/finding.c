/* The engine over the finding table (finding.h): a finding of a kind takes its id,
 * severity and needs from its row and its sentence from the caller; its phrase comes
 * from the row's template and its numbers; the rank rule orders a variant's findings
 * for a summary; the walk calls the derive column; the sentence is rendered for each
 * writer from its one plain-text form with marked names. */
#include "units.h"
#include "finding.h"
#include "alloc.h"
#include "err.h"
#include "escape.h"
#include "findings.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const finding_row *finding_row_of(finding_kind kind)
{
    return kind >= 0 && kind < FK_COUNT ? &finding_table[kind] : NULL;
}

int finding_kind_of_id(const char *id)
{
    for (int k = 0; k < FK_COUNT; k++)
        if (!strcmp(finding_table[k].id, id))
            return k;
    return ATTN_NONE;
}

/* ---- the sentence: plain text with marked names ------------------------------ */

void findings_text_buf(char *out, size_t n, const char *s)
{
    esc_copy_utf8(out, n, s ? s : "");
    for (unsigned char *p = (unsigned char *)out; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = ' ';
}

void findings_code_buf(char *out, size_t n, const char *s)
{
    char t[512];
    findings_text_buf(t, sizeof t, s);
    snprintf(out, n, "%c%s%c", FINDING_CODE_OPEN, t, FINDING_CODE_CLOSE);
    esc_utf8_trim(out);
}

void findings_spans(const char *text, finding_span_fn span, void *ctx)
{
    const char *p = text;
    while (*p) {
        int code = *p == FINDING_CODE_OPEN;
        if (code)
            p++;
        size_t len = strcspn(p, code ? "\x02" : "\x01");
        if (len)
            span(p, len, code, ctx);
        p += len;
        if (*p == FINDING_CODE_CLOSE)
            p++;
    }
}

static void md_span(const char *s, size_t len, int code, void *ctx)
{
    FILE *f = ctx;
    char *seg = strndup(s, len);
    if (!seg)
        attn_oom();
    if (code)
        esc_md_code(f, seg, 0);
    else
        esc_md_text(f, seg);
    free(seg);
}

static void plain_span(const char *s, size_t len, int code, void *ctx)
{
    (void)code;
    fwrite(s, 1, len, (FILE *)ctx);
}

/* Renders into out[n], an ellipsis marking a cut (never cut silently). */
static void render_into(const char *text, finding_span_fn span, char *out, size_t n)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    findings_spans(text, span, f);
    fclose(f);
    if (!esc_copy_utf8(out, n, buf) && n >= 4) {
        out[n - 4] = '\0';
        esc_utf8_trim(out);
        strcat(out, "\xe2\x80\xa6");
    }
    free(buf);
}

void findings_markdown(const char *text, char *out, size_t n) { render_into(text, md_span, out, n); }
void findings_plain(const char *text, char *out, size_t n) { render_into(text, plain_span, out, n); }

/* ---- adding ----------------------------------------------------------------------- */

/* The sentence into f->text, never cut silently: an ellipsis marks a cut, and a name
 * cut in the middle is closed before it. */
static void format_text(finding *f, const char *fmt, va_list ap)
{
    int len = vsnprintf(f->text, sizeof f->text, fmt, ap);
    if (len < (int)sizeof f->text)
        return;
    f->text[sizeof f->text - 5] = '\0';
    esc_utf8_trim(f->text);
    int open = 0;
    for (const char *p = f->text; *p; p++)
        open = *p == FINDING_CODE_OPEN ? 1 : *p == FINDING_CODE_CLOSE ? 0 : open;
    if (open)
        strcat(f->text, "\x02");
    strcat(f->text, "\xe2\x80\xa6");
}

static void init_from_row(finding *f, finding_kind kind)
{
    const finding_row *row = finding_row_of(kind);
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->share = f->departure = NAN;
    if (!row)
        return;
    snprintf(f->id, sizeof f->id, "%s", row->id);
    f->severity = row->severity;
    snprintf(f->needs, sizeof f->needs, "%s", row->needs);
}

finding *findings_add(variant_analysis *va, finding_kind kind, const char *fmt, ...)
{
    static _Thread_local finding scratch;
    finding *f = va->n_findings < MAX_FINDINGS ? &va->meta[va->n_findings] : &scratch;
    init_from_row(f, kind);
    va_list ap;
    va_start(ap, fmt);
    format_text(f, fmt, ap);
    va_end(ap);
    if (f == &scratch)
        return f;
    findings_markdown(f->text, va->findings[va->n_findings], sizeof va->findings[0]);
    va->n_findings++;
    return f;
}

void finding_init(finding *f, finding_kind kind, const char *fmt, ...)
{
    init_from_row(f, kind);
    va_list ap;
    va_start(ap, fmt);
    format_text(f, fmt, ap);
    va_end(ap);
}

void findings_number(finding *f, const char *key, double value, const char *unit)
{
    if (f->n_numbers == FINDING_MAX_NUMBERS || !isfinite(value))
        return;
    snprintf(f->numbers[f->n_numbers].key, sizeof f->numbers[0].key, "%s", key);
    f->numbers[f->n_numbers].value = value;
    snprintf(f->numbers[f->n_numbers].unit, sizeof f->numbers[0].unit, "%s", unit ? unit : "");
    f->n_numbers++;
}

void findings_record(finding *f, const gpu_op *o)
{
    if (!o || f->n_records == FINDING_MAX_RECORDS)
        return;
    for (int i = 0; i < f->n_records; i++)
        if (f->records[i] == o->correlation)
            return;
    f->records[f->n_records++] = o->correlation;
}

/* ---- the phrase --------------------------------------------------------------------- */

static int number_index(const finding *f, const char *key, size_t len)
{
    for (int i = 0; i < f->n_numbers; i++)
        if (strlen(f->numbers[i].key) == len && !strncmp(f->numbers[i].key, key, len))
            return i;
    return ATTN_NONE;
}

/* One {…} of a template (without the braces) into out[n]: 0, or -1 when its number is missing. */
static int phrase_field(const finding *f, const char *s, size_t len, char *out, size_t n)
{
    if (len && s[0] == '@') {
        const char *v = len == 8 && !strncmp(s, "@subject", 8) ? f->subject : len == 6 && !strncmp(s, "@other", 6) ? f->other : "";
        snprintf(out, n, "%s", v);
        return v[0] ? 0 : ATTN_NONE;
    }
    const char *colon = memchr(s, ':', len);
    size_t klen = colon ? (size_t)(colon - s) : len;
    int i = number_index(f, s, klen);
    if (i < 0)
        return ATTN_NONE;
    double v = f->numbers[i].value;
    const char *unit = f->numbers[i].unit, *spec = colon ? colon + 1 : "";
    size_t slen = colon ? len - klen - 1 : 0;
    if (slen > 2 && !strncmp(spec, "n ", 2)) { /* {key:n noun}: the count and its noun, agreeing */
        char noun[64];
        snprintf(noun, sizeof noun, "%.*s", (int)(slen - 2), spec + 2);
        units_count_noun(v, noun, out, n);
        return 0;
    }
    if (slen >= 3 && !strncmp(spec, "sup", 3)) { /* {key:sup.2}: an exponent, S⁰·⁹⁸ */
        const char *d = memchr(spec, '.', slen);
        units_superscript(fabs(v) < 0.005 ? 0.0 : v, d ? atoi(d + 1) : 2, out, n);
        return 0;
    }
    int sign = slen && memchr(spec, '+', slen), pct = slen >= 3 && !strncmp(spec, "pct", 3);
    const char *dot = slen ? memchr(spec, '.', slen) : NULL;
    int decimals = dot ? atoi(dot + 1) : -1;
    if (pct)
        snprintf(out, n, sign ? "%+.0f%%" : "%.0f%%", 100 * v);
    else if (!strcmp(unit, "B"))
        human_bytes(v, out, n);
    else if (!strcmp(unit, "us") && fabs(v) >= 1000)
        snprintf(out, n, sign ? "%+.1f ms" : "%.1f ms", v / 1000);
    else if (!strcmp(unit, "us"))
        snprintf(out, n, sign ? "%+.1f µs" : "%.1f µs", v);
    else if (!strcmp(unit, "%"))
        snprintf(out, n, sign ? "%+.0f%%" : "%.0f%%", v);
    else if (!strcmp(unit, "x"))
        snprintf(out, n, "%.*f×", decimals >= 0 ? decimals : 2, v);
    else if (decimals >= 0)
        snprintf(out, n, sign ? "%+.*f" : "%.*f", decimals, v);
    else
        snprintf(out, n, sign ? "%+g%s%s" : "%g%s%s", v, unit[0] ? " " : "", unit);
    return 0;
}

/* Expands t[0..len) into out (at *at, n bytes): -1 when a field in it is missing. */
static int expand(const finding *f, const char *t, size_t len, char *out, size_t n, size_t *at)
{
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '[') {
            size_t depth = 1, j = i + 1;
            while (j < len && depth)
                depth += t[j] == '[' ? 1 : t[j] == ']' ? -1 : 0, j++;
            if (depth)
                return ATTN_NONE; /* an unclosed [ : the template is wrong, the id stands in */
            size_t mark = *at;
            if (expand(f, t + i + 1, j - i - 2, out, n, at) != 0)
                *at = mark, out[mark] = '\0'; /* the optional part goes, the rest stays */
            i = j - 1;
        } else if (t[i] == '{') {
            const char *end = memchr(t + i, '}', len - i);
            if (!end)
                return ATTN_NONE;
            char v[64];
            if (phrase_field(f, t + i + 1, (size_t)(end - t - i - 1), v, sizeof v) != 0)
                return ATTN_NONE;
            *at += (size_t)snprintf(out + *at, *at < n ? n - *at : 0, "%s", v);
            i = (size_t)(end - t);
        } else if (*at + 1 < n) {
            out[(*at)++] = t[i];
            out[*at] = '\0';
        }
        if (*at >= n)
            *at = n - 1;
    }
    return 0;
}

void finding_phrase(const finding *f, char *out, size_t n)
{
    const finding_row *row = finding_row_of(f->kind);
    out[0] = '\0';
    if (!row || !row->phrase || !n)
        return;
    size_t at = 0;
    if (expand(f, row->phrase, strlen(row->phrase), out, n, &at) != 0)
        snprintf(out, n, "%s", row->id); /* a required number is missing: the id says what it is */
    esc_utf8_trim(out);
}

void finding_finish(finding *f, double cuda_us)
{
    const finding_row *row = finding_row_of(f->kind);
    finding_phrase(f, f->phrase, sizeof f->phrase);
    f->share = f->departure = NAN;
    if (!row)
        return;
    if (row->rank.us && cuda_us > 0)
        f->share = findings_value(f, row->rank.us) / cuda_us;
    if (row->rank.share)
        f->share = findings_value(f, row->rank.share);
    if (row->rank.departure)
        f->departure = fabs(findings_value(f, row->rank.departure));
}


/* ---- reading -------------------------------------------------------------------------- */

const finding *findings_find(const variant_analysis *va, const char *id)
{
    for (int i = 0; va && i < va->n_findings; i++)
        if (!strcmp(va->meta[i].id, id))
            return &va->meta[i];
    return NULL;
}

const finding *findings_of_kind(const variant_analysis *va, finding_kind kind)
{
    for (int i = 0; va && i < va->n_findings; i++)
        if (va->meta[i].kind == kind)
            return &va->meta[i];
    return NULL;
}

double findings_value(const finding *f, const char *key)
{
    for (int i = 0; f && i < f->n_numbers; i++)
        if (!strcmp(f->numbers[i].key, key))
            return f->numbers[i].value;
    return NAN;
}

const char *findings_severity_name(finding_severity s)
{
    return s == FINDING_WARNING ? "warning" : s == FINDING_NOTICE ? "notice" : "info";
}

/* Larger first, a missing key (NAN) after any present one. */
static int desc_nan_last(double a, double b)
{
    int ha = isfinite(a), hb = isfinite(b);
    if (ha != hb)
        return ha ? -1 : 1;
    if (!ha || a == b)
        return 0;
    return a > b ? -1 : 1;
}

int findings_rank_cmp(const finding *a, const finding *b)
{
    if (a->severity != b->severity)
        return a->severity > b->severity ? -1 : 1;
    int c = desc_nan_last(a->share, b->share);
    if (!c)
        c = desc_nan_last(a->departure, b->departure);
    if (!c && a->kind != b->kind)
        c = a->kind < b->kind ? -1 : 1;
    return c;
}

int finding_kind_is_backward(finding_kind k) { return k >= FK_BWD_MEMSET_OUTSIDE_EXPECTATION && k <= FK_BWD_ROOFLINE; }

int findings_ranked(const variant_analysis *va, int *idx, int max) { return findings_ranked_phase(va, idx, max, 0); }

int findings_ranked_phase(const variant_analysis *va, int *idx, int max, int backward)
{
    int all[MAX_FINDINGS], n = 0;
    for (int i = 0; i < va->n_findings && i < MAX_FINDINGS; i++) {
        if (finding_kind_is_backward(va->meta[i].kind) != !!backward)
            continue;
        int j = n++; /* insertion, stable: equal findings keep their derive order */
        while (j > 0 && findings_rank_cmp(&va->meta[i], &va->meta[all[j - 1]]) < 0) {
            all[j] = all[j - 1];
            j--;
        }
        all[j] = i;
    }
    if (n > max)
        n = max;
    memcpy(idx, all, (size_t)(n > 0 ? n : 0) * sizeof *idx);
    return n > 0 ? n : 0;
}

/* ---- the finding table ---------------------------------------------------------- */

#define ROW(kind, id, sev, needs, rank, phrase) [kind] = {kind, id, sev, needs, rank, phrase}
#define NO_RANK {NULL, NULL, NULL}
#define BY_US(key) {key, NULL, NULL}
#define BY_SHARE(key) {NULL, key, NULL}
#define BY_DEPARTURE(key) {NULL, NULL, key}

/* One row per kind of finding, in the order a variant's section lists them (the
 * derive order). Severity: warning where the records may be incomplete or the
 * variant did not run, notice for a cost worth knowing, info for what the records
 * show. */
const finding_row finding_table[FK_COUNT] = {
    ROW(FK_VARIANT_UNAVAILABLE, "variant_unavailable", FINDING_WARNING, "", NO_RANK,
        "not run on this machine"),
    ROW(FK_VARIANT_SKIPPED, "variant_skipped", FINDING_WARNING, "", NO_RANK,
        "skipped: cannot take this shape"),
    ROW(FK_NO_FORWARD, "no_forward", FINDING_WARNING, "", NO_RANK,
        "no forward recorded"),
    ROW(FK_MEMSET_OUTSIDE_EXPECTATION, "memset_outside_expectation", FINDING_NOTICE, "expected_ops", NO_RANK,
        "{memsets:n unexpected Memset} of {memset_bytes}"),
    ROW(FK_UNEXPECTED_OP_COUNT, "unexpected_op_count", FINDING_NOTICE, "expected_ops", NO_RANK,
        "{ops} GPU operations, {expected_ops} expected"),
    ROW(FK_HIDDEN_MEMCPY, "hidden_memcpy", FINDING_NOTICE, "", BY_US("us_per_forward"),
        "hidden {bytes} Memcpy, {pct_of_cuda_time} of CUDA time"),
    ROW(FK_OPS_VS_PREVIOUS, "ops_vs_previous", FINDING_INFO, "", NO_RANK,
        "{ops_delta:+} ops, {cuda_us_delta:+} vs {@other}"),
    ROW(FK_FP32_CUDA_CORE_GEMM, "fp32_cuda_core_gemm", FINDING_NOTICE, "", BY_US("us_per_forward"),
        "{gemms:n FP32 CUDA-core GEMM}[, {ratio} tensor-core time]"),
    ROW(FK_MASK_REBUILD, "mask_rebuild", FINDING_NOTICE, "", BY_US("us_per_forward"),
        "causal mask rebuilt: {kernels:n kernel}, {us_per_forward}"),
    ROW(FK_SAFE_SOFTMAX, "safe_softmax", FINDING_INFO, "", BY_US("us_per_forward"),
        "safe softmax: {kernels:n extra kernel}, {us_per_forward}"),
    ROW(FK_FUSED_KERNEL, "fused_kernel", FINDING_INFO, "", BY_US("us_per_forward"),
        "one fused kernel, {us_per_forward}"),
    ROW(FK_DECODE_SPLIT, "decode_split", FINDING_INFO, "facts.split_count", BY_US("combine_us"),
        "split-KV decode: {splits} splits[, combine {combine_pct} of CUDA time]"),
    ROW(FK_KV_EXPANSION, "kv_expansion", FINDING_NOTICE, "", BY_US("us_per_forward"),
        "K/V expanded by {copies:n copy kernel}[, {bytes} written], {us_per_forward}"),
    /* a notice below DECODE_BANDWIDTH_NOTICE of the copy ceiling, info from it on (findings.c) */
    ROW(FK_DECODE_BANDWIDTH, "decode_bandwidth", FINDING_INFO, "", NO_RANK,
        "decode reads K+V at {gbps:.0} GB/s[, {ceiling_pct} of the copy ceiling]"),
    ROW(FK_KINETO_ZERO_OCCUPANCY, "kineto_zero_occupancy", FINDING_NOTICE, "device.sharedMemPerBlock", NO_RANK,
        "Kineto occupancy 0%: {shared_mem_bytes} shared memory"),
    ROW(FK_HEAD_DIM_PADDING, "head_dim_padding", FINDING_NOTICE, "facts.head_dim_padding", NO_RANK,
        "head dim padded to a larger kernel"),
    ROW(FK_LAUNCH_API, "launch_api", FINDING_INFO, "", NO_RANK,
        "launch to GPU start[ {launch_to_start_us}]"),
    ROW(FK_HOST_BOUND, "host_bound", FINDING_NOTICE, "", NO_RANK,
        "host-bound: {cpu_us} host, {cuda_us} GPU"),
    /* info when the plan is built once; a notice when rebuilt in every forward */
    ROW(FK_PLAN_CPU_COST, "plan_cpu_cost", FINDING_INFO, "facts.plan_build_us", NO_RANK,
        "cuDNN plan: {setup_us} setup, {cpu_us_per_forward} per forward"),
    ROW(FK_FULLY_MASKED_ROWS, "fully_masked_rows", FINDING_INFO, "facts.fully_masked_rows", NO_RANK,
        "fully-masked rows checked"),
    ROW(FK_DROPPED_RECORDS, "dropped_records", FINDING_WARNING, "", NO_RANK,
        "CUPTI dropped {records:n record}"),
    ROW(FK_THROTTLED_FORWARDS, "throttled_forwards", FINDING_WARNING, "measurement.throttle_fraction,samples", NO_RANK,
        "{throttled} of {forwards:n forward} throttled"),
    /* samples outside physical bounds (analysis_sample_plausible): dropped, counted here */
    ROW(FK_IMPLAUSIBLE_SAMPLES, "implausible_samples", FINDING_WARNING, "samples", NO_RANK,
        "samples of {dropped} of {forwards:n forward} dropped"),
    /* a model trace's, derived by model_findings_derive in this order */
    ROW(FK_ATTENTION_SHARE, "attention_share", FINDING_INFO, "", BY_SHARE("share"),
        "attention {share:pct} of the step's CUDA time"),
    ROW(FK_MATH_FALLBACK, "math_fallback", FINDING_NOTICE, "", BY_US("us_per_step"),
        "SDPA math fallback, {us_per_step} per step"),
    ROW(FK_EAGER_SCORES, "eager_scores", FINDING_NOTICE, "facts.attn_inputs", NO_RANK,
        "eager scores: {bytes_per_layer} per layer"),
    /* a notice from 1% of the step's CUDA time on, info below */
    ROW(FK_KERNEL_ARCH, "kernel_arch", FINDING_NOTICE, "device.computeMajor", BY_US("us_per_step"),
        "{kernels:n kernel} built for sm_{kernel_sm}, {us_per_step}"),
    ROW(FK_FP32_CUDA_CORE_16BIT, "fp32_cuda_core_16bit", FINDING_NOTICE, "facts.fp32_core_inputs", NO_RANK,
        "{kernels_16bit:n FP32 CUDA-core kernel} on 16-bit inputs"),
    ROW(FK_FP32_CUDA_CORE_INPUTS, "fp32_cuda_core_inputs", FINDING_INFO, "facts.fp32_core_inputs", NO_RANK,
        "FP32 CUDA-core kernels given fp32 inputs"),
    ROW(FK_HOST_COPIES, "host_copies", FINDING_NOTICE, "", BY_US("us_per_step"),
        "{copies:n host–device copy}, {host_syncs:n host sync}"),
    ROW(FK_SDPA_INPUT_CONVERSION, "sdpa_input_conversion", FINDING_INFO, "", BY_US("us_per_step"),
        "SDPA converts its inputs: {ops_per_step:n op}, {us_per_step}"),
    ROW(FK_ATTENTION_INPUTS_FUSED, "attention_inputs_fused", FINDING_INFO, "", BY_US("us_per_step"),
        "{ops_per_step:n fused kernel} before SDPA, {us_per_step}"),
    ROW(FK_GQA_EXPANSION, "gqa_expansion", FINDING_NOTICE, "facts.attn_inputs", BY_US("us_per_step"),
        "GQA by copies: {kv_heads} KV heads, {bytes_per_step} per step"),
    /* host-bound is measured: the GPU idling for launches (model_findings.c, pace_finding) */
    ROW(FK_CPU_BOUND_STEP, "cpu_bound_step", FINDING_NOTICE, "", NO_RANK,
        "host-bound step: GPU waits for launches {launch_gap_share:pct}"),
    ROW(FK_HOST_WAITS, "host_waits", FINDING_INFO, "", NO_RANK,
        "GPU-bound: the host waits {host_wait_us} per step"),
    /* the backward's (run --backward), derived by backward_findings_derive in this order; their
     * shares are of the variant's CUDA time per backward */
    ROW(FK_BWD_MEMSET_OUTSIDE_EXPECTATION, "bwd_memset_outside_expectation", FINDING_NOTICE, "backward", NO_RANK,
        "{memsets:n Memset} of {memset_bytes} beyond the {expected_ops} predicted"),
    ROW(FK_BWD_UNEXPECTED_OP_COUNT, "bwd_unexpected_op_count", FINDING_NOTICE, "backward", NO_RANK,
        "{ops} GPU operations, {expected_ops} expected"),
    ROW(FK_BWD_HIDDEN_MEMCPY, "bwd_hidden_memcpy", FINDING_NOTICE, "backward", BY_SHARE("share"),
        "hidden {bytes} Memcpy, {share:pct} of CUDA time"),
    ROW(FK_BWD_FP32_CUDA_CORE_GEMM, "bwd_fp32_cuda_core_gemm", FINDING_NOTICE, "backward", BY_SHARE("share"),
        "{gemms:n FP32 CUDA-core GEMM}, {share:pct} of CUDA time"),
    ROW(FK_BWD_DQ_ACCUMULATION, "bwd_dq_accumulation", FINDING_INFO, "backward", BY_SHARE("share"),
        "dQ accumulated in FP32, {fp32_dq_bytes}"),
    ROW(FK_BWD_RECOMPUTE, "bwd_recompute", FINDING_INFO, "backward", BY_SHARE("share"),
        "P recomputed[, log-sum-exp kernel {share:pct}]"),
    ROW(FK_BWD_KEPT_BYTES, "bwd_kept_bytes", FINDING_INFO, "backward", NO_RANK,
        "forward keeps {kept_bytes} for it"),
    ROW(FK_BWD_INPLACE_ADVICE, "bwd_inplace_advice", FINDING_INFO, "backward", NO_RANK,
        "in-place advice checked: gradients as {@other}'s"),
    ROW(FK_BWD_ROOFLINE, "bwd_roofline", FINDING_INFO, "counters", BY_SHARE("memory_share"),
        "roofline: {memory_bound} memory-, {compute_bound} compute-bound, {neither} neither of {kernels:n kernel}"),
    /* the counters against the prediction, derived by predict_derive (predict.c) */
    /* a warning: the roof or the counters are wrong, not the kernel */
    ROW(FK_ROOF_SHARE_INCONSISTENT, "roof_share_inconsistent", FINDING_WARNING, "counters", NO_RANK,
        "counters inconsistent: {compute_share:pct} of compute roof"),
    ROW(FK_PREDICTION_MISSED, "prediction_missed", FINDING_NOTICE, "counters", BY_DEPARTURE("departure"),
        "prediction missed[ by {departure:pct+}]"),
    ROW(FK_FP32_PIPE_MATH, "fp32_pipe_math", FINDING_NOTICE, "counters", NO_RANK,
        "{fp32_gflop:.3} GFLOP on the FP32 pipes"),
    ROW(FK_MEMCPY_BANDWIDTH, "memcpy_bandwidth", FINDING_NOTICE, "counters", NO_RANK,
        "Memcpy DtoD at {tbps:.2} TB/s"),
    /* a sweep's, derived over the whole sweep by sweep_derive (sweep_findings.c) */
    ROW(FK_SWEEP_CROSSOVER, "sweep_crossover", FINDING_INFO, "", NO_RANK,
        "{@subject} beats {@other} from S = {seq}"),
    ROW(FK_SWEEP_MEMORY_WALL, "sweep_memory_wall", FINDING_INFO, "", NO_RANK,
        "{@subject} out of memory at S = {seq}"),
    ROW(FK_SWEEP_BEST_TFLOPS, "sweep_best_tflops", FINDING_INFO, "", NO_RANK,
        "{@subject} best {tflops:.0} TFLOP/s"),
    ROW(FK_SWEEP_GPU_DIFFERS, "sweep_gpu_differs", FINDING_INFO, "", NO_RANK,
        "GPU {@other} {ratio:.3} for {@subject}"),
    ROW(FK_SWEEP_GPU_AGREES, "sweep_gpu_agrees", FINDING_INFO, "", NO_RANK,
        "GPU {@other} agrees ({variants:n variant})"),
    ROW(FK_SWEEP_SCALING, "sweep_scaling", FINDING_INFO, "", NO_RANK,
        "{@subject} time grows as S{exponent:sup.2}[ at fixed B·S = {tokens}]"),
    ROW(FK_SWEEP_OPS_CHANGE, "sweep_ops_change", FINDING_INFO, "", NO_RANK,
        "{@subject}: {ops_from} to {ops_to:n operation} at S = {seq}"),
    ROW(FK_SWEEP_BEST_KV_BANDWIDTH, "sweep_best_kv_bandwidth", FINDING_INFO, "", NO_RANK,
        "{@subject} best K+V {gbps:.0} GB/s at decode"),
};
