/* What was run, on what, and how each variant fared, in memory: the words of a variant's
 * status and of a run's producer. run.json's reader and writer are io/run_json.c. */
#include "run_info.h"

const char *const variant_status_words[] = {"ok", "FAILED", "unavailable", "skipped", NULL};

const char *variant_status_name(variant_status s)
{
    return s >= VARIANT_OK && s <= VARIANT_SKIPPED ? variant_status_words[s] : "?";
}

const char *run_producer_name(run_producer p)
{
    switch (p) {
    case PRODUCER_ATTNPROF:
        return "attnprof";
    case PRODUCER_PYTORCH:
        return "pytorch_profiler";
    case PRODUCER_KINETO:
        return "kineto";
    case PRODUCER_INJECTION:
        return "injection";
    }
    return "?";
}

int run_info_shape_recorded(const run_info *r)
{
    return r->shape.batch > 0 && r->shape.heads > 0 && r->shape.seq > 0 && r->shape.dim > 0;
}

const char *run_producer_phrase(const run_info *r)
{
    switch (r->producer) {
    case PRODUCER_PYTORCH:
        return "imported PyTorch profiler traces";
    case PRODUCER_KINETO:
        return "imported Kineto traces";
    case PRODUCER_INJECTION:
        return "recorded by injection";
    default:
        return "attnprof run";
    }
}
