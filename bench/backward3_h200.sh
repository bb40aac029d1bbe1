#!/usr/bin/env bash
# One device run that checks and times the backward (run --backward), every step timed (t=… s since the start):
# (1) the default batch with --backward (wall time; the ops of each variant's attn_bwd ranges),
# (2) the fixture archive (default shape, 3 recorded forwards and backwards), (3) gpu-test's
# backward part (tests/gpu/run.sh GPU_TEST_ONLY=backward: odd S, every head dim, the tensor-core
# harness causal and not), (4) compute-sanitizer memcheck of run --backward with ATTNPROF_CUPTI=off
# and of the tensor-core harness, (5) PyTorch's six variants' backward (bench/torch_bwd.py: autograd
# of the series' code and SDPA per backend, what autograd saves, the in-place check), (6) ours on the
# causal points of the same grid, (7) ncu of flash's main backward kernel at 4x16x4096x128 non-causal.
# Usage (device): bench/backward3_h200.sh DIR (attnprof + recorder, bwd_tc_bench, torch_bwd.py,
# run.sh, check_backward.py). Writes logs and archives under $OUT.
set -u
G=$1; A=$G/attnprof; R=${OUT:-/tmp/out}; W=/tmp/b3w; mkdir -p "$W" "$R"
t0=$(date +%s); step() { echo "== $1 (t=$(( $(date +%s) - t0 )) s)"; }
common="--no-calibrate --no-counters --quiet"
bwd_ops() { python3 - "$1" <<'PY'
import json, sys, collections
d = sys.argv[1]; t = json.load(open(f"{d}/trace.json")); ev = t["traceEvents"] if isinstance(t, dict) else t
apis = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"]
ops = collections.defaultdict(list)
for e in ev:
    if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
        ops[e["args"].get("correlation")].append(e)
first = {}
for r in ev:
    if r.get("name") == "attn_bwd" and (r.get("args") or {}).get("variant") not in first:
        first[r["args"]["variant"]] = r
for v, r in first.items():
    s, e = r["ts"], r["ts"] + r["dur"]
    got = [o for a in apis if a["ts"] >= s and a["ts"] + a.get("dur", 0) <= e for o in ops[a["args"].get("correlation")]]
    print(f"bwd_ops {v} {len(got)}: " + "; ".join(f"{o['cat']}:{o['name'][:70]} {o['dur']:.1f}us" +
          (f" {o['args'].get('bytes')}B" if o['cat'] != 'kernel' else "") for o in got))
PY
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "1. fixture"
$A run --backward --iters 3 --warmup 1 $common -o "$W/h200-backward" --format svg 2>"$W/fixture.err"
echo "fixture rc=$?"; head -3 "$W/fixture.err"; bwd_ops "$W/h200-backward"
(cd "$W" && tar cJf "$R/fixture.tar.xz" h200-backward/run.json h200-backward/trace.json h200-backward/counters.json 2>/dev/null
 ls -la h200-backward)
step "2. default batch with --backward"
s=$(date +%s%N); $A run --backward -o "$W/default" --format svg > "$R/default.txt" 2>&1; rc=$?
echo "default batch rc=$rc wall $(( ($(date +%s%N) - s) / 1000000 )) ms"; cat "$R/default.txt" | tail -25
bwd_ops "$W/default"
(cd "$W/default" && tar czf "$R/default.tgz" run.json summary.csv findings.json report.md 2>/dev/null)
step "3. gpu-test backward"
ATTNPROF_BIN=$A BWD_TC_BENCH=$G/bwd_tc_bench GPU_TEST_ONLY=backward timeout 50 bash "$G/run.sh" 2>&1 | tee "$R/gputest.log" | grep -v "^  backward .*: ok" | head -40
grep -c ": ok" "$R/gputest.log"
step "4. torch"
PYTHONUNBUFFERED=1 timeout 80 python3 "$G/torch_bwd.py" all causal 2>&1 | tee "$R/torch_bwd.log"
step "5. ours"
for D in 64 128; do for S in 1024 4096 16384; do B=$((32768 / S))
  timeout 20 $A run --backward --batch $B --heads 16 --seq $S --dim $D --iters 3 --warmup 1 $common \
    -o "$W/ours-$S-$D" --format svg >/dev/null 2>"$W/ours-$S-$D.err"; echo "ours S=$S D=$D rc=$?"
  python3 - "$W/ours-$S-$D/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    b = v.get("backward", {})
    print(f"  ours {v['name']:14s} bwd {b.get('status')} {b.get('event_us') or 0:.1f} us (fwd {v.get('event_us_no_cupti') or 0:.1f} us) "
          f"err {b.get('rel_error_dq')},{b.get('rel_error_dk')},{b.get('rel_error_dv')} {b.get('error','')[:60]}")
PY
done; done 2>&1 | tee "$R/ours.log"
step "6. memcheck (CUPTI off)"
for shape in 1x2x77x64; do IFS=x read -r B H S D <<<"$shape"
  ATTNPROF_CUPTI=off timeout 70 compute-sanitizer --tool memcheck --print-limit 10 $A run --backward --batch $B --heads $H \
    --seq $S --dim $D --iters 2 --warmup 0 $common -o "$W/memcheck-$shape" --format svg > "$W/memcheck-$shape.log" 2>&1
  echo "memcheck $shape rc=$?"; grep -E "ERROR SUMMARY|CUPTI|attnprof:" "$W/memcheck-$shape.log" | head -5
  python3 -c "
import json; r = json.load(open('$W/memcheck-$shape/run.json'))
print(' '.join(f\"{v['name']}:{v['status']}/{(v.get('backward') or {}).get('status')}\" for v in r['variants']))" 2>&1 | tail -1
done
cp "$W"/memcheck-*.log "$R/" 2>/dev/null; (cd "$R" && tar czf memcheck.tgz memcheck-*.log && rm -f memcheck-*.log)
step "7. ncu flash backward"
timeout 30 ncu --kernel-name regex:bwd_tc_dkdv --launch-skip 50 --launch-count 1 --section SpeedOfLight --section Occupancy \
  --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --section InstructionStats $G/bwd_tc_bench time 6 > "$R/ncu.txt" 2>&1; echo "ncu rc=$?"
grep -E "Duration|Throughput|Occupancy|Registers|Stall|Issued|Pipe|Bank|L1|L2|DRAM|Warp Cycles|Eligible|Block Limit|Shared Memory" "$R/ncu.txt" | head -60
step "done"; ls -la "$R"
