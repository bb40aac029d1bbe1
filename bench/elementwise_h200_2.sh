#!/usr/bin/env bash
# Issue 40 item 5, second device call (flash3): elementwise kernels before/after with the
# faster-of ceilings, compute-sanitizer on the changed kernels, gpu-test subset with the probe's hold check.
source "$(dirname "$0")/lib.sh" flash3
G=$(dirname "$0")
mkdir -p /tmp/f3 && tar xJf "$G/b.tar.xz" -C /tmp/f3
A=/tmp/f3/after B=/tmp/f3/before
say "$(date -u +%FT%TZ) flash3 call 2"; gpu_state
$B/elementwise_bench 8x16x1024 4x16x4096 2x16x8192 1x16x16384 >"$OUT/ew-before.txt" 2>&1
$A/elementwise_bench 8x16x1024 4x16x4096 2x16x8192 1x16x16384 >"$OUT/ew-after.txt" 2>&1
say "sanitizer"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
$CS --tool memcheck --error-exitcode 9 $A/elementwise_bench --once 2x3x77 1x2x1000 1x1x4096 1x1x6000 1x1x12000 \
  >"$OUT/sanitizer.txt" 2>&1; echo "memcheck rc=$?" >>"$OUT/sanitizer.txt"
$CS --tool racecheck --error-exitcode 9 $A/elementwise_bench --once 1x1x4096 1x1x6000 \
  >>"$OUT/sanitizer.txt" 2>&1; echo "racecheck rc=$?" >>"$OUT/sanitizer.txt"
say "gpu-test subset"
GPU_TEST_SHAPES="2x3x77x64 2x4x1000x64 1x2x3000x64 1x2x4096x128 2x2x190x80" \
GPU_TEST_GQA_SHAPES="2:8:2:1:1001:128 2:8:2:333:333:64 1:8:1:129:4096:128" \
  ATTNPROF_BIN=$A/attnprof cudnn_torch bash /tmp/f3/gpu_run.sh >"$OUT/gputest.txt" 2>&1
echo "gpu-test rc=$?" >>"$OUT/gputest.txt"
say done
