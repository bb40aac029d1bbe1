/* op_role: the role of each GPU operation in the attention forward, on the H200
 * fixtures recorded by attnprof (tests/fixtures/h200-6var, h200-cudnn914) and on
 * PyTorch's own six variants imported from tests/fixtures/torch-h200 (Kineto
 * traces of one H200). The same steps must get the same roles on both sides,
 * under different kernel names. A few synthetic forwards (built here, not
 * recorded) check the positional rules on their own. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "fixture.h"
#include "kineto_import.h"
#include "op_role.h"

#define TORCH "tests/fixtures/torch-h200/"

/* "memset, QKᵀ GEMM, …" of the median forward of `name`. */
static void roles_text(const analysis *a, const char *name, char *out, size_t n)
{
    const variant_analysis *va = analysis_find(a, name);
    cr_assert_not_null(va, "%s", name);
    int m = analysis_median_forward(va);
    cr_assert(m >= 0, "%s has a forward", name);
    const forward *fw = &va->forwards[m];
    op_role *r = calloc((size_t)fw->n_ops + 1, sizeof *r);
    op_roles_of_forward(fw->ops, fw->n_ops, r);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < fw->n_ops; i++)
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s", i ? ", " : "", op_role_name(r[i]));
    free(r);
}

/* Every forward of a variant gets the roles of its median one. */
static void assert_roles_stable(const analysis *a, const char *name)
{
    const variant_analysis *va = analysis_find(a, name);
    const forward *ref = &va->forwards[analysis_median_forward(va)];
    op_role *r0 = calloc((size_t)ref->n_ops + 1, sizeof *r0), *r = calloc((size_t)ref->n_ops + 1, sizeof *r);
    op_roles_of_forward(ref->ops, ref->n_ops, r0);
    for (int f = 0; f < va->n_forwards; f++) {
        const forward *fw = &va->forwards[f];
        cr_assert_eq(fw->n_ops, ref->n_ops, "%s forward %d", name, f);
        op_roles_of_forward(fw->ops, fw->n_ops, r);
        cr_assert_eq(memcmp(r, r0, sizeof *r * (size_t)ref->n_ops), 0, "%s forward %d", name, f);
    }
    free(r0);
    free(r);
}

#define NAIVE_ROLES "QKᵀ GEMM, scale, copy, mask apply, softmax, PV GEMM"
#define INPLACE_ROLES "QKᵀ GEMM, scale, mask apply, softmax, PV GEMM"
#define GUARD4 "softmax NaN guard, softmax NaN guard, softmax NaN guard, softmax NaN guard"

Test(op_role, attnprof_kernels_on_the_h200)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-cudnn914");
    char s[2048];
    /* cuBLAS's 4-byte Memset comes first in the default shape. */
    roles_text(&f.a, "naive", s, sizeof s);
    cr_assert_str_eq(s, "memset, " NAIVE_ROLES);
    roles_text(&f.a, "naive_inplace", s, sizeof s);
    cr_assert_str_eq(s, "memset, " INPLACE_ROLES);
    roles_text(&f.a, "math", s, sizeof s);
    cr_assert_str_eq(s, "cast, cast, cast, scale, mask build, mask build, mask build, mask build, scale, QKᵀ GEMM, "
                        "mask apply, softmax, " GUARD4 ", PV GEMM, cast, cast");
    roles_text(&f.a, "efficient", s, sizeof s);
    cr_assert_str_eq(s, "fused attention");
    roles_text(&f.a, "flash", s, sizeof s);
    cr_assert_str_eq(s, "fused attention");
    roles_text(&f.a, "cudnn", s, sizeof s);
    cr_assert_str_eq(s, "memset, fused attention");
    const char *all[] = {"naive", "naive_inplace", "math", "efficient", "flash", "cudnn"};
    for (int i = 0; i < 6; i++)
        assert_roles_stable(&f.a, all[i]);
    fixture_free(&f);

    /* The small shape: no Memset before cuBLAS's GEMM, the same roles otherwise. */
    fixture_load(&f, "tests/fixtures/h200-6var");
    roles_text(&f.a, "naive", s, sizeof s);
    cr_assert_str_eq(s, NAIVE_ROLES);
    fixture_free(&f);
}

Test(op_role, pytorch_kernels_imported_from_kineto)
{
    static const char *const files[] = {TORCH "kineto_naive.json.gz",      TORCH "kineto_naive_inplace.json.gz",
                                        TORCH "kineto_sdpa_math.json.gz",  TORCH "kineto_sdpa_efficient.json.gz",
                                        TORCH "kineto_sdpa_flash.json.gz", TORCH "kineto_sdpa_cudnn.json.gz"};
    fixture f;
    char err[1024], s[2048];
    import_options o = {.device = -1, .variant = "naive,naive_inplace,math,efficient,flash,cudnn"};
    cr_assert_eq(kineto_import(files, 6, &o, &f.t, &f.r, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert_eq(analysis_build(&f.a, &f.t, &f.r, err, sizeof err), 0, "%s", err);
    roles_text(&f.a, "naive", s, sizeof s);
    cr_assert_str_eq(s, "memset, " NAIVE_ROLES, "the Memcpy of aten::masked_fill's clone is a copy");
    roles_text(&f.a, "naive_inplace", s, sizeof s);
    cr_assert_str_eq(s, "memset, " INPLACE_ROLES);
    /* SDPA math: the fill of `where`'s scalar belongs to the mask build, and
     * PyTorch casts the probabilities back before the PV GEMM. */
    roles_text(&f.a, "math", s, sizeof s);
    cr_assert_str_eq(s, "cast, cast, cast, scale, mask build, mask build, mask build, mask build, mask build, scale, "
                        "QKᵀ GEMM, mask apply, softmax, " GUARD4 ", cast, PV GEMM, cast");
    roles_text(&f.a, "efficient", s, sizeof s);
    cr_assert_str_eq(s, "fused attention");
    roles_text(&f.a, "flash", s, sizeof s);
    cr_assert_str_eq(s, "fused attention");
    roles_text(&f.a, "cudnn", s, sizeof s);
    cr_assert_str_eq(s, "memset, fused attention");
    const char *all[] = {"naive", "naive_inplace", "math", "efficient", "flash", "cudnn"};
    for (int i = 0; i < 6; i++)
        assert_roles_stable(&f.a, all[i]);
    analysis_free(&f.a);
    trace_free(&f.t);
}

/* Synthetic forwards (no recording): kernels named as a stranger might name them. */
static void synthetic_roles(const char *const *names, int n, op_role *r)
{
    gpu_op ops[16];
    const gpu_op *p[16];
    memset(ops, 0, sizeof ops);
    for (int i = 0; i < n; i++) {
        ops[i].kind = !strcmp(names[i], "Memcpy") ? GPU_MEMCPY : !strcmp(names[i], "Memset") ? GPU_MEMSET : GPU_KERNEL;
        ops[i].name = (char *)names[i];
        p[i] = &ops[i];
    }
    op_roles_of_forward(p, n, r);
}

Test(op_role, position_decides_the_gemms_and_the_mask)
{
    op_role r[16];
    /* No softmax: the first of two GEMMs is QKᵀ, the last PV; a third in between
     * stays a plain GEMM. */
    const char *two[] = {"my_gemm_a", "my_gemm_b"};
    synthetic_roles(two, 2, r);
    cr_assert(r[0] == ROLE_QK_GEMM && r[1] == ROLE_PV_GEMM);
    const char *three[] = {"cutlass_a", "cutlass_b", "cutlass_c"};
    synthetic_roles(three, 3, r);
    cr_assert(r[0] == ROLE_QK_GEMM && r[1] == ROLE_GEMM && r[2] == ROLE_PV_GEMM);
    /* A mask step after the QKᵀ GEMM applies the mask; one before builds it; a
     * scale after the softmax (dropout's) is not the attention's scale; a
     * broadcast is no cast. */
    const char *fwd[] = {"build_tril_mask", "gemm_qk", "apply_mask", "softmax_rows", "gemm_pv", "dropout_scale",
                         "broadcast_rows"};
    synthetic_roles(fwd, 7, r);
    cr_assert_eq(r[0], ROLE_MASK_BUILD);
    cr_assert_eq(r[1], ROLE_QK_GEMM);
    cr_assert_eq(r[2], ROLE_MASK_APPLY);
    cr_assert_eq(r[3], ROLE_SOFTMAX);
    cr_assert_eq(r[4], ROLE_PV_GEMM);
    cr_assert_eq(r[5], ROLE_OTHER);
    cr_assert_eq(r[6], ROLE_OTHER);
    /* Between the mask build and the QKᵀ GEMM a fill belongs to the mask; another
     * kernel (a model's rotary embedding) does not. */
    const char *model[] = {"build_tril_mask", "rotary_embedding_kernel", "constant_fill_kernel", "gemm_qk",
                           "softmax_rows", "gemm_pv"};
    synthetic_roles(model, 6, r);
    cr_assert(r[0] == ROLE_MASK_BUILD && r[1] == ROLE_OTHER && r[2] == ROLE_MASK_BUILD && r[3] == ROLE_QK_GEMM);
    /* Between the softmax and the PV GEMM everything but a cast guards the softmax. */
    const char *guard[] = {"gemm1", "softmax", "mystery_kernel", "downcast_probs", "gemm2", "Memcpy"};
    synthetic_roles(guard, 6, r);
    cr_assert(r[2] == ROLE_SOFTMAX_GUARD && r[3] == ROLE_CAST && r[4] == ROLE_PV_GEMM && r[5] == ROLE_COPY);
}

/* Grouped-query and decode forwards of the H200 (tests/fixtures/h200-decode: 4x32/8x4096x128,
 * one query): naive's and math's repeat kernels are the K/V expansion, not "other"; math's cuBLAS
 * GEMVs (a GEMM of one query row) are its QKᵀ and PV GEMMs, placed by the softmax like any GEMM
 * (before: other and softmax NaN guard). */
Test(op_role, decode_expansion_copies_and_gemv_gemms_get_their_roles)
{
    static fixture f;
    fixture_load(&f, "tests/fixtures/h200-decode");
    char text[2048];
    roles_text(&f.a, "naive", text, sizeof text);
    cr_assert(!strncmp(text, "K/V expansion, K/V expansion, ", 30), "%s", text);
    roles_text(&f.a, "math", text, sizeof text);
    cr_assert(strstr(text, "mask build, K/V expansion, K/V expansion, scale, QKᵀ GEMM, mask apply, softmax"), "%s", text);
    cr_assert(strstr(text, "softmax NaN guard, PV GEMM, cast"), "%s", text);
    cr_assert_null(strstr(text, "other"), "%s", text);
    fixture_free(&f);
}
