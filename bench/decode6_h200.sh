#!/usr/bin/env bash
# Issue 38's decode goal on the H200 with the persistent grid (bench/results/2026-12-04-decode-persistent.md),
# from a project root holding build/ (attnprof, the recorder, build/bench/libdecode_probe.so), bench/ and
# tests/gpu/, after `source .devdeps/env.sh`.
#   1. bench/decode_tma.py: the device's copy and read rates; at the issue's points (and 8x32/8x131072)
#      the TMA split-KV kernel on its fixed, balanced and persistent grids, the split kernel alone and
#      with its math left out, beside PyTorch's SDPA cuDNN and FA2, every output against FP32 SDPA; odd
#      shapes (and the persistent grid on 1, 5 and 37 blocks) for correctness;
#   2. compute-sanitizer memcheck over the persistent grid at five odd shapes (CHECK_ONLY=1);
#   3. gpu-test's grouped-query and decode shapes (every variant against FP64, through attnprof);
#   4. ours (flash) and cuDNN (PyTorch's library) in one attnprof process per point, FP64-checked;
#   5. ncu at 16 x 32/8 x 8192: cuDNN's SDPA kernel and our fixed TMA grid side by side (bench/decode_ncu.py).
# SKIP_TMA=1, SKIP_SANITIZE=1, SKIP_GPU_TEST=1, SKIP_POINTS=1 and SKIP_NCU=1 leave out steps 1 to 5.
source "$(dirname "$0")/lib.sh" decode6
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

say "compute-sanitizer memcheck: the persistent grid"
[ "${SKIP_SANITIZE:-0}" = 1 ] || CHECK_ONLY=1 PYTHONUNBUFFERED=1 timeout "${SAN_TIMEOUT:-150}" compute-sanitizer \
  --tool memcheck --print-limit 20 python3 bench/decode_tma.py build/bench/libdecode_probe.so >"$OUT/sanitize.log" 2>&1
echo "rc=$? sanitize" >>"$L"

say "gpu-test: grouped-query and decode shapes"
[ "${SKIP_GPU_TEST:-0}" = 1 ] || cudnn_torch env ATTNPROF_BIN=$bin GPU_TEST_ONLY=gqa timeout 150 bash tests/gpu/run.sh \
  >"$OUT/gpu-test.log" 2>&1
echo "rc=$? gpu-test" >>"$L"

say "ours and cuDNN in one attnprof run per point"
[ "${SKIP_POINTS:-0}" = 1 ] || source bench/decode_points.sh
say "ncu: cuDNN's kernel and ours at 16x32/8x8192"
[ "${SKIP_NCU:-0}" = 1 ] || timeout "${NCU_TIMEOUT:-60}" ncu --kernel-name regex:'fprop|attnprof_flash_decode' \
  --launch-skip 1 --launch-count 2 --section LaunchStats --section Occupancy --section SpeedOfLight \
  --section MemoryWorkloadAnalysis python3 bench/decode_ncu.py build/bench/libdecode_probe.so >"$OUT/ncu.txt" 2>&1
echo "rc=$? ncu" >>"$L"
say "done"
