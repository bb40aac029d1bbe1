/* What writing one kernel record costs libattnprof_inject.so's buffer_completed (host only, no
 * GPU): the kernel line formatted into a 1 MiB-buffered file, with the name demangled for every
 * record (as the library did up to 2026-12-03) or once per distinct name (its name cache).
 * The names are the mangled forms of PyTorch-style elementwise, reduce and cat kernels (made
 * with g++ from templates of the same shape; the real ones, with lambdas in anonymous
 * namespaces, are longer) and two unmangled library kernels (cuBLAS's nvjet, cuDNN's SDPA),
 * cycled as a decode step cycles a few dozen kernels.
 *   cc -O2 -o /tmp/irc bench/inject_record_cost.c -lstdc++ && /tmp/irc [records]
 * Prints ns per record for both, and the worker-thread share of one core that a decode step
 * launching a kernel every 16 µs (tests/inject/README.md: 1.84 ms for about 113 launches)
 * would cost at each. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static const char *const NAMES[] = {
    "_ZN2at6native13reduce_kernelIN3c108BFloat16EfLi512ELb1EEEvT_T0_",
    "_ZN2at6native26CatArrayBatchedCopy_contigILi128ELi1EN3c108BFloat16EEEvPT1_iiii",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10MulFunctorIfEESt5arrayIPcLm3EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3EEEEviT0_T1_",
    "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_splitK_TNT",
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
};
#define N_NAMES (sizeof NAMES / sizeof *NAMES)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void line(FILE *f, uint64_t i, const char *name)
{
    fprintf(f, "K\t%llu\t%llu\t%u\t%u\t%u\t%u\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%u\t%s\n",
            (unsigned long long)(1796286593020974119ull + 4000 * i), (unsigned long long)(1796286593020976519ull + 4000 * i),
            (unsigned)i, 0u, 7u, 1u, 132, 1, 1, 128, 1, 1, 64, 0, 49152, 0u, name);
}

/* ns per record over n records; cached: demangle each distinct name once. */
static double run(FILE *f, long n, int cached)
{
    char *dem[N_NAMES] = {0};
    int done[N_NAMES] = {0};
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        size_t k = (size_t)i % N_NAMES;
        int status = -1;
        if (cached) {
            if (!done[k]) {
                dem[k] = __cxa_demangle(NAMES[k], NULL, NULL, &status);
                done[k] = 1;
            }
            line(f, (uint64_t)i, dem[k] ? dem[k] : NAMES[k]);
        } else {
            char *d = __cxa_demangle(NAMES[k], NULL, NULL, &status);
            line(f, (uint64_t)i, status == 0 && d ? d : NAMES[k]);
            free(d);
        }
    }
    double ns = 1e9 * (now_s() - t0) / (double)n;
    for (size_t k = 0; k < N_NAMES; k++)
        free(dem[k]);
    return ns;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    FILE *f = tmpfile();
    if (!f)
        return perror("tmpfile"), 1;
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    double each[2][7];
    for (int r = 0; r < 7; r++) /* interleaved, median of 7 */
        for (int c = 0; c < 2; c++) {
            rewind(f);
            each[c][r] = run(f, n, c);
        }
    for (int c = 0; c < 2; c++)
        qsort(each[c], 7, sizeof(double), cmp);
    const double launch_every_ns = 16000.0;
    printf("%ld records, median of 7: demangled every record %.0f ns/record (%.1f%% of a core at one kernel per "
           "16 us); cached %.0f ns/record (%.1f%%)\n", n, each[0][3], 100.0 * each[0][3] / launch_every_ns, each[1][3],
           100.0 * each[1][3] / launch_every_ns);
    fclose(f);
    return 0;
}
