#!/usr/bin/env bash
# The first device run of the sm_90a backward (kernels/attn_bwd_sm90a.cu, written 2026-12-04 by
# helper bwd7 without a GPU; bench/results/2026-12-04-backward-wgmma-pending.md), ONE call on the
# H200, about 120-170 s, from the project root after `source .devdeps/env.sh`:
#   1. bwd_tc_bench small N for each sm90a configuration alone (20 s limit each: a hang of the
#      new pipeline shows here as rc 124), then `check` (every configuration, mma.sync and sm90a,
#      causal and not, against the FP32 reference, tolerance 5e-2), then compute-sanitizer
#      memcheck and racecheck of `small N` for each sm90a configuration. Any failure stops the
#      script before the timing (the logs still come back).
#   2. `point S D CAUSAL` at D 128 and 64, S 4096 and 16384, causal and not: the mma.sync default
#      and every sm90a configuration of the head dim, the whole set twice (pass 1 and 2).
#   3. bench/torch_bwd.py's FA2 (SDPA flash) and cuDNN backward at the same eight points.
#   4. A summary table: ms and TFLOP/s (2.5x the forward's FLOPs, halved causal) of each, the
#      mean of the two passes, and each sm90a configuration's time over cuDNN's and FA2's (< 1:
#      faster). Issue 39's goal: at or below cuDNN at S >= 4096, D 128, >= 520 TFLOP/s non-causal.
# How to read it: the "== 1" lines must say rc=0 and "check: passed" with the sm90a_* lines
# present (8 of them per configuration: 4 shapes of its head dim x causal/not); sanitizer lines "ERROR
# SUMMARY: 0 errors" and "RACECHECK SUMMARY: 0 hazards". If sm90a_d128_n128_m64 fails and _red
# passes, suspect the TMA reduce-add of dQ; if only dQ is off in every sm90a line, the dS^T / K
# operands of the dQ product (MN-major descriptors); if dK/dV too, the S^T / dP^T products or the
# lse/delta copies; if _serial passes and the others fail, the overlapped order's waits.
# Build here first (the build machine has no GPU; sm_90 for the mma.sync part, the sm_90a
# object is built by the Makefile):
#   make build/bwd_tc_bench CUDA_ARCH='-gencode arch=compute_90,code=sm_90' &&
#   mkdir -p .gpu-bwd7 && cp build/bwd_tc_bench .gpu-bwd7/ && strip .gpu-bwd7/bwd_tc_bench
# then run on the device (carry .devdeps): source .devdeps/env.sh && bash bench/bwd_wgmma_h200.sh
# Logs: $OUT/bwd_wgmma.log (this terminal output), $OUT/logs.tgz (every log).
source "$(dirname "$0")/lib.sh" bwd_wgmma
BIN=${BIN:-.gpu-bwd7/bwd_tc_bench}
[ -x "$BIN" ] || { say "no $BIN: build it first (header)"; exit 2; }
say "$(date -u +%FT%TZ) sm_90a backward, first run; $(git log -1 --format=%h 2>/dev/null || echo no-git)"
gpu_state
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$L"
pack() { tar czf "$OUT/logs.tgz" -C "$W" . 2>/dev/null; }
"$BIN" list >"$W/list.txt" 2>&1
NEW=$(awk '/ sm90a$/ {print $1}' "$W/list.txt" | tr '\n' ' ')
say "sm90a configurations: $NEW($(awk '/ sm90a$/ {print $2}' "$W/list.txt" | tr '\n' ' '))"
[ -n "$NEW" ] || { say "no sm90a configuration in $BIN list: built without the sm_90a object"; pack; exit 2; }

say "== 1. correctness"
bad=0
for n in $NEW; do
  timeout 20 "$BIN" small "$n" >"$W/small-$n.txt" 2>&1; rc=$?
  say "small $n rc=$rc: $(grep -E '^check:' "$W/small-$n.txt")"; grep -E "FAIL|skipped" "$W/small-$n.txt" | head -4 | tee -a "$L"
  # A configuration the bench skipped (no sm_90 device) passes with no line: that is a failure here.
  [ $rc = 0 ] && grep -q " sm90a_" "$W/small-$n.txt" || bad=1
done
if [ $bad = 0 ]; then
  timeout 90 "$BIN" check >"$W/check.txt" 2>&1; rc=$?
  lines=$(grep -c ' sm90a_' "$W/check.txt"); want=$((8 * $(echo $NEW | wc -w)))
  say "check rc=$rc: $(grep -E '^check:' "$W/check.txt"); sm90a lines: $lines of $want"
  grep -E "FAIL" "$W/check.txt" | head -12 | tee -a "$L"; grep -E " sm90a_" "$W/check.txt" | tee -a "$L"
  [ $rc = 0 ] && [ "$lines" = "$want" ] || bad=1
fi
if [ $bad = 0 ]; then
  for n in $NEW; do for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 "$BIN" small "$n" >"$W/$tool-$n.txt" 2>&1; rc=$?
    say "$tool $n rc=$rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/$tool-$n.txt" | tr '\n' ' ')"
    grep -E "^========= (Error|Warning|Race|Invalid)" "$W/$tool-$n.txt" | sort | uniq -c | sort -rn | head -4 | tee -a "$L"
    [ $rc = 0 ] || bad=1
  done; done
fi
if [ $bad != 0 ]; then say "correctness failed: no timing (logs in logs.tgz)"; pack; exit 1; fi

say "== 2. timing (mma.sync default, then each sm90a configuration; twice)"
# point skips the listed configurations of the other head dim.
LISTED=d,$(echo $NEW | tr ' ' ',')
for pass in 1 2; do for D in 128 64; do for S in 4096 16384; do for c in 0 1; do
  timeout 40 "$BIN" point $S $D $c "$LISTED" 2>&1 | sed "s/^/pass$pass /" | tee -a "$W/time.txt"
done; done; done; done
pack

say "== 3. PyTorch FA2 and cuDNN, same points"
PYTHONUNBUFFERED=1 cudnn_torch timeout 90 python3 bench/torch_bwd.py flash,cudnn all 4096,16384 128,64 2>&1 |
  tee "$W/torch.txt" | grep -v "^$" | tee -a "$L"
pack

say "== 4. summary"
python3 - "$W/time.txt" "$W/torch.txt" <<'PY' | tee -a "$L"
import re, statistics, sys
ours, torch = {}, {}
for l in open(sys.argv[1]):
    m = re.match(r"pass\d time S=(\d+) D=(\d+) causal=(\d) (\S+)\s+([\d.]+) ms", l)
    if m:
        ours.setdefault((int(m[2]), int(m[1]), int(m[3]), m[4]), []).append(float(m[5]))
for l in open(sys.argv[2]):
    m = re.match(r"torch_bwd S=(\d+) D=(\d+) causal=(\d) (\S+) ([\d.]+) us", l)
    if m:
        torch[(int(m[2]), int(m[1]), int(m[3]), m[4])] = float(m[5]) / 1e3
print("| D, S, causal | config | ms (pass 1 / 2) | TFLOP/s | FA2 ms | cuDNN ms | cuDNN TFLOP/s | / FA2 | / cuDNN |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for (D, S, c, name), t in sorted(ours.items(), key=lambda x: (-x[0][0], x[0][1:])):
    B = 32768 // S
    flops = 2.5 * 4.0 * B * 16 * S * S * D / (2 if c else 1)
    ms = statistics.mean(t)
    fa, cu = torch.get((D, S, c, "flash")), torch.get((D, S, c, "cudnn"))
    f = lambda x: f"{x:.3f}" if x else "-"
    r = lambda x: f"{ms / x:.2f}" if x else "-"
    print(f"| {D}, {S}, {'causal' if c else 'none'} | {name} | {' / '.join(f'{x:.3f}' for x in t)} | {flops / ms / 1e9:.0f} "
          f"| {f(fa)} | {f(cu)} | {flops / cu / 1e9 if cu else 0:.0f} | {r(fa)} | {r(cu)} |")
PY
pack; ls -la "$OUT"
