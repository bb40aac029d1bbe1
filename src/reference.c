#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next_u64(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_normal(rng *r)
{
    /* Box–Muller on (0, 1] so log never sees 0. */
    double u1 = ((next_u64(r) >> 11) + 1.0) * 0x1.0p-53;
    double u2 = (next_u64(r) >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void fill_normal_bf16(uint16_t *x, size_t n, rng *r)
{
    for (size_t i = 0; i < n; i++)
        x[i] = float_to_bf16((float)rng_normal(r));
}

void reference_attention_head(const uint16_t *q, const uint16_t *k, const uint16_t *v, int S, int D,
                              const uint8_t *mask, double *out)
{
    double *p = malloc(sizeof(double) * (size_t)S);
    double *kf = malloc(sizeof(double) * (size_t)S * D);
    double *vf = malloc(sizeof(double) * (size_t)S * D);
    if (!p || !kf || !vf)
        abort();
    for (size_t i = 0; i < (size_t)S * D; i++) {
        kf[i] = bf16_to_float(k[i]);
        vf[i] = bf16_to_float(v[i]);
    }
    const double scale = 1.0 / sqrt((double)D);
    for (int i = 0; i < S; i++) {
        double mx = -INFINITY;
        for (int j = 0; j < S; j++) {
            int masked = mask ? mask[(size_t)i * S + j] != 0 : j > i;
            if (masked) {
                p[j] = -INFINITY;
                continue;
            }
            double s = 0;
            for (int d = 0; d < D; d++)
                s += (double)bf16_to_float(q[(size_t)i * D + d]) * kf[(size_t)j * D + d];
            p[j] = s * scale;
            if (p[j] > mx)
                mx = p[j];
        }
        double *o = out + (size_t)i * D;
        if (mx == -INFINITY) {
            for (int d = 0; d < D; d++)
                o[d] = NAN;
            continue;
        }
        double sum = 0;
        for (int j = 0; j < S; j++) {
            p[j] = p[j] == -INFINITY ? 0.0 : exp(p[j] - mx);
            sum += p[j];
        }
        for (int d = 0; d < D; d++)
            o[d] = 0;
        for (int j = 0; j < S; j++) {
            if (p[j] == 0.0)
                continue;
            double w = p[j] / sum;
            for (int d = 0; d < D; d++)
                o[d] += w * vf[(size_t)j * D + d];
        }
    }
    free(p);
    free(kf);
    free(vf);
}

double relative_error_bf16(const uint16_t *got, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double g = bf16_to_float(got[i]);
        double d = g - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    if (isnan(num) || isnan(den))
        return NAN;
    return den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
}
