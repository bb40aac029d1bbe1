/* The event state machine of the Kineto-JSON reader (kineto_parse.h): yajl's push
 * parser calls back into a small state machine, a stack of the containers we are inside,
 * the top-level key, the event key and the args key; containers the readers do not need
 * are skipped by depth. An event is complete at the end of its object and goes to the
 * reader's callback; its strings live in buffers reused for the next event. No JSON token
 * longer than INPUT_MAX_TOKEN_BYTES is fed to yajl (it re-scans a token split across
 * chunks: quadratic in its length). yajl's callbacks return 1 to go on and 0 to stop,
 * with st->status saying why. */
#include "kineto_parse.h"
#include "alloc.h"

#include "bounds.h"
#include "err.h"
#include "escape.h"
#include "input.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

enum { MAX_DEPTH = 64 };

typedef enum ctx {
    C_ROOT,      /* the top-level object */
    C_EVENTS,    /* traceEvents */
    C_EVENT,     /* one event */
    C_ARGS,      /* its args */
    C_TRIPLE,    /* args.grid / args.block */
    C_DEVICES,   /* deviceProperties */
    C_DEVICE,    /* one of them */
    C_DIST,      /* distributedInfo */
    C_INPUTS,    /* args "Input Dims" / "Input type" / "Concrete Inputs" (record_shapes), any depth */
    C_SKIP       /* anything else */
} ctx;

typedef struct sbuf {
    char *s;
    size_t cap;
    int set;
} sbuf;

typedef struct state {
    const char *path;
    kineto_event_fn fn;
    void *user;
    kineto_header *hdr;
    ctx stack[MAX_DEPTH];
    int depth;
    int root_seen;
    char top_key[32], ev_key[32], arg_key[48], dev_key[48];
    int triple_which, triple_i; /* 0 grid, 1 block */
    size_t index;
    kineto_event ev;
    sbuf ph, cat, name, copy_kind, variant;
    sbuf inputs[3];  /* Input Dims, Input type, Concrete Inputs */
    int inputs_which, inputs_too_long[3], inputs_count; /* count: elements of a string list so far */
    device_props dev;
    int dev_id;
    kineto_status status;
    char *err;
    size_t errlen;
    input_token_guard guard;
} state;

/* Length of the valid UTF-8 character at s[0..n) (1 to 4), or 0 for a byte that starts
 * none: a stray continuation byte, an overlong form, a cut sequence, or a surrogate
 * (yajl decodes a lone escaped low surrogate, "\udcff", to the three bytes of one). */
static size_t utf8_char(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (!len || len > n)
        return 0;
    unsigned c = s[0] & (0x7f >> len);
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[k] & 0x3f);
    }
    if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) || (len == 4 && (c < 0x10000 || c > 0x10ffff)))
        return 0;
    return len;
}

static void sbuf_reserve(sbuf *b, size_t n)
{
    if (n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p)
            attn_oom(); /* as trace.c: out of host memory is not recoverable here */
        b->s = p;
        b->cap = cap;
    }
}

/* The string as text: each byte that starts no valid UTF-8 character becomes U+FFFD, so a
 * name reaches every writer (figures, documents) as UTF-8. */
static int sbuf_set(sbuf *b, const unsigned char *s, size_t n)
{
    size_t i = 0, len;
    while (i < n && (len = utf8_char(s + i, n - i)) > 0)
        i += len;
    if (i == n) { /* valid: the common case, copied as is */
        sbuf_reserve(b, n);
        memcpy(b->s, s, n);
        b->s[n] = '\0';
    } else {
        sbuf_reserve(b, 3 * n);
        size_t w = 0;
        for (i = 0; i < n;) {
            len = utf8_char(s + i, n - i);
            if (len) {
                memcpy(b->s + w, s + i, len);
                w += len, i += len;
            } else {
                memcpy(b->s + w, "\xef\xbf\xbd", 3);
                w += 3, i++;
            }
        }
        b->s[w] = '\0';
    }
    b->set = 1;
    return 0;
}

/* Keys longer than the buffer cannot be one we look for: they become "\1". */
static void key_copy(char *dst, size_t n, const unsigned char *s, size_t len)
{
    if (len >= n) {
        dst[0] = '\1', dst[1] = '\0';
        return;
    }
    memcpy(dst, s, len);
    dst[len] = '\0';
}

static ctx top(const state *st) { return st->depth ? st->stack[st->depth - 1] : C_ROOT; }

static int push(state *st, ctx c)
{
    if (st->depth == MAX_DEPTH) {
        st->status = KINETO_ERR_JSON;
        snprintf(st->err, st->errlen, "%s: nested deeper than %d levels: not a Kineto trace", st->path, MAX_DEPTH);
        return 0;
    }
    st->stack[st->depth++] = c;
    return 1;
}

static int event_error(state *st, const char *what)
{
    st->status = KINETO_ERR_EVENT;
    snprintf(st->err, st->errlen, "%s: event %zu: %s", st->path, st->index, what);
    return 0;
}

static void event_reset(state *st)
{
    memset(&st->ev, 0, sizeof st->ev);
    st->ph.set = st->cat.set = st->name.set = st->copy_kind.set = st->variant.set = 0;
    for (int i = 0; i < 3; i++)
        st->inputs[i].set = st->inputs_too_long[i] = 0;
}

static void inputs_append(state *st, const char *s, size_t n);

/* A string list's element that is not a scalar: an empty field, so later ones keep their index. */
static void inputs_skip_element(state *st)
{
    if (st->inputs_count++)
        inputs_append(st, "\x1f", 1);
    else
        inputs_append(st, "", 0);
}

static const char *const INPUT_KEYS[3] = {"Input Dims", "Input type", "Concrete Inputs"};

/* Appends text to the record_shapes buffer being read; past KINETO_MAX_INPUTS_TEXT it is dropped. */
static void inputs_append(state *st, const char *s, size_t n)
{
    sbuf *b = &st->inputs[st->inputs_which];
    size_t have = b->set ? strlen(b->s) : 0;
    if (have + n >= KINETO_MAX_INPUTS_TEXT) {
        st->inputs_too_long[st->inputs_which] = 1;
        return;
    }
    char *joined = malloc(have + n + 1);
    if (!joined)
        attn_oom();
    if (have)
        memcpy(joined, b->s, have);
    memcpy(joined + have, s, n);
    sbuf_set(b, (const unsigned char *)joined, have + n);
    free(joined);
}

static const char *const ARG_NAMES[KARG_COUNT] = {
    [KARG_CORRELATION] = "correlation",
    [KARG_EXTERNAL_ID] = "External id",
    [KARG_DEVICE] = "device",
    [KARG_STREAM] = "stream",
    [KARG_CONTEXT] = "context",
    [KARG_REGISTERS] = "registers per thread",
    [KARG_SHARED_MEMORY] = "shared memory",
    [KARG_STATIC_SMEM] = "static shared memory",
    [KARG_DYNAMIC_SMEM] = "dynamic shared memory",
    [KARG_BYTES] = "bytes",
    [KARG_ITERATION] = "iteration",
    [KARG_CBID] = "cbid",
    [KARG_QUEUED] = "queued",
    [KARG_BLOCKS_PER_SM] = "blocks per SM",
    [KARG_WARPS_PER_SM] = "warps per SM",
    [KARG_EST_OCCUPANCY] = "est. achieved occupancy %",
    [KARG_PASS] = "pass",
    [KARG_EVENT_US] = "event_us",
    [KARG_SM_MHZ] = "sm_mhz",
    [KARG_MEM_MHZ] = "mem_mhz",
    [KARG_POWER_W] = "power_w",
    [KARG_TEMP_C] = "temp_c",
};

/* A double as int64, saturated (converting one outside int64's range is undefined;
 * the range checks after reading then refuse the saturated value). Fuzz finding. */
static int64_t sat_i64(double d)
{
    return d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : d == d ? (int64_t)d : 0;
}

static kineto_num number(int is_int, long long iv, double dv)
{
    return (kineto_num){.set = 1, .is_int = is_int, .i = is_int ? iv : sat_i64(dv), .d = is_int ? (double)iv : dv};
}

static int arg_index(const char *key)
{
    for (int a = 0; a < KARG_COUNT; a++)
        if (!strcmp(key, ARG_NAMES[a]))
            return a;
    return ATTN_NONE;
}

static kineto_num *event_num_field(state *st, const char *key)
{
    kineto_event *e = &st->ev;
    if (!strcmp(key, "ts"))
        return &e->ts;
    if (!strcmp(key, "dur"))
        return &e->dur;
    if (!strcmp(key, "pid"))
        return &e->pid;
    if (!strcmp(key, "tid"))
        return &e->tid;
    if (!strcmp(key, "id"))
        return &e->id;
    return NULL;
}

static void dev_set_int(device_props *d, int *id, const char *k, long long v)
{
    struct { const char *key; size_t off; } ints[] = {
        {"computeMajor", offsetof(device_props, major)},
        {"computeMinor", offsetof(device_props, minor)},
        {"maxThreadsPerBlock", offsetof(device_props, max_threads_per_block)},
        {"maxThreadsPerMultiprocessor", offsetof(device_props, max_threads_per_sm)},
        {"regsPerBlock", offsetof(device_props, regs_per_block)},
        {"regsPerMultiprocessor", offsetof(device_props, regs_per_sm)},
        {"warpSize", offsetof(device_props, warp_size)},
        {"sharedMemPerBlock", offsetof(device_props, smem_per_block)},
        {"sharedMemPerMultiprocessor", offsetof(device_props, smem_per_sm)},
        {"numSms", offsetof(device_props, sm_count)},
        {"sharedMemPerBlockOptin", offsetof(device_props, smem_per_block_optin)},
        {"maxBlocksPerMultiprocessor", offsetof(device_props, max_blocks_per_sm)},
        {"reservedSharedMemPerBlock", offsetof(device_props, smem_reserved_per_block)},
        {"l2CacheSize", offsetof(device_props, l2_bytes)},
        {"clockRate", offsetof(device_props, clock_khz)},
        {"memoryClockRate", offsetof(device_props, mem_clock_khz)},
        {"memoryBusWidth", offsetof(device_props, mem_bus_width)},
    };
    if (!strcmp(k, "id")) {
        *id = bounds_int_sat(v);
        return;
    }
    if (!strcmp(k, "totalGlobalMem")) {
        d->total_mem = v;
        return;
    }
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!strcmp(k, ints[i].key)) {
            *(int *)((char *)d + ints[i].off) = bounds_int_sat(v);
            return;
        }
}

static void header_int(state *st, long long v)
{
    kineto_header *h = st->hdr;
    const char *k = st->top_key;
    if (!strcmp(k, "schemaVersion"))
        h->schema_version = bounds_int_sat(v);
    else if (!strcmp(k, "baseTimeNanoseconds"))
        h->base_time_ns = v, h->has_base_time = 1;
    else if (!strcmp(k, "pid"))
        h->pid = bounds_int_sat(v);
    else if (!strcmp(k, "cupti_version"))
        h->cupti_version = bounds_int_sat(v);
    else if (!strcmp(k, "cuda_runtime_version"))
        h->cuda_runtime_version = bounds_int_sat(v);
    else if (!strcmp(k, "cuda_driver_version"))
        h->cuda_driver_version = bounds_int_sat(v);
}

/* The clock's origin as a fraction or a string was ignored, and the trace dated 1970: a
 * header that says its time in another form is refused, never guessed. */
static int base_time_refused(state *st, const char *what)
{
    st->status = KINETO_ERR_EVENT;
    snprintf(st->err, st->errlen, "%s: baseTimeNanoseconds: expected a whole number of nanoseconds since the epoch, "
             "not %s; not a trace a profiler wrote", st->path, what);
    return 0;
}

/* A number (integer or not) or another scalar (is_num == 0). */
static int on_scalar(state *st, int is_num, int is_int, long long iv, double dv, const unsigned char *s,
                     size_t len)
{
    switch (top(st)) {
    case C_SKIP:
        return 1;
    case C_EVENTS:
        return event_error(st, "not an object");
    case C_ROOT:
        if (!(is_num && is_int) && !strcmp(st->top_key, "baseTimeNanoseconds"))
            return base_time_refused(st, is_num ? "a fraction" : s ? "a string" : "null or a boolean");
        if (is_num && is_int)
            header_int(st, iv);
        else if (s && !strcmp(st->top_key, "trace_id"))
            key_copy(st->hdr->trace_id, sizeof st->hdr->trace_id, s, len);
        else if (s && !strcmp(st->top_key, "traceName"))
            key_copy(st->hdr->trace_name, sizeof st->hdr->trace_name, s, len);
        return 1;
    case C_DIST:
        if (is_num && is_int && !strcmp(st->dev_key, "rank"))
            st->hdr->rank = bounds_int_sat(iv);
        else if (is_num && is_int && !strcmp(st->dev_key, "world_size"))
            st->hdr->world_size = bounds_int_sat(iv);
        else if (s && !strcmp(st->dev_key, "backend"))
            key_copy(st->hdr->dist_backend, sizeof st->hdr->dist_backend, s, len);
        return 1;
    case C_DEVICE:
        if (is_num && is_int)
            dev_set_int(&st->dev, &st->dev_id, st->dev_key, iv);
        else if (s && !strcmp(st->dev_key, "name")) { /* cut between UTF-8 characters if it must be */
            size_t n = len < sizeof st->dev.name - 1 ? len : sizeof st->dev.name - 1;
            memcpy(st->dev.name, s, n);
            st->dev.name[n] = '\0';
            esc_utf8_trim(st->dev.name);
        }
        return 1;
    case C_DEVICES:
        return 1;
    case C_EVENT: {
        const char *k = st->ev_key;
        if (s) {
            if (!strcmp(k, "ph"))
                sbuf_set(&st->ph, s, len);
            else if (!strcmp(k, "cat"))
                sbuf_set(&st->cat, s, len);
            else if (!strcmp(k, "name"))
                sbuf_set(&st->name, s, len);
            return 1;
        }
        kineto_num *n = is_num ? event_num_field(st, k) : NULL;
        if (n)
            *n = number(is_int, iv, dv);
        return 1;
    }
    case C_ARGS: {
        const char *k = st->arg_key;
        if (s && !strcmp(k, "copy kind"))
            sbuf_set(&st->copy_kind, s, len);
        else if (s && !strcmp(k, "variant"))
            sbuf_set(&st->variant, s, len);
        int a = arg_index(k);
        if (a >= 0)
            st->ev.arg[a] = is_num ? number(is_int, iv, dv) : (kineto_num){.wrong_type = 1};
        return 1;
    }
    case C_INPUTS: {
        char num[32];
        sbuf *b = &st->inputs[st->inputs_which];
        if (st->inputs_which == 0) {
            size_t have = b->set ? strlen(b->s) : 0;
            if (have && b->s[have - 1] != '[')
                inputs_append(st, ",", 1);
        } else if (st->inputs_count++)
            inputs_append(st, "\x1f", 1);
        else
            inputs_append(st, "", 0);
        if (s)
            inputs_append(st, (const char *)s, len);
        else if (is_num) {
            int k = is_int ? snprintf(num, sizeof num, "%lld", iv) : snprintf(num, sizeof num, "%.17g", dv);
            inputs_append(st, num, (size_t)k);
        }
        return 1;
    }
    case C_TRIPLE:
        if (st->triple_i < 3 && is_num && is_int)
            (st->triple_which ? st->ev.block : st->ev.grid)[st->triple_i] = bounds_int_sat(iv);
        else /* a fraction, a string, or a fourth element: not a dim3 */
            st->ev.bad_triple |= 1 << st->triple_which;
        st->triple_i++;
        return 1;
    }
    return 1;
}

static int cb_null(void *c) { return on_scalar(c, 0, 0, 0, 0, NULL, 0); }
static int cb_bool(void *c, int b) { (void)b; return on_scalar(c, 0, 0, 0, 0, NULL, 0); }
static int cb_int(void *c, long long v) { return on_scalar(c, 1, 1, v, (double)v, NULL, 0); }
static int cb_double(void *c, double v) { return on_scalar(c, 1, 0, 0, v, NULL, 0); }
static int cb_string(void *c, const unsigned char *s, size_t n) { return on_scalar(c, 0, 0, 0, 0, s, n); }

static int cb_map_key(void *c, const unsigned char *s, size_t n)
{
    state *st = c;
    switch (top(st)) {
    case C_ROOT: key_copy(st->top_key, sizeof st->top_key, s, n); break;
    case C_EVENT: key_copy(st->ev_key, sizeof st->ev_key, s, n); break;
    case C_ARGS: key_copy(st->arg_key, sizeof st->arg_key, s, n); break;
    case C_DEVICE:
    case C_DIST: key_copy(st->dev_key, sizeof st->dev_key, s, n); break;
    default: break;
    }
    return 1;
}

static int cb_start_map(void *c)
{
    state *st = c;
    if (!st->root_seen) {
        st->root_seen = 1;
        st->depth = 0;
        return 1; /* the root object is C_ROOT at depth 0 */
    }
    switch (top(st)) {
    case C_EVENTS:
        event_reset(st);
        return push(st, C_EVENT);
    case C_EVENT:
        if (!strcmp(st->ev_key, "args")) {
            st->ev.has_args = 1;
            return push(st, C_ARGS);
        }
        return push(st, C_SKIP);
    case C_ARGS: {
        int a = arg_index(st->arg_key);
        if (a >= 0)
            st->ev.arg[a] = (kineto_num){.wrong_type = 1};
        if (!strcmp(st->arg_key, "grid") || !strcmp(st->arg_key, "block"))
            st->ev.bad_triple |= 1 << (st->arg_key[0] == 'b');
        return push(st, C_SKIP);
    }
    case C_INPUTS: /* an object inside the record_shapes lists: not read, but it holds a place */
        if (st->inputs_which != 0)
            inputs_skip_element(st);
        return push(st, C_SKIP);
    case C_DEVICES:
        memset(&st->dev, 0, sizeof st->dev);
        st->dev.warp_size = 32;
        st->dev_id = st->hdr->n_devices;
        return push(st, C_DEVICE);
    case C_ROOT:
        if (!strcmp(st->top_key, "distributedInfo")) {
            st->hdr->has_distributed = 1;
            return push(st, C_DIST);
        }
        return push(st, C_SKIP);
    default:
        return push(st, C_SKIP);
    }
}

static int cb_end_map(void *c)
{
    state *st = c;
    if (!st->depth)
        return 1; /* end of the root */
    ctx was = st->stack[--st->depth];
    if (was == C_DEVICE && st->hdr->n_devices < KINETO_MAX_DEVICES) {
        st->hdr->device_ids[st->hdr->n_devices] = st->dev_id;
        st->hdr->devices[st->hdr->n_devices++] = st->dev;
    }
    if (was != C_EVENT)
        return 1;
    kineto_event *e = &st->ev;
    e->ph = st->ph.set ? st->ph.s : "";
    e->cat = st->cat.set ? st->cat.s : NULL;
    e->name = st->name.set ? st->name.s : NULL;
    e->copy_kind = st->copy_kind.set ? st->copy_kind.s : NULL;
    e->variant = st->variant.set ? st->variant.s : NULL;
    e->input_dims = st->inputs[0].set && !st->inputs_too_long[0] ? st->inputs[0].s : NULL;
    e->input_types = st->inputs[1].set && !st->inputs_too_long[1] ? st->inputs[1].s : NULL;
    e->concrete_inputs = st->inputs[2].set && !st->inputs_too_long[2] ? st->inputs[2].s : NULL;
    char why[512] = "";
    if (st->fn && st->fn(st->user, st->index, e, why, sizeof why) != 0)
        return event_error(st, why);
    st->index++;
    return 1;
}

static int cb_start_array(void *c)
{
    state *st = c;
    if (!st->root_seen) {
        st->status = KINETO_ERR_SCHEMA;
        snprintf(st->err, st->errlen, "%s: no traceEvents array: not an attnprof/Kineto trace", st->path);
        return 0;
    }
    switch (top(st)) {
    case C_ROOT:
        if (!strcmp(st->top_key, "traceEvents")) {
            st->hdr->has_trace_events = 1;
            return push(st, C_EVENTS);
        }
        if (!strcmp(st->top_key, "deviceProperties"))
            return push(st, C_DEVICES);
        return push(st, C_SKIP);
    case C_EVENTS:
        return event_error(st, "not an object");
    case C_ARGS:
        if (!strcmp(st->arg_key, "grid") || !strcmp(st->arg_key, "block")) {
            st->triple_which = st->arg_key[0] == 'b';
            st->triple_i = 0;
            return push(st, C_TRIPLE);
        }
        if (arg_index(st->arg_key) >= 0)
            st->ev.arg[arg_index(st->arg_key)] = (kineto_num){.wrong_type = 1};
        for (int i = 0; i < 3; i++)
            if (!strcmp(st->arg_key, INPUT_KEYS[i])) {
                st->inputs_which = i;
                st->inputs[i].set = 0;
                st->inputs_count = 0;
                if (i == 0)
                    inputs_append(st, "[", 1);
                return push(st, C_INPUTS);
            }
        return push(st, C_SKIP);
    case C_INPUTS:
        if (st->inputs_which == 0) { /* a tensor's dims inside Input Dims */
            sbuf *b = &st->inputs[0];
            size_t have = b->set ? strlen(b->s) : 0;
            if (have && b->s[have - 1] != '[')
                inputs_append(st, ",", 1);
            inputs_append(st, "[", 1);
            return push(st, C_INPUTS);
        }
        inputs_skip_element(st); /* a list among the types or concrete inputs: kept as an empty field */
        return push(st, C_SKIP);
    default:
        return push(st, C_SKIP);
    }
}

static int cb_end_array(void *c)
{
    state *st = c;
    if (st->depth) {
        if (st->stack[st->depth - 1] == C_INPUTS && st->inputs_which == 0)
            inputs_append(st, "]", 1);
        st->depth--;
    }
    return 1;
}

static const yajl_callbacks CALLBACKS = {cb_null,  cb_bool,      cb_int,     cb_double,      NULL,        cb_string,
                                         cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array};

/* Line and column of byte `off` of the text: counted from the chunks already parsed. */
typedef struct position {
    long long line, col;
} position;

static void advance(position *p, const unsigned char *s, size_t n)
{
    const unsigned char *end = s + n, *nl;
    while ((nl = memchr(s, '\n', (size_t)(end - s))) != NULL) {
        p->line++, p->col = 1;
        s = nl + 1;
    }
    p->col += end - s;
}

static void json_error(state *st, yajl_handle h, const unsigned char *text, size_t len, position pos)
{
    size_t used = yajl_get_bytes_consumed(h);
    advance(&pos, text, used < len ? used : len);
    unsigned char *msg = yajl_get_error(h, 0, text, len);
    char m[160];
    snprintf(m, sizeof m, "%s", msg ? (const char *)msg : "parse error");
    for (char *p = m; *p; p++)
        if (*p == '\n')
            *p = ' ';
    size_t L = strlen(m);
    while (L && m[L - 1] == ' ')
        m[--L] = '\0';
    if (msg)
        yajl_free_error(h, msg);
    st->status = KINETO_ERR_JSON;
    snprintf(st->err, st->errlen, "%s: not valid JSON (line %lld, column %lld: %s)", st->path, pos.line, pos.col, m);
}

/* Feeds one chunk of text to yajl. KINETO_OK, or the failure (also in st->status) with its line. */
static kineto_status parse(state *st, yajl_handle h, const unsigned char *text, size_t len, position *pos)
{
    if (input_token_check(&st->guard, text, len) != 0) {
        st->status = KINETO_ERR_LIMIT;
        snprintf(st->err, st->errlen, "%s: a JSON string or number longer than %zu MiB (after line %lld): not a "
                 "profiler trace (limit in SECURITY.md)", st->path, INPUT_MAX_TOKEN_BYTES >> 20, pos->line);
        return st->status;
    }
    if (yajl_parse(h, text, len) != yajl_status_ok) {
        if (st->status == KINETO_OK)
            json_error(st, h, text, len, *pos);
        return st->status;
    }
    advance(pos, text, len);
    return KINETO_OK;
}

struct kineto_parser {
    state st;
    yajl_handle h;
    position pos;
};

kineto_parser *kineto_parser_new(const char *path, kineto_event_fn fn, void *user, kineto_header *hdr, char *err,
                                 size_t errlen)
{
    kineto_parser *p = calloc(1, sizeof *p);
    if (!p)
        attn_oom();
    p->st.path = path;
    p->st.fn = fn;
    p->st.user = user;
    p->st.hdr = hdr;
    p->st.err = err;
    p->st.errlen = errlen;
    p->pos = (position){1, 1};
    p->h = yajl_alloc(&CALLBACKS, NULL, &p->st);
    if (!p->h)
        attn_oom();
    yajl_config(p->h, yajl_allow_trailing_garbage, 0);
    return p;
}

kineto_status kineto_parser_feed(kineto_parser *p, const unsigned char *text, size_t len)
{
    return parse(&p->st, p->h, text, len, &p->pos);
}

kineto_status kineto_parser_finish(kineto_parser *p)
{
    state *st = &p->st;
    if (yajl_complete_parse(p->h) != yajl_status_ok) {
        if (st->status == KINETO_OK)
            json_error(st, p->h, (const unsigned char *)"", 0, p->pos);
        return st->status;
    }
    if (!st->hdr->has_trace_events) {
        st->status = KINETO_ERR_SCHEMA;
        snprintf(st->err, st->errlen, "%s: no traceEvents array: not an attnprof/Kineto trace", st->path);
    }
    return st->status;
}

kineto_status kineto_parser_status(const kineto_parser *p) { return p->st.status; }
long long kineto_parser_line(const kineto_parser *p) { return p->pos.line; }
size_t kineto_parser_events(const kineto_parser *p) { return p->st.index; }

void kineto_parser_free(kineto_parser *p)
{
    if (!p)
        return;
    state *st = &p->st;
    yajl_free(p->h);
    free(st->ph.s), free(st->cat.s), free(st->name.s), free(st->copy_kind.s), free(st->variant.s);
    for (int i = 0; i < 3; i++)
        free(st->inputs[i].s);
    free(p);
}
