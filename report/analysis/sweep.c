/* The sweep's data (sweep.h): every shape archive under DIR/shapes/ read and
 * analysed as `report` does, reduced to one point per variant and shape (CUDA time
 * per forward, TFLOP/s, GPU operations, device memory, status), merged with the
 * plan and the status files so that missing and failed shapes are listed, and the
 * findings derived from those points. Archives are read by `threads` threads; the
 * result does not depend on the thread count. */
#include "sweep.h"

#include "analysis.h"
#include "archive.h"
#include "alloc.h"
#include "archive_read.h"
#include "err.h"
#include "median.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One archive reduced to points, before the variants of all archives are merged. */
typedef struct loaded {
    char dir[1200];
    int ok;
    char err[ATTN_ERR_LEN];
    attn_shape shape;
    int causal, iters;
    char gpu_name[128], uuid[48], visible[64], cudnn[16];
    double gpu_bytes, peak, gemm, copy;
    int measured_clock; /* peak at the forwards' measured SM clock (else the device's maximum) */
    int n;
    char name[RUN_MAX_VARIANTS][32];
    sweep_point pt[RUN_MAX_VARIANTS];
} loaded;

static void point_empty(sweep_point *p, sweep_point_state st, const char *reason)
{
    memset(p, 0, sizeof *p);
    p->state = st;
    p->us = p->us_min = p->us_max = p->tflops = p->kv_gbps = p->device_bytes = p->bwd_us = p->bwd_tflops = NAN;
    p->ops = p->kernels = p->memcpys = p->memsets = -1;
    snprintf(p->reason, sizeof p->reason, "%s", reason ? reason : "");
}

static sweep_point_state state_of(variant_status s)
{
    switch (s) {
    case VARIANT_OK: return SWEEP_OK;
    case VARIANT_SKIPPED: return SWEEP_SKIPPED;
    case VARIANT_UNAVAILABLE: return SWEEP_UNAVAILABLE;
    case VARIANT_FAILED: break;
    }
    return SWEEP_FAILED;
}

static void load_archive(loaded *L)
{
    trace t;
    run_info *r = calloc(1, sizeof *r);
    analysis *a = calloc(1, sizeof *a);
    L->ok = 0;
    if (!r || !a) {
        snprintf(L->err, sizeof L->err, "out of memory");
        free(r);
        free(a);
        return;
    }
    trace_init(&t);
    if (archive_read(L->dir, &t, r, L->err, sizeof L->err) != 0)
        goto out_free;
    if (analysis_build(a, &t, r, L->err, sizeof L->err) != 0) {
        trace_free(&t);
        goto out_free;
    }
    L->shape = r->shape;
    L->causal = r->causal;
    L->iters = r->iters;
    snprintf(L->gpu_name, sizeof L->gpu_name, "%s", r->device.name);
    snprintf(L->uuid, sizeof L->uuid, "%s", r->gpu_uuid);
    snprintf(L->visible, sizeof L->visible, "%s", r->visible_devices);
    snprintf(L->cudnn, sizeof L->cudnn, "%d.%d.%d", r->cudnn_version / 10000, r->cudnn_version / 100 % 100,
             r->cudnn_version % 100);
    L->gpu_bytes = (double)r->device.total_mem;
    /* The nominal peak at the SM clock the forwards ran at (their NVML samples), not
     * the device's maximum clock, where the archive holds them. */
    double sm_mhz[4096];
    int n_sm = 0;
    for (size_t k = 0; k < a->trace->n_ranges && n_sm < 4096; k++)
        if (a->trace->ranges[k].sample.recorded && a->trace->ranges[k].sample.sm_mhz > 0)
            sm_mhz[n_sm++] = a->trace->ranges[k].sample.sm_mhz;
    L->measured_clock = n_sm > 0;
    L->peak = sweep_peak_tflops(r->device.major, r->device.minor, r->device.sm_count,
                                n_sm ? (int)(median_of(sm_mhz, n_sm) * 1000) : r->device.clock_khz);
    L->gemm = r->ceilings.measured && r->ceilings.tensor_bf16_tflops > 0 ? r->ceilings.tensor_bf16_tflops : NAN;
    L->copy = r->ceilings.measured && r->ceilings.copy_tbps > 0 ? r->ceilings.copy_tbps : NAN;
    /* K and V of bf16, each B·Hkv·S·D elements */
    double kv_bytes = 2.0 * 2 * r->shape.batch * attn_kv_heads(&r->shape) * (double)r->shape.seq * r->shape.dim;
    double flops = sweep_flops(&r->shape, r->causal);
    L->n = r->n_variants;
    for (int i = 0; i < r->n_variants; i++) {
        const variant_result *v = &r->variants[i];
        sweep_point *p = &L->pt[i];
        snprintf(L->name[i], sizeof L->name[i], "%s", v->name);
        point_empty(p, state_of(v->status), v->error);
        p->device_bytes = v->device_bytes;
        const variant_analysis *va = analysis_find(a, v->name);
        if (v->bwd.recorded) {
            p->bwd_recorded = 1;
            p->bwd_status = v->bwd.status;
            snprintf(p->bwd_reason, sizeof p->bwd_reason, "%s", v->bwd.error);
            if (v->bwd.status == VARIANT_OK && va && va->n_backwards > 0) {
                p->bwd_us = va->bwd_cuda_us.median;
                p->bwd_tflops = p->bwd_us > 0 ? 2.5 * flops / (p->bwd_us * 1e-6) / 1e12 : NAN;
            }
        }
        if (v->status != VARIANT_OK || !va || va->n_forwards == 0)
            continue;
        p->us = va->cuda_us.median;
        p->us_min = va->cuda_us.min;
        p->us_max = va->cuda_us.max;
        p->tflops = p->us > 0 ? flops / (p->us * 1e-6) / 1e12 : NAN;
        p->kv_gbps = p->us > 0 ? kv_bytes / (p->us * 1e-6) / 1e9 : NAN;
        p->ops = va->ops_per_forward;
        p->kernels = va->kernels_per_forward;
        p->memcpys = va->memcpy_per_forward;
        p->memsets = va->memset_per_forward;
        p->samples = malloc((size_t)va->n_forwards * sizeof *p->samples);
        if (p->samples) {
            for (int k = 0; k < va->n_forwards; k++)
                p->samples[k] = va->forwards[k].cuda_us;
            p->n_samples = va->n_forwards;
        }
    }
    L->ok = 1;
    analysis_free(a);
    trace_free(&t);
out_free:
    free(r);
    free(a);
}

typedef struct load_job {
    loaded *items;
    int n, stride, first;
} load_job;

static void *load_worker(void *arg)
{
    load_job *j = arg;
    for (int i = j->first; i < j->n; i += j->stride)
        load_archive(&j->items[i]);
    return NULL;
}

static void load_all(loaded *items, int n, int threads)
{
    if (threads > 8)
        threads = 8;
    pthread_t tid[8];
    load_job jobs[8];
    int started[8] = {0};
    for (int k = 0; k < threads; k++)
        jobs[k] = (load_job){items, n, threads, k};
    for (int k = 1; k < threads && k < n; k++)
        started[k] = pthread_create(&tid[k], NULL, load_worker, &jobs[k]) == 0;
    for (int k = 0; k < threads; k++) /* this thread takes its own share and any that did not start */
        if (!started[k])
            load_worker(&jobs[k]);
    for (int k = 1; k < threads; k++)
        if (started[k])
            pthread_join(tid[k], NULL);
}

/* Variant names in series order: each archive's order is kept, new names go in
 * after the name they follow in the archive that brings them. */
static int variant_index(sweep_data *m, const char *name)
{
    for (int i = 0; i < m->n_variants; i++)
        if (!strcmp(m->variants[i], name))
            return i;
    return ATTN_NONE;
}

static void merge_variants(sweep_data *m, const loaded *L)
{
    int after = -1;
    for (int i = 0; i < L->n; i++) {
        int k = variant_index(m, L->name[i]);
        if (k < 0 && m->n_variants < RUN_MAX_VARIANTS) {
            k = after + 1;
            memmove(m->variants[k + 1], m->variants[k], (size_t)(m->n_variants - k) * sizeof m->variants[0]);
            snprintf(m->variants[k], sizeof m->variants[k], "%s", L->name[i]);
            m->n_variants++;
        }
        if (k > after)
            after = k;
    }
}

static void alloc_points(sweep_point **out, int n) { *out = attn_calloc((size_t)(n ? n : 1), sizeof **out); }

/* Moves an archive's points into the sweep's variant order (the samples move with them). */
static void place_points(sweep_data *m, loaded *L, sweep_point **out, const char *missing_reason)
{
    alloc_points(out, m->n_variants);
    for (int k = 0; k < m->n_variants; k++)
        point_empty(&(*out)[k], SWEEP_NOT_RUN, missing_reason);
    for (int i = 0; i < L->n; i++) {
        int k = variant_index(m, L->name[i]);
        if (k < 0)
            continue;
        (*out)[k] = L->pt[i];
        m->backward |= L->pt[i].bwd_recorded;
        L->pt[i].samples = NULL;
    }
}

static int cmp_shape(const void *a, const void *b)
{
    const sweep_shape *x = a, *y = b;
    if (x->shape.dim != y->shape.dim)
        return x->shape.dim < y->shape.dim ? -1 : 1;
    if (x->shape.kv_heads != y->shape.kv_heads)
        return x->shape.kv_heads < y->shape.kv_heads ? -1 : 1;
    if (x->shape.q_seq != y->shape.q_seq)
        return x->shape.q_seq < y->shape.q_seq ? -1 : 1;
    if (x->shape.seq != y->shape.seq)
        return x->shape.seq < y->shape.seq ? -1 : 1;
    if (x->shape.batch != y->shape.batch)
        return x->shape.batch < y->shape.batch ? -1 : 1;
    return (x->shape.heads > y->shape.heads) - (x->shape.heads < y->shape.heads);
}

static int find_shape(const sweep_data *m, const char *name)
{
    for (int i = 0; i < m->n_shapes; i++)
        if (!strcmp(m->shapes[i].name, name))
            return i;
    return ATTN_NONE;
}

/* The shape's index, added when new; ATTN_NONE when the table is full. */
static int add_shape(sweep_data *m, const attn_shape *s)
{
    char name[64];
    sweep_shape_name(s, name, sizeof name);
    int i = find_shape(m, name);
    if (i >= 0)
        return i;
    if (m->n_shapes == SWEEP_MAX_SHAPES)
        return ATTN_NONE;
    sweep_shape *x = &m->shapes[m->n_shapes];
    memset(x, 0, sizeof *x);
    x->shape = *s;
    snprintf(x->name, sizeof x->name, "%s", name);
    x->state = SHAPE_MISSING;
    x->flops = sweep_flops(s, 1);
    return m->n_shapes++;
}

/* A failed shape's one-line error may name the variant that could not take it
 * (`run` with explicit --variants refuses the whole shape): "variant naive needs
 * 256.00 GiB of device memory at …" (exit 4) or "variant flash cannot take …"
 * (exit 2). That variant's point is then skipped, with the bytes when given. */
static void attribute_failure(sweep_data *m, sweep_shape *x)
{
    char name[64];
    double bytes;
    int k;
    if (sweep_refused_variant(x->status.error, name, sizeof name, &bytes) == 0 && (k = variant_index(m, name)) >= 0) {
        point_empty(&x->p[k], SWEEP_SKIPPED, strstr(x->status.error, "variant "));
        x->p[k].device_bytes = bytes;
    }
}

/* Variants the sweep left out of a shape (status "skipped"): skipped there, unless
 * the archive has them after all. */
static void apply_skips(sweep_data *m, sweep_shape *x)
{
    for (int i = 0; i < x->status.n_skipped; i++) {
        const struct sweep_skip *sk = &x->status.skipped[i];
        int k = variant_index(m, sk->variant);
        if (k < 0 || x->p[k].state != SWEEP_NOT_RUN)
            continue;
        point_empty(&x->p[k], SWEEP_SKIPPED, sk->reason);
        x->p[k].device_bytes = sk->device_bytes;
    }
}

static int names_in(const char *dir, char names[][64], int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= 64)
            continue;
        char path[1400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(names[n++], 64, "%s", e->d_name);
    }
    closedir(d);
    for (int i = 1; i < n; i++) /* sorted, so reading order and output do not depend on readdir */
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char t[64];
            memcpy(t, names[j], 64);
            memcpy(names[j], names[j - 1], 64);
            memcpy(names[j - 1], t, 64);
        }
    return n;
}

/* The median over the readable shape archives of a measured ceiling: the GEMM's (copy 0) or
 * the copy's (copy 1); NAN when none measured it. */
static double median_ceiling(const loaded *L, int n_dirs, int copy)
{
    double v[SWEEP_MAX_SHAPES];
    int n = 0;
    for (int i = 0; i < n_dirs; i++) {
        double x = copy ? L[i].copy : L[i].gemm;
        if (L[i].ok && isfinite(x))
            v[n++] = x;
    }
    return median_of(v, n);
}

/* The device, library and roof of the sweep, from its first readable archive; the
 * roof is the median measured GEMM ceiling over the shapes, else the nominal peak. */
static void merge_loaded(sweep_data *m, loaded *L, int n_dirs, int n_reps)
{
    for (int i = 0; i < n_dirs + n_reps; i++)
        if (L[i].ok) {
            merge_variants(m, &L[i]);
            if (!m->gpu_name[0]) {
                snprintf(m->gpu_name, sizeof m->gpu_name, "%s", L[i].gpu_name);
                snprintf(m->cudnn, sizeof m->cudnn, "%s", L[i].cudnn);
                m->gpu_bytes = L[i].gpu_bytes;
                m->peak_tflops = L[i].peak;
                m->peak_at_measured_clock = L[i].measured_clock;
                m->iters = L[i].iters;
            }
        }
    m->gemm_tflops = median_ceiling(L, n_dirs, 0);
    m->copy_tbps = median_ceiling(L, n_dirs, 1);
    m->roof_tflops = isfinite(m->gemm_tflops) ? m->gemm_tflops : m->peak_tflops;
    m->roof_name = isfinite(m->gemm_tflops)     ? "measured cuBLAS bf16 GEMM ceiling"
                   : m->peak_at_measured_clock ? "dense BF16 tensor peak at the measured SM clock"
                                               : "dense BF16 tensor peak";
}

/* Status files before the points: a variant the sweep skipped everywhere still gets its column. */
static void read_statuses(sweep_data *m, const char *dir)
{
    for (int i = 0; i < m->n_shapes; i++) {
        sweep_shape *x = &m->shapes[i];
        char serr[512];
        int found = 0;
        x->status_rc = sweep_status_read(dir, x->name, &x->status, &found, serr, sizeof serr);
        x->have_status = x->status_rc == EXIT_OK && found;
        if (x->status_rc != EXIT_OK)
            snprintf(x->status_err, sizeof x->status_err, "%s", serr);
        for (int k = 0; k < x->status.n_skipped; k++)
            if (variant_index(m, x->status.skipped[k].variant) < 0 && m->n_variants < RUN_MAX_VARIANTS)
                snprintf(m->variants[m->n_variants++], sizeof m->variants[0], "%s", x->status.skipped[k].variant);
    }
}

/* Each shape's state from its archive and status file; a shape without points gets
 * "not run" points saying why. */
static void settle_states(sweep_data *m)
{
    for (int i = 0; i < m->n_shapes; i++) {
        sweep_shape *x = &m->shapes[i];
        char serr[512];
        snprintf(serr, sizeof serr, "%s", x->status_err);
        if (x->status_rc != EXIT_OK && x->state != SHAPE_COMPLETE) {
            x->state = SHAPE_BAD_ARCHIVE;
            snprintf(x->error, sizeof x->error, "%s", serr);
        }
        if (x->state == SHAPE_MISSING && x->have_status && x->status.exit_code != 0)
            x->state = SHAPE_FAILED;
        if (!x->p) {
            const char *why = x->state == SHAPE_FAILED ? x->status.error
                              : x->state == SHAPE_BAD_ARCHIVE ? x->error
                                                              : "no archive";
            alloc_points(&x->p, m->n_variants);
            for (int k = 0; k < m->n_variants; k++)
                point_empty(&x->p[k], SWEEP_NOT_RUN, why);
            if (x->state == SHAPE_FAILED)
                attribute_failure(m, x);
        }
        apply_skips(m, x);
        m->n_complete += x->state == SHAPE_COMPLETE;
        m->n_failed += x->state == SHAPE_FAILED;
        m->n_missing += x->state == SHAPE_MISSING;
        m->n_bad += x->state == SHAPE_BAD_ARCHIVE;
    }
}

/* The head dims present, in shape order. */
static void list_head_dims(sweep_data *m)
{
    sweep_list_families(m);
    for (int i = 0; i < m->n_shapes; i++) {
        int d = m->shapes[i].shape.dim, seen = 0;
        for (int j = 0; j < m->n_dims; j++)
            seen |= m->dims[j] == d;
        if (!seen && m->n_dims < SWEEP_MAX_LIST)
            m->dims[m->n_dims++] = d;
    }
}

int sweep_load(sweep_data *m, const char *dir, int threads, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->peak_tflops = m->gemm_tflops = m->roof_tflops = m->copy_tbps = NAN;
    m->roof_name = "";
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    int rc = sweep_plan_read(&m->plan, dir, &m->have_plan, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    m->shapes = calloc(SWEEP_MAX_SHAPES, sizeof *m->shapes);
    static char names[SWEEP_MAX_SHAPES + SWEEP_MAX_GPUS][64];
    char sub[1200];
    snprintf(sub, sizeof sub, "%s/shapes", dir);
    int n_dirs = names_in(sub, names, SWEEP_MAX_SHAPES);
    snprintf(sub, sizeof sub, "%s/replicate", dir);
    int n_reps = names_in(sub, names + n_dirs, SWEEP_MAX_GPUS);
    loaded *L = calloc((size_t)(n_dirs + n_reps + 1), sizeof *L);
    if (!m->shapes || !L) {
        free(L);
        free(m->shapes);
        m->shapes = NULL;
        snprintf(err, errlen, "out of memory");
        return EXIT_IO;
    }
    if (!m->have_plan && n_dirs == 0 && n_reps == 0) {
        free(L);
        free(m->shapes);
        m->shapes = NULL;
        snprintf(err, errlen, "%s: no sweep.json and no shapes/ archives: not an attnprof sweep directory", dir);
        return EXIT_BAD_ARCHIVE;
    }
    for (int i = 0; i < n_dirs + n_reps; i++)
        snprintf(L[i].dir, sizeof L[i].dir, "%s/%s/%s", dir, i < n_dirs ? "shapes" : "replicate", names[i]);
    load_all(L, n_dirs + n_reps, threads < 1 ? 1 : threads);

    merge_loaded(m, L, n_dirs, n_reps);
    for (int i = 0; i < m->plan.n_shapes; i++)
        add_shape(m, &m->plan.shapes[i]);
    int dir_shape[SWEEP_MAX_SHAPES];
    for (int i = 0; i < n_dirs; i++) {
        attn_shape s;
        dir_shape[i] = sweep_shape_parse(names[i], &s) == 0 ? add_shape(m, &s) : ATTN_NONE; /* not a shape folder */
    }
    read_statuses(m, dir);
    for (int i = 0; i < n_dirs; i++) {
        if (dir_shape[i] < 0)
            continue;
        sweep_shape *x = &m->shapes[dir_shape[i]];
        const attn_shape s = x->shape;
        if (!L[i].ok) {
            x->state = SHAPE_BAD_ARCHIVE;
            snprintf(x->error, sizeof x->error, "%s", L[i].err);
        } else if (memcmp(&L[i].shape, &s, sizeof s) != 0) {
            char got[64];
            sweep_shape_name(&L[i].shape, got, sizeof got);
            x->state = SHAPE_BAD_ARCHIVE;
            snprintf(x->error, sizeof x->error, "shapes/%s holds a run of %s", names[i], got);
        } else {
            x->state = SHAPE_COMPLETE;
            snprintf(x->gpu_uuid, sizeof x->gpu_uuid, "%s", L[i].uuid);
            snprintf(x->visible_devices, sizeof x->visible_devices, "%s", L[i].visible);
            x->flops = sweep_flops(&s, L[i].causal);
            place_points(m, &L[i], &x->p, "");
        }
    }
    settle_states(m);
    qsort(m->shapes, (size_t)m->n_shapes, sizeof *m->shapes, cmp_shape);
    list_head_dims(m);
    for (int i = n_dirs; i < n_dirs + n_reps; i++) {
        if (!L[i].ok || m->n_replicas == SWEEP_MAX_GPUS)
            continue;
        sweep_replica *rp = &m->replicas[m->n_replicas++];
        if (L[i].uuid[0])
            snprintf(rp->gpu, sizeof rp->gpu, "%s (%s)", names[i], L[i].uuid);
        else
            snprintf(rp->gpu, sizeof rp->gpu, "%s", names[i]);
        m->reference = L[i].shape;
        place_points(m, &L[i], &rp->p, "");
    }
    for (int i = 0; i < n_dirs + n_reps; i++)
        for (int k = 0; k < L[i].n; k++)
            free(L[i].pt[k].samples);
    free(L);
    sweep_derive(m);
    return EXIT_OK;
}

static void points_free(sweep_point *p, int n)
{
    if (!p)
        return;
    for (int k = 0; k < n; k++)
        free(p[k].samples);
    free(p);
}

void sweep_free(sweep_data *m)
{
    for (int i = 0; i < m->n_shapes; i++)
        points_free(m->shapes[i].p, m->n_variants);
    for (int i = 0; i < m->n_replicas; i++)
        points_free(m->replicas[i].p, m->n_variants);
    free(m->shapes);
    m->shapes = NULL;
}

/* ---- pure helpers ---------------------------------------------------------- */

double sweep_peak_tflops(int major, int minor, int sm_count, int clock_khz)
{
    double per_clk = major == 9 && minor == 0 ? 4096 : major == 8 && minor == 0 ? 2048 : NAN;
    if (sm_count <= 0 || clock_khz <= 0)
        return NAN;
    return per_clk * sm_count * clock_khz * 1e3 / 1e12;
}


