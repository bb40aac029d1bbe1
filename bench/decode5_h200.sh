#!/usr/bin/env bash
# Issue 38's decode goal on the H200, one device call (bench/results/2026-12-04-decode-tma.md): from a
# project root holding build/ (attnprof, the recorder, build/bench/libdecode_probe.so), bench/ and
# tests/gpu/, after `source .devdeps/env.sh`.
#   1. bench/decode_tma.py: the device's copy and read rates; at the issue's points (and
#      8x32/8x131072) the cp.async and TMA split-KV kernels on both grids, the split kernel alone and
#      with its math left out, beside PyTorch's SDPA cuDNN and FA2, every output against FP32 SDPA;
#      odd shapes for correctness;
#   2. gpu-test's grouped-query and decode shapes (every variant against FP64, through attnprof);
#   3. ours (flash) and cuDNN (PyTorch's library) in one attnprof process per point, FP64-checked.
# SKIP_TMA=1, SKIP_GPU_TEST=1 and SKIP_POINTS=1 leave out steps 1, 2 and 3.
source "$(dirname "$0")/lib.sh" decode5
bin=${ATTNPROF_BIN:-build/attnprof}
say "$(date -u +%FT%TZ) commit ${COMMIT:-unknown}"
gpu_state

say "decode_tma.py"
[ "${SKIP_TMA:-0}" = 1 ] || PYTHONUNBUFFERED=1 timeout "${TMA_TIMEOUT:-200}" python3 bench/decode_tma.py \
  build/bench/libdecode_probe.so >"$OUT/tma.log" 2>&1
rc=$?
echo "rc=$rc decode_tma" >>"$L"
# A kernel that hangs (an mbarrier never completing) would hang every later step too.
[ "$rc" = 124 ] && { say "decode_tma.py timed out: stopping"; exit 1; }

say "gpu-test: grouped-query and decode shapes"
[ "${SKIP_GPU_TEST:-0}" = 1 ] || cudnn_torch env ATTNPROF_BIN=$bin GPU_TEST_ONLY=gqa timeout 150 bash tests/gpu/run.sh \
  >"$OUT/gpu-test.log" 2>&1
echo "rc=$? gpu-test" >>"$L"

say "ours and cuDNN in one attnprof run per point"
[ "${SKIP_POINTS:-0}" = 1 ] || source bench/decode_points.sh
say "done"
