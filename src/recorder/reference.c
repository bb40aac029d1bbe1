/* The FP64 reference every variant is checked against, the bf16 conversions, and the seeded
 * normal generator the runner draws its inputs from. Pure C on the host, unit-tested
 * (tests/recorder/reference.c) and checked against a second, independent reference on the GPU
 * machine (tests/gpu/variant_check.c). The reference runs on every core over a stated set of
 * query rows, so that its cost is O(rows · S · D) rather than O(S² · D) per head. */
#include "reference.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next_u64(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Box–Muller on (0, 1] so log never sees 0: one normal from two draws. */
static double normal_of(uint64_t a, uint64_t b)
{
    double u1 = ((a >> 11) + 1.0) * 0x1.0p-53;
    double u2 = (b >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double rng_normal(rng *r)
{
    uint64_t a = next_u64(r);
    return normal_of(a, next_u64(r));
}

/* fill_normal_bf16 on several threads with the very sequence one thread draws: the
 * generator runs alone (about a nanosecond a draw), chunk by chunk, and the threads share
 * the transform (log, cos, sqrt: tens of nanoseconds a value), which is where the time goes:
 * 2·10⁸ values at 2×16×16384×128 took over 10 s on one core. */
enum { FILL_CHUNK = 1 << 22 };

typedef struct fill_slice {
    const uint64_t *draws; /* two per value */
    uint16_t *x;
    size_t n;
} fill_slice;

static void *fill_transform(void *arg)
{
    fill_slice *f = arg;
    for (size_t i = 0; i < f->n; i++)
        f->x[i] = float_to_bf16((float)normal_of(f->draws[2 * i], f->draws[2 * i + 1]));
    return NULL;
}

static void *xmalloc(size_t n);

void fill_normal_bf16_threads(uint16_t *x, size_t n, rng *r, int threads)
{
    if (threads < 1)
        threads = 1;
    if (threads > 64)
        threads = 64;
    size_t chunk = n < FILL_CHUNK ? n : FILL_CHUNK;
    uint64_t *draws = xmalloc(sizeof(uint64_t) * 2 * (chunk ? chunk : 1));
    pthread_t tid[64];
    int started[64] = {0};
    fill_slice slice[64];
    for (size_t done = 0; done < n; done += chunk) {
        size_t m = n - done < chunk ? n - done : chunk;
        for (size_t i = 0; i < 2 * m; i++)
            draws[i] = next_u64(r);
        for (int t = 0; t < threads; t++) {
            size_t lo = m * t / threads, hi = m * (t + 1) / threads;
            slice[t] = (fill_slice){draws + 2 * lo, x + done + lo, hi - lo};
        }
        /* A thread that does not start leaves its slice to this one. */
        for (int t = 1; t < threads; t++)
            started[t] = pthread_create(&tid[t], NULL, fill_transform, &slice[t]) == 0;
        fill_transform(&slice[0]);
        for (int t = 1; t < threads; t++) {
            if (started[t])
                pthread_join(tid[t], NULL);
            else
                fill_transform(&slice[t]);
        }
    }
    free(draws);
}

void fill_normal_bf16(uint16_t *x, size_t n, rng *r) { fill_normal_bf16_threads(x, n, r, 1); }

/* ---- The FP64 reference over chosen rows ----
 * Row i of the output depends on q_i and on every key and value it may see, so a row is
 * checked in full or not at all. Rows are taken in blocks of REF_BLOCK: each key and value
 * row is read once per block instead of once per row (a head's keys and values are converted
 * to double once, 16 MiB each at 16384 × 128). Every sum runs in one fixed order (key by key, dimension by
 * dimension in four fixed lanes), so the result does not depend on the thread count. */
enum { REF_BLOCK = 16 };

/* Two doubles as one value: GCC's vector extension, one SSE2 (x86-64) or NEON (AArch64)
 * register. Two of them make four lanes, each keeping its own sum, so the order of every
 * addition is fixed by the code, not by the compiler or the machine. */
typedef double double2 __attribute__((vector_size(2 * sizeof(double))));

static inline double2 load2(const double *p)
{
    double2 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Σ_d a[d]·b[d] over D values: lane l sums the d ≡ l (mod 4), then (l0 + l1) + (l2 + l3),
 * then the D mod 4 left over. */
static inline double dot(const double *a, const double *b, int D)
{
    double2 lo = {0, 0}, hi = {0, 0};
    int d = 0;
    for (; d + 4 <= D; d += 4) {
        lo += load2(a + d) * load2(b + d);
        hi += load2(a + d + 2) * load2(b + d + 2);
    }
    double s = (lo[0] + lo[1]) + (hi[0] + hi[1]);
    for (; d < D; d++)
        s += a[d] * b[d];
    return s;
}

/* One block of rows of one head: scores, softmax and P·V in double precision. kd/vd are the
 * head's S keys and values converted once to double (exact for bf16); scores is
 * [REF_BLOCK][S] scratch. off = S minus the query rows: the causal mask aligned to the end of
 * the keys (query row i sees keys 0 .. i + off); the mask, when given, is [query rows, S]. */
static void reference_block(const uint16_t *q, const double *kd, const double *vd, int S, int D, int off,
                            const uint8_t *mask, const int *rows, int n, double *scores, double *out)
{
    const double scale = 1.0 / sqrt((double)D);
    double qd[REF_BLOCK][REFERENCE_MAX_DIM];
    double mx[REF_BLOCK], sum[REF_BLOCK];
    int last = 0;
    for (int r = 0; r < n; r++) {
        for (int d = 0; d < D; d++)
            qd[r][d] = bf16_to_float(q[(size_t)rows[r] * D + d]);
        mx[r] = -INFINITY;
        sum[r] = 0;
        if (rows[r] > last)
            last = rows[r];
    }
    /* Causal rows see keys 0..row + off; with a mask any key may be seen. */
    int keys = mask ? S : last + off + 1;
    for (int j = 0; j < keys; j++) {
        const double *kj = kd + (size_t)j * D;
        for (int r = 0; r < n; r++) {
            double *p = scores + (size_t)r * S;
            int masked = mask ? mask[(size_t)rows[r] * S + j] != 0 : j > rows[r] + off;
            if (masked) {
                p[j] = -INFINITY;
                continue;
            }
            p[j] = dot(qd[r], kj, D) * scale;
            if (p[j] > mx[r])
                mx[r] = p[j];
        }
    }
    for (int r = 0; r < n; r++) {
        double *p = scores + (size_t)r * S, *o = out + (size_t)r * D;
        for (int d = 0; d < D; d++)
            o[d] = mx[r] == -INFINITY ? NAN : 0.0; /* a fully masked row: softmax over no keys */
        if (mx[r] == -INFINITY)
            continue;
        for (int j = 0; j < keys; j++) {
            p[j] = p[j] == -INFINITY ? 0.0 : exp(p[j] - mx[r]);
            sum[r] += p[j];
        }
    }
    for (int j = 0; j < keys; j++) {
        const double *vj = vd + (size_t)j * D;
        for (int r = 0; r < n; r++) {
            if (mx[r] == -INFINITY)
                continue;
            double w = scores[(size_t)r * S + j];
            if (w == 0.0)
                continue;
            w /= sum[r];
            double *o = out + (size_t)r * D;
            double2 w2 = {w, w};
            int d = 0;
            for (; d + 2 <= D; d += 2) {
                double2 acc = load2(o + d) + w2 * load2(vj + d);
                memcpy(o + d, &acc, sizeof acc);
            }
            for (; d < D; d++)
                o[d] += w * vj[d];
        }
    }
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "attnprof: out of memory (%zu bytes for the FP64 reference)\n", n);
        abort();
    }
    return p;
}

static double *convert_head(const uint16_t *x, size_t n)
{
    double *f = xmalloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++)
        f[i] = bf16_to_float(x[i]);
    return f;
}

void reference_attention_rows(const uint16_t *q, const uint16_t *k, const uint16_t *v, int S, int D,
                              const uint8_t *mask, const int *rows, int n_rows, double *out)
{
    reference_job job = {q, k, v, S, D, mask, rows, n_rows, out, S};
    reference_run(&job, 1, 1);
}

void reference_attention_head(const uint16_t *q, const uint16_t *k, const uint16_t *v, int S, int D,
                              const uint8_t *mask, double *out)
{
    int *rows = xmalloc(sizeof(int) * (size_t)S);
    for (int i = 0; i < S; i++)
        rows[i] = i;
    reference_attention_rows(q, k, v, S, D, mask, rows, S, out);
    free(rows);
}

/* A job's keys: kv_seq, or seq when 0 (as many keys as queries). */
static int job_keys(const reference_job *job) { return job->kv_seq > 0 ? job->kv_seq : job->seq; }

/* Work shared by the threads: blocks of rows of every job, handed out by one counter. */
typedef struct reference_pool {
    const reference_job *jobs;
    int n_jobs;
    double **kf, **vf;        /* per job, converted once */
    int *first_block;         /* per job: its first block's global index; [n_jobs] = total */
    atomic_int next;
} reference_pool;

static void *reference_worker(void *arg)
{
    reference_pool *pool = arg;
    int max_s = 0;
    for (int i = 0; i < pool->n_jobs; i++)
        if (job_keys(&pool->jobs[i]) > max_s)
            max_s = job_keys(&pool->jobs[i]);
    double *scores = xmalloc(sizeof(double) * REF_BLOCK * (size_t)max_s);
    for (;;) {
        int b = atomic_fetch_add(&pool->next, 1);
        if (b >= pool->first_block[pool->n_jobs])
            break;
        int j = 0;
        while (b >= pool->first_block[j + 1])
            j++;
        const reference_job *job = &pool->jobs[j];
        int r0 = (b - pool->first_block[j]) * REF_BLOCK;
        int n = job->n_rows - r0 < REF_BLOCK ? job->n_rows - r0 : REF_BLOCK;
        reference_block(job->q, pool->kf[j], pool->vf[j], job_keys(job), job->dim, job_keys(job) - job->seq,
                        job->mask, job->rows + r0, n, scores, job->out + (size_t)r0 * job->dim);
    }
    free(scores);
    return NULL;
}

int reference_run(const reference_job *jobs, int n_jobs, int threads)
{
    reference_pool pool = {.jobs = jobs, .n_jobs = n_jobs};
    pool.kf = xmalloc(sizeof(double *) * (size_t)n_jobs);
    pool.vf = xmalloc(sizeof(double *) * (size_t)n_jobs);
    pool.first_block = xmalloc(sizeof(int) * ((size_t)n_jobs + 1));
    pool.first_block[0] = 0;
    for (int i = 0; i < n_jobs; i++) {
        if (jobs[i].dim > REFERENCE_MAX_DIM)
            abort(); /* callers check the head dimension first (reference.h) */
        size_t n = (size_t)job_keys(&jobs[i]) * jobs[i].dim;
        pool.kf[i] = convert_head(jobs[i].k, n);
        pool.vf[i] = convert_head(jobs[i].v, n);
        pool.first_block[i + 1] = pool.first_block[i] + (jobs[i].n_rows + REF_BLOCK - 1) / REF_BLOCK;
    }
    atomic_init(&pool.next, 0);
    int blocks = pool.first_block[n_jobs];
    if (threads > blocks)
        threads = blocks;
    if (threads < 1)
        threads = 1;
    pthread_t *tid = xmalloc(sizeof(pthread_t) * (size_t)threads);
    int started = 0;
    for (int i = 1; i < threads; i++)
        if (pthread_create(&tid[started], NULL, reference_worker, &pool) == 0)
            started++;
    reference_worker(&pool); /* this thread works too; a thread that did not start costs only time */
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < n_jobs; i++) {
        free(pool.kf[i]);
        free(pool.vf[i]);
    }
    free(pool.kf);
    free(pool.vf);
    free(pool.first_block);
    free(tid);
    return started + 1;
}

/* Rows of a head the check covers (reference.h). The spread rows: one in each of
 * REFERENCE_SPREAD_ROWS equal strides between the edges, at a seeded offset in its stride. */
int reference_check_rows(int S, int max_rows, uint64_t seed, int *rows)
{
    if (max_rows <= 0 || S <= max_rows) {
        for (int i = 0; i < S; i++)
            rows[i] = i;
        return S;
    }
    /* Few rows asked for: a quarter of them at each end. */
    int edge = max_rows >= 4 * REFERENCE_EDGE_ROWS ? REFERENCE_EDGE_ROWS : max_rows / 4;
    int n = 0, spread = max_rows - 2 * edge;
    for (int i = 0; i < edge; i++)
        rows[n++] = i;
    int lo = edge, hi = S - edge; /* the middle rows [lo, hi) */
    uint64_t x = seed ^ 0x5eed0f64c4ec4ull;
    for (int i = 0; i < spread; i++) {
        long long a = lo + (long long)i * (hi - lo) / spread, b = lo + (long long)(i + 1) * (hi - lo) / spread;
        rows[n++] = (int)(a + (long long)(splitmix(&x) % (uint64_t)(b - a)));
    }
    for (int i = S - edge; i < S; i++)
        rows[n++] = i;
    return n;
}

double relative_error_rows_bf16(const uint16_t *got, int D, const int *rows, int n_rows, const double *ref)
{
    double num = 0, den = 0;
    for (int r = 0; r < n_rows; r++)
        for (int d = 0; d < D; d++) {
            double g = bf16_to_float(got[(size_t)rows[r] * D + d]), x = ref[(size_t)r * D + d];
            num += (g - x) * (g - x);
            den += x * x;
        }
    if (isnan(num) || isnan(den))
        return NAN;
    return den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
}

double relative_error_bf16(const uint16_t *got, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double g = bf16_to_float(got[i]);
        double d = g - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    if (isnan(num) || isnan(den))
        return NAN;
    return den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
}
