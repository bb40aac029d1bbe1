/* The host half of the sm_90a flash kernel: the configuration table's API,
 * the tensor maps, and the launch (flash_fwd_sm90a.h). Included once, by the
 * file that defines the configurations' kernels and their table,
 * sm90a_entries[] and sm90a_entry_count (kernels/flash_fwd_sm90a.cu for the
 * recorder, bench/flash_sm90a_experiments.cu for the bench's library), so
 * that both export the same functions over their own table. */
#ifndef ATTNPROF_SM90A_LAUNCH_CUH
#define ATTNPROF_SM90A_LAUNCH_CUH

#include <cuda.h> /* CUtensorMap and its enums only: the encoder is reached through cudart */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "../flash_fwd_sm90a.h"
#include "../flash_tile_order.h"
#include "../tensor_map_encoder.h"
#include "layout.cuh"

namespace {

typedef void (*sm90a_kernel_fn)(const CUtensorMap, const CUtensorMap, const CUtensorMap, Sm90aParams);

struct Sm90aEntry {
    flash_fwd_config cfg;
    sm90a_kernel_fn causal, noncausal;
    int chunk_width;
};

/* The table's row of a configuration list's row (kernels/sm90a/configs.cuh),
 * with a trailing comma. */
#define ATTNPROF_SM90A_ENTRY(D, BM, BN, WGS, ST, OPT, SUFFIX, NOTE)                                            \
    {{"attnprof_flash_fwd_sm90a_bf16_d" #D "_" #BM "x" #BN "_wg" #WGS #SUFFIX, D, BM, BN,                        \
      Sm90aRoles<WGS>::THREADS / 32, Sm90aRoles<WGS>::THREADS, Sm90aTile<D, BN, ST, WGS>::SMEM,                  \
      "wgmma (sm_90a) + TMA ring of " #ST " stages; persistent; 1 producer warp, " #WGS " consumer warpgroups, " \
      "setmaxnreg, atomic tile scheduler" NOTE,                                                                  \
      "1 producer warpgroup (one thread issues the TMA copies) + " #WGS " consumer warpgroups of 64 query rows", \
      "persistent: one block per SM takes tiles from an atomic counter; heads in L2-sized groups, heavy "        \
      "query tiles first"},                                                                                      \
     attnprof_flash_fwd_sm90a_bf16_d##D##_##BM##x##BN##_wg##WGS##SUFFIX,                                         \
     attnprof_flash_fwd_sm90a_bf16_d##D##_##BM##x##BN##_wg##WGS##SUFFIX##_noncausal,                             \
     Sm90aTile<D, BN, ST, WGS>::CW},

/* Defined by the including file: the first entry for a head dim is its
 * default (flash_sm90a_config_for_dim). */
extern const Sm90aEntry sm90a_entries[];
extern const int sm90a_entry_count;

/* Tensor maps of the buffers seen most recently, per thread: encoding is a
 * host call of a few microseconds, and a forward reuses the same buffers. */
struct MapKey {
    const void *ptr;
    int head_dim, seq, heads_total, box_rows, chunk_width;
    bool operator==(const MapKey &o) const
    {
        return ptr == o.ptr && head_dim == o.head_dim && seq == o.seq && heads_total == o.heads_total &&
               box_rows == o.box_rows && chunk_width == o.chunk_width;
    }
};
struct MapCache {
    enum { SLOTS = 24 };
    MapKey key[SLOTS];
    CUtensorMap map[SLOTS];
    int used, next;
};
thread_local MapCache map_cache;

cudaError_t tensor_map_for(const MapKey &k, CUtensorMap *out)
{
    MapCache &c = map_cache;
    for (int i = 0; i < c.used; i++)
        if (c.key[i] == k) {
            *out = c.map[i];
            return cudaSuccess;
        }
    encode_tiled_fn encode = tensor_map_encoder();
    if (!encode)
        return cudaErrorNotSupported;
    /* [heads_total][seq][head_dim] bf16; one box = box_rows rows of one column
     * chunk of one head. Columns at or past head_dim and rows at or past seq
     * read as zeros. */
    const cuuint64_t dims[3] = {(cuuint64_t)k.head_dim, (cuuint64_t)k.seq, (cuuint64_t)k.heads_total};
    const cuuint64_t strides[2] = {(cuuint64_t)k.head_dim * 2, (cuuint64_t)k.seq * k.head_dim * 2};
    const cuuint32_t box[3] = {(cuuint32_t)k.chunk_width, (cuuint32_t)k.box_rows, 1};
    const cuuint32_t elem_strides[3] = {1, 1, 1};
    CUtensorMap map;
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void *>(k.ptr), dims, strides,
                              box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              k.chunk_width == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return cudaErrorInvalidValue;
    const int slot = c.used < MapCache::SLOTS ? c.used++ : (c.next++ % MapCache::SLOTS);
    c.key[slot] = k;
    c.map[slot] = map;
    *out = map;
    return cudaSuccess;
}

} // namespace

extern "C" int flash_sm90a_available(void)
{
#ifdef ATTNPROF_HAVE_SM90A
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return 0;
    return major == 9 && minor == 0 && tensor_map_encoder() != nullptr;
#else
    return 0;
#endif
}

extern "C" int flash_sm90a_built(void)
{
#ifdef ATTNPROF_HAVE_SM90A
    return 1;
#else
    return 0;
#endif
}

extern "C" int flash_sm90a_config_count(void) { return sm90a_entry_count; }

extern "C" const flash_fwd_config *flash_sm90a_config_at(int i)
{
    return i >= 0 && i < sm90a_entry_count ? &sm90a_entries[i].cfg : NULL;
}

extern "C" int flash_sm90a_config_for_dim(int d)
{
    for (int i = 0; i < sm90a_entry_count; i++)
        if (sm90a_entries[i].cfg.head_dim == d)
            return i;
    return -1;
}

extern "C" size_t flash_sm90a_workspace_bytes(void) { return 2 * sizeof(int); }

thread_local unsigned long long *timeline_buffer;

extern "C" void flash_sm90a_set_timeline(unsigned long long *buffer) { timeline_buffer = buffer; }

/* The device facts a launch needs, read once by prepare (a launch makes no
 * runtime calls but the launch itself: they would show in every forward's
 * API trace). */
struct DeviceFacts {
    int multiprocessors, l2_bytes;
};
thread_local DeviceFacts device_facts;

extern "C" cudaError_t flash_sm90a_prepare(int i)
{
    if (i < 0 || i >= sm90a_entry_count)
        return cudaErrorInvalidValue;
    const Sm90aEntry &e = sm90a_entries[i];
    int dev = 0;
    cudaError_t rc = cudaFuncSetAttribute(e.causal, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e.cfg.smem_bytes);
    if (rc == cudaSuccess)
        rc = cudaFuncSetAttribute(e.noncausal, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)e.cfg.smem_bytes);
    if (rc == cudaSuccess)
        rc = cudaGetDevice(&dev);
    if (rc == cudaSuccess)
        rc = cudaDeviceGetAttribute(&device_facts.multiprocessors, cudaDevAttrMultiProcessorCount, dev);
    if (rc == cudaSuccess)
        rc = cudaDeviceGetAttribute(&device_facts.l2_bytes, cudaDevAttrL2CacheSize, dev);
    return rc;
}

extern "C" cudaError_t flash_sm90a_blocks_per_sm(int i, int *blocks)
{
    if (i < 0 || i >= sm90a_entry_count || !blocks)
        return cudaErrorInvalidValue;
    const Sm90aEntry &e = sm90a_entries[i];
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, e.causal, e.cfg.threads, e.cfg.smem_bytes);
}

extern "C" cudaError_t launch_flash_sm90a_gqa(int i, const void *q, const void *k, const void *v, void *out,
                                             float *lse, int *workspace, int batch, int heads, int kv_heads, int seq,
                                             int head_dim, int causal, cudaStream_t stream)
{
#ifndef ATTNPROF_HAVE_SM90A
    (void)i, (void)q, (void)k, (void)v, (void)out, (void)lse, (void)workspace, (void)batch, (void)heads, (void)seq, (void)head_dim,
        (void)causal, (void)stream, (void)kv_heads;
    return cudaErrorNotSupported;
#else
    if (kv_heads < 1 || heads < 1 || heads % kv_heads != 0)
        return cudaErrorInvalidValue;
    if (i < 0 || i >= sm90a_entry_count || batch < 1 || heads < 1 || seq < 1 || !lse || !out || !workspace)
        return cudaErrorInvalidValue;
    const Sm90aEntry &e = sm90a_entries[i];
    if (head_dim < 8 || head_dim % 8 != 0 || head_dim > e.cfg.head_dim || (causal != 0 && causal != 1))
        return cudaErrorInvalidValue;
    /* TMA needs 16-byte aligned bases; the epilogue's 16-byte stores too. */
    if (((uintptr_t)q | (uintptr_t)k | (uintptr_t)v | (uintptr_t)out) & 15)
        return cudaErrorInvalidValue;
    const int block_m = e.cfg.block_m;
    const long long q_tiles = (seq + block_m - 1) / block_m;
    const long long heads_total = (long long)batch * heads;
    if (q_tiles * heads_total > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    CUtensorMap tq, tk, tv;
    /* Q in boxes of one warpgroup's 64 rows (the kernel loads a tile's as
     * several). */
    cudaError_t rc = tensor_map_for({q, head_dim, seq, (int)heads_total, 64, e.chunk_width}, &tq);
    const int kv_heads_total = batch * kv_heads; /* K and V: [batch][kv_heads][seq][head_dim] */
    if (rc == cudaSuccess)
        rc = tensor_map_for({k, head_dim, seq, kv_heads_total, e.cfg.block_n, e.chunk_width}, &tk);
    if (rc == cudaSuccess)
        rc = tensor_map_for({v, head_dim, seq, kv_heads_total, e.cfg.block_n, e.chunk_width}, &tv);
    if (rc != cudaSuccess)
        return rc;
    Sm90aParams p;
    p.o = static_cast<bf16 *>(out);
    p.lse = lse;
    p.seq = seq;
    p.head_dim = head_dim;
    p.heads_total = (int)heads_total;
    p.heads = heads;
    p.group = heads / kv_heads;
    p.q_tiles = (int)q_tiles;
    p.scale_log2 = (float)(1.4426950408889634 / sqrt((double)head_dim));
    p.scheduler = workspace;
    p.timeline = timeline_buffer;
    /* Persistent: one block per multiprocessor (one fits), each walks the tiles. */
    const int sms = device_facts.multiprocessors, l2 = device_facts.l2_bytes;
    if (sms < 1)
        return cudaErrorInitializationError; /* flash_sm90a_prepare was not called on this thread */
    p.order = flash_tile_order_make((int)q_tiles, (int)heads_total,
                                    flash_heads_per_group(l2, seq, head_dim, (int)heads_total));
    const long long tiles = q_tiles * heads_total;
    const unsigned grid = (unsigned)(tiles < sms ? tiles : sms);
    (causal ? e.causal : e.noncausal)<<<grid, e.cfg.threads, e.cfg.smem_bytes, stream>>>(tq, tk, tv, p);
    return cudaGetLastError();
#endif
}

extern "C" cudaError_t launch_flash_sm90a(int i, const void *q, const void *k, const void *v, void *out, float *lse,
                                         int *workspace, int batch, int heads, int seq, int head_dim, int causal,
                                         cudaStream_t stream)
{
    return launch_flash_sm90a_gqa(i, q, k, v, out, lse, workspace, batch, heads, heads, seq, head_dim, causal, stream);
}

#endif
