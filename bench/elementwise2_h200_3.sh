#!/usr/bin/env bash
# Issue 40 item 5, helper elem6, device call 3 (2026-12-04), from the project root after
# `source .devdeps/env.sh`; the .gpu folder G holds this branch's build/attnprof and recorder,
# after/elementwise_bench (this branch), before/elementwise_bench (main 2a5a6fa's kernels, the
# same bench source) and softmax_probe. 1. elementwise_bench before / after, four shapes, then
# the two small ones again; 2. softmax_probe's production-against-candidate sections with the new
# production; 3. compute-sanitizer memcheck (and racecheck where the new kernels share memory);
# 4. tests/gpu/run.sh on shapes that take every new path (the short-row softmax and row_all at
# S 1000-1024, math's wide softmax at 6000 and a 4099-key decode row, the fill's two kernels),
# a grouped-query/decode pair and two backward shapes; 5. naive, naive_inplace, math through
# attnprof at the default shape and 2x16x8192x64 (FP64 check, op counts, kernel names).
set -u
G=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
W=$(mktemp -d)
say() { echo "== $(date -u +%T) $*" | tee -a "$OUT/call3.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv >>"$OUT/call3.log" 2>&1
say "1. elementwise_bench before/after"
for r in 1 2; do
  sh="8x16x1024 4x16x4096 2x16x8192 1x16x16384"; [ $r = 2 ] && sh="8x16x1024 4x16x4096"
  timeout 60 "$G/before/elementwise_bench" $sh >"$OUT/ew-before-$r.txt" 2>&1; echo "rc=$?" >>"$OUT/ew-before-$r.txt"
  timeout 60 "$G/after/elementwise_bench" $sh >"$OUT/ew-after-$r.txt" 2>&1; echo "rc=$?" >>"$OUT/ew-after-$r.txt"
done
say "2. softmax_probe"
timeout 60 "$G/softmax_probe" --only=softmax,math,rowall,staged 8x16x1024 2x16x8192 1x16x16384 >"$OUT/probe-c.txt" 2>&1
echo "rc=$?" >>"$OUT/probe-c.txt"
say "3. compute-sanitizer"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 90 $CS --tool memcheck --error-exitcode 9 "$G/after/elementwise_bench" --once 2x3x77 1x2x1000 1x3x1008 1x1x4099 1x1x6000 \
  >"$OUT/sanitizer.txt" 2>&1; echo "memcheck rc=$?" >>"$OUT/sanitizer.txt"
timeout 60 $CS --tool racecheck --error-exitcode 9 "$G/after/elementwise_bench" --once 1x1x6000 \
  >>"$OUT/sanitizer.txt" 2>&1; echo "racecheck rc=$?" >>"$OUT/sanitizer.txt"
say "4. gpu-test subset"
GPU_TEST_SHAPES="2x3x77x64 2x4x1000x64 2x3x1008x64 1x2x1024x128 1x2x6000x64" \
GPU_TEST_GQA_SHAPES="1:16:2:1:4099:64 2:8:2:333:333:64" GPU_TEST_BWD_SHAPES="2x3x77x64 2x2x1000x64" \
  ATTNPROF_BIN="$G/build/attnprof" timeout 200 bash tests/gpu/run.sh >"$OUT/gputest.txt" 2>&1
echo "gpu-test rc=$?" >>"$OUT/gputest.txt"
say "5. attnprof naive, naive_inplace, math"
for shape in "8 16 1024 64" "2 16 8192 64"; do
  read -r B H S D <<<"$shape"
  d="$W/run-$B-$S"
  timeout 120 "$G/build/attnprof" run --variants naive,naive_inplace,math --batch $B --heads $H --seq $S --dim $D \
    --iters 5 --warmup 2 --no-counters --no-calibrate -q --force --format png -o "$d" >>"$OUT/call3.log" 2>&1
  echo "rc=$? $shape" >>"$OUT/call3.log"
  python3 - "$d" "$shape" >>"$OUT/attnprof.txt" 2>&1 <<'PY'
import csv, json, sys
d, shape = sys.argv[1], sys.argv[2]
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
for v, r in rows.items():
    print(shape, v, {k: r.get(k) for k in ("status", "rel_error", "ops_per_forward", "expected_ops", "cuda_us_median")})
PY
  (cd "$d" && tar czf "$OUT/run-$B-$S.tgz" run.json summary.csv trace.json 2>/dev/null)
done
say done
