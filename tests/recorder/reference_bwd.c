/* The FP64 backward reference against a second, independent computation: the whole S×S
 * matrices of one small head (P, dP, dS) in matrix form, then dQ = dS·K·s, dK = dSᵀ·Q·s,
 * dV = Pᵀ·dO, on odd S and every row or a few, causal and not. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "reference.h"
#include "reference_bwd.h"

static void matrix_backward(const double *q, const double *k, const double *v, const double *dO, int S, int D,
                            int causal, double *dq, double *dk, double *dv)
{
    double *P = calloc((size_t)S * S, sizeof *P), *dS = calloc((size_t)S * S, sizeof *dS);
    const double sc = 1.0 / sqrt(D);
    for (int i = 0; i < S; i++) {
        const int seen = causal ? i + 1 : S; /* masked entries stay 0 in P and dS */
        double m = -INFINITY, l = 0;
        for (int j = 0; j < seen; j++) {
            double x = 0;
            for (int d = 0; d < D; d++)
                x += q[i * D + d] * k[j * D + d];
            P[i * S + j] = x * sc;
            m = fmax(m, x * sc);
        }
        for (int j = 0; j < seen; j++)
            l += (P[i * S + j] = exp(P[i * S + j] - m));
        for (int j = 0; j < seen; j++)
            P[i * S + j] /= l;
        double rowsum = 0; /* Σ_j P_ij dP_ij: softmax's backward */
        for (int j = 0; j < seen; j++) {
            double dp = 0;
            for (int d = 0; d < D; d++)
                dp += dO[i * D + d] * v[j * D + d];
            dS[i * S + j] = dp;
            rowsum += P[i * S + j] * dp;
        }
        for (int j = 0; j < seen; j++)
            dS[i * S + j] = P[i * S + j] * (dS[i * S + j] - rowsum);
    }
    for (int a = 0; a < S; a++)
        for (int d = 0; d < D; d++) {
            double x = 0, y = 0, z = 0;
            for (int b = 0; b < S; b++) {
                x += dS[a * S + b] * k[b * D + d];
                y += dS[b * S + a] * q[b * D + d];
                z += P[b * S + a] * dO[b * D + d];
            }
            dq[a * D + d] = x * sc;
            dk[a * D + d] = y * sc;
            dv[a * D + d] = z;
        }
    free(P);
    free(dS);
}

static void check_head(int S, int D, int causal, const int *rows, int n_rows, int threads)
{
    const size_t n = (size_t)S * D;
    uint16_t *x = malloc(4 * n * 2);
    double *up = malloc(4 * n * sizeof *up), *full = malloc(3 * n * sizeof *full);
    double *got = malloc(3 * (size_t)n_rows * D * sizeof *got);
    rng r;
    rng_seed(&r, 7);
    fill_normal_bf16(x, 4 * n, &r);
    for (size_t i = 0; i < 4 * n; i++)
        up[i] = bf16_to_float(x[i]);
    matrix_backward(up, up + n, up + 2 * n, up + 3 * n, S, D, causal, full, full + n, full + 2 * n);
    reference_bwd_job j = {.q = x, .k = x + n, .v = x + 2 * n, .dout = x + 3 * n, .seq = S, .dim = D,
                           .causal = causal, .rows = rows, .n_rows = n_rows, .dq = got,
                           .dk = got + (size_t)n_rows * D, .dv = got + 2 * (size_t)n_rows * D};
    cr_assert_eq(reference_backward_head(&j, threads), 0);
    for (int g = 0; g < 3; g++)
        for (int rr = 0; rr < n_rows; rr++)
            for (int d = 0; d < D; d++) {
                const double want = full[g * n + (size_t)rows[rr] * D + d];
                const double have = got[(size_t)g * n_rows * D + (size_t)rr * D + d];
                cr_assert(fabs(have - want) <= 1e-9 * (1 + fabs(want)), "gradient %d row %d col %d: %g vs %g", g,
                          rows[rr], d, have, want);
            }
    free(x);
    free(up);
    free(full);
    free(got);
}

Test(reference_bwd, every_row_of_an_odd_head_matches_the_matrix_form)
{
    int rows[37];
    for (int i = 0; i < 37; i++)
        rows[i] = i;
    check_head(37, 16, 1, rows, 37, 3);
    check_head(37, 16, 0, rows, 37, 3);
}

Test(reference_bwd, chosen_rows_match_and_do_not_depend_on_threads)
{
    const int rows[] = {0, 5, 63, 64, 98};
    check_head(99, 8, 1, rows, 5, 1);
    check_head(99, 8, 1, rows, 5, 4);
    check_head(99, 8, 0, rows, 5, 1);
    check_head(99, 8, 0, rows, 5, 4);
}

/* The last row: key row S-1 is seen by query row S-1 alone (the causal mask's edge). */
Test(reference_bwd, the_last_row_matches)
{
    const int rows[] = {12};
    check_head(13, 8, 1, rows, 1, 2);
}

/* The flag is not ignored: with the mask, query row 0 sees key 0 alone (its dQ is 0) and key
 * row S-1 is seen by query S-1 alone, so all three gradients differ from the unmasked ones. */
Test(reference_bwd, the_mask_changes_every_gradient)
{
    enum { S = 21, D = 8 };
    const int rows[] = {0, 10, 20};
    double got[2][3 * 3 * D];
    uint16_t x[4 * S * D];
    rng r;
    rng_seed(&r, 11);
    fill_normal_bf16(x, 4 * S * D, &r);
    for (int causal = 0; causal < 2; causal++) {
        reference_bwd_job j = {.q = x, .k = x + S * D, .v = x + 2 * S * D, .dout = x + 3 * S * D, .seq = S, .dim = D,
                               .causal = causal, .rows = rows, .n_rows = 3, .dq = got[causal],
                               .dk = got[causal] + 3 * D, .dv = got[causal] + 6 * D};
        cr_assert_eq(reference_backward_head(&j, 2), 0);
    }
    for (int g = 0; g < 3; g++) {
        double diff = 0;
        for (int i = 0; i < 3 * D; i++)
            diff += fabs(got[0][g * 3 * D + i] - got[1][g * 3 * D + i]);
        cr_assert_gt(diff, 1e-3, "gradient %d: causal and non-causal agree (%g)", g, diff);
    }
}
