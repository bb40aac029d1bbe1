#!/usr/bin/env bash
# Issue 40 item 5, the long-row staged softmax (kernels/softmax_staged.cu, helper elem7): ONE device
# call that checks it first and times it after, on one H200. The kernels have never run on a GPU and
# are off by default; ATTNPROF_SOFTMAX_STAGED=1 (attnprof) or softmax_staged_set (the benches)
# switches them on. bench/results/2026-12-04-elementwise3-pending.md says what they are and what
# this call must show before they become the default.
#
# On the build machine, from the project root (about 10 minutes on 2 cores; sm_90 only, stripped):
#   bash bench/elementwise3_h200.sh --stage        -> .gpu-elementwise3/ (attnprof, the recorder,
#                                                     elementwise_bench, softmax_probe, COMMIT)
#   bash ../shared/device/prepare.sh               -> .devdeps/ (once per machine)
# Then one device call, carrying both (carry [".gpu-elementwise3", ".devdeps"]):
#   source .devdeps/env.sh && bash bench/elementwise3_h200.sh      (about 155 s; each step has a timeout,
#   and none starts once BUDGET seconds, default 230, have passed: it logs "skipped (budget)")
#
# Steps (logs under $OUT, the archives' run.json, summary.csv and kernels.csv in $OUT/archives.tgz):
#   1. attnprof run --variants naive,naive_inplace,math (FP64-checked) at 1x16x16384x64,
#      2x16x8192x64 and 8x16x1024x64 with the staged kernels on, then at the two long shapes off;
#      tests/gpu/run.sh with them on at shapes that take every staged configuration (odd, decode).
#   2. compute-sanitizer memcheck, racecheck and synccheck of elementwise_bench --once ROWSxCOLS: the
#      staged kernels against the register ones on small and odd shapes (every configuration, rows
#      fewer than the grid and several a block, a length each kernel refuses).
#   3. elementwise_bench at 4x16x4096, 2x16x8192, 1x16x16384, twice: every kernel beside its copy or
#      write ceiling, then the softmax pair, registers (old) and staged (new) in the same process;
#      softmax_probe's staged section at the two long shapes (the port beside the probe's own).
# Printed at the end, and in $OUT/summary.txt:
#   - attnprof: per shape, switch and variant, the status (ok, or the error), rel. error against FP64,
#     ops per forward against the prediction, CUDA µs, and the softmax kernel that ran (its name says
#     which: *_staged_* with the switch on at 8193-16384 bf16 / 4097-16384 FP32 columns);
#   - gpu-test: its pass/fail line; compute-sanitizer: each tool's error summary and exit status;
#   - the checks: "identical" for bf16 (bit for bit) and the largest relative difference for FP32
#     (the probe measured 6e-7) per shape;
#   - per shape and run, old and new softmax in µs and as % of the copy ceiling (the goal: >= 90%).
# Read it as: every attnprof status ok with rel. error < 2e-2 and the expected ops, gpu-test 0
# failed, every sanitizer "0 errors" with rc 0, the bf16 check identical and FP32 < 1e-5; then
# the new rows' % against the old. Only then may the switch's default become on
# (staged_switch in kernels/softmax_staged.cu).
set -u
G=${G:-.gpu-elementwise3}

if [ "${1:-}" = --stage ]; then
  cd "$(dirname "$0")/.." || exit 1
  B=build-elementwise3
  make -j2 --no-print-directory BUILD=$B CUDA_ARCH='-gencode arch=compute_90,code=sm_90' \
    $B/attnprof $B/libattnprof_recorder.so $B/elementwise_bench $B/softmax_probe || exit 1
  rm -rf "$G" && mkdir -p "$G" || exit 1
  for f in attnprof libattnprof_recorder.so elementwise_bench softmax_probe; do
    cp "$B/$f" "$G/$f" && strip "$G/$f" || exit 1
  done
  echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- kernels src bench || echo '+changes')" >"$G/COMMIT"
  du -sh "$G"
  exit 0
fi

source "$(dirname "$0")/lib.sh" elementwise3
for f in attnprof libattnprof_recorder.so elementwise_bench softmax_probe; do
  [ -x "$G/$f" ] || [ -f "$G/$f" ] || { say "no $G/$f: run bash bench/elementwise3_h200.sh --stage first"; exit 2; }
done
say "$(date -u +%FT%TZ) elementwise3, build $(cat "$G/COMMIT" 2>/dev/null || echo unknown)"
gpu_state
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
BUDGET=${BUDGET:-230}
T0=$SECONDS
# in_budget WHAT: whether a step may start; else it is logged as skipped.
in_budget() {
  [ $((SECONDS - T0)) -lt "$BUDGET" ] && return 0
  say "skipped (budget): $1"; echo "skipped (budget): $1" >>"$OUT/skipped.txt"; return 1
}
A=$W/archives
mkdir -p "$A"

say "1. attnprof naive, naive_inplace, math: staged on at three shapes, off at the two long ones"
for spec in on:1:16:16384 on:2:16:8192 on:8:16:1024 off:1:16:16384 off:2:16:8192; do
  IFS=: read -r sw B H S <<<"$spec"
  d=$A/$sw-$B-$S
  staged=0; [ "$sw" = on ] && staged=1
  in_budget "attnprof $spec" || continue
  ATTNPROF_SOFTMAX_STAGED=$staged timeout 60 "$G/attnprof" run --variants naive,naive_inplace,math --batch "$B" \
    --heads "$H" --seq "$S" --dim 64 --iters 5 --warmup 2 --no-counters --no-calibrate -q --force --format png \
    -o "$d" >>"$L" 2>&1
  echo "attnprof rc=$? $spec" | tee -a "$L" >>"$OUT/attnprof-rc.txt"
done
say "1b. gpu-test with the staged kernels on (odd lengths, decode rows)"
if in_budget gpu-test; then
  ATTNPROF_SOFTMAX_STAGED=1 GPU_TEST_SHAPES="1x2x9000x64 1x3x6000x64 1x2x16384x64" \
    GPU_TEST_GQA_SHAPES="1:16:2:1:12000:64 1:8:8:3:8200:64 1:16:2:1:4099:64" GPU_TEST_BWD_SHAPES="" \
    ATTNPROF_BIN="$G/attnprof" timeout 120 bash tests/gpu/run.sh >"$OUT/gputest.txt" 2>&1
  echo "gpu-test rc=$?" >>"$OUT/gputest.txt"
fi

say "2. compute-sanitizer on the staged and register softmaxes (elementwise_bench --once ROWSxCOLS)"
sanitize() { # TOOL TIMEOUT SHAPES...
  local tool=$1 t=$2; shift 2
  in_budget "$tool" || return
  timeout "$t" "$CS" --tool "$tool" --error-exitcode 9 "$G/elementwise_bench" --once "$@" >"$OUT/sanitize-$tool.txt" 2>&1
  echo "$tool rc=$?" >>"$OUT/sanitize-$tool.txt"
}
sanitize memcheck 60 1100x16384 1100x8200 1100x4100 600x6000 300x4099 3x16384 1x9000
sanitize racecheck 60 800x16384 800x4100
sanitize synccheck 40 800x16384 800x4100

say "3. elementwise_bench twice, then softmax_probe's staged section"
for r in 1 2; do
  in_budget "elementwise_bench $r" || continue
  timeout 60 "$G/elementwise_bench" 4x16x4096 2x16x8192 1x16x16384 >"$OUT/bench-$r.txt" 2>&1
  echo "rc=$?" >>"$OUT/bench-$r.txt"
done
if in_budget softmax_probe; then
  timeout 40 "$G/softmax_probe" --only=staged 2x16x8192 1x16x16384 >"$OUT/probe.txt" 2>&1
  echo "rc=$?" >>"$OUT/probe.txt"
fi
(cd "$A" && tar czf "$OUT/archives.tgz" */run.json */summary.csv */kernels.csv 2>/dev/null)

say "summary"
python3 - "$A" "$OUT" <<'PY' | tee "$OUT/summary.txt"
import csv, glob, json, os, re, statistics, sys
a, out = sys.argv[1], sys.argv[2]
print("## attnprof (FP64 check)")
print("| shape | staged | variant | status | rel. error | ops (expected) | CUDA us | softmax kernel (median us) |")
print("|---|---|---|---|---|---|---:|---|")
def order(p):
    sw, B, S = os.path.basename(p).split("-")
    return (sw != "on", -int(S))
archives = sorted(glob.glob(f"{a}/*-*-*"), key=order)
if not archives:
    print("| - | - | - | no archive written (attnprof-rc.txt and the log say why) | | | | |")
for d in archives:
    sw, B, S = os.path.basename(d).split("-")
    try:
        run = json.load(open(f"{d}/run.json"))
    except Exception as e:
        print(f"| {B}x16x{S}x64 | {sw} | - | no run.json ({e.__class__.__name__}) | | | | |")
        continue
    rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))} if os.path.exists(f"{d}/summary.csv") else {}
    ks = {}
    if os.path.exists(f"{d}/kernels.csv"):
        for k in csv.DictReader(open(f"{d}/kernels.csv")):
            if "softmax" in k["name"] and "bwd" not in k["name"] and k["pass"] == "0":
                ks.setdefault(k["variant"], {}).setdefault(k["name"], []).append(float(k["duration_us"]))
    for x in run["variants"]:
        r = rows.get(x["name"], {})
        st = x["status"] if x["status"] == "ok" else f"{x['status']}: {x.get('error', '')[:120]}"
        sm = ", ".join(f"{n} ({statistics.median(v):.1f})" for n, v in ks.get(x["name"], {}).items()) or "-"
        rel = x.get("rel_error")
        rel = f"{rel:.2e}" if isinstance(rel, (int, float)) else "-"
        print(f"| {B}x16x{S}x64 | {sw} | {x['name']} | {st} | {rel} | "
              f"{r.get('ops_per_forward', '?')} ({r.get('expected_ops', '?')}) | {r.get('cuda_us_median', '?')} | {sm} |")
print()
for f in ("attnprof-rc.txt", "gputest.txt", "sanitize-memcheck.txt", "sanitize-racecheck.txt", "sanitize-synccheck.txt",
          "skipped.txt"):
    p = f"{out}/{f}"
    if not os.path.exists(p):
        print(f"{f}: " + ("none" if f == "skipped.txt" else "(missing)"))
        continue
    lines = open(p, errors="replace").read().splitlines()
    keep = [l for l in lines if re.search(r"rc=|ERROR SUMMARY|RACECHECK SUMMARY|passed,|^FAIL|skipped", l)]
    print(f"{f}: " + (" / ".join(keep[-12:]) or "(no summary line: read the file)"))
print()
print("## softmax, registers (old) and staged (new), same process; % of the copy ceiling")
print("| run | shape | kernel | us | % |")
print("|---|---|---|---:|---:|")
pat = re.compile(r"^(\S+)\s+(.+?)\s+[\d.]+ MiB\s+([\d.]+) us\s+[\d.]+ TB/s\s+(?:copy|write)\s+ceiling\s+[\d.]+ us\s+[\d.]+ TB/s\s+([\d.]+)%")
for r in (1, 2):
    p = f"{out}/bench-{r}.txt"
    for l in (open(p).read().splitlines() if os.path.exists(p) else []):
        if " check " in l:
            print(f"| {r} | {l.split()[0]} | {' '.join(l.split()[2:])} | | |")
            continue
        m = pat.match(l)
        if m and ("softmax" in m.group(2)):
            print(f"| {r} | {m.group(1)} | {m.group(2)} | {m.group(3)} | {m.group(4)} |")
        elif l.startswith("rc=") and l != "rc=0":
            print(f"| {r} | - | elementwise_bench {l} | | |")
p = f"{out}/probe.txt"
print()
print("softmax_probe (staged section): " + " / ".join(
    " ".join(l.split()) for l in (open(p).read().splitlines() if os.path.exists(p) else ["(missing)"])
    if "production" in l or l.startswith("rc=")))
PY
say done
