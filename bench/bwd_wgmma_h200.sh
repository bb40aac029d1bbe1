#!/usr/bin/env bash
# The first device run of the sm_90a backward (kernels/attn_bwd_sm90a.cu, written 2026-12-04 by
# helper bwd7 without a GPU; bench/results/2026-12-04-backward-wgmma-pending.md), ONE call on the
# H200, about 150-200 s when it passes, from the project root after `source .devdeps/env.sh`:
#   1. For each sm90a configuration alone: bwd_tc_bench small N (20 s limit: a hang of the new
#      pipeline shows as rc 124), then check N (its head dim's 5 shapes: S 77/333/1000/129 at D
#      128, 77/1000/333/256 at D 64, and one of 40 (D 128) or 80 (D 64) heads at S 1000 that needs
#      two L2 head groups of the block order, "head groups 2" in its lse line; causal and not;
#      against the FP32 reference, tolerance 5e-2 on the relative L2 error of dQ, dK and dV).
#      One configuration at a time, so that a fault or a hang in one still leaves the others'
#      verdicts (the matrix below needs them all). On any failure, a control: check 9 (the
#      mma.sync kernel with the same block order). For a configuration that hung, the watchdog
#      build (below) of `small N`: its lines name the mbarrier each stuck thread waits on (q_free
#      in the producer with every consumer past q_full: the consumers hang at a named barrier or
#      a wgmma wait; consumers on q_full: a copy's bytes never came; kv_full: the K/V copies).
#      Then compute-sanitizer memcheck of `small N` for each configuration that did not hang, and
#      racecheck for the two defaults (sm90a_d128_n128_m64, sm90a_d64_n128_m64), whatever the
#      check said; a sanitizer timeout is no verdict. Any failure (check, hang, sanitizer error)
#      stops the script before the timing.
#   2. `point S D CAUSAL` at D 128 and 64, S 4096 and 16384, causal and not: the mma.sync default
#      and every sm90a configuration of the head dim, the whole set twice (pass 1 and 2).
#   3. bench/torch_bwd.py's FA2 (SDPA flash) and cuDNN backward at the same eight points.
#   4. A summary table: ms and TFLOP/s (2.5x the forward's FLOPs, halved causal) of each, the
#      mean of the two passes, and each sm90a configuration's time over cuDNN's and FA2's (< 1:
#      faster). Issue 39's goal: at or below cuDNN at S >= 4096, D 128, >= 520 TFLOP/s non-causal.
# How to read it: the "== 1" lines must say rc=0 and "check: passed" with 10 sm90a lines per
# configuration (5 shapes x causal/not); sanitizer lines "ERROR SUMMARY: 0 errors" and
# "RACECHECK SUMMARY: 0 hazards". If sm90a_d128_n128_m64 fails and _red passes, suspect the TMA
# reduce-add of dQ; if only dQ is off in every sm90a line, the dS^T / K operands of the dQ
# product (MN-major descriptors); dQ off at D 64 only, the m64n32 B operand starting 64 bytes
# into K's swizzled rows; if dK/dV too, the S^T / dP^T products or the lse/delta copies; if
# _serial passes and the others fail, the overlapped order's waits; if the control fails too,
# the bench or the reference, not the kernel.
# Build here first (the build machine has no GPU; sm_90 for the mma.sync part, the sm_90a
# object is built by the Makefile), and the watchdog binary beside it (the Makefile's rule
# would refuse it: its printf call serialises the wgmma, which is fine for a debug build):
#   make build/bwd_tc_bench CUDA_ARCH='-gencode arch=compute_90,code=sm_90' &&
#   mkdir -p .gpu-bwd7 && cp build/bwd_tc_bench .gpu-bwd7/ && strip .gpu-bwd7/bwd_tc_bench &&
#   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -DATTNPROF_HAVE_SM90A \
#     -DATTNPROF_BWD_SM90A_WATCHDOG -Ikernels -c kernels/attn_bwd_sm90a.cu -o build/attn_bwd_sm90a_wd.o &&
#   nvcc -std=c++17 -O3 -gencode arch=compute_90,code=sm_90 -Ikernels -DATTNPROF_HAVE_SM90A \
#     bench/bwd_tc_bench.cu kernels/attn_bwd_tc.cu build/attn_bwd_sm90a_wd.o -o .gpu-bwd7/bwd_tc_bench_wd &&
#   strip .gpu-bwd7/bwd_tc_bench_wd
# then run on the device (carry .devdeps): source .devdeps/env.sh && bash bench/bwd_wgmma_h200.sh
# Logs: $OUT/bwd_wgmma.log (this terminal output), $OUT/logs.tgz (every log).
source "$(dirname "$0")/lib.sh" bwd_wgmma
BIN=${BIN:-.gpu-bwd7/bwd_tc_bench}
BIN_WD=${BIN_WD:-.gpu-bwd7/bwd_tc_bench_wd} # the watchdog build (header), run only for a configuration that hung
[ -x "$BIN" ] || { say "no $BIN: build it first (header)"; exit 2; }
say "$(date -u +%FT%TZ) sm_90a backward, first run; $(git log -1 --format=%h 2>/dev/null || echo no-git)"
gpu_state
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$L"
pack() { tar czf "$OUT/logs.tgz" -C "$W" . 2>/dev/null; }
"$BIN" list >"$W/list.txt" 2>&1
NEW=$(awk '/ sm90a$/ {print $1}' "$W/list.txt" | tr '\n' ' ')
say "sm90a configurations: $NEW($(awk '/ sm90a$/ {print $2}' "$W/list.txt" | tr '\n' ' '))"
[ -n "$NEW" ] || { say "no sm90a configuration in $BIN list: built without the sm_90a object"; pack; exit 2; }

say "== 1. correctness, one configuration at a time (a fault or hang in one hides none of the others)"
bad=0; hung=""
for n in $NEW; do
  timeout 20 "$BIN" small "$n" >"$W/small-$n.txt" 2>&1; rc=$?
  say "small $n rc=$rc: $(grep -E '^check:' "$W/small-$n.txt")"; grep -E "FAIL|skipped" "$W/small-$n.txt" | head -4 | tee -a "$L"
  if [ $rc = 124 ] || [ $rc = 137 ]; then hung="$hung $n"; bad=1; continue; fi
  # A configuration the bench skipped (no sm_90 device) passes with no line: that is a failure here.
  [ $rc = 0 ] && grep -q " sm90a_" "$W/small-$n.txt" || bad=1
  timeout 30 "$BIN" check "$n" >"$W/check-$n.txt" 2>&1; rc=$?
  lines=$(grep -c ' sm90a_' "$W/check-$n.txt")
  say "check $n rc=$rc: $(grep -E '^check:' "$W/check-$n.txt"); sm90a lines: $lines of 10"
  grep -E " sm90a_|lse.*FAIL|head groups [2-9]" "$W/check-$n.txt" | tee -a "$L"
  [ $rc = 0 ] && [ "$lines" = 10 ] || bad=1
done
if [ $bad != 0 ]; then
  # Control: the mma.sync kernel with the same grouped block order, same shapes and reference.
  timeout 30 "$BIN" check 9 >"$W/check-control.txt" 2>&1
  say "control (mma.sync d128_n128_m64_w8_l2) rc=$?: $(grep -E '^check:' "$W/check-control.txt")"
fi
for n in $hung; do
  if [ -x "$BIN_WD" ]; then
    timeout 40 "$BIN_WD" small "$n" >"$W/watchdog-$n.txt" 2>&1
    say "watchdog $n rc=$?: $(grep -c 'bwd_sm90a watchdog' "$W/watchdog-$n.txt") lines"
    grep 'bwd_sm90a watchdog' "$W/watchdog-$n.txt" | sed 's/block [0-9]* thread [0-9]*/block B thread T/' | sort |
      uniq -c | sort -rn | head -6 | tee -a "$L"
    grep 'bwd_sm90a watchdog' "$W/watchdog-$n.txt" | head -4 | tee -a "$L"
  else
    say "watchdog $n: no $BIN_WD (header: how to build it)"
  fi
done
# The sanitizers run whatever the check said (a fault's first report is the best clue), never
# on a configuration that hung; memcheck on each, racecheck (slow) on the two defaults. A
# sanitizer's timeout is no verdict and does not stop the timing; an error does.
for n in $NEW; do
  case " $hung " in *" $n "*) continue ;; esac
  name=$(awk -v n="$n" '$1 == n {print $2}' "$W/list.txt")
  tools=memcheck
  case $name in sm90a_d128_n128_m64 | sm90a_d64_n128_m64) tools="memcheck racecheck" ;; esac
  for tool in $tools; do
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 3 "$BIN" small "$n" >"$W/$tool-$n.txt" 2>&1; rc=$?
    say "$tool $n ($name) rc=$rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/$tool-$n.txt" | tr '\n' ' ')"
    grep -E "^========= (Error|Warning|Race|Invalid)" "$W/$tool-$n.txt" | sort | uniq -c | sort -rn | head -4 | tee -a "$L"
    if [ $rc = 124 ]; then say "$tool $n: timed out, no verdict"; elif [ $rc != 0 ]; then bad=1; fi
  done
done
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
