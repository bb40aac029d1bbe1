/* A small driver for compute-sanitizer over the sm_90a flash kernels: every
 * configuration of a library exporting kernels/flash_fwd_sm90a.h whose name contains argv[1],
 * causal and not, at small odd shapes; every output element must come back finite.
 * Build: nvcc -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -Ikernels
 *        bench/flash_sm90a_sanitize.cu -LDIR -l:LIB.so -Xlinker -rpath=DIR -o sanit
 * Run:   compute-sanitizer --tool racecheck ./sanit _ov */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include "flash_fwd_sm90a.h"
int main(int argc, char **argv) {
  const char *want = argc > 1 ? argv[1] : "";
  int *ws; cudaMalloc(&ws, flash_sm90a_workspace_bytes()); cudaMemset(ws, 0, flash_sm90a_workspace_bytes());
  int bad = 0, runs = 0;
  const int shapes[][4] = {{1, 2, 333, 0}, {2, 1, 77, 0}, {1, 1, 400, 0}};
  for (int i = 0; i < flash_sm90a_config_count(); i++) {
    const flash_fwd_config *c = flash_sm90a_config_at(i);
    if (!strstr(c->kernel_name, want)) continue;
    if (flash_sm90a_prepare(i) != cudaSuccess) { printf("prepare failed %s\n", c->kernel_name); return 1; }
    for (auto &sh : shapes) for (int causal = 0; causal < 2; causal++) {
      int B = sh[0], H = sh[1], S = sh[2], D = c->head_dim;
      size_t n = (size_t)B * H * S * D;
      std::vector<__nv_bfloat16> h(n);
      __nv_bfloat16 *q, *k, *v, *o; float *lse;
      cudaMalloc(&q, n * 2); cudaMalloc(&k, n * 2); cudaMalloc(&v, n * 2); cudaMalloc(&o, n * 2);
      cudaMalloc(&lse, (size_t)B * H * S * 4);
      for (auto p : {q, k, v}) { for (auto &x : h) x = __float2bfloat16((rand() / (float)RAND_MAX) * 2 - 1); cudaMemcpy(p, h.data(), n * 2, cudaMemcpyHostToDevice); }
      cudaMemset(o, 0xff, n * 2);
      cudaError_t rc = launch_flash_sm90a(i, q, k, v, o, lse, ws, B, H, S, D, causal, 0);
      cudaError_t rs = cudaDeviceSynchronize();
      cudaMemcpy(h.data(), o, n * 2, cudaMemcpyDeviceToHost);
      int nonfinite = 0; for (auto &x : h) nonfinite += !std::isfinite(__bfloat162float(x));
      runs++;
      if (rc || rs || nonfinite) { bad++; printf("FAIL %s %dx%dx%dx%d causal=%d rc=%d sync=%d nonfinite=%d\n", c->kernel_name, B, H, S, D, causal, rc, rs, nonfinite); }
      cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(o); cudaFree(lse);
    }
  }
  printf("sanit: %d runs, %d bad\n", runs, bad);
  return bad != 0;
}
