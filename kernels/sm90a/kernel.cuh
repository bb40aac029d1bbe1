/* The sm_90a flash kernel's body, a dispatch of the block's roles, and the
 * macro that defines one configuration's pair of extern "C" kernels (causal
 * and not). The roles, each in its own header:
 *   layout.cuh        parameters, options, roles' registers, tile sizes, the
 *                     shared-memory map and its mbarriers
 *   producer.cuh      warpgroup 0: TMA copies of Q and the K/V ring
 *   mainloop.cuh      warpgroups 1..WGS: Q K^T, softmax (softmax.cuh), P V,
 *                     ping-pong turns
 *   overlap.cuh       the same with each tile's epilogue under the next
 *                     tile's first Q K^T (SM90A_OPT_OVERLAP)
 *   epilogue.cuh      O and the log-sum-exp from the accumulators
 *   tile_handoff.cuh  the tile schedule and the producer-to-consumer handoff
 *   timeline.cuh      the benchmark's timeline stamps and their slots
 * and beside them configs.cuh (the production configurations) and launch.cuh
 * (the host half). */
#ifndef ATTNPROF_SM90A_KERNEL_CUH
#define ATTNPROF_SM90A_KERNEL_CUH

#include "layout.cuh"
#include "mainloop.cuh"
#include "overlap.cuh"
#include "producer.cuh"
#include "tile_handoff.cuh"
#include "timeline.cuh"

namespace {

template <class C>
__device__ __forceinline__ void flash_sm90a_body(const CUtensorMap *tq, const CUtensorMap *tk, const CUtensorMap *tv,
                                                 const Sm90aParams &p)
{
    if (C::TIMELINE && p.timeline && threadIdx.x == 128)
        stamp_block(p, BLOCK_STAMP_ENTRY, global_ns());
    extern __shared__ unsigned char smem_raw[];
    const Sm90aSmem<C> sm((sm90::smem_addr(smem_raw) + 1023u) & ~1023u);
    __shared__ TileSlot tile_slot[2];
    const int S = p.seq;
    const int warpgroup = warp_uniform((int)threadIdx.x / 128);
    const int total_tiles = p.q_tiles * p.heads_total; /* here, as tuned (bench/sass_identity.sh) */
    if (threadIdx.x == 0)
        sm.init_barriers();
    __syncthreads();
    if (warpgroup == 0)
        producer_loop<C>(tq, tk, tv, p, sm, tile_slot, S, total_tiles);
    else if constexpr (C::OVERLAP)
        consumer_loop_overlap<C>(p, sm, tile_slot, S, warpgroup);
    else
        consumer_loop<C>(p, sm, tile_slot, S, warpgroup);
}

} // namespace

/* One extern "C" kernel per (configuration, causal): the name CUPTI records is
 * the name written here. Only the sm_90a pass has a body; any other target
 * compiles an empty kernel that the host never launches. */
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ATTNPROF_SM90A_BODY(D, BN, ST, WGS, CAUSAL, OPT) __trap();
#else
#define ATTNPROF_SM90A_BODY(D, BN, ST, WGS, CAUSAL, OPT)                                                       \
    flash_sm90a_body<Sm90aConfig<D, BN, ST, WGS, CAUSAL, OPT>>(&tq, &tk, &tv, p);
#endif
/* A row of a configuration list (kernels/sm90a/configs.cuh): D, BM x BN tile
 * (BM, the query rows, is spelled out for the name; it must be 64 * WGS), WGS
 * consumer warpgroups, ST ring stages, SM90A_OPT_* options, the name's suffix
 * and the description's note (for ATTNPROF_SM90A_ENTRY, kernels/sm90a/launch.cuh). */
#define ATTNPROF_SM90A_KERNEL(D, BM, BN, WGS, ST, OPT, SUFFIX, NOTE)                                            \
    static_assert(BM == Sm90aRoles<WGS>::BLOCK_M, "tile rows: 64 per consumer warpgroup");                     \
    extern "C" __global__ void __launch_bounds__(Sm90aRoles<WGS>::THREADS, 1)                                  \
        attnprof_flash_fwd_sm90a_bf16_d##D##_##BM##x##BN##_wg##WGS##SUFFIX(                                     \
            const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,                    \
            const __grid_constant__ CUtensorMap tv, Sm90aParams p)                                              \
    {                                                                                                           \
        ATTNPROF_SM90A_BODY(D, BN, ST, WGS, true, OPT)                                                          \
    }                                                                                                           \
    extern "C" __global__ void __launch_bounds__(Sm90aRoles<WGS>::THREADS, 1)                                  \
        attnprof_flash_fwd_sm90a_bf16_d##D##_##BM##x##BN##_wg##WGS##SUFFIX##_noncausal(                         \
            const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,                    \
            const __grid_constant__ CUtensorMap tv, Sm90aParams p)                                              \
    {                                                                                                           \
        ATTNPROF_SM90A_BODY(D, BN, ST, WGS, false, OPT)                                                         \
    }

#endif
