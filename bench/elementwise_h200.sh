#!/usr/bin/env bash
# Issue 40, items 5 and 6, in one device call on the H200 (2026-12-03, helper flash3), from the
# project root after `source .devdeps/env.sh`. Carried in .gpu-flash3/ (b.tar.xz, stripped,
# sm_90 only): after/ = this branch's attnprof, recorder and bench/elementwise_bench;
# before/ = the same three built from main at 62127ee.
# 1. the elementwise kernels against the copy and write-only ceilings, before and after,
#    alternating (each binary measures its own ceilings in the same process);
# 2. the default batch with each recorder, alternating, for the CUPTI overhead probe's
#    numbers (run.json event_us_no_cupti / event_us_cupti) and the naive variants' times;
# 3. compute-sanitizer memcheck and racecheck of the changed kernels (elementwise_bench --once);
# 4. tests/gpu/run.sh on a subset of its shapes (odd S, decode and grouped-query among them).
source "$(dirname "$0")/lib.sh" flash3
G=$(dirname "$0")
mkdir -p /tmp/f3 && tar xJf "$G/b.tar.xz" -C /tmp/f3
A=/tmp/f3/after B=/tmp/f3/before
say "$(date -u +%FT%TZ) flash3 elementwise + overhead"
gpu_state
say "1. elementwise kernels"
$B/elementwise_bench 8x16x1024 4x16x4096 2x16x8192 1x16x16384 >"$OUT/ew-before-1.txt" 2>&1
$A/elementwise_bench 8x16x1024 4x16x4096 2x16x8192 1x16x16384 >"$OUT/ew-after-1.txt" 2>&1
$B/elementwise_bench >"$OUT/ew-before-2.txt" 2>&1
$A/elementwise_bench >"$OUT/ew-after-2.txt" 2>&1
say "2. default batch, CUPTI overhead probe, before/after alternating"
for r in 1 2; do
  for side in before after; do
    d=$B; [ $side = after ] && d=$A
    cudnn_torch "$d/attnprof" run --no-counters --no-calibrate -q -o "$W/oh-$side-$r" --force >>"$L" 2>&1
    echo "rc=$? $side $r" >>"$L"
    python3 - "$W/oh-$side-$r" "$side-$r" >>"$OUT/overhead.txt" 2>&1 <<'PY'
import csv, json, sys
d, tag = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
for x in run["variants"]:
    off, on = x.get("event_us_no_cupti"), x.get("event_us_cupti")
    hold = (x["facts"].get("overhead_probe_hold_us") or {}).get("text", "-")
    smp = (x["facts"].get("overhead_probe_samples") or {}).get("text", "-")
    r = rows.get(x["name"], {})
    print(f"{tag} {x['name']} status={x['status']} cuda_us={r.get('cuda_us_median')} rel={r.get('rel_error')} "
          f"event_off={off} event_on={on} overhead={100*(on/off-1) if off and on else float('nan'):+.2f}% "
          f"host_off={x.get('host_us_no_cupti')} host_on={x.get('host_us_cupti')} | {smp} | {hold}")
PY
  done
done
say "3. compute-sanitizer"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
$CS --tool memcheck --error-exitcode 9 $A/elementwise_bench --once 2x3x77 1x2x1000 1x1x4096 1x1x6000 1x1x12000 \
  >"$OUT/sanitizer.txt" 2>&1; echo "memcheck rc=$?" >>"$OUT/sanitizer.txt"
$CS --tool racecheck --error-exitcode 9 $A/elementwise_bench --once 1x1x4096 1x1x6000 \
  >>"$OUT/sanitizer.txt" 2>&1; echo "racecheck rc=$?" >>"$OUT/sanitizer.txt"
say "4. gpu-test subset"
GPU_TEST_SHAPES="2x3x77x64 2x4x1000x64 1x2x3000x64 1x2x4096x128 2x2x190x80" \
GPU_TEST_GQA_SHAPES="2:8:2:1:1001:128 2:8:2:333:333:64 1:16:16:77:1000:80 1:8:1:129:4096:128" \
  ATTNPROF_BIN=$A/attnprof cudnn_torch bash tests/gpu/run.sh >"$OUT/gputest.txt" 2>&1
echo "gpu-test rc=$?" >>"$OUT/gputest.txt"
say "done"
(cd "$W" && tar czf "$OUT/runjson.tgz" oh-*/run.json oh-*/summary.csv)
ls -la "$OUT"
