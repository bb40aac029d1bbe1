#!/usr/bin/env bash
# The wave's closing device run (2026-12-03), on the H200, from the project root after
# `source .devdeps/env.sh`; the builds are carried in .gpu-lead/ (stripped, sm_90 only, to
# fit the 64 MiB the device tool sends):
#   .gpu-lead/after/   attnprof, libattnprof_recorder.so, libattnprof_inject.so of this tree
#   .gpu-lead/before/  attnprof, libattnprof_recorder.so of 480ea75 (before the restructuring)
# 1. the bundled example out/example-h200, re-recorded with the default options;
# 2. the restructuring's check: the default batch before and after the restructuring, twice each,
#    alternating (before, after, before, after), kernels per forward and CUDA times compared;
# 3. `attnprof record`'s overhead: a Llama-sized PyTorch prefill and decode step (tests/inject/torch_sdpa.py),
#    plain, under `attnprof record`, and under record with no API records (ATTNPROF_INJECT_APIS=none),
#    three rounds alternating, each number the median of the script's own CUDA-event step times.
# 4. record against import: one small PyTorch decode model recorded by injection and by its profiler
#    (imported), and `compare` of the two.
# Everything lands under $OUT: wave-check.log, summary CSVs, overhead JSON, archives.tgz.
source "$(dirname "$0")/lib.sh" wave-check
A=.gpu-lead/after B=.gpu-lead/before
say "$(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null)"
gpu_state

say "1. example archive, default options, cuDNN from PyTorch's folder"
cudnn_torch "$A/attnprof" run -o "$W/example-h200" --force >>"$L" 2>&1; echo "rc=$?" >>"$L"

for rep in 1 2; do
  for side in before after; do
    d=$B; [ $side = after ] && d=$A
    say "2. default batch, $side, round $rep"
    cudnn_torch "$d/attnprof" run -o "$W/$side-$rep" --force -q >>"$L" 2>&1; echo "rc=$?" >>"$L"
    cp "$W/$side-$rep/summary.csv" "$OUT/summary-$side-$rep.csv" 2>/dev/null
  done
done
python3 - "$W" >>"$L" 2>&1 <<'PY'
import csv, sys, statistics
w = sys.argv[1]
rows = {}
for side in ("before", "after"):
    for rep in (1, 2):
        try:
            for r in csv.DictReader(open(f"{w}/{side}-{rep}/summary.csv")):
                rows.setdefault(r["variant"], {}).setdefault(side, []).append(r)
        except OSError as e:
            print("missing", side, rep, e)
print("variant | kernels/fwd before | after | CUDA µs before (2 rounds) | after (2 rounds) | after/before")
for v, s in rows.items():
    kb = {r["kernels_per_forward"] for r in s.get("before", [])}
    ka = {r["kernels_per_forward"] for r in s.get("after", [])}
    tb = [float(r["cuda_us_median"]) for r in s.get("before", [])]
    ta = [float(r["cuda_us_median"]) for r in s.get("after", [])]
    ratio = statistics.median(ta) / statistics.median(tb) if ta and tb else float("nan")
    print(f"{v} | {sorted(kb)} | {sorted(ka)} | {tb} | {ta} | {ratio:.4f}")
PY

say "3. injection overhead"
P="python3 tests/inject/torch_sdpa.py --mode both --layers 4 --dim 4096 --heads 32 --kv-heads 8 --ffn 14336 --batch 1 --decode-batch 8 --seq 2048 --warmup 10 --steps 40"
for rep in 1 2 3; do
  say "round $rep: plain"
  $P --json "$W/oh-plain-$rep.json" >>"$L" 2>&1
  say "round $rep: record"
  "$A/attnprof" record -q --force -o "$W/rec-$rep" -- $P --json "$W/oh-record-$rep.json" >>"$L" 2>&1; echo "rc=$?" >>"$L"
  say "round $rep: record, no API records"
  ATTNPROF_INJECT_APIS=none "$A/attnprof" record -q --force -o "$W/recnoapi-$rep" -- $P --json "$W/oh-noapi-$rep.json" >>"$L" 2>&1; echo "rc=$?" >>"$L"
done
python3 - "$W" >"$OUT/overhead.txt" 2>&1 <<'PY'
import json, sys
w = sys.argv[1]
for mode in ("prefill", "decode"):
    for rep in (1, 2, 3):
        cells = []
        for kind in ("plain", "record", "noapi"):
            try:
                r = json.load(open(f"{w}/oh-{kind}-{rep}.json"))
                cells.append(r[mode]["median_ms"] if mode in r else r["median_ms"])
            except Exception as e:
                cells.append(float("nan"))
        p = cells[0]
        print(f"{mode} round {rep}: plain {cells[0]:.4f} ms, record {cells[1]:.4f} ms ({100*(cells[1]/p-1):+.1f}%), "
              f"no API records {cells[2]:.4f} ms ({100*(cells[2]/p-1):+.1f}%)")
PY
cat "$OUT/overhead.txt" >>"$L"
say "4. one PyTorch model recorded both ways: by injection and by its profiler (import), then compared"
P2="python3 tests/inject/torch_sdpa.py --mode decode --layers 2 --decode-batch 8 --seq 1024 --warmup 3 --steps 8"
"$A/attnprof" record -q --force --skip 3 -o "$W/pair-record" -- $P2 >>"$L" 2>&1; echo "rc=$?" >>"$L"
$P2 --kineto "$W/pair-kineto.json" >>"$L" 2>&1; echo "rc=$?" >>"$L"
"$A/attnprof" import "$W/pair-kineto.json" -o "$W/pair-import" --force -q >>"$L" 2>&1; echo "rc=$?" >>"$L"
"$A/attnprof" compare "$W/pair-record" "$W/pair-import" -o "$W/pair-compare" --force >>"$L" 2>&1; echo "rc=$?" >>"$L"
cp "$W/pair-compare/compare.md" "$OUT/pair-compare.md" 2>/dev/null

for f in "$W"/oh-*.json; do cp "$f" "$OUT/" 2>/dev/null; done
tar czf "$OUT/archives.tgz" -C "$W" --exclude='*.png' --exclude='*.svg' --exclude='*.pdf' --exclude='report.*' \
  example-h200 before-1 after-1 before-2 after-2 pair-record pair-import 2>>"$L"
(cd "$OUT" && tar czf overhead.tgz oh-*.json summary-*.csv && rm -f oh-*.json summary-*.csv)
ls -la "$OUT" >>"$L"
