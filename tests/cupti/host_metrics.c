/* Runs in `make test` of a CUDA build, without a GPU: CUPTI's host half (profiler host
 * object, metric enumeration, config image) checks the counter pass's metric names on
 * the chips attnprof targets. Every name must exist on GH100 (H100/H200); on GA100
 * (A100) all but the Hopper-only ones (GMMA instructions, bf16 tensor-op paths), which
 * the pass then records as unavailable. A typo in a metric name fails here, not on the
 * GPU. Exit 0 on success; prints each mismatch. */
#include <stdio.h>
#include <string.h>

#include "counter_pass.h"

static int check(const char *chip, const int *want_missing, int n_missing)
{
    counters_meta m;
    char err[512] = "";
    if (counter_pass_host_check(chip, &m, err, sizeof err) != 0) {
        printf("host_metrics: %s: %s\n", chip, err);
        return 1;
    }
    int bad = 0;
    for (int k = 0; k < M_COUNT; k++) {
        int missing = 0;
        for (int i = 0; i < n_missing; i++)
            missing |= want_missing[i] == k;
        if (m.available[k] == missing) {
            printf("host_metrics: %s: %s is %savailable, expected the opposite\n", chip, counters_metric_names[k],
                   m.available[k] ? "" : "not ");
            bad = 1;
        }
    }
    if (m.passes < 1) {
        printf("host_metrics: %s: config needs %d passes\n", chip, m.passes);
        bad = 1;
    }
    printf("host_metrics: %s: %d replay passes for the available metrics%s\n", chip, m.passes, bad ? " (FAILED)" : "");
    return bad;
}

int main(void)
{
    static const int hopper_only[] = {M_GMMA_INST, M_HMMA_BF16_OPS, M_HGMMA_BF16_OPS};
    int bad = check("GH100", NULL, 0);
    bad |= check("GA100", hopper_only, 3);
    return bad;
}
