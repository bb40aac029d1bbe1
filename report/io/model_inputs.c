/* Attention inputs from record_shapes (model_inputs.h). The first attention of a
 * trace is taken: in a model whose layers share one shape that is every layer's; a
 * model whose layers differ would need one line per layer, which a fact does not
 * hold (the report then says "first attention"). Dims are read from the op's own
 * Input Dims, never guessed: an op whose dims are not 4-D tensors is passed over. */
#include "model_inputs.h"

#include "alloc.h"

#include "err.h"
#include "exit_codes.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Up to `max` tensors of up to 4 dims from "[[4,16,1024,128],[],[4,4]]"; rank[i] = -1 past the end. */
static int parse_dims(const char *s, long long dims[][4], int rank[], int max)
{
    int n = 0;
    if (!s || *s != '[')
        return 0;
    s++;
    while (*s && *s != ']' && n < max) {
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s != '[')
            return n;
        s++;
        rank[n] = 0;
        while (*s && *s != ']') {
            char *end;
            long long v = strtoll(s, &end, 10);
            if (end == s)
                break;
            if (rank[n] < 4)
                dims[n][rank[n]] = v;
            rank[n]++;
            s = *end == ',' ? end + 1 : end;
        }
        if (*s == ']')
            s++;
        n++;
    }
    return n;
}

/* The i-th '\x1f'-separated field of a list into out ("" when absent). */
static void list_field(const char *list, int i, char *out, size_t n)
{
    out[0] = '\0';
    if (!list)
        return;
    for (int k = 0; k < i; k++) {
        list = strchr(list, '\x1f');
        if (!list)
            return;
        list++;
    }
    size_t len = strcspn(list, "\x1f");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), list);
}

static void dtype_short(const char *torch_type, char *out, size_t n)
{
    static const struct { const char *torch, *name; } names[] = {
        {"c10::BFloat16", "bf16"}, {"c10::Half", "fp16"}, {"float", "fp32"}, {"double", "fp64"},
        {"c10::Float8_e4m3fn", "fp8_e4m3"}, {"c10::Float8_e5m2", "fp8_e5m2"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(torch_type, names[i].torch)) {
            snprintf(out, n, "%s", names[i].name);
            return;
        }
    snprintf(out, n, "%s", torch_type[0] ? torch_type : "dtype not recorded");
}

static int fits_int(long long v) { return v > 0 && v < (1LL << 30); }

/* q [B, Hq, S_q, D] and k [B, Hkv, S_kv, D] of a fused op's first two inputs. */
static int qkv_from(const kineto_event *e, model_attn_kind kind, model_attn_inputs *m)
{
    long long d[2][4];
    int rank[2] = {-1, -1};
    if (parse_dims(e->input_dims, d, rank, 2) < 2 || rank[0] != 4 || rank[1] != 4)
        return 0;
    for (int i = 0; i < 4; i++)
        if (!fits_int(d[0][i]) || !fits_int(d[1][i]))
            return 0;
    if (d[0][0] != d[1][0] || d[0][3] != d[1][3])
        return 0;
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->batch = (int)d[0][0], m->heads_q = (int)d[0][1], m->seq_q = (int)d[0][2], m->dim = (int)d[0][3];
    m->heads_kv = (int)d[1][1], m->seq_kv = (int)d[1][2];
    char t[48];
    list_field(e->input_types, 0, t, sizeof t);
    dtype_short(t, m->dtype, sizeof m->dtype);
    m->causal = m->gqa = -1;
    snprintf(m->op, sizeof m->op, "%.63s", e->name);
    return 1;
}

/* Where an attention op keeps attn_mask, is_causal and enable_gqa among its inputs (-1: none). */
static const struct { const char *op; int mask, causal, gqa; } ATTENTION_ARGS[] = {
    {"aten::scaled_dot_product_attention", 3, 5, 7},               /* q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa */
    {"aten::_scaled_dot_product_cudnn_attention", 3, 6, -1},       /* q, k, v, attn_bias, log_sumexp, dropout_p, is_causal, … */
    {"aten::_scaled_dot_product_efficient_attention", 3, 6, -1},   /* q, k, v, attn_bias, log_sumexp, dropout_p, is_causal, scale */
    {"aten::_scaled_dot_product_flash_attention", -1, 4, -1},      /* q, k, v, dropout_p, is_causal, debug_mask, scale */
    {"aten::_scaled_dot_product_attention_math", 3, 5, 8},         /* q, k, v, attn_mask, dropout_p, is_causal, …, enable_gqa */
    {"aten::_scaled_dot_product_fused_attention_overrideable", 3, 5, -1},
};

/* A flag argument of the op: 1 (True), 0 (False), or ATTN_NONE when not recorded. */
static int flag_field(const kineto_event *e, int i)
{
    char c[16];
    if (i < 0)
        return ATTN_NONE;
    list_field(e->concrete_inputs, i, c, sizeof c);
    return !strcmp(c, "True") ? 1 : !strcmp(c, "False") ? 0 : ATTN_NONE;
}

/* The i-th tensor's dims as "[2,1,1024,1024]" (the recorded text, spaces dropped); "" when it has none. */
static void tensor_dims_text(const char *dims, int i, char *out, size_t n)
{
    out[0] = '\0';
    if (!dims || *dims != '[')
        return;
    const char *p = dims + 1;
    for (int k = 0; *p && k <= i; k++) {
        while (*p == ',' || *p == ' ')
            p++;
        if (*p != '[')
            return;
        const char *end = strchr(p, ']');
        if (!end)
            return;
        if (k == i && end > p + 1) {
            size_t w = 0;
            for (const char *c = p; c <= end && w + 1 < n; c++)
                if (*c != ' ')
                    out[w++] = *c;
            out[w] = '\0';
        }
        p = end + 1;
    }
}

/* q, k, v of an attention op with its mask, is_causal and enable_gqa; 0 when it is none or its dims are not 4-D. */
static int attention_op_inputs(const kineto_event *e, model_attn_kind kind, model_attn_inputs *m)
{
    for (size_t i = 0; i < sizeof ATTENTION_ARGS / sizeof *ATTENTION_ARGS; i++) {
        if (strcmp(e->name, ATTENTION_ARGS[i].op) || !qkv_from(e, kind, m))
            continue;
        m->causal = flag_field(e, ATTENTION_ARGS[i].causal);
        m->gqa = flag_field(e, ATTENTION_ARGS[i].gqa);
        char dims[40], t[48], d[16];
        if (ATTENTION_ARGS[i].mask >= 0) {
            tensor_dims_text(e->input_dims, ATTENTION_ARGS[i].mask, dims, sizeof dims);
            list_field(e->input_types, ATTENTION_ARGS[i].mask, t, sizeof t);
            dtype_short(t, d, sizeof d);
            if (dims[0] && t[0])
                snprintf(m->mask, sizeof m->mask, "%s %s", d, dims);
        }
        return 1;
    }
    return 0;
}

/* The first tensor's dims, up to 8 of them; its rank, or -1. */
static int first_tensor_dims(const char *s, long long *dims, int max)
{
    if (!s || s[0] != '[' || s[1] != '[')
        return ATTN_NONE;
    s += 2;
    int r = 0;
    while (*s && *s != ']') {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s)
            return ATTN_NONE;
        if (r < max)
            dims[r] = v;
        r++;
        s = *end == ',' ? end + 1 : end;
    }
    return r;
}

/* K/V heads repeated before attention: repeat_kv's reshape of [B, Hkv, n_rep, S, D] (from an
 * expand), or repeat_interleave(k, n_rep, dim=1) of [B, Hkv, S, D]. */
static void see_expansion(model_inputs_scan *s, const kineto_event *e)
{
    long long d[8];
    int r = first_tensor_dims(e->input_dims, d, 8);
    int reshape = !strcmp(e->name, "aten::reshape") || !strcmp(e->name, "aten::_unsafe_view");
    if (reshape && r == 5 && d[2] > 1 && fits_int(d[0]) && fits_int(d[1]) && fits_int(d[2]) && fits_int(d[4])) {
        s->expand_batch = (int)d[0], s->expand_heads = (int)d[1], s->expand_rep = (int)d[2];
        s->expand_dim = (int)d[4];
    } else if (!strcmp(e->name, "aten::repeat_interleave") && r == 4) {
        char rep[24], dim[8];
        list_field(e->concrete_inputs, 1, rep, sizeof rep);
        list_field(e->concrete_inputs, 2, dim, sizeof dim);
        long long n = strtoll(rep, NULL, 10);
        if (n > 1 && n < 4096 && !strcmp(dim, "1") && fits_int(d[0]) && fits_int(d[1]) && fits_int(d[3])) {
            s->expand_batch = (int)d[0], s->expand_heads = (int)d[1], s->expand_rep = (int)n;
            s->expand_dim = (int)d[3];
        }
    }
    if (s->expand_rep)
        snprintf(s->expand_op, sizeof s->expand_op, "%.31s", e->name);
}

void model_inputs_finish(model_inputs_scan *s)
{
    model_attn_inputs *m = &s->found;
    if (m->kind == MODEL_ATTN_NONE && s->backend.kind != MODEL_ATTN_NONE)
        *m = s->backend;
    if (m->kind != MODEL_ATTN_NONE && s->expand_rep > 1 && m->batch == s->expand_batch && m->dim == s->expand_dim &&
        m->heads_kv == s->expand_heads * s->expand_rep) {
        m->heads_kv_model = s->expand_heads;
        snprintf(m->expand_op, sizeof m->expand_op, "%s", s->expand_op);
    }
}

static const char *const GEMM_OPS[] = {"aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::matmul",
                                       "aten::linear", "aten::_convolution", "aten::cudnn_convolution",
                                       "aten::convolution"};

static void see_gemm(model_inputs_scan *s, const kineto_event *e)
{
    if (!e->input_types || !e->ts.set || !e->dur.set || !e->tid.is_int || s->n_gemms >= MODEL_MAX_GEMM_OPS)
        return;
    size_t g = 0;
    while (g < sizeof GEMM_OPS / sizeof *GEMM_OPS && strcmp(e->name, GEMM_OPS[g]))
        g++;
    if (g == sizeof GEMM_OPS / sizeof *GEMM_OPS)
        return;
    if (s->n_gemms == s->cap_gemms) {
        s->cap_gemms = s->cap_gemms ? s->cap_gemms * 2 : 256;
        s->gemms = realloc(s->gemms, s->cap_gemms * sizeof *s->gemms);
        if (!s->gemms)
            attn_oom();
    }
    model_op_dtype *o = &s->gemms[s->n_gemms++];
    o->tid = (int)e->tid.i;
    o->start_ns = llround(e->ts.d * 1000.0);
    o->end_ns = llround((e->ts.d + e->dur.d) * 1000.0);
    char t[48] = "";
    for (int i = 0; i < 4 && !t[0]; i++) /* the first tensor input (addmm's bias, a conv's input) */
        list_field(e->input_types, i, t, sizeof t);
    dtype_short(t, o->dtype, sizeof o->dtype);
    snprintf(o->op, sizeof o->op, "%s", e->name);
}

static int fp32_core_kernel(const char *n)
{
    return strcasestr(n, "sgemm") || strcasestr(n, "ffma") || strcasestr(n, "simt") || strcasestr(n, "f32f32_f32f32") ||
           strcasestr(n, "convolve_sgemm");
}

typedef struct corr_index {
    uint32_t correlation;
    size_t index;
} corr_index;

static int cmp_corr(const void *a, const void *b)
{
    const corr_index *x = a, *y = b;
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static int cmp_gemm(const void *a, const void *b)
{
    const model_op_dtype *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* How far back from the last op started before a launch the innermost enclosing one is
 * looked for: ops on one thread nest, and a GEMM op holds few others. */
enum { ENCLOSING_LOOKBACK = 64 };

void model_inputs_fp32_cores(model_inputs_scan *s, const trace *t, size_t ops0, size_t apis0, int64_t shift_ns,
                             int *n16, int *n32, char *text, size_t n)
{
    *n16 = *n32 = 0;
    text[0] = '\0';
    size_t n_apis = t->n_apis - apis0;
    if (s->n_gemms && n_apis) {
        /* n·log n: the file's calls by correlation id, the GEMM ops by thread and start */
        corr_index *by_corr = malloc(n_apis * sizeof *by_corr);
        if (!by_corr)
            attn_oom();
        for (size_t k = 0; k < n_apis; k++)
            by_corr[k] = (corr_index){t->apis[apis0 + k].correlation, apis0 + k};
        qsort(by_corr, n_apis, sizeof *by_corr, cmp_corr);
        qsort(s->gemms, s->n_gemms, sizeof *s->gemms, cmp_gemm);
        int first16 = 0;
        for (size_t i = ops0; i < t->n_ops; i++) {
            const gpu_op *o = &t->ops[i];
            if (o->kind != GPU_KERNEL || !o->name || !fp32_core_kernel(o->name))
                continue;
            corr_index key = {o->correlation, 0};
            const corr_index *ci = bsearch(&key, by_corr, n_apis, sizeof *by_corr, cmp_corr);
            if (!ci)
                continue;
            const api_call *a = &t->apis[ci->index];
            /* the last GEMM op of the thread started at or before the launch */
            size_t lo = 0, hi = s->n_gemms;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const model_op_dtype *m = &s->gemms[mid];
                if (m->tid < a->tid || (m->tid == a->tid && m->start_ns + shift_ns <= a->start_ns))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            const model_op_dtype *best = NULL;
            for (size_t g = lo, back = 0; g > 0 && back < ENCLOSING_LOOKBACK && !best; g--, back++) {
                const model_op_dtype *m = &s->gemms[g - 1];
                if (m->tid != a->tid)
                    break;
                if (a->start_ns <= m->end_ns + shift_ns)
                    best = m;
            }
            if (!best)
                continue;
            int half = model_dtype_bytes(best->dtype) == 2;
            *n16 += half;
            *n32 += !strcmp(best->dtype, "fp32");
            if ((half && !first16) || !text[0]) {
                snprintf(text, n, "%s with %s inputs", best->op, best->dtype);
                first16 |= half;
            }
        }
        free(by_corr);
    }
    free(s->gemms);
    s->gemms = NULL;
    s->n_gemms = s->cap_gemms = 0;
}

void model_inputs_see(model_inputs_scan *s, const kineto_event *e)
{
    if (e->cat && !strcmp(e->cat, "cpu_op") && e->name)
        see_gemm(s, e);
    /* Under autocast the public SDPA op sees the caller's dtype; the backend op it
     * dispatches to (the next aten::_scaled_dot_product_*) sees the one that ran. */
    if (s->found.kind == MODEL_ATTN_SDPA && !s->backend_seen && e->cat && !strcmp(e->cat, "cpu_op") && e->name &&
        !strncmp(e->name, "aten::_scaled_dot_product_", 26) && !strstr(e->name, "backward") && e->input_types) {
        char t[48], d[16];
        s->backend_seen = 1;
        list_field(e->input_types, 0, t, sizeof t);
        dtype_short(t, d, sizeof d);
        if (t[0] && strcmp(d, s->found.dtype)) {
            snprintf(s->found.dtype, sizeof s->found.dtype, "%s", d);
            snprintf(s->found.op, sizeof s->found.op, "%.63s", e->name);
        }
        return;
    }
    if (!e->cat || strcmp(e->cat, "cpu_op") || !e->name || !e->input_dims)
        return;
    const char *n = e->name;
    if (!s->expand_rep)
        see_expansion(s, e);
    if (s->found.kind != MODEL_ATTN_NONE)
        return;
    if (!strcmp(n, "aten::scaled_dot_product_attention")) {
        attention_op_inputs(e, MODEL_ATTN_SDPA, &s->found);
        return;
    }
    if (s->backend.kind == MODEL_ATTN_NONE && !strncmp(n, "aten::_scaled_dot_product_", 26) && !strstr(n, "backward")) {
        attention_op_inputs(e, MODEL_ATTN_SDPA, &s->backend);
        return;
    }
    if (strstr(n, "flex_attention") && !strstr(n, "backward")) {
        qkv_from(e, MODEL_ATTN_FLEX, &s->found);
        return;
    }
    if (!strcmp(n, "aten::matmul")) {
        long long d[2][4];
        int rank[2] = {-1, -1};
        s->pending_matmul = 0;
        if (parse_dims(e->input_dims, d, rank, 2) == 2 && rank[0] == 4 && rank[1] == 4 && d[0][0] == d[1][0] &&
            d[0][1] == d[1][1] && d[0][3] == d[1][2] && fits_int(d[0][0]) && fits_int(d[0][1]) &&
            fits_int(d[0][2]) && fits_int(d[0][3]) && fits_int(d[1][3])) {
            model_attn_inputs *m = &s->matmul;
            memset(m, 0, sizeof *m);
            m->kind = MODEL_ATTN_EAGER;
            m->batch = (int)d[0][0], m->heads_q = m->heads_kv = (int)d[0][1], m->seq_q = (int)d[0][2];
            m->dim = (int)d[0][3], m->seq_kv = (int)d[1][3];
            char t[48];
            list_field(e->input_types, 0, t, sizeof t);
            dtype_short(t, m->dtype, sizeof m->dtype);
            m->causal = -1;
            snprintf(m->op, sizeof m->op, "aten::matmul and aten::softmax");
            s->pending_matmul = 1;
        }
        return;
    }
    if (s->pending_matmul && (!strcmp(n, "aten::softmax") || !strcmp(n, "aten::_safe_softmax"))) {
        long long d[1][4];
        int rank[1] = {-1};
        const model_attn_inputs *m = &s->matmul;
        if (parse_dims(e->input_dims, d, rank, 1) == 1 && rank[0] == 4 && d[0][0] == m->batch &&
            d[0][1] == m->heads_q && d[0][2] == m->seq_q && d[0][3] == m->seq_kv)
            s->found = *m;
        s->pending_matmul = 0;
    }
}

const char *model_attn_kind_name(model_attn_kind k)
{
    return k == MODEL_ATTN_SDPA ? "sdpa" : k == MODEL_ATTN_FLEX ? "flex" : k == MODEL_ATTN_EAGER ? "eager" : "none";
}

void model_inputs_format(const model_attn_inputs *m, char *out, size_t n)
{
    int w = snprintf(out, n, "%s: B=%d, Hq=%d, Hkv=%d, S_q=%d, S_kv=%d, D=%d, %s, %s, from %s",
                     model_attn_kind_name(m->kind), m->batch, m->heads_q, m->heads_kv, m->seq_q, m->seq_kv, m->dim,
                     m->dtype, m->causal == 1 ? "causal" : m->causal == 0 ? "not causal" : "causality not recorded",
                     m->op);
    if (w > 0 && (size_t)w < n && m->mask[0])
        w += snprintf(out + w, n - (size_t)w, "; mask %s", m->mask);
    if (w > 0 && (size_t)w < n && m->gqa == 1)
        w += snprintf(out + w, n - (size_t)w, "; enable_gqa");
    if (w > 0 && (size_t)w < n && m->heads_kv_model > 0)
        snprintf(out + w, n - (size_t)w, "; kv_heads %d by %s", m->heads_kv_model, m->expand_op);
}

int model_inputs_parse(const char *text, model_attn_inputs *m)
{
    char kind[16], causal[32];
    int used = 0;
    memset(m, 0, sizeof *m);
    if (sscanf(text, "%15[a-z]: B=%d, Hq=%d, Hkv=%d, S_q=%d, S_kv=%d, D=%d, %15[^,], %31[^,], from %n", kind,
               &m->batch, &m->heads_q, &m->heads_kv, &m->seq_q, &m->seq_kv, &m->dim, m->dtype, causal, &used) != 9 ||
        !used)
        return EXIT_BAD_ARCHIVE;
    m->kind = !strcmp(kind, "sdpa") ? MODEL_ATTN_SDPA : !strcmp(kind, "flex") ? MODEL_ATTN_FLEX
              : !strcmp(kind, "eager") ? MODEL_ATTN_EAGER : MODEL_ATTN_NONE;
    if (m->kind == MODEL_ATTN_NONE || m->batch <= 0 || m->heads_q <= 0 || m->heads_kv <= 0 || m->seq_q <= 0 ||
        m->seq_kv <= 0 || m->dim <= 0)
        return EXIT_BAD_ARCHIVE;
    m->causal = !strcmp(causal, "causal") ? 1 : !strcmp(causal, "not causal") ? 0 : -1;
    const char *rest = text + used;
    size_t op_len = strcspn(rest, ";");
    snprintf(m->op, sizeof m->op, "%.*s", (int)(op_len < sizeof m->op ? op_len : sizeof m->op - 1), rest);
    m->gqa = -1;
    const char *x;
    if ((x = strstr(rest, "; mask ")) != NULL)
        snprintf(m->mask, sizeof m->mask, "%.*s", (int)strcspn(x + 7, ";"), x + 7);
    if (strstr(rest, "; enable_gqa"))
        m->gqa = 1;
    if ((x = strstr(rest, "; kv_heads ")) != NULL &&
        sscanf(x, "; kv_heads %d by %31[^;]", &m->heads_kv_model, m->expand_op) != 2)
        m->heads_kv_model = 0, m->expand_op[0] = '\0';
    return EXIT_OK;
}

int model_inputs_of(const variant_result *v, model_attn_inputs *m)
{
    for (int i = 0; i < v->facts.n; i++)
        if (!strcmp(v->facts.item[i].key, "attn_inputs"))
            return model_inputs_parse(v->facts.item[i].value, m) == 0;
    return 0;
}

int model_inputs_any(const run_info *r)
{
    model_attn_inputs m;
    for (int i = 0; i < r->n_variants; i++)
        if (model_inputs_of(&r->variants[i], &m))
            return 1;
    return 0;
}

int model_dtype_bytes(const char *dtype)
{
    if (!strcmp(dtype, "bf16") || !strcmp(dtype, "fp16"))
        return 2;
    if (!strcmp(dtype, "fp32"))
        return 4;
    if (!strcmp(dtype, "fp64"))
        return 8;
    if (!strncmp(dtype, "fp8", 3))
        return 1;
    return 0;
}
