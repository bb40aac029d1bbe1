#!/usr/bin/env bash
# Issue 41's overhead and record-vs-import pair, on the H200 (2026-12-03), from the project root
# after `source .devdeps/env.sh`; G (default .gpu-record2) holds attnprof and libattnprof_inject.so
# (stripped) and `steps` (tests/inject/steps.cu, sm_90). Stops starting rounds after BUDGET s.
#  1. steps.cu `launches 200 100`: the host's cost of one launch, plain and under record with
#     the activity kinds and API records apart (ATTNPROF_INJECT_KINDS / _APIS), 3 rounds interleaved;
#  2. one small PyTorch decode model recorded both ways (record; its profiler, then import);
#  3. tests/inject/torch_sdpa.py (4 Llama-3-8B-sized layers, prefill and decode): plain and record
#     alternating, 5+ rounds, each process's per-step CUDA-event times kept (JSON).
source "$(dirname "$0")/lib.sh" record-overhead
G=${G:-.gpu-record2} BUDGET=${BUDGET:-125}
T0=$SECONDS
say "$(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null)"; gpu_state
mkdir -p "$W/j"
say "1. launch cost"
for r in 1 2 3; do
  for cfg in plain none kernel kernel+api all all+allapi; do
    case $cfg in
      plain) $G/steps launches 200 100 >"$W/j/l-$cfg-$r.json" 2>>"$L"; continue ;;
      none) env="ATTNPROF_INJECT_KINDS=none ATTNPROF_INJECT_APIS=none" ;;
      kernel) env="ATTNPROF_INJECT_KINDS=kernel ATTNPROF_INJECT_APIS=none" ;;
      kernel+api) env="ATTNPROF_INJECT_KINDS=kernel" ;;
      all) env="" ;;
      all+allapi) env="ATTNPROF_INJECT_APIS=all" ;;
    esac
    env $env ATTNPROF_RECORD_KEEP_RAW= $G/attnprof record -q --force -o "$W/l-$cfg" -- sh -c "$G/steps launches 200 100 >$W/j/l-$cfg-$r.json" >>"$L" 2>&1
    echo "$cfg $r rc=$?" >>"$L"
  done
done
say "2. pair"
P2="python3 tests/inject/torch_sdpa.py --mode decode --layers 2 --dim 1024 --heads 8 --kv-heads 2 --ffn 2816 --decode-batch 4 --seq 512 --warmup 3 --steps 8"
$G/attnprof record -q --force --skip 3 --variant pair -o "$W/pair_record" -- $P2 --json "$W/j/pair-record.json" >>"$L" 2>&1; echo "pair record rc=$?" >>"$L"
$P2 --kineto "$W/pair-kineto.json" --json "$W/j/pair-kineto.json" >>"$L" 2>&1; echo "kineto rc=$?" >>"$L"
$G/attnprof import "$W/pair-kineto.json" --variant pair -o "$W/pair_import" --force -q >>"$L" 2>&1; echo "import rc=$?" >>"$L"
$G/attnprof compare "$W/pair_record" "$W/pair_import" -o "$W/pair_compare" --force >>"$L" 2>&1; echo "compare rc=$?" >>"$L"
tar czf "$OUT/pair.tgz" -C "$W" --exclude='*.png' --exclude='*.svg' --exclude='*.pdf' --exclude='report.*' --exclude=figures pair_record pair_import pair_compare
tar czf "$OUT/json.tgz" -C "$W" j
say "3. Llama-sized steps"
P="python3 tests/inject/torch_sdpa.py --mode both --layers 4 --dim 4096 --heads 32 --kv-heads 8 --ffn 14336 --batch 1 --decode-batch 8 --seq 2048 --warmup 10 --steps 30"
r=0
while [ $r -lt 9 ] && [ $((SECONDS - T0)) -lt $BUDGET ]; do
  r=$((r + 1))
  say "round $r plain"; timeout 60 $P --json "$W/j/t-plain-$r.json" >>"$L" 2>&1
  say "round $r record"; timeout 60 $G/attnprof record -q --force -o "$W/t-record" -- $P --json "$W/j/t-record-$r.json" >>"$L" 2>&1
  echo "rc=$?" >>"$L"
  grep -h dropped_records "$W/t-record/run.json" >>"$L"
  if [ $r -le 2 ]; then say "round $r profiler"; timeout 60 $P --kineto "$W/t-kineto.json" --json "$W/j/t-kineto-$r.json" >>"$L" 2>&1; fi
  tar czf "$OUT/json.tgz" -C "$W" j
done
say "done after $((SECONDS - T0)) s"
cp "$W/t-record/run.json" "$OUT/t-record-run.json" 2>/dev/null
tar czf "$OUT/json.tgz" -C "$W" j
tar czf "$OUT/pair.tgz" -C "$W" --exclude='*.png' --exclude='*.svg' --exclude='*.pdf' --exclude='report.*' --exclude=figures pair_record pair_import pair_compare
ls -la "$OUT" >>"$L"
