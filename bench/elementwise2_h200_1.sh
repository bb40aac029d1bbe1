#!/usr/bin/env bash
# Issue 40 item 5, helper elem6, device call 1 (2026-12-04): bench/softmax_probe.cu (staged
# softmax, row_all, scale candidates against the copy / read ceilings of the same run) at four
# shapes, twice at the small ones; then ncu (SpeedOfLight, Occupancy, WarpStateStats, clocks
# left alone) on the production and candidate row kernels. Run from the .gpu folder holding
# softmax_probe; logs to $OUT.
set -u
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
date -u +%FT%TZ >>"$OUT/gpu.txt"
"$D/softmax_probe" 8x16x1024 8x16x2048 4x16x4096 2x16x8192 1x16x16384 >"$OUT/probe.txt" 2>&1; echo "rc=$?" >>"$OUT/probe.txt"
"$D/softmax_probe" 8x16x1024 4x16x4096 >"$OUT/probe2.txt" 2>&1; echo "rc=$?" >>"$OUT/probe2.txt"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
K='regex:attnprof_softmax_rows|softmax_staged<__nv_bfloat16, (4, 2, false|2, 3, true)|copy_u<1>|attnprof_scale|attnprof_math_row_all|row_all_multi<8>|attnprof_math_softmax|softmax_staged<float, 8, 2, true'
for sh in 8x16x1024 4x16x4096 2x16x8192; do
  timeout 40 $NCU --clock-control none --kernel-name-base demangled -k "$K" --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section LaunchStats "$D/softmax_probe" --once $sh >"$OUT/ncu-$sh.txt" 2>&1
  echo "ncu rc=$?" >>"$OUT/ncu-$sh.txt"
done
date -u +%FT%TZ >>"$OUT/gpu.txt"
