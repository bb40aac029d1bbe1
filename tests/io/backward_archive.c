/* The --backward archive recorded on the H200 (tests/fixtures/h200-backward, 8x16x1024x64 causal,
 * the default shape, three backwards per variant, 2026-12-03T23:09Z): run.json's backward fields
 * read back, the attn_bwd ranges kept out of the forwards, and the GPU operations inside each
 * variant's attn_bwd ranges against the count its file predicts (cuBLAS's 4-byte Memset beyond
 * naive's seven kernels is a real operation: counted, never predicted). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../fixture.h"

#define FIXTURE_BWD "tests/fixtures/h200-backward"

static const variant_result *find(const run_info *r, const char *name)
{
    for (int i = 0; i < r->n_variants; i++)
        if (!strcmp(r->variants[i].name, name))
            return &r->variants[i];
    cr_assert_fail("no variant %s", name);
    return NULL;
}

/* GPU operations launched by API calls inside `variant`'s attn_bwd ranges, and those ranges. */
static int ops_in_backwards(const trace *t, const char *variant, int *n_ranges)
{
    int n = 0;
    *n_ranges = 0;
    for (size_t i = 0; i < t->n_ranges; i++) {
        const host_range *h = &t->ranges[i];
        if (strcmp(h->name, "attn_bwd") || strcmp(h->variant, variant))
            continue;
        cr_assert_lt(h->iteration, 0, "an attn_bwd range must not count as a forward");
        (*n_ranges)++;
        for (size_t a = 0; a < t->n_apis; a++) {
            const api_call *c = &t->apis[a];
            if (c->start_ns < h->start_ns || c->end_ns > h->end_ns)
                continue;
            for (size_t o = 0; o < t->n_ops; o++)
                n += t->ops[o].correlation == c->correlation;
        }
    }
    return n;
}

Test(backward_archive, run_json_backward_fields_read_back)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    cr_assert_eq(f.r.backward, 1);
    const char *ran[] = {"naive", "naive_inplace", "math", "efficient", "flash", "cudnn"};
    for (size_t i = 0; i < sizeof ran / sizeof ran[0]; i++) {
        const backward_result *b = &find(&f.r, ran[i])->bwd;
        cr_assert(b->recorded && b->status == VARIANT_OK, "%s: %s", ran[i], b->error);
        cr_assert(b->rel_error_dq <= b->tolerance && b->rel_error_dk <= b->tolerance &&
                  b->rel_error_dv <= b->tolerance, "%s", ran[i]);
        cr_assert_gt(b->event_us, 0);
        cr_assert_eq(b->stop.forwards, 3);
    }
    /* The series' in-place fill overwrites nothing the backward reads: the same gradients. */
    const backward_result *a = &find(&f.r, "naive")->bwd, *b = &find(&f.r, "naive_inplace")->bwd;
    cr_assert(a->rel_error_dq == b->rel_error_dq && a->rel_error_dk == b->rel_error_dk &&
              a->rel_error_dv == b->rel_error_dv);
    /* What the forward keeps: the S×S bf16 probabilities and mask against 4 bytes per row. */
    cr_assert_eq(a->kept_bytes, 128.0 * 1024 * 1024 * 2 + 1024 * 1024);
    cr_assert_eq(find(&f.r, "flash")->bwd.kept_bytes, 128.0 * 1024 * 4);
    cr_assert_eq(find(&f.r, "efficient")->bwd.kept_bytes, 0);
    fixture_free(&f);
}

Test(backward_archive, forwards_stay_the_attn_fwd_ranges)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    for (int i = 0; i < f.a.n; i++)
        cr_assert_eq(f.a.v[i].n_forwards, f.a.v[i].result->stop.forwards, "%s", f.a.v[i].result->name);
    fixture_free(&f);
}

Test(backward_archive, operations_per_backward_match_the_prediction)
{
    fixture f;
    fixture_load(&f, FIXTURE_BWD);
    const char *ran[] = {"naive", "naive_inplace", "math", "efficient", "flash", "cudnn"};
    for (size_t i = 0; i < sizeof ran / sizeof ran[0]; i++) {
        int n_ranges = 0, ops = ops_in_backwards(&f.t, ran[i], &n_ranges);
        /* naive's: cuBLAS's 4-byte workspace Memset before the first GEMM, beyond the prediction */
        const int extra = !strncmp(ran[i], "naive", 5);
        cr_assert_eq(n_ranges, 3, "%s", ran[i]);
        cr_assert_eq(ops, n_ranges * (find(&f.r, ran[i])->bwd.expected_ops + extra),
                     "%s: %d operations in %d backwards", ran[i], ops, n_ranges);
    }
    fixture_free(&f);
}
