#!/usr/bin/env bash
# Device run on the 2-GPU H200 machine (2026-11-30), from the project root after
# `source .devdeps/env.sh`, build/ carried. Under $OUT: x2.log and x2.tgz.
#   1. a third compare fixture: the default batch on the second physical H200 (GPU 1),
#      PyTorch's cuDNN 9.19, as tests/fixtures/h200-cudnn919-a was recorded on another;
#   2. misfits with the default variant list: --dim 96 (the fused kernels take 64/128) and
#      64x32x8192x128 (naive and math need more memory than the GPU has): skipped, the rest run;
#   3. what run.json now records beside the device limits (measured clocks, power limit,
#      host, build), and report.pdf's one line when Chromium is missing.
source "$(dirname "$0")/lib.sh" x2

say "attnprof $(build/attnprof --version)"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,clocks.sm,power.limit --format=csv >>"$L" 2>&1

say "1. default batch on GPU 1, cuDNN 9.19 (compare fixture)"
CUDA_VISIBLE_DEVICES=1 cudnn_torch build/attnprof run --no-counters --no-calibrate -o "$W/h200-gpu1" --force \
  --format png >>"$L" 2>&1; echo "rc=$?" >>"$L"

say "2a. --dim 96 with the default variant list"
cudnn_torch build/attnprof run --dim 96 --iters 3 --warmup 1 --no-counters --no-calibrate -o "$W/dim96" --force \
  --format png >>"$L" 2>&1; echo "rc=$?" >>"$L"
say "2b. 64x32x8192x128 with the default variant list"
cudnn_torch build/attnprof run --batch 64 --heads 32 --seq 8192 --dim 128 --iters 2 --warmup 1 --no-counters \
  --no-calibrate -o "$W/wall" --force --format png >>"$L" 2>&1; echo "rc=$?" >>"$L"
say "2c. an explicitly named variant that cannot take the shape still fails fast"
build/attnprof run --variants efficient --dim 96 -o "$W/never" >>"$L" 2>&1; echo "rc=$? (expected 2)" >>"$L"

say "3. run.json beside the device limits"
python3 - "$W/h200-gpu1/run.json" "$W/dim96/run.json" "$W/wall/run.json" >>"$L" 2>&1 <<'PY'
import json, sys
for p in sys.argv[1:]:
    try:
        r = json.load(open(p))
    except Exception as e:
        print(p, "unreadable:", e); continue
    print(p)
    for k in ("measured", "host", "build"):
        print(f"  {k}: {json.dumps(r.get(k))}")
    print("  gpu:", json.dumps({k: r["gpu"].get(k) for k in ("name", "uuid", "index", "visible_devices") if k in r["gpu"]}))
    for v in r["variants"]:
        print(f"  {v['name']:14} {v['status']:12} {v.get('error','')[:150]}")
PY
ls "$W/h200-gpu1" >>"$L"
mkdir -p "$W/fx/h200-gpu1"
cp "$W"/h200-gpu1/{trace.json,run.json,summary.csv} "$W/fx/h200-gpu1/" 2>>"$L"
for d in dim96 wall; do mkdir -p "$W/fx/$d"; cp "$W/$d"/{run.json,summary.csv,report.md} "$W/fx/$d/" 2>>"$L"; done
tar czf "$OUT/x2.tgz" -C "$W/fx" .
