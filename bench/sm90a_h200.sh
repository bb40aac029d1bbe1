#!/usr/bin/env bash
# The device run behind bench/RESULTS.md "flash on Hopper": the batch's flash and cudnn rows
# (CUPTI kernel time) at both goal shapes, twice; the fused kernels' FP64 check (sm_90a causal
# and non-causal); compute-sanitizer memcheck and racecheck; then make gpu-test's script.
# Needs the GPU machine and the runtime packages of ../shared/device/prepare.sh:
#   source .devdeps/env.sh && bash bench/sm90a_h200.sh      (logs under $OUT)
# SANITIZE_KERNELS=NAME checks only the kernels whose name contains NAME.
source "$(dirname "$0")/lib.sh" sm90a
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
row() { python3 - "$1" <<'PY'
import csv, json, sys
d = sys.argv[1]
run = json.load(open(f"{d}/run.json"))
for r in csv.DictReader(open(f"{d}/summary.csv")):
    v = next(x for x in run["variants"] if x["name"] == r["variant"])
    k = (v["facts"].get("kernel") or {}).get("text", "")
    print(f"{d.rsplit('/', 1)[-1]:>8} {r['variant']:>6} {r['status']:>4} cuda {float(r['cuda_us_median'] or 'nan'):8.1f} us"
          f"  rel.err {float(r['rel_error'] or 'nan'):.1e}  {k}")
PY
}
for rep in 1 2; do
  cudnn_torch timeout 60 build/attnprof run --variants flash,cudnn --no-counters --no-calibrate --iters 20 -q \
    -o "$W/small-$rep" --force --format png > "$OUT/run-small-$rep.txt" 2>&1; row "$W/small-$rep"
  cudnn_torch timeout 60 build/attnprof run --variants flash,cudnn --no-counters --no-calibrate --iters 10 -q \
    --batch 4 --seq 4096 --dim 128 -o "$W/large-$rep" --force --format png > "$OUT/run-large-$rep.txt" 2>&1
  row "$W/large-$rep"
done
cudnn_torch timeout 60 build/attnprof run --variants flash,cudnn --no-counters --no-calibrate --iters 10 -q \
  --batch 2 --seq 4096 --dim 256 -o "$W/d256" --force --format png > "$OUT/run-d256.txt" 2>&1; row "$W/d256"
# The other compiled head dims against cuDNN at 4x16x4096 (80 runs the d96 kernel, padded).
for d in 32 80 96; do
  cudnn_torch timeout 60 build/attnprof run --variants flash,cudnn --no-counters --no-calibrate --iters 10 -q \
    --batch 4 --seq 4096 --dim $d -o "$W/d$d" --force --format png > "$OUT/run-d$d.txt" 2>&1; row "$W/d$d"
done
tar czf "$OUT/archives.tgz" -C "$W" small-1 small-2 large-1 large-2 d256 d32 d80 d96 2>/dev/null
timeout 150 build/fused_bench --check > "$OUT/fused_check.txt" 2>&1
echo "fused_bench --check rc $?: $(grep -c ' ok$' "$OUT/fused_check.txt") ok," \
  "$(grep -c 'sm90a.*noncausal.* ok$' "$OUT/fused_check.txt") sm_90a non-causal ok; $(grep correctness "$OUT/fused_check.txt")"
grep FAIL "$OUT/fused_check.txt" | head
# SANITIZE=0 leaves compute-sanitizer for a run of its own (racecheck alone can take minutes).
for tool in $([ "${SANITIZE:-1}" = 0 ] || echo memcheck racecheck); do
  timeout 400 compute-sanitizer --tool $tool --error-exitcode 3 build/fused_bench --sanitize ${SANITIZE_KERNELS:-} > "$W/sanitize_$tool.txt" 2>&1
  echo "compute-sanitizer $tool rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/sanitize_$tool.txt" | head -2 | tr '\n' ' ')"
  # Where a hazard is, in a few lines (the whole log is in logs.tgz).
  grep -E "^========= (Error|Warning|Race)|^=========     (at|in) " "$W/sanitize_$tool.txt" | sort | uniq -c | sort -rn | head -8
done
ATTNPROF_BIN=build/attnprof FUSED_BENCH= timeout 170 bash tests/gpu/run.sh > "$W/gpu_test.txt" 2>&1
echo "gpu-test rc $?"; grep -E "FAIL|passed" "$W/gpu_test.txt" | tail -15
# Ours against PyTorch's flash and cuDNN, every sm_90a configuration incl. the bench-only
# ones (build here first: make build/bench/libflash_sm90a.so; carry build).
if [ -f build/bench/libflash_sm90a.so ]; then
  timeout 200 python3 bench/flash_sm90a_torch.py build/bench/libflash_sm90a.so all > "$W/torch.txt" 2>&1
  echo "flash_sm90a_torch.py rc $?"; grep -E "check:|FAIL|^[0-9]+x|attnprof_|torch (flash|cudnn)" "$W/torch.txt" |
    grep -vE "smem|^\| [0-9]+x" | head -60
fi
# The device tool returns at most 8 files: the logs travel as one archive.
tar czf "$OUT/logs.tgz" -C "$W" sanitize_memcheck.txt sanitize_racecheck.txt gpu_test.txt torch.txt 2>/dev/null
