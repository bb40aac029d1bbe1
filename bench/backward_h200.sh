#!/usr/bin/env bash
# One device run that checks and times run --backward: (1) gpu checks: attnprof run --backward on odd S,
# D 64 and 128 (every variant; causal, the only mask attnprof runs), (2) the fixture archive,
# (3) compute-sanitizer memcheck of the backward on a small shape, (4) PyTorch's backward grid
# (bench/torch_bwd.py), (5) ours on the causal points of the same grid. Logs under $OUT.
# Usage (device): bench/backward_h200.sh DIR   (DIR holds attnprof, its recorder and torch_bwd.py)
set -u
G=$1; A=$G/attnprof; R=${OUT:-/tmp/out}; O=/tmp/bwd-work; mkdir -p "$O" "$R"
common="--no-calibrate --no-counters --quiet"
snap() { (cd "$O" && tar czf "$R/all.tgz" --exclude=trace.json.bak * 2>/dev/null); }
echo "== 1. checks"
for shape in 2x3x77x64 1x4x256x128 2x2x1000x64 1x2x333x128; do
  IFS=x read -r B H S D <<<"$shape"
  $A run --backward --batch $B --heads $H --seq $S --dim $D --iters 3 --warmup 1 $common -o "$O/chk-$shape" --format svg \
    >/dev/null 2>"$O/chk-$shape.err"; echo "$shape rc=$?"; cat "$O/chk-$shape.err" | head -5
  python3 - "$O/chk-$shape/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    b = v.get("backward", {})
    print(f"  {v['name']:14s} fwd {v['status']} {v.get('event_us_no_cupti') or 0:9.1f}us | bwd {b.get('status')} "
          f"{b.get('event_us') or 0:9.1f}us dq {b.get('rel_error_dq')} dk {b.get('rel_error_dk')} dv {b.get('rel_error_dv')} "
          f"{b.get('error','')[:90]}")
PY
done
snap
echo "== 2. fixture"
$A run --backward --batch 1 --heads 4 --seq 512 --dim 64 --iters 5 --warmup 2 --no-calibrate --quiet \
  -o "$O/h200-backward" --format svg >/dev/null 2>"$O/fixture.err"; echo "fixture rc=$?"; head -3 "$O/fixture.err"
snap
echo "== 3. memcheck"
timeout 90 compute-sanitizer --tool memcheck --print-limit 5 $A run --backward --batch 1 --heads 2 --seq 77 --dim 64 \
  --variants naive,naive_inplace,math,efficient,flash --iters 2 --warmup 0 $common -o "$O/memcheck" --format svg \
  >"$O/memcheck.log" 2>&1; echo "memcheck rc=$?"; tail -3 "$O/memcheck.log"
snap
echo "== 4. torch"
PYTHONUNBUFFERED=1 timeout 150 python3 "$G/torch_bwd.py" 2>&1 | tee "$O/torch_bwd.log" | grep -v "^$"
snap
echo "== 5. ours"
for D in 64 128; do for S in 1024 4096 16384; do
  B=$((32768 / S))
  timeout 60 $A run --backward --batch $B --heads 16 --seq $S --dim $D --iters 3 --warmup 1 $common \
    -o "$O/ours-$S-$D" --format svg >/dev/null 2>"$O/ours-$S-$D.err"; echo "ours S=$S D=$D rc=$?"
  python3 - "$O/ours-$S-$D/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    b = v.get("backward", {})
    print(f"  ours {v['name']:14s} bwd {b.get('status')} {b.get('event_us') or 0:.1f} us (fwd {v.get('event_us_no_cupti') or 0:.1f} us) "
          f"err {b.get('rel_error_dq')},{b.get('rel_error_dk')},{b.get('rel_error_dv')} {b.get('error','')[:60]}")
PY
  rm -f "$O/ours-$S-$D/trace.json"; snap
done; done
snap; ls -la "$R"
