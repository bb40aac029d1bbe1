#include "findings.h"
#include "measurement_text.h"
#include "alloc.h"

#include "escape.h"
#include "occupancy.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has(const char *name, const char *needle) { return strcasestr(name, needle) != NULL; }

int gemm_on_cuda_cores(const char *n)
{
    return has(n, "sgemm") || has(n, "ffma") || has(n, "simt") || has(n, "f32f32_f32f32");
}

int builds_mask(const char *n)
{
    /* mask_fill: math's -inf fill of the masked positions, a step of the rebuild
     * (naive's masked_fill applies the mask; it is not a rebuild) */
    return has(n, "tril") || has(n, "triu") || has(n, "_ones") || has(n, "where_bias") || has(n, "causal_mask") ||
           has(n, "mask_fill");
}

int safe_softmax_check(const char *n) { return has(n, "isneginf") || has(n, "row_all") || has(n, "where_zero"); }

/* ---- the sentence: plain text with marked names ------------------------------ */

/* Archive text for a sentence: control characters (the markers among them) become a space. */
static void text_buf(char *out, size_t n, const char *s)
{
    esc_copy_utf8(out, n, s ? s : "");
    for (unsigned char *p = (unsigned char *)out; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = ' ';
}

/* A quoted name: the text between the two markers. */
static void code_buf(char *out, size_t n, const char *s)
{
    char t[512];
    text_buf(t, sizeof t, s);
    snprintf(out, n, "%c%s%c", FINDING_CODE_OPEN, t, FINDING_CODE_CLOSE);
    esc_utf8_trim(out);
}

void findings_write(FILE *f, const char *text, finding_span_fn span, void *ctx)
{
    const char *p = text;
    while (*p) {
        int code = *p == FINDING_CODE_OPEN;
        if (code)
            p++;
        size_t len = strcspn(p, code ? "\x02" : "\x01");
        if (len)
            span(f, p, len, code, ctx);
        p += len;
        if (*p == FINDING_CODE_CLOSE)
            p++;
    }
}

static void md_span(FILE *f, const char *s, size_t len, int code, void *ctx)
{
    (void)ctx;
    char *seg = strndup(s, len);
    if (!seg)
        attn_oom();
    if (code)
        esc_md_code(f, seg, 0);
    else
        esc_md_text(f, seg);
    free(seg);
}

static void plain_span(FILE *f, const char *s, size_t len, int code, void *ctx)
{
    (void)code, (void)ctx;
    fwrite(s, 1, len, f);
}

/* Renders into out[n], an ellipsis marking a cut (never cut silently). */
static void render_into(const char *text, finding_span_fn span, char *out, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    findings_write(f, text, span, NULL);
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

/* A finding to fill: its sentence formatted now, its numbers and records added by
 * the caller. Past MAX_FINDINGS the finding goes to a scratch slot, dropped. */
static finding *add(variant_analysis *va, const char *id, finding_severity sev, const char *needs, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
static finding *vadd(variant_analysis *va, const char *id, finding_severity sev, const char *needs, const char *fmt,
                     va_list ap)
{
    static finding scratch;
    if (va->n_findings >= MAX_FINDINGS) {
        memset(&scratch, 0, sizeof scratch);
        return &scratch;
    }
    va->n_findings++;
    finding *f = &va->meta[va->n_findings - 1];
    memset(f, 0, sizeof *f);
    int len = vsnprintf(f->text, sizeof f->text, fmt, ap);
    if (len >= (int)sizeof f->text) { /* never cut silently: an ellipsis marks the cut */
        f->text[sizeof f->text - 5] = '\0';
        esc_utf8_trim(f->text);
        int open = 0; /* a name cut in the middle is closed before the ellipsis */
        for (const char *p = f->text; *p; p++)
            open = *p == FINDING_CODE_OPEN ? 1 : *p == FINDING_CODE_CLOSE ? 0 : open;
        if (open)
            strcat(f->text, "\x02");
        strcat(f->text, "\xe2\x80\xa6");
    }
    findings_markdown(f->text, va->findings[va->n_findings - 1], sizeof va->findings[0]);
    snprintf(f->id, sizeof f->id, "%s", id);
    f->severity = sev;
    snprintf(f->needs, sizeof f->needs, "%s", needs ? needs : "");
    return f;
}

static finding *add(variant_analysis *va, const char *id, finding_severity sev, const char *needs, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    finding *f = vadd(va, id, sev, needs, fmt, ap);
    va_end(ap);
    return f;
}

finding *findings_add(variant_analysis *va, const char *id, finding_severity sev, const char *needs, const char *fmt,
                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    finding *f = vadd(va, id, sev, needs, fmt, ap);
    va_end(ap);
    return f;
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

const finding *findings_find(const variant_analysis *va, const char *id)
{
    for (int i = 0; va && i < va->n_findings; i++)
        if (!strcmp(va->meta[i].id, id))
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

static int is_memcpy(const gpu_op *o) { return o->kind == GPU_MEMCPY; }
static int is_kernel(const gpu_op *o) { return o->kind == GPU_KERNEL; }
static int is_memset(const gpu_op *o) { return o->kind == GPU_MEMSET; }
static int is_gemm(const gpu_op *o) { return o->kind == GPU_KERNEL && classify_op(o) == OPC_GEMM; }
static int is_fp32_gemm(const gpu_op *o) { return is_gemm(o) && gemm_on_cuda_cores(o->name); }
static int is_mask_build(const gpu_op *o)
{
    return o->kind == GPU_KERNEL && (builds_mask(o->name) || op_builds_mask_aten(o));
}
/* PyTorch's _safe_softmax: the kernels it launches besides the softmax itself. */
static int aten_safe_check(const gpu_op *o)
{
    return op_launched_in(o, "aten::_safe_softmax") && !op_launched_in(o, "aten::_softmax");
}
static int is_safe_check(const gpu_op *o)
{
    return o->kind == GPU_KERNEL && (safe_softmax_check(o->name) || aten_safe_check(o));
}

const char *human_bytes(double b, char *buf, size_t n)
{
    if (b >= 1 << 30)
        snprintf(buf, n, "%.3g GiB", b / (1 << 30));
    else if (b >= 1 << 20)
        snprintf(buf, n, "%.3g MiB", b / (1 << 20));
    else if (b >= 1 << 10)
        snprintf(buf, n, "%.3g KiB", b / (1 << 10));
    else
        snprintf(buf, n, "%.0f B", b);
    return buf;
}

/* The representative forward: the median one, which every view shows. */
static const forward *rep_forward(const variant_analysis *va)
{
    int i = analysis_median_forward(va);
    return i < 0 ? NULL : &va->forwards[i];
}

/* First matching op of the representative forward (then of any forward). */
static const gpu_op *first_match(const variant_analysis *va, op_predicate pred)
{
    const forward *r = rep_forward(va);
    for (int k = 0; r && k < r->n_ops; k++)
        if (pred(r->ops[k]))
            return r->ops[k];
    for (int i = 0; i < va->n_forwards; i++)
        for (int k = 0; k < va->forwards[i].n_ops; k++)
            if (pred(va->forwards[i].ops[k]))
                return va->forwards[i].ops[k];
    return NULL;
}

/* Distinct short names of matching ops in the representative forward,
 * comma-separated; a name longer than FINDING_NAME_MAX ends in "…" (the op table
 * of the variant names it in full). */
static void names_of(const variant_analysis *va, op_predicate pred, char *out, size_t n)
{
    out[0] = '\0';
    const forward *f = rep_forward(va);
    if (!f)
        return;
    for (int k = 0; k < f->n_ops; k++) {
        if (!pred(f->ops[k]))
            continue;
        char s[FINDING_NAME_MAX + 8], quoted[400], code[200], aten[96], acode[200];
        findings_short_name(f->ops[k]->name, s, sizeof s);
        code_buf(code, sizeof code, s);
        if (op_aten_name(f->ops[k], aten, sizeof aten)) { /* imported: the ATen op that launched it */
            code_buf(acode, sizeof acode, aten);
            snprintf(quoted, sizeof quoted, "%s from %s", code, acode);
        } else
            snprintf(quoted, sizeof quoted, "%s", code);
        if (strstr(out, quoted)) /* whole quoted name: where_zero is not where_zero_fill */
            continue;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? ", " : "", quoted);
    }
}

static const attn_fact *fact(const variant_result *r, const char *key)
{
    for (int i = 0; i < r->facts.n; i++)
        if (!strcmp(r->facts.item[i].key, key))
            return &r->facts.item[i];
    return NULL;
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

const char *findings_launch_api_name(const api_call *l)
{
    static const char *known[] = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchKernelEx",
                                  "cudaLaunchCooperativeKernel", "cuLaunchKernel", "cuLaunchKernelEx",
                                  "cuLaunchCooperativeKernel", "cudaGraphLaunch", "cuGraphLaunch"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(l->name, known[i]))
            return known[i];
    return l->name;
}

const char *findings_kernel_origin(const gpu_op *o)
{
    const char *n = o->name ? o->name : "";
    if (!strncmp(n, "attnprof_", 9) || strstr(n, " attnprof_"))
        return "ours";
    if (has(n, "cudnn"))
        return "cuDNN";
    /* PyTorch's own kernels: ATen's, its flash and memory-efficient (CUTLASS-built)
     * attention; checked before cuBLAS, whose names share "cutlass" */
    if (has(n, "at::native") || has(n, "pytorch_flash") || !strncmp(n, "fmha_", 5) || has(n, " fmha_") ||
        has(n, "softmax_warp_forward") || has(n, "at::cuda"))
        return "PyTorch";
    if (has(n, "nvjet") || has(n, "cublas") || has(n, "xmma_gemm") || has(n, "sgemm") || has(n, "gemv") ||
        has(n, "cutlass") || has(n, "gemmk1") || has(n, "gemmSN"))
        return "cuBLAS";
    return "unattributed";
}

void findings_origins(const variant_analysis *va, char *out, size_t n)
{
    out[0] = '\0';
    const char *seen[8]; /* static strings of findings_kernel_origin: compared by address */
    int n_seen = 0;
    const forward *f = rep_forward(va);
    for (int k = 0; f && k < f->n_ops; k++) {
        if (f->ops[k]->kind != GPU_KERNEL)
            continue;
        const char *o = findings_kernel_origin(f->ops[k]);
        int j = 0;
        while (j < n_seen && seen[j] != o)
            j++;
        if (j < n_seen || n_seen == 8)
            continue;
        seen[n_seen++] = o;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? ", " : "", o);
    }
}

int findings_record_provenance(run_info *r, const trace *t, char *err, size_t errlen)
{
    analysis *a = calloc(1, sizeof *a);
    if (!a)
        attn_oom();
    if (analysis_build(a, t, r, err, errlen) != 0) {
        free(a);
        return -1;
    }
    for (int i = 0; i < a->n && i < r->n_variants; i++)
        findings_origins(&a->v[i], r->variants[i].kernel_origin, sizeof r->variants[i].kernel_origin);
    analysis_free(a);
    free(a);
    return 0;
}

const char *findings_variant_origin(const analysis *a, const variant_analysis *va, char *buf, size_t n)
{
    (void)a;
    if (va->result->kernel_origin[0])
        return va->result->kernel_origin;
    findings_origins(va, buf, n);
    return buf;
}

/* The library behind an op, from its kernel name (cuBLAS/cuBLASLt, cuDNN, ours). */
static const char *library_of_kernel(const char *n)
{
    gpu_op o = {.name = (char *)n};
    const char *origin = findings_kernel_origin(&o);
    if (!strcmp(origin, "ours"))
        return "attnprof";
    if (!strcmp(origin, "cuDNN") || !strcmp(origin, "cuBLAS"))
        return origin;
    return NULL;
}

int findings_memset_library(const trace *t, const forward *f, int k, const char **library, const gpu_op **next)
{
    *library = NULL;
    *next = NULL;
    const api_call *l = f->launchers[k];
    if (!l || f->ops[k]->kind != GPU_MEMSET)
        return -1;
    /* The first kernel launched after the Memset's call on the same thread, inside
     * the forward, with no other launch in between: the Memset belongs to its library. */
    const gpu_op *best = NULL;
    const api_call *best_l = NULL;
    for (int j = 0; j < f->n_ops; j++) {
        const api_call *lj = f->launchers[j];
        if (j == k || !lj || lj->tid != l->tid || lj->start_ns < l->end_ns)
            continue;
        if (!best_l || lj->start_ns < best_l->start_ns)
            best = f->ops[j], best_l = lj;
    }
    if (!best || best->kind != GPU_KERNEL)
        return -1;
    (void)t;
    *library = library_of_kernel(best->name);
    *next = best;
    return *library ? 0 : -1;
}

static void launch_findings(variant_analysis *va)
{
    /* Launch latency is read off each forward's first kernel (not a Memset or copy
     * before it): the GPU is idle then (the previous forward was synchronized). */
    double *lat = calloc((size_t)(va->n_forwards ? va->n_forwards : 1), sizeof(double));
    int nl = 0;
    if (!lat)
        attn_oom();
    for (int i = 0; i < va->n_forwards; i++) {
        const forward *f = &va->forwards[i];
        for (int k = 0; k < f->n_ops; k++)
            if (f->ops[k]->kind == GPU_KERNEL && f->launchers[k]) {
                lat[nl++] = (double)(f->ops[k]->start_ns - f->launchers[k]->start_ns) / 1000.0;
                break;
            }
    }
    stats s = stats_of(lat, nl);
    free(lat);
    /* Launch APIs of the representative forward's kernels, each counted as itself:
     * cudaLaunchKernelExC is not cudaLaunchKernel. */
    const forward *f = rep_forward(va);
    const char *api[8];
    int count[8], n_api = 0, total = 0;
    for (int k = 0; f && k < f->n_ops; k++) {
        const api_call *l = f->launchers[k];
        if (f->ops[k]->kind != GPU_KERNEL || !l)
            continue;
        total++;
        const char *name = findings_launch_api_name(l);
        int j = 0;
        while (j < n_api && strcmp(api[j], name))
            j++;
        if (j == n_api) {
            if (n_api == 8)
                continue;
            api[n_api] = name, count[n_api++] = 0;
        }
        count[j]++;
    }
    if (!total)
        return;
    char lat_text[64] = "";
    if (s.n)
        snprintf(lat_text, sizeof lat_text, "; first kernel launch → GPU start %.1f µs (median)", s.median);
    char quoted[120];
    finding *fd;
    if (n_api == 1) {
        code_buf(quoted, sizeof quoted, api[0]);
        fd = add(va, "launch_api", FINDING_INFO, "", "%s launched with %s%s%s", total == 1 ? "the kernel" : "every kernel",
                 quoted, !strncmp(api[0], "cu", 2) && strncmp(api[0], "cuda", 4) ? " (driver API)" : "", lat_text);
    } else {
        char list[320] = "";
        for (int j = 0; j < n_api; j++) {
            code_buf(quoted, sizeof quoted, api[j]);
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%d with %s%s", j ? ", " : "", count[j], quoted,
                     !strncmp(api[j], "cu", 2) && strncmp(api[j], "cuda", 4) ? " (driver API)" : "");
        }
        fd = add(va, "launch_api", FINDING_INFO, "", "kernels per forward by launch API: %s%s", list, lat_text);
    }
    findings_number(fd, "kernels", total, "");
    findings_number(fd, "launch_apis", n_api, "");
    if (s.n)
        findings_number(fd, "launch_to_start_us", s.median, "us");
}

/* The correlation ids of the representative forward's ops that match. */
static void records_of(finding *fd, const variant_analysis *va, op_predicate pred)
{
    const forward *f = rep_forward(va);
    for (int k = 0; f && k < f->n_ops; k++)
        if (pred(f->ops[k]))
            findings_record(fd, f->ops[k]);
}

/* The first kernel of the representative forward whose Kineto estimate is 0% because
 * it needs more shared memory per block than Kineto's occupancy call allows (the
 * default limit, not the opted-in one): Kineto's own number when the trace carries
 * it (an import), else Kineto's formula applied to the record. */
int findings_kineto_zero(const analysis *a, const variant_analysis *va, const gpu_op **op, const api_call **via,
                         int *own)
{
    const forward *fw = rep_forward(va);
    const device_props *dev = &a->trace->device;
    for (int k = 0; fw && k < fw->n_ops; k++) {
        const gpu_op *o = fw->ops[k];
        if (o->kind != GPU_KERNEL || dev->smem_per_block <= 0)
            continue;
        occupancy occ;
        char err[64];
        int computed = occupancy_of_op(o, dev, &occ, err, sizeof err) == 0;
        int zero = o->has_kineto_occupancy ? o->kineto_occupancy == 0 : computed && occ.kineto_pct == 0;
        long long smem = (long long)o->static_smem + o->dynamic_smem;
        if (zero && smem > dev->smem_per_block) {
            *op = o;
            *via = fw->launchers[k];
            *own = o->has_kineto_occupancy;
            return 1;
        }
    }
    return 0;
}

static void kineto_zero_finding(const analysis *a, variant_analysis *va)
{
    const gpu_op *op;
    const api_call *via;
    int own;
    if (!findings_kineto_zero(a, va, &op, &via, &own))
        return;
    char nm[FINDING_NAME_MAX + 8], q[200];
    findings_short_name(op->name, nm, sizeof nm);
    code_buf(q, sizeof q, nm);
    int smem = op->static_smem + op->dynamic_smem;
    finding *fd = add(va, "kineto_zero_occupancy", FINDING_NOTICE, "device.sharedMemPerBlock",
                      "Kineto's occupancy estimate for %s is 0%% (%s): it needs %d B of shared memory per block, "
                      "above the %d B default limit that Kineto's occupancy call keeps",
                      q, own ? "Kineto's own number in the trace" : "Kineto's formula on the record", smem,
                      a->trace->device.smem_per_block);
    findings_number(fd, "shared_mem_bytes", smem, "B");
    findings_number(fd, "kineto_limit_bytes", a->trace->device.smem_per_block, "B");
    findings_number(fd, "kineto_pct", 0, "%");
    findings_record(fd, op);
}

/* A variant that never recorded a forward gets one warning saying why, and nothing else. */
static int unrecorded_finding(variant_analysis *va)
{
    const variant_result *r = va->result;
    char text[ATTN_ERR_LEN];
    text_buf(text, sizeof text, r->error);
    if (r->status == VARIANT_UNAVAILABLE) {
        add(va, "variant_unavailable", FINDING_WARNING, "", "not run: %s", text);
        return 1;
    }
    if (r->status == VARIANT_SKIPPED) {
        add(va, "variant_skipped", FINDING_WARNING, "", "skipped (cannot take this shape): %s", text);
        return 1;
    }
    if (!va->n_forwards) {
        add(va, "no_forward", FINDING_WARNING, "", "no forward recorded: %s",
            r->error[0] ? text : "the variant failed before its forwards");
        return 1;
    }
    return 0;
}

static void op_count_finding(const analysis *a, variant_analysis *va)
{
    const variant_result *r = va->result;
    char buf[64];
    finding *fd;
    /* Only a variant that states its expectation (an attnprof run) can differ from it. */
    if (r->expected_ops < 0 || va->ops_per_forward == r->expected_ops)
        return;
    const gpu_op *ms = first_match(va, is_memset);
    const api_call *via = NULL;
    const forward *rf = rep_forward(va);
    int ms_k = -1;
    for (int i = 0; ms && rf && i < rf->n_ops; i++)
        if (rf->ops[i] == ms)
            via = rf->launchers[i], ms_k = i;
    char via_text[240] = "", whose[400] = "";
    if (via) {
        char via_name[200];
        code_buf(via_name, sizeof via_name, via->name);
        snprintf(via_text, sizeof via_text, ", via %s", via_name);
    }
    const char *lib;
    const gpu_op *next;
    if (ms_k >= 0 && findings_memset_library(a->trace, rf, ms_k, &lib, &next) == 0) {
        char kn[FINDING_NAME_MAX + 8], kq[200];
        findings_short_name(next->name, kn, sizeof kn);
        code_buf(kq, sizeof kq, kn);
        snprintf(whose, sizeof whose, ", issued by %s: the next launch on the same host thread is %s's %s, with "
                 "no launch between (CUPTI keeps no call stack, so the Memset is attributed by the launching "
                 "library's API window)",
                 lib, lib, kq);
    }
    if (ms && va->ops_per_forward - r->expected_ops == va->memset_per_forward) {
        fd = add(va, "memset_outside_expectation", FINDING_NOTICE, "expected_ops",
                 "observed %d GPU operations per forward where %d were expected: the extra %s %d Memset (%s%s) "
                 "outside the variant's own expectation%s",
                 va->ops_per_forward, r->expected_ops, va->memset_per_forward == 1 ? "is" : "are",
                 va->memset_per_forward, human_bytes((double)ms->bytes, buf, sizeof buf), via_text, whose);
        findings_number(fd, "memset_bytes", (double)ms->bytes, "B");
        findings_number(fd, "memsets", va->memset_per_forward, "");
        records_of(fd, va, is_memset);
    } else
        fd = add(va, "unexpected_op_count", FINDING_NOTICE, "expected_ops",
                 "observed %d GPU operations per forward where %d were expected", va->ops_per_forward,
                 r->expected_ops);
    findings_number(fd, "ops", va->ops_per_forward, "");
    findings_number(fd, "expected_ops", r->expected_ops, "");
}

static void hidden_memcpy_finding(variant_analysis *va)
{
    int n;
    double us;
    per_forward_median(va, is_memcpy, &n, &us);
    if (n <= 0)
        return;
    char buf[64];
    const gpu_op *m = first_match(va, is_memcpy);
    char kind[32];
    text_buf(kind, sizeof kind, m->copy_kind);
    char where[600] = "";
    if (m->cpu_op_path) { /* imported: named by its CPU op, the outermost first */
        char top[128], code[200], chain[400];
        snprintf(top, sizeof top, "%.*s", (int)strcspn(m->cpu_op_path, " "), m->cpu_op_path);
        code_buf(code, sizeof code, top);
        text_buf(chain, sizeof chain, m->cpu_op_path);
        if (strchr(m->cpu_op_path, ' '))
            snprintf(where, sizeof where, ", hidden in %s (%s)", code, chain);
        else
            snprintf(where, sizeof where, ", from %s", code);
    }
    finding *fd = add(va, "hidden_memcpy", FINDING_NOTICE, "", "a %s Memcpy %s inside every forward (%.1f µs, %.0f%% of CUDA time)%s",
                      human_bytes((double)m->bytes, buf, sizeof buf), kind, us, 100.0 * us / va->cuda_us.median, where);
    findings_number(fd, "bytes", (double)m->bytes, "B");
    findings_number(fd, "copies", n, "");
    findings_number(fd, "us_per_forward", us, "us");
    findings_number(fd, "pct_of_cuda_time", 100.0 * us / va->cuda_us.median, "%");
    records_of(fd, va, is_memcpy);
}

/* Against the previous variant of the run that recorded forwards. */
static void vs_previous_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    for (int p = vi - 1; p >= 0; p--) {
        const variant_analysis *pv = &a->v[p];
        if (!pv->n_forwards)
            continue;
        int d_ops = va->ops_per_forward - pv->ops_per_forward;
        double d_us = va->cuda_us.median - pv->cuda_us.median;
        const char *prefix = pv->memcpy_per_forward > 0 && va->memcpy_per_forward == 0 ? "no Memcpy; " : "";
        char pname[100];
        text_buf(pname, sizeof pname, pv->result->name);
        finding *fd = NULL;
        if (d_ops)
            fd = add(va, "ops_vs_previous", FINDING_INFO, "", "%s%d %s operation%s than %s (%+.1f µs CUDA time per forward)",
                     prefix, abs(d_ops), d_ops < 0 ? "fewer" : "more", abs(d_ops) == 1 ? "" : "s", pname, d_us);
        else if (*prefix)
            fd = add(va, "ops_vs_previous", FINDING_INFO, "", "%sas many operations as %s (%+.1f µs)", prefix, pname, d_us);
        if (fd) {
            findings_number(fd, "ops_delta", d_ops, "");
            findings_number(fd, "cuda_us_delta", d_us, "us");
        }
        break;
    }
}

static void fp32_gemm_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    int n;
    double us;
    char names[640];
    finding *fd;
    per_forward_median(va, is_fp32_gemm, &n, &us);
    if (n <= 0)
        return;
    names_of(va, is_fp32_gemm, names, sizeof names);
    const variant_analysis *ref = analysis_find(a, "naive_inplace");
    for (int p = 0; !ref && a->run->imported && p < a->n; p++) /* imported: the first with tensor-core GEMMs */
        if (p != vi && a->v[p].n_forwards && first_match(&a->v[p], is_gemm) && !first_match(&a->v[p], is_fp32_gemm))
            ref = &a->v[p];
    int rn = 0;
    double rus = 0;
    if (ref && ref->n_forwards)
        per_forward_median(ref, is_gemm, &rn, &rus);
    char rname[100] = "";
    if (ref)
        text_buf(rname, sizeof rname, ref->result->name);
    if (rn > 0 && rus > 0)
        fd = add(va, "fp32_cuda_core_gemm", FINDING_NOTICE, "", "%d GEMMs in FP32 on CUDA cores (%s): %.1f µs per forward, %.1f× the tensor-core GEMMs of "
                "%s (%.1f µs)", n, names, us, us / rus, rname, rus);
    else
        fd = add(va, "fp32_cuda_core_gemm", FINDING_NOTICE, "", "%d GEMMs in FP32 on CUDA cores (%s): %.1f µs per forward", n, names, us);
    findings_number(fd, "gemms", n, "");
    findings_number(fd, "us_per_forward", us, "us");
    if (rn > 0 && rus > 0) {
        findings_number(fd, "tensor_core_gemm_us", rus, "us");
        findings_number(fd, "ratio", us / rus, "x");
    }
    records_of(fd, va, is_fp32_gemm);
}

/* The mask rebuild, the safe-softmax checks and the single fused kernel: what the
 * representative forward's kernels say about the variant's attention. */
static void kernel_shape_findings(variant_analysis *va)
{
    int n;
    double us;
    char names[640];
    finding *fd;
    per_forward_median(va, is_mask_build, &n, &us);
    if (n > 0) {
        names_of(va, is_mask_build, names, sizeof names);
        fd = add(va, "mask_rebuild", FINDING_NOTICE, "", "the causal mask is rebuilt in every forward: %d kernels (%s), %.1f µs", n, names, us);
        findings_number(fd, "kernels", n, "");
        findings_number(fd, "us_per_forward", us, "us");
        records_of(fd, va, is_mask_build);
    }
    per_forward_median(va, is_safe_check, &n, &us);
    if (n > 0) {
        names_of(va, is_safe_check, names, sizeof names);
        if (first_match(va, aten_safe_check))
            fd = add(va, "safe_softmax", FINDING_INFO, "", "safe softmax (\x01" "aten::_safe_softmax\x02): %d extra kernels per forward (%s) replace NaN rows by 0, "
                    "%.1f µs", n, names, us);
        else
            fd = add(va, "safe_softmax", FINDING_INFO, "", "safe softmax: %d extra kernels per forward (%s) replace NaN rows by 0, %.1f µs", n, names, us);
        findings_number(fd, "kernels", n, "");
        findings_number(fd, "us_per_forward", us, "us");
        records_of(fd, va, is_safe_check);
    }
    per_forward_median(va, is_kernel, &n, &us);
    if (n == 1 && va->ops_per_forward <= 2) {
        const gpu_op *k = first_match(va, is_kernel);
        char shortname[256];
        short_kernel_name(k->name, shortname, sizeof shortname);
        code_buf(names, sizeof names, shortname);
        fd = add(va, "fused_kernel", FINDING_INFO, "", "one fused kernel %s (%.1f µs; %d regs/thread, %d B shared memory per block)", names, us,
            k->registers, k->static_smem + k->dynamic_smem);
        findings_number(fd, "us_per_forward", us, "us");
        findings_number(fd, "registers", k->registers, "");
        findings_number(fd, "shared_mem_bytes", k->static_smem + k->dynamic_smem, "B");
        findings_record(fd, k);
    }
}

static void head_dim_padding_finding(variant_analysis *va)
{
    /* A head dim with no kernel of its own ran on a larger one: the time above
     * includes tensor-core work on zero columns. */
    const attn_fact *padding = fact(va->result, "head_dim_padding");
    if (!padding)
        return;
    char text[ATTN_ERR_LEN];
    text_buf(text, sizeof text, padding->value);
    finding *fd = add(va, "head_dim_padding", FINDING_NOTICE, "facts.head_dim_padding", "head dim padded: %s", text);
    findings_number(fd, "value", padding->number, "");
}

static void host_bound_finding(const analysis *a, variant_analysis *va)
{
    /* A model trace's CPU-bound step is said by model_findings.c, with its own numbers. */
    if (va->cpu_us.median > va->cuda_us.median && !findings_model_trace(a, va)) {
        finding *fd = add(va, "host_bound", FINDING_NOTICE, "", "host time per forward (%.1f µs) exceeds GPU time (%.1f µs): the cost moved to the CPU",
            va->cpu_us.median, va->cuda_us.median);
        findings_number(fd, "cpu_us", va->cpu_us.median, "us");
        findings_number(fd, "cuda_us", va->cuda_us.median, "us");
    }
}

static void plan_cost_finding(variant_analysis *va)
{
    const variant_result *r = va->result;
    finding *fd;
    const attn_fact *plan = fact(r, "plan_build_us"), *graph = fact(r, "graph_build_us");
    const attn_fact *heur = fact(r, "heuristics_us"), *replan = fact(r, "replan");
    if (!plan || !isfinite(plan->number))
        return;
    double g = graph && isfinite(graph->number) ? graph->number : 0;
    double h = heur && isfinite(heur->number) ? heur->number : 0;
    if (replan && replan->number > 0)
        fd = add(va, "plan_cpu_cost", FINDING_NOTICE, "facts.plan_build_us", "plan rebuilt in every forward (--cudnn-replan): %.0f µs host time per forward, against a "
                "one-off %.0f µs (graph %.0f + heuristics %.0f + plan %.0f µs) when built once",
            va->cpu_us.median, g + h + plan->number, g, h, plan->number);
    else
        fd = add(va, "plan_cpu_cost", FINDING_INFO, "facts.plan_build_us", "one-off cost %.1f ms in setup (graph %.1f + heuristics %.1f + plan build %.1f ms) vs %.1f µs "
                "host time per forward",
            (g + h + plan->number) / 1000, g / 1000, h / 1000, plan->number / 1000, va->cpu_us.median);
    findings_number(fd, "setup_us", g + h + plan->number, "us");
    findings_number(fd, "plan_build_us", plan->number, "us");
    findings_number(fd, "cpu_us_per_forward", va->cpu_us.median, "us");
    findings_number(fd, "replan", replan && replan->number > 0, "");
}

/* Fully-masked rows, dropped CUPTI records and throttled forwards: what the run's
 * own facts and samples say about how far its numbers can be trusted. */
static void record_quality_findings(const analysis *a, variant_analysis *va)
{
    const variant_result *r = va->result;
    finding *fd;
    const attn_fact *fm = fact(r, "fully_masked_rows");
    if (fm) {
        char text[ATTN_ERR_LEN];
        text_buf(text, sizeof text, fm->value);
        fd = add(va, "fully_masked_rows", FINDING_INFO, "facts.fully_masked_rows", "fully-masked rows → %s", text);
        findings_number(fd, "value", fm->number, "");
    }
    if (r->dropped_records > 0) {
        fd = add(va, "dropped_records", FINDING_WARNING, "", "CUPTI dropped %lld records: counts above may be incomplete", (long long)r->dropped_records);
        findings_number(fd, "records", (double)r->dropped_records, "");
    }
    int throttled = va->all_throttled ? va->n_forwards : va->n_throttled;
    if (a->throttle_judged && throttled > 0) { /* issue 25: measurement_text.c words it for every writer */
        char why[256];
        measurement_throttle_text(a, va, why, sizeof why);
        fd = add(va, "throttled_forwards", FINDING_WARNING, "measurement.throttle_fraction,samples", "%s", why);
        findings_number(fd, "throttled", throttled, "");
        findings_number(fd, "forwards", va->n_forwards + va->n_throttled, "");
        findings_number(fd, "throttle_fraction", a->throttle_fraction, "");
        findings_number(fd, "max_sm_mhz", a->max_sm_mhz, "MHz");
    }
}

/* The findings of one variant, in the order the report lists them. */
static void derive(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    if (unrecorded_finding(va))
        return;
    op_count_finding(a, va);
    hidden_memcpy_finding(va);
    vs_previous_finding(a, vi);
    fp32_gemm_finding(a, vi);
    kernel_shape_findings(va);
    kineto_zero_finding(a, va);
    head_dim_padding_finding(va);
    launch_findings(va);
    host_bound_finding(a, va);
    plan_cost_finding(va);
    record_quality_findings(a, va);
}

int findings_model_trace(const analysis *a, const variant_analysis *va)
{
    if (!a->run->imported || va->n_forwards < 1)
        return 0;
    for (int s = 0; s < va->n_forwards; s++)
        for (int k = 0; k < va->forwards[s].n_ops; k++)
            if (va->forwards[s].ops[k]->cpu_op_path || (va->forwards[s].launchers && va->forwards[s].launchers[k] &&
                                                         strstr(va->forwards[s].launchers[k]->name, "GraphLaunch")))
                return 1; /* a model's op chain, or its work replayed from a CUDA graph */
    return 0;
}

void findings_derive_series(analysis *a)
{
    for (int i = 0; i < a->n; i++) {
        a->v[i].n_findings = 0;
        derive(a, i);
    }
}
