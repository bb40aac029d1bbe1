#!/usr/bin/env bash
# The split-KV decode grid as the recorder's default, and cuDNN's GQA/decode graph, on the H200 in
# one device run: from a project root holding build/ (attnprof, the recorder), bench/ and tests/gpu/,
# after `source .devdeps/env.sh`.
#   1. gpu-test's grouped-query and decode shapes (every variant against FP64);
#   2. `attnprof run --variants flash,cudnn` at the six decode points and two GQA prefill shapes
#      (Hkv = H/4): ours and cuDNN (PyTorch's cuDNN library) in the same attnprof process, CUDA
#      events per forward, each checked against FP64;
#   3. bench/decode_balanced.py: both grids called directly beside PyTorch's cuDNN and flash;
#   4. the two fixtures re-recorded (tests/fixtures/h200-gqa, h200-decode).
# SKIP_GPU_TEST=1, SKIP_DIRECT=1 and SKIP_FIXTURES=1 leave out steps 1, 3 and 4; ITERS (50) sets
# the forwards of step 2.
source "$(dirname "$0")/lib.sh" decode2
bin=${ATTNPROF_BIN:-build/attnprof}
say "$(date -u +%FT%TZ) commit ${COMMIT:-unknown}"
gpu_state

say "gpu-test: grouped-query and decode shapes"
[ "${SKIP_GPU_TEST:-0}" = 1 ] || ATTNPROF_BIN=$bin GPU_TEST_ONLY=gqa timeout 110 bash tests/gpu/run.sh >>"$L" 2>&1; echo "rc=$? gpu-test" >>"$L"

say "ours and cuDNN in one attnprof run per point"
echo "point,B,Hq,Hkv,q_seq,S,D,variant,status,cuda_us_median,rel_error,ops,expected,grid,splits,engine" >"$OUT/ours.csv"
for spec in decode:16:32:8:1:8192:128 decode:64:32:8:1:4096:128 decode:1:32:8:1:131072:128 \
            decode:8:64:8:1:32768:128 decode:32:32:32:1:4096:128 decode:4:32:4:1:16384:64 \
            decode:2:32:8:4:16384:128 prefill:8:16:4:1024:1024:64 prefill:2:16:4:16384:16384:128; do
  IFS=: read -r kind B H HKV SQ S D <<<"$spec"
  dir="$W/$kind-$B-$H-$HKV-$SQ-$S-$D"
  cudnn_torch timeout 60 "$bin" run --variants flash,cudnn --batch "$B" --heads "$H" --kv-heads "$HKV" --q-seq "$SQ" \
    --seq "$S" --dim "$D" --iters "${ITERS:-50}" --warmup 5 --no-calibrate --no-counters --quiet -o "$dir" --format png >>"$L" 2>&1
  echo "rc=$? $spec" >>"$L"
  python3 - "$dir" "$spec" >>"$OUT/ours.csv" 2>>"$L" <<'PY'
import csv, json, sys
d, spec = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
for x in run["variants"]:
    r, f = rows.get(x["name"], {}), x.get("facts", {})
    g = (f.get("decode_grid") or {}).get("text", "").split(":")[0]
    sp = (f.get("split_count") or {}).get("number", "")
    eng = (f.get("engine_id") or {}).get("text", "") or x.get("error", "")[:200]
    print(",".join([spec.replace(":", ","), x["name"], x["status"], r.get("cuda_us_median", ""),
                    str(x.get("rel_error", "")), r.get("ops_per_forward", ""), r.get("expected_ops", ""), g, str(sp),
                    '"' + eng.replace('"', "'") + '"']))
PY
done
cat "$OUT/ours.csv" >>"$L"

say "both grids called directly, beside PyTorch's cuDNN and flash"
[ "${SKIP_DIRECT:-0}" = 1 ] || PYTHONUNBUFFERED=1 timeout 100 python3 bench/decode_balanced.py build/libattnprof_recorder.so >"$OUT/balanced.log" 2>&1
echo "rc=$? balanced" >>"$L"; cat "$OUT/balanced.log" >>"$L"

[ "${SKIP_FIXTURES:-0}" = 1 ] && { say "done"; exit 0; }
say "fixtures"
cudnn_torch timeout 40 "$bin" run --batch 2 --heads 16 --kv-heads 4 --seq 512 --dim 64 --iters 5 --warmup 2 \
  -o "$W/h200-gqa" --force -q >>"$L" 2>&1; echo "rc=$? fixture gqa" >>"$L"
cudnn_torch timeout 40 "$bin" run --batch 4 --heads 32 --kv-heads 8 --q-seq 1 --seq 4096 --dim 128 --iters 5 --warmup 2 \
  -o "$W/h200-decode" --force -q >>"$L" 2>&1; echo "rc=$? fixture decode" >>"$L"
tar czf "$OUT/fixtures.tgz" -C "$W" h200-gqa/run.json h200-gqa/trace.json h200-gqa/summary.csv \
  h200-gqa/counters.json h200-decode/run.json h200-decode/trace.json h200-decode/summary.csv \
  h200-decode/counters.json 2>>"$L"
say "done"
