/* The decode step's findings beside the series' (findings.c's table calls them): decode_bandwidth,
 * the K+V rate of a decode forward against the copy ceiling measured in the run. */
#include "findings.h"
#include "finding.h"
#include "units.h"

#include <math.h>
#include <stdio.h>

/* Below this share of the copy ceiling measured in the run, a decode's K+V rate is a notice. */
#define DECODE_BANDWIDTH_NOTICE 0.5

/* A decode step (q_seq < the KV length) reads the whole K/V cache for a few queries: its arithmetic
 * intensity (4·B·Hq·q_seq·S·D FLOPs, every key of every query, over the K+V bytes) sits far below the
 * ridge of the run's roofs, so its time is the K+V bytes over the memory rate. Said as the rate the
 * forward reaches (K+V bytes / CUDA time per forward, bf16) against the copy ceiling measured in the
 * same run (cudaMemcpy DtoD, read + write bytes over time, the convention of FlashDecoding's and
 * cudnn-frontend's decode benches) and the intensity against the ridge. Run archives only (a model
 * trace's shape is its own). */
int decode_bandwidth_finding(analysis *a, int vi)
{
    variant_analysis *va = &a->v[vi];
    const attn_shape *s = &a->run->shape;
    if (findings_model_trace(a, va) || s->batch <= 0 || s->dim <= 0 || !attn_shape_is_decode(s) ||
        !(va->cuda_us.median > 0))
        return 0;
    const double kv_bytes = 2.0 * s->batch * attn_kv_heads(s) * (double)s->seq * s->dim * 2;
    const double flops = 4.0 * s->batch * s->heads * (double)attn_q_seq(s) * s->seq * s->dim;
    const double gbps = kv_bytes / (va->cuda_us.median * 1e3);
    const ceilings *c = &a->run->ceilings;
    const double ceiling = c->copy_tbps > 0 ? c->copy_tbps * 1e3 : NAN; /* GB/s */
    const double share = isfinite(ceiling) ? gbps / ceiling : NAN;
    const double ai = flops / kv_bytes, ridge = ceilings_ridge(c);
    char kvb[32], roof[200] = "", regime[200] = "";
    human_bytes(kv_bytes, kvb, sizeof kvb);
    if (isfinite(share))
        snprintf(roof, sizeof roof, ", %.0f%% of the %.0f GB/s copy ceiling measured in this run (DtoD, read + write)",
                 100 * share, ceiling);
    if (isfinite(ridge))
        snprintf(regime, sizeof regime, "; %.1f FLOP/B against the ridge's %.0f FLOP/B: memory-bound%s", ai, ridge,
                 ai < ridge ? "" : " only by this measure"); /* never true at q_seq << S, said if it were */
    finding *fd = findings_add(va, FK_DECODE_BANDWIDTH, "decode step: %d %s against %d keys, %s of K+V read at %.0f GB/s "
                               "per forward (%.1f µs)%s%s", attn_q_seq(s), attn_q_seq(s) == 1 ? "query" : "queries",
                               s->seq, kvb, gbps, va->cuda_us.median, roof, regime);
    if (isfinite(share) && share < DECODE_BANDWIDTH_NOTICE)
        fd->severity = FINDING_NOTICE;
    findings_number(fd, "kv_bytes", kv_bytes, "B");
    findings_number(fd, "gbps", gbps, "GB/s");
    findings_number(fd, "ceiling_gbps", ceiling, "GB/s");
    findings_number(fd, "ceiling_pct", isfinite(share) ? 100 * share : NAN, "%");
    findings_number(fd, "intensity", ai, "FLOP/B");
    findings_number(fd, "ridge", ridge, "FLOP/B");
    findings_number(fd, "memory_bound", isfinite(ridge) ? ai < ridge : NAN, "");
    return 0;
}

