#!/usr/bin/env bash
# Builds bench/fused_bench with nvcc on the GPU machine and runs it:
#   1. correctness of every kernel configuration on every check shape, timings on
#      the goal shapes, the cuBLAS bf16 ceiling;
#   2. PyTorch's SDPA backends (efficient, flash, cudnn) timed the same way on
#      the same GPU in the same run, when python3 has torch;
#   3. compute-sanitizer memcheck and racecheck on small shapes.
# Logs go to $OUT (the device tool's folder) or out/fused_bench.
# Usage: bash bench/fused_bench.sh [all|bench|torch|sanitize]
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
LOG=${OUT:-out/fused_bench}
mkdir -p "$LOG"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
BIN=build/bench/fused_bench
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv 2>&1 | tee "$LOG/gpu.txt"

mkdir -p build/bench
# sm_90 only: this program is for the H200; the library build keeps the Makefile's arch list.
"$CUDA_HOME/bin/nvcc" -std=c++17 -O3 -lineinfo -gencode arch=compute_90,code=sm_90 \
    -DATTNPROF_FLASH_EXPERIMENTAL_TILES -Ikernels -Isrc -Xcompiler -fopenmp -Xptxas -v \
    bench/fused_bench.cu kernels/flash_fwd.cu kernels/efficient_fwd.cu -lcublas -lgomp -o "$BIN" \
    > "$LOG/build.txt" 2>&1 || { cat "$LOG/build.txt"; exit 1; }
grep -E "spill" "$LOG/build.txt" | grep -v " 0 bytes spill stores" || true

if [ "$what" = all ] || [ "$what" = bench ]; then
    OMP_NUM_THREADS=$(nproc) "$BIN" 2>&1 | tee "$LOG/bench.txt" || status=1
fi

nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv 2>&1 | tee -a "$LOG/gpu.txt"

if [ "$what" = all ] || [ "$what" = torch ]; then
    PYTHONUNBUFFERED=1 python3 - <<'PY' 2>&1 | tee "$LOG/torch.txt"
import torch, statistics
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
print("torch", torch.__version__, torch.cuda.get_device_name(0))
l2 = torch.cuda.get_device_properties(0).L2_cache_size
for (B, H, S, D) in [(8, 16, 1024, 64), (4, 16, 4096, 128)]:
    set_bytes = B * H * S * D * 2 * 3
    nsets = max(2, -(-3 * l2 // set_bytes))
    sets = [[torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3)] for _ in range(nsets)]
    flops = 2.0 * B * H * S * S * D
    for name, be in [("efficient", SDPBackend.EFFICIENT_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
                     ("cudnn", SDPBackend.CUDNN_ATTENTION)]:
        try:
            with sdpa_kernel(be):
                for i in range(10):
                    q, k, v = sets[i % nsets]
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)
                ev = [torch.cuda.Event(enable_timing=True) for _ in range(51)]
                ev[0].record()
                for i in range(50):
                    q, k, v = sets[i % nsets]
                    F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    ev[i + 1].record()
                torch.cuda.synchronize()
            t = sorted(ev[i].elapsed_time(ev[i + 1]) * 1e3 for i in range(50))
            med = t[25]
            print(f"torch {name:9s} {B}x{H}x{S}x{D}: median {med:.1f} us  p10 {t[5]:.1f}  p90 {t[45]:.1f}  "
                  f"{flops / (med * 1e-6) / 1e12:.1f} TFLOP/s")
        except Exception as e:
            print(f"torch {name} {B}x{H}x{S}x{D}: unavailable: {e}")
PY
fi

if [ "$what" = all ] || [ "$what" = sanitize ]; then
    CS=${COMPUTE_SANITIZER:-$CUDA_HOME/bin/compute-sanitizer}
    for tool in memcheck racecheck; do
        echo "== compute-sanitizer --tool $tool (small shapes)"
        timeout 150 "$CS" --tool "$tool" --error-exitcode 3 "$BIN" --sanitize > "$LOG/sanitize_$tool.txt" 2>&1
        rc=$?
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|correctness|FAIL|Error|error" "$LOG/sanitize_$tool.txt" | head -20
        echo "compute-sanitizer $tool exit status $rc"
        [ $rc -eq 0 ] || status=1
    done
fi
exit $status
