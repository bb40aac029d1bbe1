#!/usr/bin/env bash
# Issue 40 item 5, helper elem6, device call 2 (2026-12-04): bench/softmax_probe.cu's copy,
# scale, softmax, math, row_all and fill sections (load/store cache policies, the bulk-copy
# engine, math softmax with more values a thread, one-pass out-of-place fill) at five shapes,
# then the small shapes again. Run from the .gpu folder holding softmax_probe; logs to $OUT.
set -u
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv >"$OUT/gpu.txt" 2>&1
date -u +%FT%TZ >>"$OUT/gpu.txt"
S="--only=copy,scale,softmax,math,rowall,fill"
timeout 150 "$D/softmax_probe" $S 8x16x1024 8x16x2048 4x16x4096 2x16x8192 1x16x16384 >"$OUT/probe-a.txt" 2>&1
echo "rc=$?" >>"$OUT/probe-a.txt"
timeout 60 "$D/softmax_probe" $S 8x16x1024 4x16x4096 >"$OUT/probe-b.txt" 2>&1; echo "rc=$?" >>"$OUT/probe-b.txt"
date -u +%FT%TZ >>"$OUT/gpu.txt"
