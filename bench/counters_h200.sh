#!/usr/bin/env bash
# Device run for issue #12 (counters, ceilings, predictions) on the H200. From the project
# root after `source .devdeps/env.sh`, with build/ carried from the build machine
# (`make -j && make test` there). Budget: about 3 minutes expected; every step has a
# timeout (120 s, then ROUNDS × 2 × 60 s, 200 s, 60 s). ROUNDS (default: 3, or fewer
# when step 1 took over 35 s) sets the overhead rounds. Writes under $OUT (at most
# 5 files come back):
#   counters_h200.log  everything below, with rc of each step and nvidia-smi state
#   overhead.csv       per variant and run: CUDA-event µs per forward (CUPTI off) with and
#                      without --counters, interleaved; the counter pass's seconds; wall s
#   gpu-test.log       make gpu-test (now with the counter assertions)
#   report.md          the default batch's report (Predict, then verify; roofline linked)
#   archives.tgz       default/ (the default batch with counters and calibration: trace,
#                      run, counters, summary, report, figures as PNG) and the fixture
#                      h200-counters/ (trace.json, run.json, counters.json) for tests/fixtures/
# Steps:
#   1. the default batch with counters and calibration (the default options);
#   2. overhead: 3 × (--no-counters, --counters) at the default shape, interleaved, both
#      --no-calibrate, --iters 20: the timed numbers must not move, the pass's cost is
#      counters.json's pass_seconds and the wall-time difference;
#   3. make gpu-test;
#   4. the fixture: default shape (score matrices far larger than the L2, so the DRAM
#      predictions are meaningful), 3 recorded forwards, with counters and calibration.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/counters-h200}
W=${WORK:-/tmp/attnprof-counters}
mkdir -p "$OUT" "$W"
L=$OUT/counters_h200.log
BIN=build/attnprof
say() { echo "== $(date -u +%T) $*" | tee -a "$L"; }
stamp() { echo "$EPOCHREALTIME"; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$EPOCHREALTIME"; }

say "commit $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l) changed files"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv >>"$L" 2>&1
cat /proc/driver/nvidia/params 2>/dev/null | grep -i RestrictProfiling >>"$L"

say "1. default batch, counters and calibration on (defaults)"
t0=$(stamp)
timeout 120 $BIN run -o "$W/default" --force --format png >>"$L" 2>&1; rc=$?; wall1=$(since "$t0")
echo "rc=$rc wall=$wall1 s" >>"$L"
# Stay inside the device call's 10 minutes: fewer overhead rounds when a run is slow.
if [ -z "${ROUNDS:-}" ]; then
  ROUNDS=$(python3 -c "import sys; w = float(sys.argv[1]); print(3 if w < 35 else 2 if w < 55 else 1)" "$wall1")
fi
python3 - "$W/default" >>"$L" 2>&1 <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/run.json"))
print("ceilings:", json.dumps(r.get("ceilings")))
print("counters meta:", json.dumps(r.get("counters")))
try:
    c = json.load(open(f"{d}/counters.json"))
    print(f"{len(c['ranges'])} ranges in counters.json")
    for x in c["ranges"]:
        m = x["metrics"]
        g = lambda k: m.get(k) if m.get(k) is not None else float("nan")
        print(f"  {x['variant']:14} {x['kind']:7} {x['name'][:60]:60} dur {g('gpu__time_duration.sum')/1e3:9.1f} us "
              f"dram r/w {g('dram__bytes_read.sum')/2**20:8.1f}/{g('dram__bytes_write.sum')/2**20:8.1f} MiB "
              f"tensor {g('sm__inst_executed_pipe_tensor.sum'):.3g} ffma {g('sm__sass_thread_inst_executed_op_ffma_pred_on.sum'):.3g} "
              f"hgmma ops {g('sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum'):.3g} hmma ops {g('sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum'):.3g} "
              f"occ {g('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f}%")
except Exception as e:
    print("no counters.json:", e)
PY
cp "$W/default/report.md" "$OUT/report.md" 2>/dev/null
sed -n '/^## Predict, then verify/,/^## Occupancy/p' "$W/default/report.md" >>"$L" 2>/dev/null

say "2. counter-pass overhead: --no-counters / --counters interleaved, ${ROUNDS:-3} rounds"
echo "round,mode,variant,event_us_no_cupti,event_us_cupti,pass_seconds,wall_s" >"$OUT/overhead.csv"
for round in $(seq 1 "${ROUNDS:-3}"); do
  for mode in no-counters counters; do
    dir="$W/ovh-$round-$mode"
    t0=$(stamp)
    timeout 60 $BIN run --$mode --no-calibrate -q -o "$dir" --force --format png >>"$L" 2>&1
    rc=$?; wall=$(since "$t0")
    echo "round $round $mode rc=$rc wall=$wall s" >>"$L"
    python3 - "$dir" "$round" "$mode" "$wall" >>"$OUT/overhead.csv" 2>>"$L" <<'PY'
import json, sys
d, rnd, mode, wall = sys.argv[1:5]
r = json.load(open(f"{d}/run.json"))
ps = (r.get("counters") or {}).get("pass_seconds")
for v in r["variants"]:
    print(f"{rnd},{mode},{v['name']},{v['event_us_no_cupti']},{v['event_us_cupti']},{'' if ps is None else ps},{wall}")
PY
  done
done
python3 - "$OUT/overhead.csv" >>"$L" 2>&1 <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for v in dict.fromkeys(r["variant"] for r in rows):
    a = [float(r["event_us_no_cupti"]) for r in rows if r["variant"] == v and r["mode"] == "no-counters" and r["event_us_no_cupti"] not in ("", "None")]
    b = [float(r["event_us_no_cupti"]) for r in rows if r["variant"] == v and r["mode"] == "counters" and r["event_us_no_cupti"] not in ("", "None")]
    if a and b:
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"timed {v:14}: {ma:9.1f} us without --counters, {mb:9.1f} us with ({mb / ma - 1:+.2%}); "
              f"spread {min(a):.1f}-{max(a):.1f} / {min(b):.1f}-{max(b):.1f}")
ps = [float(r["pass_seconds"]) for r in rows if r["mode"] == "counters" and r["pass_seconds"]]
wa = {r["round"]: float(r["wall_s"]) for r in rows if r["mode"] == "no-counters"}
wb = {r["round"]: float(r["wall_s"]) for r in rows if r["mode"] == "counters"}
if ps:
    print(f"counter pass: {statistics.median(ps):.2f} s (median of {len(ps) // max(1, len(set(r['variant'] for r in rows)))} runs)")
print("wall s per run without / with: " + ", ".join(f"{wa[k]:.1f}/{wb.get(k, float('nan')):.1f}" for k in sorted(wa)))
PY

say "3. gpu-test (tests/gpu/run.sh, with the counter assertions)"
# make gpu-test's recipe, without make (carried objects must not look stale and rebuild)
timeout 200 env ATTNPROF_BIN=$BIN bash tests/gpu/run.sh >"$OUT/gpu-test.log" 2>&1; echo "gpu-test rc=$?" | tee -a "$L"
tail -5 "$OUT/gpu-test.log" >>"$L"

say "4. fixture h200-counters: default shape, 3 forwards, counters and calibration"
timeout 60 $BIN run --iters 3 --warmup 2 -q -o "$W/h200-counters" --force --format png >>"$L" 2>&1; echo "rc=$?" >>"$L"
mkdir -p "$W/fixture/h200-counters"
cp "$W/h200-counters/trace.json" "$W/h200-counters/run.json" "$W/h200-counters/counters.json" \
  "$W/fixture/h200-counters/" 2>>"$L"
du -sh "$W/fixture/h200-counters" >>"$L"

tar czf "$OUT/archives.tgz" -C "$W" --exclude='*.svg' --exclude='*.pdf' default -C "$W/fixture" h200-counters 2>>"$L"
ls -la "$OUT" >>"$L"
say "done"
