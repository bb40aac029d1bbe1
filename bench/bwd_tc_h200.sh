#!/usr/bin/env bash
# One device run for the tensor-core backward (kernels/attn_bwd_tc.cu): (1) bwd_tc_bench check
# (every tile configuration, causal and not, odd S, against an FP32 GPU reference), (2)
# compute-sanitizer memcheck of bwd_tc_bench small, (3) bwd_tc_bench time (every configuration,
# S 1024..16384 x D 64/128 x causal/not), (4) PyTorch's flash, efficient and cuDNN backward on the
# same grid (torch_bwd.py), (5) attnprof run --backward (flash, efficient) on odd S against FP64,
# (6) the same on the causal grid. Logs under $OUT.
# Usage (device): bench/bwd_tc_h200.sh DIR   (DIR holds attnprof, its recorder, bwd_tc_bench, torch_bwd.py)
set -u
G=$1; A=$G/attnprof; R=${OUT:-/tmp/out}; O=/tmp/bwdtc-work; mkdir -p "$O" "$R"
common="--no-calibrate --no-counters --quiet"
snap() { (cd "$O" && tar czf "$R/all.tgz" --exclude=trace.json * 2>/dev/null); }
echo "== 1. check"; timeout 60 "$G/bwd_tc_bench" check 2>&1 | tee "$O/check.log" | grep -E "FAIL|check:"; snap
echo "== 2. memcheck"; timeout 60 compute-sanitizer --tool memcheck --print-limit 5 "$G/bwd_tc_bench" small >"$O/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -3 "$O/memcheck.log"; snap
echo "== 3. time"; timeout 60 "$G/bwd_tc_bench" time 2>&1 | tee "$O/time.log"; snap
echo "== 4. torch"; PYTHONUNBUFFERED=1 timeout 60 python3 "$G/torch_bwd.py" efficient,flash,cudnn 2>&1 | tee "$O/torch_bwd.log" | grep -v "^$"; snap
show() { python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    b = v.get("backward", {})
    print(f"  {v['name']:10s} bwd {b.get('status')} {b.get('event_us') or 0:10.1f} us dq {b.get('rel_error_dq')} dk {b.get('rel_error_dk')} dv {b.get('rel_error_dv')} {b.get('error','')[:80]}")
PY
}
echo "== 5. attnprof checks"
for shape in 2x3x77x64 1x4x256x128 2x2x1000x64 1x2x333x128; do
  IFS=x read -r B H S D <<<"$shape"
  timeout 30 $A run --backward --variants efficient,flash --batch $B --heads $H --seq $S --dim $D --iters 3 --warmup 1 $common \
    -o "$O/chk-$shape" --format svg >/dev/null 2>"$O/chk-$shape.err"; echo "$shape rc=$?"; head -3 "$O/chk-$shape.err"
  show "$O/chk-$shape/run.json"
done; snap
echo "== 6. attnprof grid"
for D in 64 128; do for S in 1024 4096 16384; do
  B=$((32768 / S))
  timeout 45 $A run --backward --variants efficient,flash --batch $B --heads 16 --seq $S --dim $D --iters 3 --warmup 1 $common \
    -o "$O/ours-$S-$D" --format svg >/dev/null 2>"$O/ours-$S-$D.err"; echo "ours S=$S D=$D rc=$?"; head -3 "$O/ours-$S-$D.err"
  show "$O/ours-$S-$D/run.json"; rm -f "$O/ours-$S-$D/trace.json"
done; done; snap; ls -la "$R"
