/* cuTensorMapEncodeTiled, the driver's tensor-map encoder, looked up through cudart
 * (cudaGetDriverEntryPointByVersion) so that the libraries need not link libcuda; one lookup per
 * translation unit, kept. Host code, shared by the kernels that fill TMA copies from tensor maps:
 * the sm_90a forward (kernels/sm90a/launch.cuh), the split-KV decode (flash_decode.cu) and the
 * sm_90a backward (attn_bwd_sm90a.cu). NULL when the driver has no such entry point. */
#ifndef ATTNPROF_TENSOR_MAP_ENCODER_H
#define ATTNPROF_TENSOR_MAP_ENCODER_H

#include <cuda.h> /* CUtensorMap and its enums only: the encoder is reached through cudart */
#include <cuda_runtime.h>

typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                    const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static inline encode_tiled_fn tensor_map_encoder(void)
{
    static encode_tiled_fn fn = nullptr;
    if (!fn) {
        void *sym = nullptr;
        cudaDriverEntryPointQueryResult found;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &sym, 12000, cudaEnableDefault, &found) ==
                cudaSuccess &&
            found == cudaDriverEntryPointSuccess)
            fn = reinterpret_cast<encode_tiled_fn>(sym);
    }
    return fn;
}

#endif
