#!/usr/bin/env bash
# Grouped-query attention and decode on the H200, one device run (bench/RESULTS.md): from the
# project root after `source .devdeps/env.sh`, with build/ carried from the build machine.
#   1. make gpu-test's grouped-query and decode shapes (tests/gpu/run.sh, GQA part only);
#   2. our flash at the decode points of the series' table (the split-KV kernel) and at GQA
#      prefill (default and large shapes, Hkv = H/4), CUDA events per forward;
#   3. the split-KV kernel called directly at those points, several split counts
#      (bench/decode_splits.py), and PyTorch's backends there, same run (bench/torch_gqa_decode.py);
#   4. two small archives for tests/fixtures/ (a GQA prefill and a decode, every variant, with
#      ceilings and counters).
# Everything lands under $OUT: the log, ours.csv, torch.log, fixtures.tgz.
source "$(dirname "$0")/lib.sh" gqa
bin=${ATTNPROF_BIN:-build/attnprof}
say "$(date -u +%FT%TZ) commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
gpu_state

say "gpu-test: grouped-query and decode shapes"
ATTNPROF_BIN=$bin GPU_TEST_ONLY=gqa bash tests/gpu/run.sh >>"$L" 2>&1; echo "rc=$?" >>"$L"

say "ours: decode points and GQA prefill, flash"
echo "point,B,Hq,Hkv,q_seq,S,D,variant,status,cuda_us_median,rel_error,splits" >"$OUT/ours.csv"
for spec in decode:16:32:8:1:8192:128 decode:64:32:8:1:4096:128 decode:1:32:8:1:131072:128 \
            decode:8:64:8:1:32768:128 decode:32:32:32:1:4096:128 decode:4:32:4:1:16384:64 \
            prefill:8:16:4:1024:1024:64 prefill:2:16:4:16384:16384:128; do
  IFS=: read -r kind B H HKV SQ S D <<<"$spec"
  dir="$W/$kind-$B-$H-$HKV-$S-$D"
  cudnn_torch "$bin" run --variants flash --batch "$B" --heads "$H" --kv-heads "$HKV" --q-seq "$SQ" --seq "$S" \
    --dim "$D" --iters 50 --warmup 5 --no-calibrate --no-counters --quiet -o "$dir" --format png >>"$L" 2>&1
  echo "rc=$? $spec" >>"$L"
  python3 - "$dir" "$spec" >>"$OUT/ours.csv" <<'PY'
import csv, json, sys
d, spec = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
for x in run["variants"]:
    r = rows.get(x["name"], {})
    sp = (x["facts"].get("split_count") or {}).get("number", "")
    print(",".join([spec.replace(":", ",")[0:], x["name"], x["status"], r.get("cuda_us_median", ""),
                    str(x.get("rel_error", "")), str(sp)]))
PY
done
cat "$OUT/ours.csv" >>"$L"

say "the split-KV kernel called directly: its error against FP32 SDPA and its time per split count"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/decode_splits.py build/libattnprof_recorder.so >"$OUT/splits.log" 2>&1
echo "rc=$?" >>"$L"; cat "$OUT/splits.log" >>"$L"

say "PyTorch: the same points, same run"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/torch_gqa_decode.py >"$OUT/torch.log" 2>&1; echo "rc=$?" >>"$L"
cat "$OUT/torch.log" >>"$L"

say "the default batch (8x16x1024x64, every variant, counters and ceilings): the recorder's steps as before"
if [ "${SKIP_DEFAULT:-0}" != 1 ]; then
  "$bin" run --iters 5 --warmup 2 -o "$W/default" --force -q >>"$L" 2>&1; echo "rc=$? default" >>"$L"
  python3 -c "import csv,sys; [print(r['variant'], r['status'], r['ops_per_forward'], r['expected_ops'], r['cuda_us_median']) for r in csv.DictReader(open(sys.argv[1]))]" "$W/default/summary.csv" >>"$L" 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('counters', r['counters']['status'], 'ceilings', r.get('ceilings', {}).get('measured'))" "$W/default/run.json" >>"$L" 2>&1
fi
[ "${SKIP_FIXTURES:-0}" = 1 ] && { ls -la "$OUT" >>"$L"; exit 0; }

say "fixtures: a GQA prefill and a decode archive, every variant"
cudnn_torch "$bin" run --batch 2 --heads 16 --kv-heads 4 --seq 512 --dim 64 --iters 5 --warmup 2 \
  -o "$W/h200-gqa" --force -q >>"$L" 2>&1; echo "rc=$? fixture gqa" >>"$L"
cudnn_torch "$bin" run --batch 4 --heads 32 --kv-heads 8 --q-seq 1 --seq 4096 --dim 128 --iters 5 --warmup 2 \
  -o "$W/h200-decode" --force -q >>"$L" 2>&1; echo "rc=$? fixture decode" >>"$L"
tar czf "$OUT/fixtures.tgz" -C "$W" h200-gqa/run.json h200-gqa/trace.json h200-gqa/summary.csv \
  h200-gqa/counters.json h200-decode/run.json h200-decode/trace.json h200-decode/summary.csv \
  h200-decode/counters.json 2>>"$L"
ls -la "$OUT" >>"$L"
