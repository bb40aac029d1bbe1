#!/usr/bin/env bash
# Issue 25 on the H200, in one device command (about 4 minutes; then the default sweep with
# what is left of `LIMIT` seconds). From the project root, build/ and .devdeps carried:
#   bench/measure_h200.sh
# Runs, each into $W/<name> (archives) and one line per step into $OUT/measure.log:
#   a1, a2   the default shape twice, --replicate 3, --no-counters      identical batches
#   cold     the default shape, --l2 cold, --no-counters                 cold vs a1 (warm)
#   big-warm, big-cold  4x16x4096x128, efficient,flash,cudnn             cold vs warm, large
#   fixed    the default shape, --iters 20 (the old rule), --no-counters  auto vs fixed cost
#   c914, c919  --variants cudnn --replicate 3, system cuDNN 9.14 and PyTorch's 9.19
#   lock     --lock-clocks --variants flash --iters 20                    refused or locked
#   compares a1/a2, c914/c919 (with --fail-on slower), a1/cold (mixed L2: refused, then allowed)
#   sweep    `attnprof sweep -o DIR` with no option, under the time left
# Results: $OUT/measure.log and $OUT/measure.tgz (run.json, samples.csv, compare.md of each).
source "$(dirname "$0")/lib.sh" measure
[ -f .devdeps/env.sh ] && source .devdeps/env.sh
BIN=${BIN:-build/attnprof}
LIMIT=${LIMIT:-270}
t_start=$(date +%s)
say "start; $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader)"
run() { # run NAME [cudnn_torch] ARGS...: one archive, its wall time, its step lines
  local name=$1; shift
  local pre=()
  [ "$1" = torch ] && { pre=(cudnn_torch); shift; }
  local s=$(date +%s.%N)
  "${pre[@]}" "$BIN" run -o "$W/$name" --force "$@" 2>>"$L" >/dev/null
  local rc=$?
  say "$name: rc $rc, $(awk -v s=$s -v e=$(date +%s.%N) 'BEGIN{printf "%.1f", e-s}') s: attnprof run $*"
}
cmp() { # cmp NAME A B [options]
  local name=$1 a=$2 b=$3; shift 3
  "$BIN" compare "$W/$a" "$W/$b" -o "$W/cmp-$name" --force "$@" >>"$L" 2>&1
  say "compare $name ($a vs $b $*): rc $?"
}
run a1 --replicate 3 --no-counters
run a2 --replicate 3 --no-counters
run cold --l2 cold --no-counters
run fixed --iters 20 --no-counters
run big-warm --batch 4 --seq 4096 --dim 128 --variants efficient,flash,cudnn --no-counters
run big-cold --batch 4 --seq 4096 --dim 128 --variants efficient,flash,cudnn --no-counters --l2 cold
run c914 --variants cudnn --replicate 3 --no-counters --no-calibrate
run c919 torch --variants cudnn --replicate 3 --no-counters --no-calibrate
run lock --variants flash --iters 20 --no-counters --no-calibrate --lock-clocks
cmp same a1 a2 --fail-on slower,ambiguous
cmp cudnn c914 c919 --fail-on slower
cmp l2mixed a1 cold
cmp l2allowed a1 cold --allow-l2-mismatch
for d in "$W"/*/; do
  n=$(basename "$d")
  [ -f "$d/run.json" ] && python3 - "$d" >>"$L" 2>&1 <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/run.json"))
m = r.get("measurement", {})
print("--", d, "measurement:", json.dumps(m))
for v in r.get("variants", []):
    print("   ", v.get("name"), v.get("status"), "event_us", v.get("event_us_no_cupti"), "stop", json.dumps(v.get("stop")))
PY
done
left=$(( LIMIT - ($(date +%s) - t_start) ))
say "sweep with ${left} s left"
if [ "$left" -gt 60 ]; then
  s=$(date +%s.%N)
  timeout -s INT "$left" "$BIN" sweep -o "$W/sweep" >>"$L" 2>&1
  say "sweep: rc $?, $(awk -v s=$s -v e=$(date +%s.%N) 'BEGIN{printf "%.1f", e-s}') s"
  for f in "$W"/sweep/status/*.json; do echo "$(basename "$f" .json) $(grep -o '"seconds": [0-9.]*' "$f")"; done >>"$L"
fi
(cd "$W" && tar -czf "$OUT/measure.tgz" */run.json */samples.csv */kernels.csv cmp-*/compare.md sweep/status sweep/logs sweep/sweep.md 2>/dev/null)
# Fixtures with the new fields: whole archives of a1, a2, c914, c919 (run.json, trace.json, counters).
(cd "$W" && tar -czf "$OUT/fixtures.tgz" a1/run.json a1/trace.json a2/run.json a2/trace.json c914/run.json c914/trace.json c919/run.json c919/trace.json cold/run.json cold/trace.json 2>/dev/null)
say "done"
