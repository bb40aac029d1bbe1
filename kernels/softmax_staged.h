/* The long rows' staged softmax (kernels/softmax_staged.cu): the unfused variants' bf16 softmax
 * (naive, naive_inplace) and math's FP32 one, for rows too long for the register kernels to keep
 * the next row in flight, with the next rows copied into shared memory by cp.async instead.
 * launch_softmax_rows_bf16 (elementwise.h) and math_softmax_f32 (math_kernels.h) ask
 * softmax_staged_takes_* first and launch these when it says yes; nothing else calls them.
 *
 * NOT YET RUN ON A GPU (written 2026-12-04 without a device, from bench/softmax_probe.cu's
 * measured softmax_staged, whose SASS it reproduces): off unless switched on, by
 * softmax_staged_set(1) or ATTNPROF_SOFTMAX_STAGED=1 in the environment, until
 * bench/elementwise3_h200.sh has checked it (bench/results/2026-12-04-elementwise3-pending.md). */
#ifndef ATTNPROF_SOFTMAX_STAGED_H
#define ATTNPROF_SOFTMAX_STAGED_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The switch, for every launch from now on: 1 on, 0 off. Until it is called, the environment
 * decides once: ATTNPROF_SOFTMAX_STAGED=1 on, anything else or unset off. */
void softmax_staged_set(int on);

/* Whether the staged kernel takes a bf16 softmax over rows of `cols` scores from in to out: the
 * switch is on, 8192 < cols <= 16384, cols a multiple of 8, both pointers 16-byte aligned, and
 * the device gives a block the kernel's 64 KiB of shared memory. The first call that gets that
 * far sets the kernel's shared-memory attribute and asks the occupancy API (once). */
int softmax_staged_takes_bf16(const void *in, const void *out, int cols);
/* The same for math's FP32 softmax: 4096 < cols <= 16384, cols a multiple of 4, 16-byte
 * aligned, 96 KiB (up to 8192 columns) or 128 KiB (above) of shared memory a block. */
int softmax_staged_takes_f32(const float *in, const float *out, int cols);

/* Row softmax over `cols` columns, fp32 math, bf16 in/out (out may equal in), or FP32 in/out:
 * only where softmax_staged_takes_* said yes. Each returns the launch status (cudaGetLastError
 * after the launch); neither synchronizes. A row of -inf gives NaN, as torch.softmax does. */
cudaError_t launch_softmax_staged_bf16(const void *in, void *out, size_t rows, int cols, cudaStream_t s);
cudaError_t launch_softmax_staged_f32(const float *in, float *out, size_t rows, int cols, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
