#!/usr/bin/env bash
# attnprof sweep on the H200 (its wall time and archives), one mode per device command (each must
# stay under the device's 10-minute limit; every sweep runs under `timeout`, and
# an interrupted sweep keeps its complete shapes, so the same mode run again on a
# still-warm machine continues it with --resume).
#
# From the project root on the GPU machine, build/ carried from the build machine:
#   bench/sweep_h200.sh fixture   the small sweep to commit as tests/fixtures/sweep-h200
#                                 (mkdir tests/fixtures/sweep-h200 && tar -xzf sweep-fixture.tgz -C it)
#                                 (S 256,1024,4096,16384 x D 64,128, B·S = 32768, 3 forwards;
#                                 run.json + trace.json per shape; ~2 MB)            ~2 min
#   bench/sweep_h200.sh one       the default sweep (S 256…16384 x D 64,128, B·S = 32768,
#                                 20 forwards) on one GPU (--gpus 0): its wall time   ~5-9 min
#   bench/sweep_h200.sh default   `attnprof sweep -o DIR` with no option at all (counters,
#                                 calibration and the FP64 check on; no RUNFLAGS, no ITERS): its
#                                 wall time, and from each shape's log (one plain line per step)
#                                 the per-phase breakdown (inputs, reference, variants, ceilings,
#                                 counters) of every shape                           goal <= 10 min
#   bench/sweep_h200.sh all       the same sweep with --gpus all (run on the 2-GPU machine,
#                                 after `one` there): its wall time and the speed-up
#   bench/sweep_h200.sh replicate --gpus all --check-gpus on a small sweep: the GPU check
#   bench/sweep_h200.sh wall      S = 32768 at B = 1, D 64: naive's and math's memory wall (~7 min: FP64 reference)
#   bench/sweep_h200.sh render    render time of the last sweep's report, pinned to 2 cores
# Env: ITERS (forwards per variant, default run's 20), SEQ and DIMS (override the lists),
#      RUNFLAGS (run options for every shape; default --no-counters --no-pdf),
#      WORK (sweeps live there between calls; default /tmp/attnprof-sweep-h200).
# Results: $OUT/sweep-<mode>.log and $OUT/sweep-<mode>.tgz (the report, sweep.json and
# status/; fixture mode: the archives too). At most 2 files per mode.
set -u
cd "$(dirname "$0")/.."
[ -f .devdeps/env.sh ] && source .devdeps/env.sh
mode=${1:?usage: bench/sweep_h200.sh fixture|one|all|replicate|wall|render}
OUT=${OUT:-out/sweep-bench}
W=${WORK:-/tmp/attnprof-sweep-h200}
mkdir -p "$OUT" "$W"
L=$OUT/sweep-$mode.log
BIN=${BIN:-build/attnprof}
say() { echo "== $*" | tee -a "$L"; }
iters=${ITERS:+--iters $ITERS}
# run's counter pass adds ~7 s per shape and leaves the timings alone: off by
# default here (RUNFLAGS= to keep it); --calibrate stays on, it measures the roof line.
runflags=${RUNFLAGS---no-counters --no-pdf}

say "$(date -u +%FT%TZ) mode $mode commit $(git rev-parse --short HEAD 2>/dev/null) host $(hostname)"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,clocks.sm,temperature.gpu --format=csv >>"$L" 2>&1
echo "/proc/driver/nvidia/gpus: $(ls /proc/driver/nvidia/gpus 2>&1 | tr '\n' ' ')" >>"$L"
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}; cores $(nproc)" >>"$L"

# sweep DIR [options]: runs (or resumes) a sweep under a 560 s timeout, logs its wall time.
sweep() {
  local dir=$1; shift
  local resume=()
  [ -f "$dir/sweep.json" ] && resume=(--resume)
  local s e rc
  s=$(date +%s.%N)
  if [ ${#resume[@]} -gt 0 ]; then
    say "resuming $dir"
    # The plan is in DIR/sweep.json: only the GPUs are given again.
    local gpus=() a prev=
    for a in "$@"; do [ "$prev" = --gpus ] && gpus=(--gpus "$a"); prev=$a; done
    timeout -s INT 560 "$BIN" sweep --resume -o "$dir" "${gpus[@]}" >>"$L" 2>&1
  else
    say "attnprof sweep -o $dir $*"
    timeout -s INT 560 "$BIN" sweep -o "$dir" $iters $runflags "$@" >>"$L" 2>&1
  fi
  rc=$?
  e=$(date +%s.%N)
  # Each shape's own wall time (status/*.json): their sum is the one-GPU work, across resumes too.
  cat "$dir"/status/*.json 2>/dev/null | awk -F': ' '/"seconds"/ { gsub(/,/, "", $2); t += $2; n++ }
    END { printf "shapes with a status: %d, sum of their wall times: %.1f s\n", n, t }' | tee -a "$L"
  awk -v s="$s" -v e="$e" -v rc="$rc" 'BEGIN { printf "wall: %.1f s (rc=%d; 130 = stopped at the time limit: run the mode again)\n", e - s, rc }' | tee -a "$L"
  return $rc
}

pack() { # pack NAME DIR [with-archives]
  local name=$1 dir=$2 files
  if [ "${3:-}" = with-archives ]; then
    files=$(cd "$dir" && ls -d sweep.json status shapes/*/run.json shapes/*/trace.json 2>/dev/null)
  else
    files=$(cd "$dir" && ls -d sweep.json status logs sweep.md sweep.html sweep.csv sweep.tex figures 2>/dev/null)
  fi
  tar -C "$dir" -czf "$OUT/sweep-$name.tgz" $files
  say "packed $OUT/sweep-$name.tgz ($(du -h "$OUT/sweep-$name.tgz" | cut -f1))"
}

seq_default=${SEQ:-256:16384:x2}
dims_default=${DIMS:-64,128}
case "$mode" in
fixture)
  ITERS=${ITERS:-3}; iters="--iters $ITERS"
  sweep "$W/fixture" --seq "${SEQ:-256,1024,4096,16384}" --dim "$dims_default" --tokens 32768 --warmup 2 \
    --format png --gpus 0 || true
  du -sh "$W/fixture/shapes" | tee -a "$L"
  du -ch "$W"/fixture/shapes/*/trace.json "$W"/fixture/shapes/*/run.json | tail -1 | sed 's/^/archives (trace+run): /' | tee -a "$L"
  pack fixture "$W/fixture" with-archives
  ;;
one)
  sweep "$W/one" --seq "$seq_default" --dim "$dims_default" --gpus 0 || true
  pack one "$W/one"
  ;;
default)
  # No option but -o: what a new user types. The 560 s timeout of sweep() leaves the device
  # command's 10 minutes room; a stop there is itself the answer (the goal is 10 minutes).
  iters= runflags=
  sweep "$W/default" || true
  # Per shape and phase, from the lines `attnprof run` prints when stderr is a file.
  for log in "$W"/default/logs/*.log; do
    [ -f "$log" ] || continue
    echo "-- $(basename "$log" .log)"
    grep -E '^attnprof: (inputs|\[[0-9]+/[0-9]+\]|ceilings|counter pass|counters of)' "$log"
  done | tee -a "$L"
  pack default "$W/default"
  ;;
all)
  # --gpus all counts /proc/driver/nvidia/gpus; should a container show more there than
  # nvidia-smi lists, name the GPUs nvidia-smi sees instead (and say so).
  g=all
  n_smi=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  n_proc=$(ls /proc/driver/nvidia/gpus 2>/dev/null | wc -l)
  if [ -z "${CUDA_VISIBLE_DEVICES:-}" ] && [ "$n_smi" -gt 0 ] && [ "$n_smi" != "$n_proc" ]; then
    g=$(seq -s, 0 $((n_smi - 1)))
    say "nvidia-smi lists $n_smi GPUs, /proc/driver/nvidia/gpus $n_proc: using --gpus $g"
  fi
  sweep "$W/all" --seq "$seq_default" --dim "$dims_default" --gpus "$g" || true
  grep -h '"gpu"' "$W"/all/status/*.json | sort | uniq -c | tee -a "$L"
  # One GPU's time, when `one` ran on this (still warm) machine before, beside this one.
  one=$( [ -f "$W/sweep-one.log" ] && grep -h '^ran .* tasks in' "$W/sweep-one.log" | tail -1)
  this=$(grep -h '^ran .* tasks in' "$L" | tail -1)
  say "one GPU: ${one:-not in $W/sweep-one.log}; all: $this"
  pack all "$W/all"
  ;;
replicate)
  n_smi=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  sweep "$W/replicate" --seq 1024,4096 --dim 64 --gpus "$(seq -s, 0 $((n_smi - 1)))" --check-gpus || true
  grep -E '^- GPU' "$L" | tail -n 20
  pack replicate "$W/replicate"
  ;;
wall)
  sweep "$W/wall" --seq 32768 --dim 64 --tokens 32768 --gpus 0 || true
  pack wall "$W/wall"
  ;;
render)
  last=$(ls -td "$W"/*/ 2>/dev/null | head -1)
  [ -n "$last" ] || { say "no sweep under $W: run another mode first"; exit 1; }
  say "render time of $last ($(ls "$last/shapes" | wc -l) shapes), pinned to cores 0,1"
  for i in 1 2 3; do
    s=$(date +%s.%N)
    taskset -c 0,1 "$BIN" sweep --collect "$last" -q >>"$L" 2>&1
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { printf "collect: %.2f s\n", e - s }' | tee -a "$L"
  done
  ;;
*)
  echo "unknown mode $mode" >&2; exit 2 ;;
esac
say "$(date -u +%FT%TZ) done"
cp "$L" "$W/" 2>/dev/null || true
