/* analysis/compare's cost at scale (bench/RESULTS.md's cost budgets), on inputs built here:
 *   - the bootstrap of 80 000 forwards a side: O(n) a resample (it sorted each of 2000
 *     resamples: 44 s) and the same interval as sorting each resample gives;
 *   - a forward of 64 000 distinct kernels summarised and paired by hash (the scans of the
 *     summaries found so far were quadratic).
 * The time bounds are loose (a loaded 2-core machine): the quadratic code took many times them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bootstrap.h"
#include "compare_parts.h"
#include "median.h"

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Deterministic made-up samples around `centre`. */
static double *samples(int n, double centre, uint64_t seed)
{
    double *v = malloc(sizeof *v * (size_t)n);
    cr_assert_not_null(v);
    for (int i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = centre * (1 + 0.05 * (double)(seed >> 40) / (double)(1ull << 24));
    }
    return v;
}

/* The bootstrap's draws redone the slow way: each resample sorted (bootstrap.c's generator). */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double sorted_resample_median(const double *v, int n, double *scratch, uint64_t *state)
{
    for (int i = 0; i < n; i++)
        scratch[i] = v[(int)(((splitmix64(state) >> 32) * (uint64_t)n) >> 32)];
    qsort(scratch, (size_t)n, sizeof *scratch, median_cmp_double);
    return median_sorted(scratch, n);
}

Test(cost, the_bootstrap_by_ranks_is_the_bootstrap_by_sorting)
{
    for (int n = 1; n <= 40; n += 13) { /* odd and even counts, a side of one */
        double *a = samples(n, 100, 1), *b = samples(n + 1, 120, 2);
        double scratch[64];
        uint64_t state = 7;
        int resamples = 50;
        double ratios[50];
        for (int i = 0; i < resamples; i++) {
            double mb = sorted_resample_median(a, n, scratch, &state);
            ratios[i] = sorted_resample_median(b, n + 1, scratch, &state) / mb;
        }
        qsort(ratios, (size_t)resamples, sizeof *ratios, median_cmp_double);
        ratio_ci ci = bootstrap_median_ratio(a, n, b, n + 1, resamples, 7);
        double pos = 0.025 * (resamples - 1);
        int i = (int)floor(pos);
        double lo = ratios[i] + (pos - i) * (ratios[i + 1] - ratios[i]);
        cr_expect_eq(ci.lo, lo, "n=%d: %.17g against %.17g", n, ci.lo, lo);
        free(a);
        free(b);
    }
}

Test(cost, a_bootstrap_of_80000_forwards_a_side_is_linear, .timeout = 120)
{
    int n = 80000;
    double *a = samples(n, 100, 1), *b = samples(n, 130, 2);
    double t0 = seconds();
    ratio_ci ci = bootstrap_median_ratio(a, n, b, n, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED);
    double took = seconds() - t0;
    cr_expect(ci.lo > 1.2 && ci.hi < 1.4, "[%g, %g]", ci.lo, ci.hi);
    /* sorting each resample: 44 s on this machine; by ranks about 1 s */
    cr_expect_lt(took, 15.0, "%.1f s", took);
    free(a);
    free(b);
}

/* One variant of one forward of n distinct kernels, every op borrowed from ops. */
static void forward_of_distinct_kernels(gpu_op *ops, int n, const gpu_op **ptrs, forward *fw, variant_analysis *va)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "k%d(int)", i);
        ops[i] = (gpu_op){.kind = GPU_KERNEL, .name = strdup(name), .start_ns = 1000 * (int64_t)i,
                          .end_ns = 1000 * (int64_t)i + 500, .correlation = (uint32_t)i + 1, .grid = {132, 1, 1},
                          .block = {256, 1, 1}, .registers = 32};
        ptrs[i] = &ops[i];
    }
    memset(fw, 0, sizeof *fw);
    fw->ops = ptrs;
    fw->n_ops = n;
    memset(va, 0, sizeof *va);
    va->forwards = fw;
    va->n_forwards = 1;
}

Test(cost, a_forward_of_64000_distinct_kernels_groups_by_hash, .timeout = 120)
{
    int n = 64000;
    gpu_op *ops = calloc((size_t)n, sizeof *ops);
    const gpu_op **ptrs = calloc((size_t)n, sizeof *ptrs);
    cr_assert(ops && ptrs);
    static forward fw;
    static variant_analysis va;
    forward_of_distinct_kernels(ops, n, ptrs, &fw, &va);
    device_props dev;
    memset(&dev, 0, sizeof dev);
    double t0 = seconds();
    kernel_summary *k = NULL;
    int nk = compare_kernels_summarise(&va, &dev, 0, &k);
    static kernel_diff d;
    compare_kernels_diff(&d, k, nk, k, nk, 0.02);
    double took = seconds() - t0;
    cr_assert_eq(nk, n);
    cr_assert_eq(d.n, n);
    int same = 0;
    for (int i = 0; i < d.n; i++)
        same += d.rows[i].change == KERNEL_SAME && d.rows[i].base == d.rows[i].other;
    cr_expect_eq(same, n, "each kernel paired with itself");
    cr_expect_lt(took, 5.0, "%.1f s (the scans were quadratic)", took);
    for (int i = 0; i < nk; i++)
        free(k[i].samples);
    free(k);
    free(d.rows);
    for (int i = 0; i < n; i++)
        free(ops[i].name);
    free(ops);
    free(ptrs);
}
