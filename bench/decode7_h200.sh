#!/usr/bin/env bash
# Issue 38 on the H200 (bench/results/2026-12-04-decode-ring.md): what the split-KV stream wants, from a
# project root holding build/ (attnprof, the recorder, build/bench/libdecode_probe.so) and bench/, after
# `source .devdeps/env.sh`.
#   1. bench/decode_tma.py with RING=1: at the decode points the recorder's TMA ring beside other ring
#      depths and chunk sizes, the tensor maps' L2 promotion and other split counts, beside PyTorch's
#      SDPA cuDNN, every output against FP32 SDPA;
#   2. gpu-test's grouped-query and decode shapes (tests/gpu/run.sh), then ours (flash) and cuDNN in one
#      attnprof process per point, FP64-checked (bench/decode_points.sh);
#   3. GQA prefill (Hkv = H/4, causal) through attnprof (flash, cudnn) and PyTorch's backends in the same
#      run (bench/torch_gqa_decode.py);
#   4. the default batch (every variant): the CUPTI overhead probe's states per variant in run.json.
# SKIP_RING=1, SKIP_CHECK=1 (the odd shapes and memcheck), SKIP_GPU_TEST=1, SKIP_POINTS=1, SKIP_PREFILL=1 and SKIP_DEFAULT=1 leave out steps 1 to 4.
source "$(dirname "$0")/lib.sh" decode7
bin=${ATTNPROF_BIN:-build/attnprof}
say "$(date -u +%FT%TZ) commit ${COMMIT:-unknown}"
gpu_state

say "decode_tma.py, the ring study"
[ "${SKIP_RING:-0}" = 1 ] || RING=1 PYTHONUNBUFFERED=1 timeout "${RING_TIMEOUT:-200}" python3 bench/decode_tma.py \
  build/bench/libdecode_probe.so >"$OUT/ring.log" 2>&1
rc=$?
echo "rc=$rc ring" >>"$L"
[ "$rc" = 124 ] && { say "the ring study timed out: stopping"; exit 1; }

say "correctness at the ten odd shapes (every candidate), then compute-sanitizer memcheck at five"
if [ "${SKIP_CHECK:-0}" != 1 ]; then
  CHECK_ONLY=1 CHECK_SHAPES=10 PYTHONUNBUFFERED=1 timeout 120 python3 bench/decode_tma.py build/bench/libdecode_probe.so \
    >"$OUT/check.log" 2>&1
  echo "rc=$? check" >>"$L"
  CHECK_ONLY=1 PYTHONUNBUFFERED=1 timeout 150 compute-sanitizer --tool memcheck --print-limit 20 python3 \
    bench/decode_tma.py build/bench/libdecode_probe.so >"$OUT/sanitize.log" 2>&1
  echo "rc=$? sanitize" >>"$L"
fi

say "gpu-test: grouped-query and decode shapes (every variant against FP64)"
[ "${SKIP_GPU_TEST:-0}" = 1 ] || cudnn_torch env ATTNPROF_BIN=$bin GPU_TEST_ONLY=gqa timeout 150 bash tests/gpu/run.sh \
  >"$OUT/gpu-test.log" 2>&1
echo "rc=$? gpu-test" >>"$L"

say "ours and cuDNN in one attnprof run per point"
[ "${SKIP_POINTS:-0}" = 1 ] || source bench/decode_points.sh

say "GQA prefill: attnprof flash and cudnn, then PyTorch"
if [ "${SKIP_PREFILL:-0}" != 1 ]; then
  echo "B,Hq,Hkv,S,D,variant,status,cuda_us_median,rel_error" >"$OUT/prefill.csv"
  for spec in 8:16:4:1024:64 2:16:4:16384:128 4:16:4:4096:128; do
    IFS=: read -r B H HKV S D <<<"$spec"
    dir="$W/prefill-$B-$H-$HKV-$S-$D"
    cudnn_torch timeout 120 "$bin" run --variants flash,cudnn --batch "$B" --heads "$H" --kv-heads "$HKV" --seq "$S" \
      --dim "$D" --iters 30 --warmup 5 --no-counters --quiet -o "$dir" --format png >>"$L" 2>&1
    echo "rc=$? prefill $spec" >>"$L"
    python3 - "$dir" "$spec" >>"$OUT/prefill.csv" 2>>"$L" <<'PY'
import csv, json, sys
d, spec = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
for x in run["variants"]:
    r = rows.get(x["name"], {})
    print(",".join([spec.replace(":", ","), x["name"], x["status"], r.get("cuda_us_median", ""),
                    str(x.get("rel_error", ""))]))
PY
  done
  cat "$OUT/prefill.csv" >>"$L"
  PYTHONUNBUFFERED=1 timeout 240 python3 bench/torch_gqa_decode.py >"$OUT/torch.log" 2>&1
  echo "rc=$? torch" >>"$L"
fi

say "the default batch: the CUPTI overhead probe per variant"
if [ "${SKIP_DEFAULT:-0}" != 1 ]; then
  cudnn_torch timeout 150 "$bin" run -o "$W/default" --force -q >>"$L" 2>&1; echo "rc=$? default" >>"$L"
  python3 - "$W/default/run.json" >>"$L" 2>&1 <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for x in run["variants"]:
    o = {k: v for k, v in x.items() if k.startswith("event_us") or "overhead" in k}
    print(x["name"], x["status"], json.dumps(o))
PY
fi
say "done"
