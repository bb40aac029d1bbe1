/* --calibrate: the roofs of this GPU measured in the same run, for the roofline and the
 * expected regimes: bf16 tensor-core GEMM TFLOP/s (cuBLAS, large square), FP32 FMA
 * TFLOP/s (cuBLAS SGEMM, TF32 off) and device-to-device copy TB/s. */
#ifndef ATTNPROF_CALIBRATE_H
#define ATTNPROF_CALIBRATE_H

#include "prediction.h"

/* Fills c (c->measured = 1) or leaves NAN with c->error set; never fails the batch. Runs
 * on the current device with CUPTI activity tracing off. */
void calibrate_run(ceilings *c);

#endif
