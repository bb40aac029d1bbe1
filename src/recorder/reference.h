/* FP64 CPU reference for causal attention, the bf16 conversions and the seeded
 * normal generator the runner draws inputs from. Pure code, unit-tested. */
#ifndef ATTNPROF_REFERENCE_H
#define ATTNPROF_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f); /* round to nearest even; NaN stays NaN */

/* xoshiro-style generator: the same seed gives the same inputs on every machine. */
typedef struct rng {
    uint64_t s[4];
} rng;
void rng_seed(rng *r, uint64_t seed);
double rng_normal(rng *r);
void fill_normal_bf16(uint16_t *x, size_t n, rng *r);
/* The same values on `threads` threads (the calling one included). */
void fill_normal_bf16_threads(uint16_t *x, size_t n, rng *r, int threads);

/* One head: q, k, v are [S, D] bf16; out [S, D] double. mask (may be NULL:
 * causal) is [S, S], nonzero = masked out. A fully masked row gives NaN, as a
 * softmax over no keys has no value. */
void reference_attention_head(const uint16_t *q, const uint16_t *k, const uint16_t *v, int S, int D,
                              const uint8_t *mask, double *out);

/* The same for n_rows chosen query rows of one head (rows ascending, each in [0, S)):
 * out is [n_rows, D], row r of it is the reference of query row rows[r]. */
void reference_attention_rows(const uint16_t *q, const uint16_t *k, const uint16_t *v, int S, int D,
                              const uint8_t *mask, const int *rows, int n_rows, double *out);

/* The largest head dimension the reference takes (the variants take at most 256). */
#define REFERENCE_MAX_DIM 256

/* Several heads at once on `threads` threads (the calling one included); the result does not
 * depend on the thread count. Returns the number of threads that ran. */
typedef struct reference_job {
    const uint16_t *q, *k, *v; /* q [seq, dim], k and v [kv_seq, dim] bf16 */
    int seq, dim;              /* seq: the query rows of q */
    const uint8_t *mask;       /* NULL: causal; else [seq, kv_seq], nonzero = masked out */
    const int *rows;           /* ascending query rows */
    int n_rows;
    double *out;               /* [n_rows, dim] */
    /* The keys (decode: more than the queries; 0: as many as seq). The causal mask is then
     * aligned to the end of the keys: query row i sees keys 0 .. i + kv_seq - seq, the
     * bottom-right convention of PyTorch and FlashAttention. A grouped-query head passes
     * its key/value head's k and v. */
    int kv_seq;
} reference_job;
int reference_run(const reference_job *jobs, int n_jobs, int threads);

/* Which query rows of a head the check covers, so that its cost stays O(rows · S · D):
 * every row when S <= max_rows (or max_rows <= 0); otherwise the first and the last
 * REFERENCE_EDGE_ROWS rows (the causal mask's two ends: one key, every key; a quarter of
 * * max_rows each when max_rows < 4·REFERENCE_EDGE_ROWS) and the rest spread over the middle,
 * one in each of that many equal strides at a seeded offset. With the default count the
 * strides are at most 32 rows long up to S = 16384, so every aligned 64-row query tile (the
 * kernels' tiles are 64 or 128 rows) holds a checked row. rows has room for
 * min(S, max_rows) values; returns the count. */
#define REFERENCE_EDGE_ROWS 64
#define REFERENCE_SPREAD_ROWS 512
#define REFERENCE_DEFAULT_ROWS (2 * REFERENCE_EDGE_ROWS + REFERENCE_SPREAD_ROWS)
/* Up to this sequence length every row is checked by default: S²·D stays below ~5·10⁸
 * multiply-adds per head at D = 128, well under a second on one core. */
#define REFERENCE_ALL_ROWS_SEQ 2048
int reference_check_rows(int S, int max_rows, uint64_t seed, int *rows);

/* ‖got − ref‖_F / ‖ref‖_F over n values (got is bf16). NaN anywhere gives NaN. */
double relative_error_bf16(const uint16_t *got, const double *ref, size_t n);
/* The same over chosen rows: got is a whole [S, D] head, ref is [n_rows, D]. */
double relative_error_rows_bf16(const uint16_t *got, int D, const int *rows, int n_rows, const double *ref);

#endif
