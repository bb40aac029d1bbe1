#!/usr/bin/env bash
# The device run behind bench/RESULTS.md "the frontier": our sm_90a flash forward (the bench's
# library, every configuration checked first) against PyTorch's FA2 and cuDNN 9.19 and
# FlashAttention-4's SM90 forward, interleaved rounds in one process, over the 24-point grid
# (S 512-16384 x D 64/128 x causal/not, B = 32768/S, H = 16) and D 32/96/256 at S 1024/4096;
# then, when PEERS names a copy of ../shared/bench/torch_bwd_decode.py (that folder does not travel
# to the GPU machine), PyTorch's and FA4's backward and decode anchors in the same run.
# FA4 comes onto the GPU machine with ../shared/bench/fa4/prepare.sh (three calls in a row, its
# header says how); this script only needs its PYTHONPATH exported. Without FA4 the tables say so.
#   LIB=build/bench/libflash_sm90a.so bash bench/frontier_h200.sh      (logs under $OUT)
source "$(dirname "$0")/lib.sh" frontier
LIB=${LIB:-build/bench/libflash_sm90a.so}
export PYTHONUNBUFFERED=1
gpu_state
say "check"
timeout 120 python3 bench/flash_sm90a_torch.py "$LIB" check > "$OUT/check.txt" 2>&1
say "check rc $?: $(grep 'check:' "$OUT/check.txt")"
say "sweep"
timeout 300 python3 bench/flash_sm90a_torch.py "$LIB" sweep > "$OUT/sweep.txt" 2>&1
say "sweep rc $?"; grep -E "^ours at or below|^fa4" "$OUT/sweep.txt" | tee -a "$L"
say "dims"
timeout 150 python3 bench/flash_sm90a_torch.py "$LIB" dims > "$OUT/dims.txt" 2>&1
say "dims rc $?"; grep -E "^ours at or below" "$OUT/dims.txt" | tee -a "$L"
if [ -n "${PEERS:-}" ]; then
  say "peers: $PEERS"
  timeout 200 python3 "$PEERS" > "$OUT/peers.txt" 2>&1
  say "peers rc $?"
fi
gpu_state
