/* The summary table's short phrases (finding_phrases.h). Each finding id has a row of
 * phrase templates, tried in order: the first whose numbers the finding carries is
 * filled in ("{us_per_forward}" in the number's own unit, "{share:pct}" a fraction as a
 * percentage, "{cuda_us_delta:signed}" with its sign, "{value:int}" a count, "{copies:n host
 * copy|host copies}" a count with its noun, "{ops_delta:n+ op|ops}" the same signed). A finding whose
 * id has no row (a future one) gets the first words of its sentence. The rank and the word
 * budget are stated in the header and in README. */
#include "finding_phrases.h"

#include "findings.h"
#include "latex.h"
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char FINDING_RANK_RULE[] =
    "by severity (warning, notice, info), then by the share of the variant's CUDA time the finding accounts for "
    "(larger first; a finding that names no time after those that do), then in the order the findings were derived";

enum { ANY_SEVERITY = -1, PHRASE_TEMPLATES = 3 };

typedef struct phrase_row {
    const char *id;
    int severity; /* ANY_SEVERITY, or the one severity this row is for */
    const char *templates[PHRASE_TEMPLATES];
} phrase_row;

static const phrase_row phrase_rows[] = {
    {"variant_unavailable", ANY_SEVERITY, {"not run: unavailable"}},
    {"variant_skipped", ANY_SEVERITY, {"skipped: cannot take this shape"}},
    {"no_forward", ANY_SEVERITY, {"no forward recorded"}},
    {"dropped_records", ANY_SEVERITY, {"CUPTI dropped {records:n record|records}", "CUPTI dropped records"}},
    {"throttled_forwards", ANY_SEVERITY, {"{throttled:int} of {forwards:n forward|forwards} throttled", "throttled forwards"}},
    {"hidden_memcpy", ANY_SEVERITY,
     {"hidden {bytes} Memcpy, {pct_of_cuda_time} of CUDA time", "hidden Memcpy in every forward"}},
    {"fp32_cuda_core_gemm", ANY_SEVERITY,
     {"FP32 GEMMs on CUDA cores: {ratio} the tensor-core time", "FP32 GEMMs on CUDA cores ({us_per_forward})"}},
    {"mask_rebuild", ANY_SEVERITY, {"causal mask rebuilt per forward ({us_per_forward})"}},
    {"memset_outside_expectation", ANY_SEVERITY, {"{memsets:n Memset|Memsets} beyond the expected ops"}},
    {"unexpected_op_count", ANY_SEVERITY, {"{ops:n op|ops}, {expected_ops:int} expected"}},
    {"host_bound", ANY_SEVERITY, {"host-bound: CPU {cpu_us}, GPU {cuda_us}", "host-bound"}},
    {"kineto_zero_occupancy", ANY_SEVERITY, {"Kineto's occupancy estimate reads 0%"}},
    {"head_dim_padding", ANY_SEVERITY, {"head dim padded"}},
    {"plan_cpu_cost", FINDING_NOTICE, {"plan rebuilt per forward: {plan_build_us} host time", "plan rebuilt per forward"}},
    {"plan_cpu_cost", ANY_SEVERITY, {"one-off setup {setup_us}", "one-off setup cost"}},
    {"ops_vs_previous", ANY_SEVERITY,
     {"{ops_delta:n+ op|ops}, {cuda_us_delta:signed} vs the previous variant", "ops against the previous variant"}},
    {"safe_softmax", ANY_SEVERITY, {"NaN-safe softmax: {kernels:n extra kernel|extra kernels}", "NaN-safe softmax"}},
    {"fused_kernel", ANY_SEVERITY, {"one fused kernel ({us_per_forward})", "one fused kernel"}},
    {"launch_api", ANY_SEVERITY, {"launch to GPU start {launch_to_start_us}", "{launch_apis:int} launch APIs"}},
    {"fully_masked_rows", ANY_SEVERITY, {"fully-masked rows: {value:int} NaN", "fully-masked rows checked"}},
    {"prediction_missed", ANY_SEVERITY, {"DRAM traffic off the prediction"}},
    {"fp32_pipe_math", ANY_SEVERITY, {"GEMM math on the FP32 pipes"}},
    {"memcpy_bandwidth", ANY_SEVERITY, {"Memcpy bandwidth from the counters"}},
    {"kernel_arch", ANY_SEVERITY,
     {"{kernels:n kernel|kernels} for sm_{kernel_sm:int} on sm_{device_sm:int} ({us_per_step} per step)",
      "kernels built for an older GPU"}},
    {"eager_scores", ANY_SEVERITY, {"eager attention writes scores ({bytes_per_layer} per layer)", "eager attention"}},
    {"math_fallback", ANY_SEVERITY, {"SDPA math fallback ({us_per_step} per step)", "SDPA math fallback"}},
    {"cpu_bound_step", ANY_SEVERITY, {"CPU-bound step: CPU {cpu_us}, CUDA {cuda_us}", "CPU-bound step"}},
    {"host_copies", ANY_SEVERITY,
     {"{copies:n host copy|host copies}, {host_syncs:n sync|syncs} per step", "host copies in the step"}},
    {"fp32_cuda_core_16bit", ANY_SEVERITY, {"{kernels_16bit:n FP32 CUDA-core kernel|FP32 CUDA-core kernels} on 16-bit inputs"}},
    {"fp32_cuda_core_inputs", ANY_SEVERITY, {"FP32 CUDA-core kernels on FP32 inputs"}},
    {"attention_share", ANY_SEVERITY, {"attention {share:pct} of the step", "attention's share of the step"}},
};

/* The number `key` of the finding as the spec says, or 0 when it has no finite one. */
static int number_text(const finding *f, const char *key, const char *spec, char *out, size_t n)
{
    double v = findings_value(f, key);
    if (!isfinite(v))
        return 0;
    const char *unit = "";
    for (int i = 0; i < f->n_numbers; i++)
        if (!strcmp(f->numbers[i].key, key))
            unit = f->numbers[i].unit;
    if (spec[0] == 'n' && (spec[1] == ' ' || (spec[1] == '+' && spec[2] == ' '))) {
        /* "n one|many" (a count and its noun), "n+ one|many" (with its sign) */
        const char *forms = spec + (spec[1] == '+' ? 3 : 2), *bar = strchr(forms, '|');
        int one = fabs(v) == 1;
        int len = (int)(bar ? (size_t)(bar - forms) : strlen(forms));
        if (bar && !one)
            forms = bar + 1, len = (int)strlen(forms);
        snprintf(out, n, spec[1] == '+' ? "%+.0f %.*s" : "%.0f %.*s", v, len, forms);
    } else if (!strcmp(spec, "int"))
        snprintf(out, n, "%.0f", v);
    else if (!strcmp(spec, "pct"))
        snprintf(out, n, "%.0f%%", 100 * v);
    else if (!strcmp(spec, "signed") && !strcmp(unit, "us")) {
        char t[32];
        format_us(fabs(v), t, sizeof t);
        snprintf(out, n, "%s%s", v < 0 ? "-" : "+", t);
    }
    else if (!strcmp(spec, "signed"))
        snprintf(out, n, "%+.0f", v);
    else if (!strcmp(unit, "us"))
        format_us(v, out, n);
    else if (!strcmp(unit, "B"))
        human_bytes(v, out, n);
    else if (!strcmp(unit, "%"))
        snprintf(out, n, "%.0f%%", v);
    else if (!strcmp(unit, "x"))
        snprintf(out, n, "%.1f×", v);
    else
        snprintf(out, n, "%.3g", v);
    return 1;
}

/* The template filled in from the finding's numbers: 1, or 0 when a number is missing. */
static int fill(const char *tpl, const finding *f, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *p = tpl; *p;) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        char piece[FINDING_PHRASE_MAX];
        if (close) {
            char key[32] = "", spec[64] = "";
            size_t klen = (size_t)(close - p - 1);
            const char *colon = memchr(p + 1, ':', klen);
            size_t name_len = colon ? (size_t)(colon - p - 1) : klen;
            snprintf(key, sizeof key, "%.*s", (int)name_len, p + 1);
            if (colon)
                snprintf(spec, sizeof spec, "%.*s", (int)(close - colon - 1), colon + 1);
            if (!number_text(f, key, spec, piece, sizeof piece))
                return 0;
            p = close + 1;
        } else {
            const char *next = strchr(p, '{');
            size_t run = next ? (size_t)(next - p) : strlen(p);
            snprintf(piece, sizeof piece, "%.*s", (int)(run < sizeof piece - 1 ? run : sizeof piece - 1), p);
            p += run < sizeof piece - 1 ? run : sizeof piece - 1;
        }
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s", piece);
    }
    return len < n;
}

int finding_words(const char *s)
{
    int words = 0, in_word = 0;
    for (; *s; s++) {
        int space = isspace((unsigned char)*s);
        words += !space && !in_word;
        in_word = !space;
    }
    return words;
}

/* The sentence's first words, for a finding whose id has no row. */
static void sentence_head(const variant_analysis *va, int k, char *out, size_t n)
{
    enum { HEAD_WORDS = 6 };
    char plain[640];
    if (va->meta[k].text[0])
        findings_plain(va->meta[k].text, plain, sizeof plain);
    else {
        char *p = md_to_plain(va->findings[k]);
        snprintf(plain, sizeof plain, "%s", p);
        free(p);
    }
    int words = 0, in_word = 0;
    char *s = plain;
    for (; *s; s++) {
        int space = isspace((unsigned char)*s);
        if (!space && !in_word && ++words > HEAD_WORDS)
            break;
        in_word = !space;
    }
    int cut = *s != '\0';
    while (s > plain && isspace((unsigned char)s[-1]))
        s--;
    *s = '\0';
    snprintf(out, n, "%s%s", plain, cut ? "…" : "");
}

void summary_finding_phrase(const variant_analysis *va, int k, char *out, size_t n)
{
    const finding *f = &va->meta[k];
    for (size_t r = 0; r < sizeof phrase_rows / sizeof phrase_rows[0]; r++) {
        const phrase_row *row = &phrase_rows[r];
        if (strcmp(row->id, f->id) || (row->severity != ANY_SEVERITY && row->severity != (int)f->severity))
            continue;
        for (int t = 0; t < PHRASE_TEMPLATES && row->templates[t]; t++)
            if (fill(row->templates[t], f, out, n))
                return;
    }
    sentence_head(va, k, out, n);
}

/* The share of the variant's median CUDA time the finding names, or -1 when it names none. */
static double cuda_share(const variant_analysis *va, const finding *f)
{
    double pct = findings_value(f, "pct_of_cuda_time");
    if (isfinite(pct))
        return pct / 100;
    static const char *const time_keys[] = {"us_per_forward", "us_per_step"};
    for (size_t i = 0; i < sizeof time_keys / sizeof time_keys[0]; i++) {
        double us = findings_value(f, time_keys[i]);
        if (isfinite(us) && va->cuda_us.n && va->cuda_us.median > 0)
            return us / va->cuda_us.median;
    }
    return -1;
}

typedef struct ranked {
    int k;
    int severity;
    double share;
} ranked;

static int by_rank(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->severity != b->severity)
        return b->severity - a->severity;
    if (a->share != b->share)
        return a->share < b->share ? 1 : -1;
    return a->k - b->k;
}

void finding_rank(const variant_analysis *va, int *order)
{
    ranked r[MAX_FINDINGS];
    int n = va->n_findings < MAX_FINDINGS ? va->n_findings : MAX_FINDINGS;
    for (int k = 0; k < n; k++)
        r[k] = (ranked){k, (int)va->meta[k].severity, cuda_share(va, &va->meta[k])};
    qsort(r, (size_t)n, sizeof r[0], by_rank);
    for (int k = 0; k < n; k++)
        order[k] = r[k].k;
}

void finding_cell_build(const variant_analysis *va, finding_cell *c)
{
    memset(c, 0, sizeof *c);
    int order[MAX_FINDINGS];
    int n = va->n_findings < MAX_FINDINGS ? va->n_findings : MAX_FINDINGS;
    finding_rank(va, order);
    int above_info = n > 0 && va->meta[order[0]].severity > FINDING_INFO;
    int words = 0;
    for (int j = 0; j < n && c->n < FINDING_CELL_MAX_PHRASES; j++) {
        int k = order[j];
        if (above_info && va->meta[k].severity == FINDING_INFO)
            break;
        char phrase[FINDING_PHRASE_MAX];
        summary_finding_phrase(va, k, phrase, sizeof phrase);
        int w = finding_words(phrase);
        int left = n - j - 1; /* "N more" while findings remain */
        if (c->n > 0 && words + w + (left ? FINDING_CELL_MORE_WORDS : 0) > FINDING_CELL_MAX_WORDS)
            break;
        snprintf(c->phrase[c->n], sizeof c->phrase[c->n], "%s", phrase);
        c->index[c->n++] = k;
        words += w;
    }
    c->more = n - c->n;
}

void finding_variant_anchor(int variant, char *out, size_t n) { snprintf(out, n, "v%d", variant + 1); }

void finding_anchor(const variant_analysis *va, int variant, int k, char *out, size_t n)
{
    char id[40];
    int len = 0;
    for (const char *s = va->meta[k].id; *s && len < (int)sizeof id - 1; s++)
        id[len++] = isalnum((unsigned char)*s) || *s == '_' || *s == '-' ? *s : '-';
    id[len] = '\0';
    int repeats = 0;
    for (int j = 0; j < va->n_findings && j < MAX_FINDINGS; j++)
        repeats += j != k && !strcmp(va->meta[j].id, va->meta[k].id);
    if (!len)
        snprintf(out, n, "v%d-finding-%d", variant + 1, k + 1);
    else if (repeats)
        snprintf(out, n, "v%d-%s-%d", variant + 1, id, k + 1);
    else
        snprintf(out, n, "v%d-%s", variant + 1, id);
}
