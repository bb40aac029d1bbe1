#!/usr/bin/env bash
# Issue 38 on the H200, one device run (bench/results/2026-12-03-decode.md): from a project root
# holding build/ (attnprof, the recorder), bench/ and tests/gpu/, after `source .devdeps/env.sh`.
#   1. gpu-test's grouped-query and decode shapes (every variant against FP64; cudnn's predicted
#      operations at q_seq = 1 among them);
#   2. the issue's two commands, all six variants, the default stop rule and ceilings;
#   3. ours (flash) and cuDNN (PyTorch's library) in one attnprof process at the six decode points,
#      the ceilings of the first point passed on (--ceilings-from), so decode_bandwidth sets each
#      against the copy ceiling of this run;
#   4. PyTorch's six variants with enable_gqa at the same points (bench/torch_gqa_decode.py);
#   5. the two fixtures re-recorded (tests/fixtures/h200-gqa, h200-decode).
# SKIP_GPU_TEST=1, SKIP_TORCH=1 and SKIP_FIXTURES=1 leave out steps 1, 4 and 5.
source "$(dirname "$0")/lib.sh" decode3
bin=${ATTNPROF_BIN:-build/attnprof}
say "$(date -u +%FT%TZ) commit ${COMMIT:-unknown}"
gpu_state

say "gpu-test: grouped-query and decode shapes"
[ "${SKIP_GPU_TEST:-0}" = 1 ] || cudnn_torch env ATTNPROF_BIN=$bin GPU_TEST_ONLY=gqa timeout 120 bash tests/gpu/run.sh >>"$L" 2>&1
echo "rc=$? gpu-test" >>"$L"

# The findings and summary of an archive, one line each, into the log.
digest() {
  python3 - "$1" <<'PY' >>"$L" 2>&1
import csv, json, sys
d = sys.argv[1]
run = json.load(open(f"{d}/run.json"))
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
fj = {v["variant"]: v["findings"] for v in json.load(open(f"{d}/findings.json"))["variants"]}
for x in run["variants"]:
    r, f = rows.get(x["name"], {}), x.get("facts", {})
    print(f"  {x['name']}: {x['status']} cuda_us {r.get('cuda_us_median','')} ops {r.get('ops_per_forward','')}"
          f" expected {r.get('expected_ops','')} rel_err {x.get('rel_error','')} {x.get('error','')[:160]}")
    for g in fj.get(x["name"], []):
        if g["id"] in ("kv_expansion", "decode_bandwidth", "decode_split", "unexpected_op_count", "fused_kernel"):
            print(f"    {g['id']} {g['severity']}: {g['text'][:300]}")
PY
}

say "the issue's two commands, all six variants"
for args in "--heads 32 --kv-heads 8" "--q-seq 1 --seq 8192 --heads 32 --kv-heads 8 --dim 128 --batch 16"; do
  dir="$W/issue-$(echo "$args" | tr -dc 'a-z0-9')"
  cudnn_torch timeout 90 "$bin" run $args --no-counters --quiet -o "$dir" --format png >>"$L" 2>&1
  echo "rc=$? run $args" >>"$L"
  digest "$dir"
done

say "ours and cuDNN in one attnprof run per point"
echo "B,Hq,Hkv,q_seq,S,D,variant,status,cuda_us_median,rel_error,ops,expected,grid,splits,gbps,ceiling_gbps" >"$OUT/ours.csv"
first=""
for spec in 16:32:8:1:8192:128 64:32:8:1:4096:128 1:32:8:1:131072:128 8:64:8:1:32768:128 32:32:32:1:4096:128 \
            4:32:4:1:16384:64 2:32:8:4:16384:128; do
  IFS=: read -r B H HKV SQ S D <<<"$spec"
  dir="$W/point-$B-$H-$HKV-$SQ-$S-$D"
  if [ -z "$first" ]; then cal=(); first=$dir; else cal=(--ceilings-from "$first"); fi
  cudnn_torch timeout 60 "$bin" run --variants flash,cudnn --batch "$B" --heads "$H" --kv-heads "$HKV" --q-seq "$SQ" \
    --seq "$S" --dim "$D" --iters "${ITERS:-50}" --warmup 5 --no-counters "${cal[@]}" --quiet -o "$dir" --format png >>"$L" 2>&1
  echo "rc=$? $spec" >>"$L"
  python3 - "$dir" "$spec" >>"$OUT/ours.csv" 2>>"$L" <<'PY'
import csv, json, sys
d, spec = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
fj = {v["variant"]: v["findings"] for v in json.load(open(f"{d}/findings.json"))["variants"]}
for x in run["variants"]:
    r, f = rows.get(x["name"], {}), x.get("facts", {})
    g = (f.get("decode_grid") or {}).get("text", "").split(":")[0]
    sp = (f.get("split_count") or {}).get("number", "")
    bw = [h for h in fj.get(x["name"], []) if h["id"] == "decode_bandwidth"]
    n = bw[0]["numbers"] if bw else {}
    val = lambda k: f"{n[k]['value']:.0f}" if k in n else ""
    print(",".join([spec.replace(":", ","), x["name"], x["status"], r.get("cuda_us_median", ""),
                    str(x.get("rel_error", "")), r.get("ops_per_forward", ""), r.get("expected_ops", ""), g, str(sp),
                    val("gbps"), val("ceiling_gbps")]))
PY
done
cat "$OUT/ours.csv" >>"$L"

say "PyTorch's six variants with enable_gqa"
[ "${SKIP_TORCH:-0}" = 1 ] || PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_gqa_decode.py >"$OUT/torch.log" 2>&1
echo "rc=$? torch" >>"$L"; cat "$OUT/torch.log" >>"$L" 2>/dev/null

[ "${SKIP_FIXTURES:-0}" = 1 ] && { say "done"; exit 0; }
say "fixtures"
cudnn_torch timeout 40 "$bin" run --batch 2 --heads 16 --kv-heads 4 --seq 512 --dim 64 --iters 5 --warmup 2 \
  -o "$W/h200-gqa" --force -q >>"$L" 2>&1; echo "rc=$? fixture gqa" >>"$L"; digest "$W/h200-gqa"
cudnn_torch timeout 40 "$bin" run --batch 4 --heads 32 --kv-heads 8 --q-seq 1 --seq 4096 --dim 128 --iters 5 --warmup 2 \
  -o "$W/h200-decode" --force -q >>"$L" 2>&1; echo "rc=$? fixture decode" >>"$L"; digest "$W/h200-decode"
tar czf "$OUT/fixtures.tgz" -C "$W" h200-gqa/run.json h200-gqa/trace.json h200-gqa/summary.csv \
  h200-gqa/counters.json h200-decode/run.json h200-decode/trace.json h200-decode/summary.csv \
  h200-decode/counters.json 2>>"$L"
tar czf "$OUT/archives.tgz" -C "$W" --exclude='*/figures' --exclude='*.html' --exclude='*.tex' --exclude='*.pdf' \
  $(cd "$W" && ls -d issue-* point-*) 2>>"$L"
say "done"
