#!/usr/bin/env bash
# Issue 38's decode goal on the H200, one device call (bench/results/2026-12-04-decode-tma.md): from a
# project root holding build/ (attnprof, the recorder, build/bench/libdecode_probe.so), bench/ and
# tests/gpu/, after `source .devdeps/env.sh`.
#   1. bench/decode_tma.py: the device's copy and read rates; at the issue's points (and
#      8x32/8x131072) the cp.async and TMA split-KV kernels on both grids, the split kernel alone and
#      with its math left out, beside PyTorch's SDPA cuDNN and FA2, every output against FP32 SDPA;
#      odd shapes for correctness;
#   2. gpu-test's grouped-query and decode shapes (every variant against FP64, through attnprof);
#   3. ours (flash) and cuDNN (PyTorch's library) in one attnprof process per point, FP64-checked.
# SKIP_TMA=1, SKIP_GPU_TEST=1 and SKIP_POINTS=1 leave out steps 1, 2 and 3.
source "$(dirname "$0")/lib.sh" decode5
bin=${ATTNPROF_BIN:-build/attnprof}
say "$(date -u +%FT%TZ) commit ${COMMIT:-unknown}"
gpu_state

say "decode_tma.py"
[ "${SKIP_TMA:-0}" = 1 ] || PYTHONUNBUFFERED=1 timeout "${TMA_TIMEOUT:-200}" python3 bench/decode_tma.py \
  build/bench/libdecode_probe.so >"$OUT/tma.log" 2>&1
rc=$?
echo "rc=$rc decode_tma" >>"$L"
# A kernel that hangs (an mbarrier never completing) would hang every later step too.
[ "$rc" = 124 ] && { say "decode_tma.py timed out: stopping"; exit 1; }

say "gpu-test: grouped-query and decode shapes"
[ "${SKIP_GPU_TEST:-0}" = 1 ] || cudnn_torch env ATTNPROF_BIN=$bin GPU_TEST_ONLY=gqa timeout 150 bash tests/gpu/run.sh \
  >"$OUT/gpu-test.log" 2>&1
echo "rc=$? gpu-test" >>"$L"

say "ours and cuDNN in one attnprof run per point"
echo "B,Hq,Hkv,q_seq,S,D,variant,status,cuda_us_median,rel_error,ops,expected,kernels,grid,splits,gbps" >"$OUT/ours.csv"
first=""
for spec in ${POINTS:-16:32:8:1:8192:128 64:32:8:1:4096:128 1:32:8:1:131072:128 8:64:8:1:32768:128 \
            32:32:32:1:4096:128 4:32:4:1:16384:64 8:32:8:1:131072:128 2:32:8:4:16384:128}; do
  [ "${SKIP_POINTS:-0}" = 1 ] && break
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
say "done"
