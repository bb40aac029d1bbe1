/* base/units_plural: a count agrees with its noun (units_count_noun, units_plural), the one
 * helper every count+noun phrase of the documents goes through. */
#include <criterion/criterion.h>
#include <string.h>

#include "units.h"

Test(units_plural, a_count_agrees_with_its_noun)
{
    char b[64];
    cr_assert_str_eq(units_count_noun(1, "GEMM", b, sizeof b), "1 GEMM");
    cr_assert_str_eq(units_count_noun(2, "GEMM", b, sizeof b), "2 GEMMs");
    cr_assert_str_eq(units_count_noun(0, "kernel", b, sizeof b), "0 kernels");
    cr_assert_str_eq(units_count_noun(3, "copy", b, sizeof b), "3 copies");
    cr_assert_str_eq(units_count_noun(1, "copy", b, sizeof b), "1 copy");
    cr_assert_str_eq(units_count_noun(2, "pass", b, sizeof b), "2 passes");
    cr_assert_str_eq(units_count_noun(2, "day", b, sizeof b), "2 days");
    cr_assert_str_eq(units_count_noun(4, "FP32 CUDA-core GEMM", b, sizeof b), "4 FP32 CUDA-core GEMMs");
    cr_assert_str_eq(units_count_noun(1.5, "op", b, sizeof b), "1.5 ops");
    cr_assert_str_eq(units_plural(1, "step", b, sizeof b), "step");
    cr_assert_str_eq(units_plural(7, "step", b, sizeof b), "steps");
}

/* A large whole count is written in full: "%g" wrote a trace's 2250000 operations as "2.25e+06". */
Test(units_plural, a_large_count_is_written_in_full)
{
    char b[64];
    cr_assert_str_eq(units_count_noun(2250000, "GPU operation", b, sizeof b), "2250000 GPU operations");
    cr_assert_str_eq(units_count_noun(1234567, "API call", b, sizeof b), "1234567 API calls");
    cr_assert_str_eq(units_count_noun(2.5, "copy", b, sizeof b), "2.5 copies");
}

/* Two sides' counts: "1 and 1 steps" was written of two one-step traces. */
Test(units_plural, a_pair_of_counts_agrees)
{
    char b[64];
    cr_assert_str_eq(units_pair_count(1, 1, "step", b, sizeof b), "1 step each");
    cr_assert_str_eq(units_pair_count(8, 8, "step", b, sizeof b), "8 and 8 steps");
    cr_assert_str_eq(units_pair_count(1, 3, "forward", b, sizeof b), "1 and 3 forwards");
}
