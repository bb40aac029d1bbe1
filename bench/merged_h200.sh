#!/usr/bin/env bash
# The merged tree on the H200 in one device call: what each branch checked alone, checked together,
# and each issue's "Done when" command as a user types it. About 300 s of device time.
# On the build machine, from the project root (sm_90 only, stripped: the whole build/ is too big to carry):
#   bash bench/merged_h200.sh --stage      -> .gpu-merged/ (attnprof, the recorder, fused_bench,
#                                             bwd_tc_bench, COMMIT)
#   bash ../shared/device/prepare.sh       -> .devdeps/ (once per machine)
# Then one call carrying both (carry [".gpu-merged", ".devdeps"]):
#   source .devdeps/env.sh && bash bench/merged_h200.sh
#   1. `make gpu-test`'s script in full (tests/gpu/run.sh): every variant against FP64 at its shapes,
#      the grouped-query/decode and backward parts, the fused kernels' and the tensor-core backward's
#      own checks (pass/fail counts at the end of gpu-test.log);
#   2. issue 38's two commands (`run --heads 32 --kv-heads 8`; the decode step), every variant's status,
#      CUDA µs and error, and the decode findings' sentences;
#   3. issue 39's: the default batch with `--backward`, its wall time (the goal: under 30 s) and each
#      variant's three gradient errors;
#   4. the default batch: the CUPTI overhead probe's states per variant (issue 40 item 6).
# The summary (summary.txt) is what to read first; the archives are not kept (size), their run.json are.
# SKIP_GPU_TEST=1 leaves out step 1.
G=${G:-.gpu-merged}
staged=(attnprof libattnprof_recorder.so fused_bench bwd_tc_bench)
if [ "${1:-}" = --stage ]; then
  cd "$(dirname "$0")/.." || exit 1
  B=build-merged
  make -j2 --no-print-directory BUILD=$B CUDA_ARCH='-gencode arch=compute_90,code=sm_90' \
    "${staged[@]/#/$B/}" || exit 1
  rm -rf "$G" && mkdir -p "$G" || exit 1
  for f in "${staged[@]}"; do
    cp "$B/$f" "$G/$f" && strip "$G/$f" || exit 1
  done
  echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- kernels src bench tests || echo '+changes')" >"$G/COMMIT"
  du -sh "$G"
  exit 0
fi

source "$(dirname "$0")/lib.sh" merged
for f in "${staged[@]}"; do
  [ -f "$G/$f" ] || { say "no $G/$f: run bash bench/merged_h200.sh --stage first"; exit 2; }
done
COMMIT=$(cat "$G/COMMIT" 2>/dev/null || echo unknown)
bin=$G/attnprof
S=$OUT/summary.txt
say "$(date -u +%FT%TZ) build $COMMIT"
gpu_state

if [ "${SKIP_GPU_TEST:-0}" != 1 ]; then
  say "gpu-test in full"
  cudnn_torch env ATTNPROF_BIN=$bin FUSED_BENCH=$G/fused_bench BWD_TC_BENCH=$G/bwd_tc_bench timeout 330 \
    bash tests/gpu/run.sh >"$OUT/gpu-test.log" 2>&1
  echo "gpu-test rc=$? $(tail -1 "$OUT/gpu-test.log")" | tee -a "$L" >>"$S"
fi

# Each run's variants as one line apiece: status, CUDA median, error, then the findings' sentences.
report_run() {
  python3 - "$1" "$2" <<'PY'
import csv, json, os, sys
d, label = sys.argv[1], sys.argv[2]
if not os.path.exists(f"{d}/run.json"):
    print(f"{label}: no archive"); sys.exit(0)
run = json.load(open(f"{d}/run.json"))
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))} if os.path.exists(f"{d}/summary.csv") else {}
print(f"{label}:")
for x in run["variants"]:
    r, b = rows.get(x["name"], {}), x.get("backward") or {}
    line = f"  {x['name']:14} {x['status']:8} cuda_us {r.get('cuda_us_median', '-'):>10} err {x.get('rel_error', '-')}"
    if b:
        line += f"  bwd {b.get('status')} dq/dk/dv {b.get('rel_error_dq')}/{b.get('rel_error_dk')}/{b.get('rel_error_dv')}"
    o = {k: v for k, v in x.items() if "overhead" in k}
    print(line + (f"  {json.dumps(o)}" if o else ""))
if os.path.exists(f"{d}/findings.json"):  # findings.json: {"variants": [{"variant", "findings": [{"id", "text"}]}]}
    for v in json.load(open(f"{d}/findings.json"))["variants"]:
        for x in v["findings"]:
            if x["id"].startswith(("kv_expansion", "decode_", "bwd_inplace", "kernel_arch", "cupti_overhead")):
                print(f"  finding {x['id']} {v['variant']}: {x['text']}")
PY
}

one_run() { # label, args...
  local label=$1; shift
  local dir="$W/$label" t0 t1
  t0=$(date +%s.%N)
  cudnn_torch timeout 240 "$bin" run "$@" --force -q -o "$dir" >>"$L" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  echo "$label: rc=$rc wall $(python3 -c "print(round($t1 - $t0, 1))") s" | tee -a "$L" >>"$S"
  report_run "$dir" "$label" >>"$S" 2>&1
  mkdir -p "$OUT/$label" && cp "$dir/run.json" "$OUT/$label/" 2>/dev/null
}

say "issue 38's commands"
one_run gqa --heads 32 --kv-heads 8
one_run decode --q-seq 1 --seq 8192 --heads 32 --kv-heads 8 --dim 128 --batch 16
say "issue 39's: the default batch with --backward"
one_run backward --backward
say "the default batch"
one_run default
cat "$S" | tee -a "$L"
say "done"
