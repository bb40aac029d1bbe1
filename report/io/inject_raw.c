/* The raw file of `attnprof record` read into the in-memory trace (inject_raw.h): one pass
 * over the lines, each record's letter choosing its fields, then what the trace keeps.
 * Kernels, memcpy and memset become GPU operations; runtime and driver API calls are kept
 * where they launched GPU work (cuBLAS, cuDNN and Triton launch through the driver),
 * synchronised, copied, set memory, recorded or waited on an event or launched a graph
 * (the rest, cudaGetDevice and the like, are counted only: the library records them only
 * with ATTNPROF_INJECT_ALL_APIS=1); NVTX starts and ends are paired by CUPTI's range id
 * into annotation ranges.
 * Nothing of CUDA is needed: the file is text. */
#include "inject_raw.h"

#include "alloc.h"
#include "err.h"
#include "escape.h"
#include "input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FIELDS 24

typedef struct open_range {
    uint32_t id, tid;
    int64_t start;
    char *name;
} open_range;

typedef struct reader {
    trace *t;
    inject_raw *m;
    const char *variant;
    trace calls;              /* API calls, until the operations' ids are known */
    open_range *open;
    size_t n_open, cap_open;
} reader;

/* Splits line at tabs into at most max fields, the last taking the rest; returns the count. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max - 1) {
        f[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            return n;
        *tab = '\0';
        p = tab + 1;
    }
    f[n++] = p;
    return n;
}

static int64_t num(const char *s, int *bad)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno)
        *bad = 1;
    return (int64_t)v;
}

/* The fields every GPU operation's line starts with: start end corr dev stream ctx. */
static gpu_op op_fields(gpu_op_kind kind, char **f, int *bad)
{
    return (gpu_op){.kind = kind,
                    .start_ns = num(f[1], bad),
                    .end_ns = num(f[2], bad),
                    .correlation = (uint32_t)num(f[3], bad),
                    .device = (int)num(f[4], bad),
                    .stream = (int)num(f[5], bad),
                    .context = (int)num(f[6], bad)};
}

static int add_kernel(reader *r, char **f, int n)
{
    int bad = n != 18;
    if (bad)
        return 1;
    gpu_op o = op_fields(GPU_KERNEL, f, &bad);
    for (int d = 0; d < 3; d++) {
        o.grid[d] = (int)num(f[7 + d], &bad);
        o.block[d] = (int)num(f[10 + d], &bad);
    }
    o.registers = (int)num(f[13], &bad);
    o.static_smem = (int)num(f[14], &bad);
    o.dynamic_smem = (int)num(f[15], &bad);
    o.name = f[17];
    num(f[16], &bad); /* the graph id: the launch's correlation id says the same */
    if (!bad) {
        trace_add_op(r->t, &o);
        r->m->n_kernels++;
    }
    return bad;
}

static const char *copy_long_name(const char *kind)
{
    static const struct { const char *kind, *name; } names[] = {
        {"HtoD", "Host -> Device"}, {"DtoH", "Device -> Host"}, {"DtoD", "Device -> Device"},
        {"HtoH", "Host -> Host"},   {"PtoP", "Device -> Peer"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(kind, names[i].kind))
            return names[i].name;
    return "Unknown";
}

static int add_copy_or_set(reader *r, char **f, int n, int memcpy_rec)
{
    int bad = n != (memcpy_rec ? 10 : 9);
    if (bad)
        return 1;
    char name[96];
    gpu_op o = op_fields(memcpy_rec ? GPU_MEMCPY : GPU_MEMSET, f, &bad);
    o.bytes = num(f[7], &bad);
    o.name = name;
    if (memcpy_rec) {
        snprintf(o.copy_kind, sizeof o.copy_kind, "%s", f[8]);
        snprintf(name, sizeof name, "Memcpy %s (%s)", f[8], copy_long_name(f[8]));
    } else
        snprintf(name, sizeof name, "Memset (Device)");
    if (!bad) {
        trace_add_op(r->t, &o);
        if (memcpy_rec)
            r->m->n_memcpy++;
        else
            r->m->n_memset++;
    }
    return bad;
}

/* Calls that say something about the step besides launching work. */
static int call_worth_keeping(const char *name)
{
    static const char *const words[] = {"Synchronize", "Graph", "Memcpy", "Memset", "EventRecord", "StreamWait"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(name, words[i]))
            return 1;
    return 0;
}

static int add_api(reader *r, char **f, int n, int runtime)
{
    int bad = n != 8;
    if (bad)
        return 1;
    api_call a = {.kind = runtime ? API_RUNTIME : API_DRIVER,
                  .start_ns = num(f[1], &bad),
                  .end_ns = num(f[2], &bad),
                  .correlation = (uint32_t)num(f[3], &bad),
                  .pid = (int)num(f[4], &bad),
                  .tid = (int)num(f[5], &bad),
                  .cbid = (int)num(f[6], &bad),
                  .name = f[7]};
    if (bad)
        return 1;
    if (strstr(a.name, "GraphLaunch"))
        r->m->n_graph_launches++;
    if (strstr(a.name, "Synchronize"))
        r->m->n_sync_calls++;
    if (runtime)
        r->m->n_runtime++;
    else
        r->m->n_driver_all++;
    trace_add_api(&r->calls, &a); /* sorted out once the operations' ids are known */
    r->calls.apis[r->calls.n_apis - 1].cbid = call_worth_keeping(a.name) ? -a.cbid - 1 : a.cbid;
    return 0;
}

static int nvtx_start(reader *r, char **f, int n)
{
    int bad = n != 5;
    if (bad)
        return 1;
    open_range o = {.start = num(f[1], &bad), .id = (uint32_t)num(f[2], &bad), .tid = (uint32_t)num(f[3], &bad)};
    if (bad)
        return 1;
    if (r->n_open == r->cap_open) {
        r->cap_open = r->cap_open ? r->cap_open * 2 : 64;
        r->open = attn_realloc(r->open, r->cap_open * sizeof *r->open);
    }
    o.name = attn_strdup(f[4]);
    r->open[r->n_open++] = o;
    return 0;
}

static int nvtx_end(reader *r, char **f, int n)
{
    int bad = n != 3;
    if (bad)
        return 1;
    int64_t ts = num(f[1], &bad);
    uint32_t id = (uint32_t)num(f[2], &bad);
    if (bad)
        return 1;
    for (size_t i = r->n_open; i-- > 0;) {
        if (r->open[i].id != id)
            continue;
        host_range h = {.kind = RANGE_ANNOTATION,
                        .name = r->open[i].name,
                        .variant = (char *)r->variant,
                        .iteration = -1,
                        .start_ns = r->open[i].start,
                        .end_ns = ts,
                        .pid = r->m->pid,
                        .tid = (int)r->open[i].tid};
        trace_add_range(r->t, &h);
        r->m->n_nvtx_ranges++;
        free(r->open[i].name);
        r->open[i] = r->open[--r->n_open];
        break;
    }
    return 0;
}

static void add_warning(inject_raw *m, const char *what, const char *msg)
{
    size_t len = strlen(m->warnings);
    snprintf(m->warnings + len, sizeof m->warnings - len, "%s%s: %s", len ? "; " : "", what, msg);
}

static int read_meta(reader *r, char **f, int n)
{
    inject_raw *m = r->m;
    trace *t = r->t;
    int bad = 0;
    if (n != 3)
        return 1;
    if (!strcmp(f[1], "cupti"))
        t->cupti_version = (int)num(f[2], &bad);
    else if (!strcmp(f[1], "cuda_driver"))
        t->cuda_driver_version = (int)num(f[2], &bad);
    else if (!strcmp(f[1], "driver"))
        esc_copy_utf8(m->driver, sizeof m->driver, f[2]);
    else if (!strcmp(f[1], "power_limit_w"))
        m->power_limit_w = (int)num(f[2], &bad);
    else if (!strcmp(f[1], "buffer_mb"))
        m->buffer_mb = (int)num(f[2], &bad);
    return bad;
}

static int read_device(reader *r, char **f, int n)
{
    if (n != 20)
        return 1;
    int bad = 0;
    device_props *d = &r->t->device;
    if (r->m->has_device) /* the first device: the one attnprof keeps (the others' records stay) */
        return 0;
    d->major = (int)num(f[2], &bad);
    d->minor = (int)num(f[3], &bad);
    d->sm_count = (int)num(f[4], &bad);
    d->total_mem = num(f[5], &bad);
    d->warp_size = (int)num(f[6], &bad);
    d->max_threads_per_block = (int)num(f[7], &bad);
    d->max_threads_per_sm = (int)num(f[8], &bad);
    d->max_blocks_per_sm = (int)num(f[9], &bad);
    d->regs_per_sm = (int)num(f[10], &bad);
    d->regs_per_block = (int)num(f[11], &bad);
    d->smem_per_sm = (int)num(f[12], &bad);
    d->smem_per_block = (int)num(f[13], &bad);
    d->l2_bytes = (int)num(f[14], &bad);
    d->clock_khz = (int)num(f[15], &bad);
    esc_copy_utf8(r->m->gpu_uuid, sizeof r->m->gpu_uuid, f[18]);
    esc_copy_utf8(d->name, sizeof d->name, f[19]);
    r->m->has_device = !bad;
    return bad;
}

static int read_summary(reader *r, char **f, int n)
{
    inject_raw *m = r->m;
    int bad = 0;
    switch (f[0][0]) {
    case 'X':
        bad = n != 2;
        if (!bad)
            m->dropped += num(f[1], &bad);
        break;
    case 'B':
        bad = n != 3;
        if (!bad) {
            m->buffers_refused += num(f[1], &bad);
            num(f[2], &bad);
        }
        break;
    case 'T':
        bad = n != 3;
        if (!bad) {
            m->past_raw_bound += num(f[1], &bad);
            m->raw_bound_mb = num(f[2], &bad);
        }
        break;
    case 'C':
        bad = n != 6;
        if (!bad) {
            m->clock_samples = (int)num(f[1], &bad);
            m->sm_min = (int)num(f[2], &bad);
            m->sm_max = (int)num(f[3], &bad);
            m->mem_min = (int)num(f[4], &bad);
            m->mem_max = (int)num(f[5], &bad);
        }
        break;
    case 'W':
        bad = n != 3;
        if (!bad)
            add_warning(m, f[1], f[2]);
        break;
    case 'E':
        if (n == 2 && !strcmp(f[1], "complete"))
            m->end = INJECT_END_COMPLETE;
        else if (n == 3 && !strcmp(f[1], "signal")) {
            m->end = INJECT_END_SIGNAL;
            m->end_signal = (int)num(f[2], &bad);
        } else
            bad = 1;
        break;
    default:
        bad = 1;
    }
    return bad;
}

/* One line; 1 when it is malformed. */
static int read_line(reader *r, char *line)
{
    char *f[MAX_FIELDS];
    int n = split(line, f, MAX_FIELDS);
    const char *k = f[0];
    int bad = 0;
    if (!strcmp(k, "K"))
        return add_kernel(r, f, n);
    if (!strcmp(k, "M") || !strcmp(k, "S"))
        return add_copy_or_set(r, f, n, k[0] == 'M');
    if (!strcmp(k, "R") || !strcmp(k, "A"))
        return add_api(r, f, n, k[0] == 'R');
    if (!strcmp(k, "NS"))
        return nvtx_start(r, f, n);
    if (!strcmp(k, "NE"))
        return nvtx_end(r, f, n);
    if (!strcmp(k, "NI")) {
        r->m->n_nvtx_markers++;
        return n != 5;
    }
    if (!strcmp(k, "Y")) {
        if (n != 7)
            return 1;
        int64_t s = num(f[1], &bad), e = num(f[2], &bad);
        r->m->n_syncs++;
        r->m->sync_us += (double)(e - s) / 1000.0;
        return bad;
    }
    if (!strcmp(k, "P")) {
        if (n != 3)
            return 1;
        r->m->pid = (int)num(f[1], &bad);
        r->t->pid = r->m->pid;
        return bad;
    }
    if (!strcmp(k, "V"))
        return read_meta(r, f, n);
    if (!strcmp(k, "D"))
        return read_device(r, f, n);
    if (strlen(k) == 1 && strchr("XBTCWE", k[0]))
        return read_summary(r, f, n);
    return 1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The API calls kept: those that launched an operation, and those worth keeping. */
static void keep_calls(reader *r)
{
    trace *t = r->t;
    uint32_t *ids = attn_malloc((t->n_ops ? t->n_ops : 1) * sizeof *ids);
    for (size_t i = 0; i < t->n_ops; i++)
        ids[i] = t->ops[i].correlation;
    qsort(ids, t->n_ops, sizeof *ids, cmp_u32);
    for (size_t i = 0; i < r->calls.n_apis; i++) {
        api_call a = r->calls.apis[i];
        int worth = a.cbid < 0;
        if (worth)
            a.cbid = -a.cbid - 1;
        int launched = t->n_ops && bsearch(&a.correlation, ids, t->n_ops, sizeof *ids, cmp_u32) != NULL;
        if (launched || worth) {
            trace_add_api(t, &a);
            if (a.kind == API_DRIVER)
                r->m->n_driver_kept++;
        }
    }
    free(ids);
}

static int read_lines(reader *r, FILE *fp, const char *path, char *err, size_t errlen)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    int rc = EXIT_OK;
    while (rc == EXIT_OK && (len = getline(&line, &cap, fp)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (r->m->end == INJECT_END_NONE)
            break; /* a last line cut short by a killed process: what came before stands */
        if (lineno == 1) {
            if (strcmp(line, "attnprof-inject\t1"))
                rc = err_set(err, errlen, EXIT_BAD_ARCHIVE,
                             "%s: not a raw file of attnprof record (format 1); record it again with this attnprof",
                             path);
            continue;
        }
        if (read_line(r, line))
            rc = err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s:%ld: malformed %.4s record", path, lineno, line);
    }
    free(line);
    if (rc == EXIT_OK && lineno == 0)
        rc = err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: empty raw file: the process recorded nothing", path);
    return rc;
}

int inject_raw_read(const char *path, const char *variant, trace *t, inject_raw *m, char *err, size_t errlen)
{
    trace_init(t);
    memset(m, 0, sizeof *m);
    /* input.h's rule: the program recorded may leave anything in its raw folder; a link, a
     * FIFO or a device named like a raw file is refused before a byte is read. */
    const input_rules rules = {.what = "a raw file"};
    int fd = -1;
    int orc = input_open_file(path, &rules, &fd, NULL, err, errlen);
    if (orc != EXIT_OK)
        return orc;
    FILE *fp = fdopen(fd, "r");
    if (!fp) {
        close(fd);
        return err_set(err, errlen, EXIT_IO, "%s: %s", path, strerror(errno));
    }
    reader r = {.t = t, .m = m, .variant = variant};
    trace_init(&r.calls);
    int rc = read_lines(&r, fp, path, err, errlen);
    fclose(fp);
    if (rc == EXIT_OK)
        keep_calls(&r);
    m->n_nvtx_unclosed = r.n_open;
    for (size_t i = 0; i < r.n_open; i++)
        free(r.open[i].name);
    free(r.open);
    trace_free(&r.calls);
    if (rc != EXIT_OK) {
        trace_free(t);
        return rc;
    }
    trace_sort(t);
    return EXIT_OK;
}
