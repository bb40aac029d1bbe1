/* The entry of libattnprof_recorder.so: the one exported symbol the CLI looks up
 * after dlopen. It hands back a static table: the registry's variants (for `list`)
 * and `record_batch`, which resolves the command line's variants, checks the shape and
 * runs the batch with CUPTI tracing. */
#include "recorder.h"

#include "cupti_tracing.h"
#include "exit_codes.h"
#include "runner.h"
#include "variant.h"

static int record_batch(const run_config *cfg, trace *t, run_info *info, char *err, size_t errlen)
{
    static run_plan plan;
    int rc = runner_plan(cfg, &plan, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    /* Before the first NVTX call, so CUPTI receives the markers. */
    cupti_prepare_nvtx();
    return runner_record_batch(&plan, t, info, err, errlen);
}

__attribute__((visibility("default"))) const recorder_api *attnprof_recorder_api(void)
{
    static recorder_variant variants[RUN_MAX_VARIANTS];
    static recorder_api api = {
        .abi = RECORDER_ABI,
        .sizeof_trace = sizeof(trace),
        .sizeof_run_info = sizeof(run_info),
        .sizeof_run_config = sizeof(run_config),
        .variants = variants,
        .record_batch = record_batch,
    };
    if (!api.n_variants)
        for (int i = 0; i < attn_registry_count && i < RUN_MAX_VARIANTS; i++, api.n_variants++)
            variants[i] = (recorder_variant){attn_registry[i]->name, attn_registry[i]->title,
                                             attn_registry[i]->what_changed, attn_registry[i]->expected_ops};
    return &api;
}
