/* The FP64 check's host cost at one shape: input generation, then the reference of the
 * sampled heads over the rows the runner checks (src/recorder/reference.h), on every core or on as
 * many threads as asked. Run by `make bench-reference` (bench/RESULTS.md, "The FP64 check"):
 *   build/reference_cost B H S D [heads] [rows: 0 = every row, -1 = the runner's default] [threads]
 * It prints one line of seconds per phase. No GPU: this is the part of a run that is host
 * work, and it is the part that kept the default sweep from finishing. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "reference.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s B H S D [heads 3] [rows -1] [threads: all]\n", argv[0]);
        return 2;
    }
    int B = atoi(argv[1]), H = atoi(argv[2]), S = atoi(argv[3]), D = atoi(argv[4]);
    int heads = argc > 5 ? atoi(argv[5]) : 3, max_rows = argc > 6 ? atoi(argv[6]) : -1;
    int threads = argc > 7 ? atoi(argv[7]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (B < 1 || H < 1 || S < 1 || D < 1 || D > REFERENCE_MAX_DIM || heads < 1 || threads < 1) {
        fprintf(stderr, "reference_cost: B, H, S, heads and threads must be positive, D at most %d\n",
                REFERENCE_MAX_DIM);
        return 2;
    }
    if (max_rows < 0)
        max_rows = S <= REFERENCE_ALL_ROWS_SEQ ? 0 : REFERENCE_DEFAULT_ROWS;
    size_t n = (size_t)B * H * S * D, head = (size_t)S * D;
    uint16_t *x = malloc(n * 2 * 3);
    int *rows = malloc(sizeof(int) * (size_t)S);
    if (!x || !rows)
        return 3;
    double t0 = now_s();
    rng r;
    rng_seed(&r, 0);
    fill_normal_bf16_threads(x, n * 3, &r, threads);
    double t1 = now_s();
    int n_rows = reference_check_rows(S, max_rows, 0, rows);
    int bh = B * H;
    if (heads > bh)
        heads = bh;
    reference_job jobs[16];
    if (heads > 16)
        heads = 16;
    for (int i = 0; i < heads; i++) {
        size_t idx = heads == 1 ? 0 : (size_t)i * (bh - 1) / (heads - 1);
        jobs[i] = (reference_job){x + idx * head, x + n + idx * head, x + 2 * n + idx * head, S, D, NULL,
                                  rows, n_rows, malloc(sizeof(double) * (size_t)n_rows * D), S};
        if (!jobs[i].out)
            return 3;
    }
    int ran = reference_run(jobs, heads, threads);
    double t2 = now_s();
    printf("B=%d H=%d S=%d D=%d: inputs %.2f s; reference %.2f s (%d heads x %d rows, %d threads)\n", B, H, S, D,
           t1 - t0, t2 - t1, heads, n_rows, ran);
    return 0;
}
