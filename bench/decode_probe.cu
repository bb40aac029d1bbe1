/* Where the split-KV decode kernel's time goes (issue 38), a bench-only library for
 * bench/decode_tma.py: kernels/flash_decode.cu as it is (every configuration, the same exported
 * API), plus
 *   - probes: the split kernel with its math left out (the same ring, waits and merge; the output
 *     is garbage), cp.async and TMA rings, so that the load pattern's own ceiling is timed beside
 *     the whole kernel; and the split kernel alone, without the combine;
 *   - the persistent grid with its math left out (probe_persistent_launch);
 *   - a plain read of a buffer (16-byte non-coherent loads, 8 in flight a thread, one block per
 *     resident slot): the device's read-only streaming rate, which a copy (read + write) is not.
 * Built for sm_90 only: nvcc -std=c++17 -O3 -shared -Xcompiler -fPIC -arch=sm_90 -Ikernels
 * bench/decode_probe.cu -o libdecode_probe.so */
#include "../kernels/flash_decode.cu"

namespace {

extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1) probe_decode_d128_cp_nomath(DecodeParams p)
{
    decode_body<128, 32, 3, LOAD_CP_ASYNC, false>(p);
}
extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1)
    probe_decode_d128_tma_nomath(const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv,
                                 DecodeParams p)
{
    decode_body<128, 32, 3, LOAD_TMA, false>(p, &tk, &tv);
}

const DecodeEntry probe_entries[] = {
    {{"probe_decode_d128_cp_nomath", "", 128, DEC_ROWS, 32, DEC_WARPS, DEC_THREADS, decode_smem_bytes(128, 32, 3), "probe",
      0},
     probe_decode_d128_cp_nomath, false, nullptr},
    {{"probe_decode_d128_tma_nomath", "", 128, DEC_ROWS, 32, DEC_WARPS, DEC_THREADS, decode_tma_smem_bytes(128, 32, 3),
      "probe", 0},
     nullptr, true, probe_decode_d128_tma_nomath},
};

/* The persistent grid with its math left out (the rings, waits and merges; the output is garbage). */
extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1)
    probe_decode_d128_pers_nomath(const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv,
                                  DecodeParams p)
{
    decode_persistent_body<128, 32, 3, false>(p, &tk, &tv);
}
const DecodeEntry probe_pers_entry = {{"probe_decode_d128_pers_nomath", "", 128, DEC_ROWS, 32, DEC_WARPS, DEC_THREADS,
                                       decode_pers_smem_bytes(128, 32, 3), "probe", 2},
                                      nullptr, true, probe_decode_d128_pers_nomath};

/* Other TMA rings than the recorder's (chunk keys x stages per warp): how deep a ring the stream wants. */
#define PROBE_RING_KERNEL(D, CN, ST)                                                                    \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1) probe_ring_d##D##_c##CN##_s##ST(          \
        const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv, DecodeParams p)   \
    {                                                                                                     \
        decode_body<D, CN, ST, LOAD_TMA>(p, &tk, &tv);                                                    \
    }
#define PROBE_RING_ENTRY(D, CN, ST)                                                                     \
    {{"probe_ring_d" #D "_c" #CN "_s" #ST, "attnprof_flash_decode_combine_bf16", D, DEC_ROWS, CN, DEC_WARPS,   \
      DEC_THREADS, decode_tma_smem_bytes(D, CN, ST), "probe", 0},                                         \
     nullptr, true, probe_ring_d##D##_c##CN##_s##ST}
/* The fixed grid with the combine fused in (decode_fused_body): one kernel per split forward. */
#define PROBE_FUSED_KERNEL(D, CN, ST)                                                                   \
    extern "C" __global__ void __launch_bounds__(DEC_THREADS, 1) probe_fused_d##D##_c##CN##_s##ST(         \
        const __grid_constant__ CUtensorMap tk, const __grid_constant__ CUtensorMap tv, DecodeParams p)   \
    {                                                                                                     \
        decode_fused_body<D, CN, ST>(p, &tk, &tv);                                                        \
    }
#define PROBE_FUSED_ENTRY(D, CN, ST)                                                                    \
    {{"probe_fused_d" #D "_c" #CN "_s" #ST, "attnprof_flash_decode_combine_bf16", D, DEC_ROWS, CN, DEC_WARPS, \
      DEC_THREADS, decode_tma_smem_bytes(D, CN, ST), "probe", 0, 8},                                      \
     nullptr, true, probe_fused_d##D##_c##CN##_s##ST}
PROBE_FUSED_KERNEL(128, 32, 3)
PROBE_FUSED_KERNEL(64, 64, 2)
PROBE_RING_KERNEL(128, 32, 3)
PROBE_RING_KERNEL(128, 32, 2)
PROBE_RING_KERNEL(64, 32, 3)
/* The fused kernel at another ring beside the recorder's, and the combine kernel after the recorder's ring and the
 * one before it (bench/results/2026-12-04-decode-ring.md times more). */
const DecodeEntry probe_ring_entries[] = {
    PROBE_FUSED_ENTRY(128, 32, 3), PROBE_FUSED_ENTRY(64, 64, 2), PROBE_RING_ENTRY(128, 32, 3),
    PROBE_RING_ENTRY(128, 32, 2),  PROBE_RING_ENTRY(64, 32, 3),
};
const int probe_ring_count_ = (int)(sizeof probe_ring_entries / sizeof probe_ring_entries[0]);

__global__ void __launch_bounds__(256) probe_read(const uint4 *__restrict__ src, size_t n16, unsigned *sink)
{
    unsigned acc = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 7 * stride < n16; i += 8 * stride) {
        uint4 v[8];
#pragma unroll
        for (int u = 0; u < 8; u++)
            v[u] = __ldg(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < 8; u++)
            acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n16; i += stride) {
        const uint4 v = __ldg(src + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) /* never in practice; keeps the loads */
        *sink = acc;
}

} // namespace

/* which: -1..-2 the probes above (the math left out), else a configuration of flash_decode.h run
 * without its combine (the split kernel alone; its partials land in the workspace). Arguments as
 * launch_flash_decode's. */
extern "C" cudaError_t probe_decode_split_only(int which, const void *q, const void *k, const void *v, void *out,
                                               float *lse, void *workspace, int batch, int heads, int kv_heads,
                                               int q_seq, int seq, int head_dim, int splits, int keys_per_split)
{
    const DecodeEntry *e = which < 0 ? (which >= -2 ? &probe_entries[-which - 1] : nullptr)
                                     : (which < decode_entry_count ? &decode_entries[which] : nullptr);
    if (!e || e->cfg.balanced || heads % kv_heads != 0)
        return cudaErrorInvalidValue;
    cudaError_t rc = e->tma_fn ? cudaFuncSetAttribute(e->tma_fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                      (int)e->cfg.smem_bytes)
                               : cudaFuncSetAttribute(e->fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                      (int)e->cfg.smem_bytes);
    if (rc != cudaSuccess)
        return rc;
    const int row_tiles = flash_decode_row_tiles(0, heads, kv_heads, q_seq);
    const long long total_rows = (long long)batch * heads * q_seq;
    DecodeParams p;
    fill_params(p, q, k, v, out, lse, batch, heads, kv_heads, q_seq, seq, head_dim, row_tiles, total_rows);
    p.part_lse = static_cast<float *>(workspace);
    p.part_o = splits > 1 ? p.part_lse + decode_lse_floats(splits, total_rows) : NULL;
    p.splits = splits;
    p.keys_per_split = keys_per_split;
    return decode_launch(*e, dim3((unsigned)(batch * kv_heads * row_tiles), (unsigned)splits), p, batch, 0);
}

extern "C" cudaError_t probe_read_launch(const void *src, size_t bytes, unsigned *sink, int blocks)
{
    probe_read<<<blocks, 256>>>(static_cast<const uint4 *>(src), bytes / 16, sink);
    return cudaGetLastError();
}

/* The persistent grid with its math left out; arguments as launch_flash_decode_balanced's (grid and workspace:
 * the production d128 _tma_pers configuration's, the same shared memory and chunks). */
extern "C" cudaError_t probe_persistent_launch(const void *q, const void *k, const void *v, void *out, float *lse,
                                               void *workspace, int batch, int heads, int kv_heads, int q_seq, int seq,
                                               int head_dim, int grid)
{
    const DecodeEntry &e = probe_pers_entry;
    const cudaError_t rc =
        cudaFuncSetAttribute(e.tma_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e.cfg.smem_bytes);
    if (rc != cudaSuccess)
        return rc;
    return launch_balanced_entry(e, q, k, v, out, lse, workspace, batch, heads, kv_heads, q_seq, seq, head_dim, grid, 0);
}

extern "C" int probe_ring_count(void) { return probe_ring_count_; }

/* Ring i's configuration (its name, head dim, chunk and shared memory); NULL past the end. */
extern "C" const flash_decode_config *probe_ring_config(int i)
{
    return i >= 0 && i < probe_ring_count_ ? &probe_ring_entries[i].cfg : NULL;
}

extern "C" cudaError_t probe_ring_blocks_per_sm(int i, int *blocks)
{
    if (i < 0 || i >= probe_ring_count_ || !blocks)
        return cudaErrorInvalidValue;
    const DecodeEntry &e = probe_ring_entries[i];
    cudaError_t rc = cudaFuncSetAttribute(e.tma_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e.cfg.smem_bytes);
    return rc != cudaSuccess ? rc
                             : cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, e.tma_fn, e.cfg.threads,
                                                                             e.cfg.smem_bytes);
}

/* The tensor maps' L2 promotion for the launches that follow: 0 (none), 64, 128 or 256 bytes. */
extern "C" int probe_set_l2_promotion(int bytes)
{
    switch (bytes) {
    case 0: decode_l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE; return 0;
    case 64: decode_l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_64B; return 0;
    case 128: decode_l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B; return 0;
    case 256: decode_l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B; return 0;
    default: return -1;
    }
}

/* A whole forward (split kernel, and the combine past one split) on ring i; arguments as launch_flash_decode's. */
extern "C" cudaError_t probe_ring_forward(int i, const void *q, const void *k, const void *v, void *out, float *lse,
                                          void *workspace, int batch, int heads, int kv_heads, int q_seq, int seq,
                                          int head_dim, int splits, int keys_per_split)
{
    int blocks = 0;
    const cudaError_t rc = probe_ring_blocks_per_sm(i, &blocks); /* sets the shared-memory size */
    if (rc != cudaSuccess)
        return rc;
    return launch_fixed_entry(probe_ring_entries[i], q, k, v, out, lse, workspace, batch, heads, kv_heads, q_seq, seq,
                              head_dim, splits, keys_per_split, 0);
}
