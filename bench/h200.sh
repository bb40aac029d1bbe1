#!/usr/bin/env bash
# The H200 benchmark behind bench/RESULTS.md: attnprof's variants beside PyTorch's, in one
# device run. Needs the GPU machine (CUDA, PyTorch in python3) and, for the figures, the
# runtime packages of ../shared/device/prepare.sh (source .devdeps/env.sh first).
#   bash bench/h200.sh            → logs and archives under $OUT (default out/bench)
source "$(dirname "$0")/lib.sh" bench

say "$(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || cat .git-commit 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv >>"$L" 2>&1

# The same batch twice (run-to-run spread), with PyTorch's cuDNN (9.19) for a like-for-like cudnn row.
for rep in 1 2; do
  say "default shape 8x16x1024x64, run $rep (cuDNN from PyTorch's folder)"
  cudnn_torch build/attnprof run -o "$W/default-$rep" --force --format png,svg,pdf >>"$L" 2>&1
  echo "rc=$?" >>"$L"
done
say "4x16x4096x128"
cudnn_torch build/attnprof run --batch 4 --seq 4096 --dim 128 -o "$W/large" --force >>"$L" 2>&1; echo "rc=$?" >>"$L"
say "cudnn with the system cuDNN"
build/attnprof run --variants cudnn -o "$W/cudnn-system" --force >>"$L" 2>&1; echo "rc=$?" >>"$L"
say "cudnn --cudnn-replan"
cudnn_torch build/attnprof run --variants cudnn --cudnn-replan --iters 10 -o "$W/cudnn-replan" --force >>"$L" 2>&1
echo "rc=$?" >>"$L"
say "small fixture, all variants"
cudnn_torch build/attnprof run --batch 2 --heads 4 --seq 256 --iters 4 --warmup 2 -o "$W/fixture" --force \
  --format png >>"$L" 2>&1; echo "rc=$?" >>"$L"
say "render time of the default archive, all formats"
for i in 1 2 3; do /usr/bin/time -f "report: %e s wall, %U s user" build/attnprof report "$W/default-1" -q \
  --format png,svg,pdf >>"$L" 2>&1; done

say "PyTorch, same GPU, same run"
OUT=$W/torch PYTHONUNBUFFERED=1 timeout 300 python3 bench/torch/torch_anchor.py 8x16x1024x64 4x16x4096x128 \
  >"$OUT/torch.log" 2>&1
python3 - >>"$L" 2>&1 <<'PY'
import torch, statistics
def bench(fn, n=20):
    for _ in range(5): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(n):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); y = torch.randn_like(x)
t = bench(lambda: x @ y); print(f"ceiling bf16 matmul 8192^3: {2*8192**3/(t*1e-6)/1e12:.0f} TFLOP/s")
s = torch.randn(2**30, device="cuda"); d = torch.empty_like(s)
t = bench(lambda: d.copy_(s)); print(f"ceiling copy 4 GiB: {2*s.numel()*4/(t*1e-6)/1e12:.2f} TB/s (read+write)")
PY
say "gpu-test"
cudnn_torch env ATTNPROF_BIN=build/attnprof bash tests/gpu/run.sh >>"$L" 2>&1; echo "rc=$?" >>"$L"
rm -f "$W"/*/report.html.tmp-* 2>/dev/null
tar czf "$OUT/archives.tgz" -C "$W" default-1 default-2 large cudnn-system cudnn-replan fixture
grep -E "^(==|variant|naive|math|efficient|flash|cudnn|report:|rc=|ceiling|[0-9]+ passed)" "$L" | tail -80
tail -14 "$OUT/torch.log"
