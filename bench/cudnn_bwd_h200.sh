#!/usr/bin/env bash
# One device run that checks and times the cudnn variant's backward: (1) checks of cudnn's backward
# against FP64 on odd S and D 64/128, (2) PyTorch's cuDNN SDPA backward on the grid (causal and
# not; bench/torch_bwd.py cudnn), (3) ours on the causal points of the same grid (attnprof runs the
# causal mask only), (4) the default batch with --backward, timed. Logs under $OUT.
# Usage (device): bench/cudnn_bwd_h200.sh DIR   (DIR holds attnprof, its recorder and torch_bwd.py)
set -u
G=$1; A=$G/attnprof; R=${OUT:-/tmp/out}; O=/tmp/cbwd; mkdir -p "$O" "$R"
common="--no-calibrate --no-counters --quiet"
snap() { (cd "$O" && tar czf "$R/all.tgz" --exclude=trace.json * 2>/dev/null); }
show() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    b = v.get("backward", {})
    print(f"  {v['name']:14s} fwd {v['status']} {v.get('event_us_no_cupti') or 0:9.1f}us | bwd {b.get('status')} "
          f"{b.get('event_us') or 0:9.1f}us dq {b.get('rel_error_dq')} dk {b.get('rel_error_dk')} dv {b.get('rel_error_dv')} "
          f"{b.get('error','')[:200]}")
    for k, f in (v.get("facts") or {}).items():
        if k.startswith("bwd_"):
            print(f"    {k}: {f.get('text')}")
PY
}
echo "== 1. checks"
for shape in 2x3x77x64 1x4x256x128 2x2x1000x64 1x2x333x128 1x2x4096x128; do
  IFS=x read -r B H S D <<<"$shape"
  timeout 40 $A run --backward --variants cudnn --batch $B --heads $H --seq $S --dim $D --iters 3 --warmup 1 $common \
    -o "$O/chk-$shape" --format svg >/dev/null 2>"$O/chk-$shape.err"; echo "$shape rc=$?"; head -5 "$O/chk-$shape.err"
  show "$O/chk-$shape/run.json"
done
snap
echo "== 2. torch"
PYTHONUNBUFFERED=1 timeout 60 python3 "$G/torch_bwd.py" cudnn 2>&1 | tee "$O/torch_bwd.log" | grep -v "^$"
snap
echo "== 3. ours"
for D in 64 128; do for S in 1024 4096 16384; do
  B=$((32768 / S))
  timeout 30 $A run --backward --variants cudnn --batch $B --heads 16 --seq $S --dim $D --iters 20 --warmup 3 $common \
    -o "$O/ours-$S-$D" --format svg >/dev/null 2>"$O/ours-$S-$D.err"; echo "ours S=$S D=$D rc=$?"; head -3 "$O/ours-$S-$D.err"
  show "$O/ours-$S-$D/run.json"
  rm -f "$O/ours-$S-$D/trace.json"
done; done
snap
echo "== 4. default batch --backward"
s0=$(date +%s.%N)
timeout 75 $A run --backward --quiet -o "$O/default-bwd" --format svg >"$O/default.out" 2>"$O/default.err"; rc=$?
s1=$(date +%s.%N); echo "default batch --backward rc=$rc wall $(python3 -c "print(round($s1-$s0,1))") s"
tail -12 "$O/default.out"; head -5 "$O/default.err"
show "$O/default-bwd/run.json"
snap; ls -la "$R"
