#!/usr/bin/env bash
# Ours (flash) and cuDNN (PyTorch's library) in one attnprof process per decode point, FP64-checked, into
# $OUT/ours.csv (one row per variant: time, error, operations against the prediction, kernels, grid,
# split count, K+V rate). Sourced by the decode device scripts after bench/lib.sh (OUT, W, L, say,
# cudnn_torch); POINTS (B:Hq:Hkv:q_seq:S:D, space-separated) and ITERS override the defaults.
bin=${ATTNPROF_BIN:-build/attnprof}
echo "B,Hq,Hkv,q_seq,S,D,variant,status,cuda_us_median,rel_error,ops,expected,kernels,grid,splits,gbps" >"$OUT/ours.csv"
first=""
for spec in ${POINTS:-16:32:8:1:8192:128 64:32:8:1:4096:128 1:32:8:1:131072:128 8:64:8:1:32768:128 \
            32:32:32:1:4096:128 4:32:4:1:16384:64 8:32:8:1:131072:128 2:32:8:4:16384:128}; do
  IFS=: read -r B H HKV SQ S D <<<"$spec"
  dir="$W/point-$B-$H-$HKV-$SQ-$S-$D"
  if [ -z "$first" ]; then cal=(); first=$dir; else cal=(--ceilings-from "$first"); fi
  cudnn_torch timeout 60 "$bin" run --variants flash,cudnn --batch "$B" --heads "$H" --kv-heads "$HKV" --q-seq "$SQ" \
    --seq "$S" --dim "$D" --iters "${ITERS:-50}" --warmup 5 --no-counters "${cal[@]}" --quiet -o "$dir" --format png \
    >>"$L" 2>&1
  echo "rc=$? $spec" >>"$L"
  python3 - "$dir" "$spec" >>"$OUT/ours.csv" 2>>"$L" <<'PY'
import csv, json, sys
d, spec = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
fj = {v["variant"]: v["findings"] for v in json.load(open(f"{d}/findings.json"))["variants"]}
kern = {}
for k in csv.DictReader(open(f"{d}/kernels.csv")):
    if k["pass"] == "0" and k["iteration"] == "0":
        kern.setdefault(k["variant"], []).append(k["name"][:60])
for x in run["variants"]:
    r, f = rows.get(x["name"], {}), x.get("facts", {})
    g = (f.get("decode_grid") or {}).get("text", "").split(":")[0]
    sp = (f.get("split_count") or {}).get("number", "")
    bw = [h for h in fj.get(x["name"], []) if h["id"] == "decode_bandwidth"]
    n = bw[0]["numbers"] if bw else {}
    val = lambda k: f"{n[k]['value']:.0f}" if k in n else ""
    print(",".join([spec.replace(":", ","), x["name"], x["status"], r.get("cuda_us_median", ""),
                    str(x.get("rel_error", "")), r.get("ops_per_forward", ""), r.get("expected_ops", ""),
                    "+".join(kern.get(x["name"], [])), g, str(sp), val("gbps")]))
PY
done
cat "$OUT/ours.csv" >>"$L"
