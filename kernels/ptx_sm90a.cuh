/* PTX wrappers for the Hopper-only parts of the sm_90a flash kernel
 * (flash_fwd_sm90a.cu): mbarriers, the tensor memory accelerator
 * (cp.async.bulk.tensor), wgmma fences and shared-memory matrix descriptors,
 * setmaxnreg. The wgmma instructions themselves are in the
 * generated wgmma_bf16.cuh. Everything here needs sm_90; wgmma and setmaxnreg
 * need the sm_90a target. */
#ifndef ATTNPROF_PTX_SM90A_CUH
#define ATTNPROF_PTX_SM90A_CUH

#include <stdint.h>

namespace sm90 {

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* ---- mbarrier: a 64-bit shared-memory word that counts arrivals and
 * transaction bytes; a wait names the phase parity it waits to complete. */
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
/* Makes the initialised barriers visible to the async proxy (the TMA unit)
 * before any copy completes on them. */
__device__ __forceinline__ void mbar_fence_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/* One arrival that also announces `bytes` of copies that will complete on it. */
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "WAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=;\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

/* ---- Tensor memory accelerator: one box of a 3-D tensor map (columns, rows,
 * head) into shared memory, completing on an mbarrier. Out-of-range
 * coordinates are filled with zeros by the hardware. */
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const void *tensor_map, uint32_t bar, int c0, int c1,
                                            int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
/* A contiguous run of `bytes` (a multiple of 16, both addresses 16-byte
 * aligned) from global into shared memory, completing on an mbarrier. */
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
/* One box of shared memory added element-wise (FP32 for an FP32 tensor map)
 * into a 3-D tensor at (c0, c1, c2); elements out of the tensor's range are
 * not written. Completes in a bulk group (bulk_commit, bulk_wait_read). */
__device__ __forceinline__ void tma_reduce_add_3d(const void *tensor_map, uint32_t src, int c0, int c1, int c2)
{
    asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group"
                 " [%0, {%2, %3, %4}], [%1];\n" ::"l"(reinterpret_cast<uint64_t>(tensor_map)),
                 "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/* The bulk groups of this thread have read their shared-memory source (it may
 * be written again); bulk_wait_all: they have also completed their writes. */
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
/* Shared-memory writes of ordinary stores made visible to the async proxy
 * (TMA, wgmma) that reads them next. */
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
/* Named barrier `id` (1-15) for `threads` threads (a multiple of 32). */
__device__ __forceinline__ void named_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void tma_prefetch_descriptor(const void *tensor_map)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tensor_map)) : "memory");
}

/* ---- wgmma bookkeeping. fence: registers written by ordinary instructions
 * (accumulators, the A fragments) are ordered before the next wgmma reads
 * them. commit: the wgmmas issued so far form a group. wait<N>: at most N
 * groups still in flight. */
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* The compiler does not know that an in-flight wgmma writes its accumulator
 * registers: this tells it the registers may change here, so it neither reads
 * them early nor moves them around the wait. */
template <int N> __device__ __forceinline__ void fence_registers(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(r[i])::"memory");
}

/* Shared-memory matrix descriptor of wgmma. Addresses and strides are in
 * 16-byte units. swizzle: 1 = 128-byte, 2 = 64-byte pattern.
 *   K-major operand (Q, K): rows of one swizzle width; `stride` = bytes between
 *     8-row groups; `leading` unused (1).
 *   MN-major operand (V for P.V): `leading` = bytes between swizzle-width column
 *     chunks, `stride` = bytes between 8-row groups along K. */
__device__ __forceinline__ uint64_t matrix_descriptor(uint32_t addr, uint32_t leading, uint32_t stride,
                                                      uint32_t swizzle)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((leading >> 4) & 0x3FFF) << 16) |
           ((uint64_t)((stride >> 4) & 0x3FFF) << 32) | ((uint64_t)swizzle << 62);
}

/* ---- Warpgroup register reallocation (sm_90a): the producer gives registers
 * back, the consumers take them. Executed by every warp of a warpgroup. */
template <int REGS> __device__ __forceinline__ void regs_release()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> __device__ __forceinline__ void regs_claim()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

} // namespace sm90

#endif
