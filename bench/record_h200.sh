#!/usr/bin/env bash
# The device run behind this wave's fixtures (2026-11-30): on the H200, from the project
# root after `source .devdeps/env.sh`, with build/ carried from the build machine.
#   1. make gpu-test with the two-halves build (recorder loaded by dlopen);
#   2. the bundled example archive out/example-h200 (default shape, 5 forwards);
#   3. compare fixtures: the default batch with the system cuDNN (9.14) and with PyTorch's
#      (9.19), and the 9.19 batch a second time with nothing changed;
#   4. PyTorch's six variants (Kineto traces) at the default shape, same run;
#   5. start-up of `list` (loads the recorder) beside `report` here.
# Everything lands under $OUT (logs, and archives.tgz).
source "$(dirname "$0")/lib.sh" record

say "$(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv >>"$L" 2>&1
ldd build/attnprof | grep -cE 'cudnn|cublas|cupti|cudart' | sed 's/^/CUDA libraries linked by build\/attnprof: /' >>"$L"

say "list (loads the recorder)"
build/attnprof list >>"$L" 2>&1; echo "rc=$?" >>"$L"

say "example archive: default shape, 5 forwards, cuDNN 9.19"
cudnn_torch build/attnprof run --iters 5 --warmup 2 -o "$W/example-h200" --force >>"$L" 2>&1; echo "rc=$?" >>"$L"

say "compare fixtures: default batch, system cuDNN"
build/attnprof run -o "$W/cudnn-system" --force -q >>"$L" 2>&1; echo "rc=$?" >>"$L"
for rep in 1 2; do
  say "compare fixtures: default batch, cuDNN from PyTorch's folder, run $rep"
  cudnn_torch build/attnprof run -o "$W/cudnn-torch-$rep" --force -q >>"$L" 2>&1; echo "rc=$?" >>"$L"
done
for d in cudnn-system cudnn-torch-1 cudnn-torch-2; do
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[1], r['versions'])" "$W/$d/run.json" >>"$L"
  cat "$W/$d/summary.csv" | cut -d, -f1-12 >>"$L"
done

say "PyTorch, same GPU, same run"
mkdir -p "$W/torch"
OUT=$W/torch PYTHONUNBUFFERED=1 timeout 300 python3 bench/torch/torch_anchor.py 8x16x1024x64 >"$W/torch/torch.log" 2>&1
echo "rc=$?" >>"$L"; cp "$W/torch/torch.log" "$OUT/torch.log"

say "gpu-test (cuDNN 9.19)"
cudnn_torch env ATTNPROF_BIN=build/attnprof bash tests/gpu/run.sh >>"$L" 2>&1; echo "rc=$?" >>"$L"

tar czf "$OUT/archives.tgz" -C "$W" --exclude='*.png' --exclude='*.svg' --exclude='*.pdf' --exclude='report.*' \
  example-h200 cudnn-system cudnn-torch-1 cudnn-torch-2 torch
ls -la "$OUT" >>"$L"
