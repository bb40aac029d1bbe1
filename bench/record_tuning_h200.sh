#!/usr/bin/env bash
# Issue 41's overhead goals, where the injection's cost goes, on the H200 from the project root
# after `source .devdeps/env.sh`. G (default .gpu-record3) holds, stripped: attnprof,
# libattnprof_inject.so (this branch), inject_old.so (main's library at 62127ee, the "before"),
# steps (tests/inject/steps.cu, sm_90). Every process is pinned to the same four cores
# (taskset), so plain and recorded processes share one placement. The library is injected
# directly (CUDA_INJECTION64_PATH, as `attnprof record` sets it), so no archive conversion runs
# between rounds; the raw files' X and V lines are kept.
#  1. the host's cost of one launch: steps `launches 300 100 Q` (Q untraced cudaGetDevice calls
#     before each launch, as a PyTorch op makes; 0 and 10), plain and under each configuration
#     (ATTNPROF_INJECT_KINDS / _APIS), interleaved, 3 rounds;
#  2. tests/inject/torch_sdpa.py, 4 Llama-3-8B-sized layers, prefill then decode: plain, main's
#     library, this branch's, alternating, at least 2 rounds, more until BUDGET s;
#  3. `attnprof record` of a crashing program (exit 134 passed through, archive incomplete).
# Its first run (2026-12-03T23:13Z; bench/results/2026-12-03-record-overhead.md, section 4) was
# this script at 9375a3a, whose library also took CUPTI attributes from the environment
# (ATTNPROF_INJECT_PINNED, _PER_THREAD, _FLUSH_MS, _PREFAULT; none won, removed since) and still
# recorded the synchronisation kind by default; a second call isolated that kind's cost, which
# configuration 'sync' (every kind) now measures beside the default.
source "$(dirname "$0")/lib.sh" record-tuning
G=${G:-.gpu-record3} BUDGET=${BUDGET:-120}
T0=$SECONDS
PIN=""
command -v taskset >/dev/null && PIN="taskset -c 2-5"
say "$(date -u +%FT%TZ) pin: ${PIN:-none}"; gpu_state
NEW=$(cd "$G" && pwd)/libattnprof_inject.so OLD=$(cd "$G" && pwd)/inject_old.so
mkdir -p "$W/j"
# inject LIB TAG ENV... -- CMD: runs CMD under LIB, raw files into $W/raw-TAG, their summary lines kept
inject() {
  local lib=$1 tag=$2; shift 2
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  rm -rf "$W/raw-$tag"; mkdir -p "$W/raw-$tag"
  env "${envs[@]}" CUDA_INJECTION64_PATH=$lib NVTX_INJECTION64_PATH=$lib ATTNPROF_INJECT_DIR=$W/raw-$tag $PIN "$@"
  local rc=$?
  { echo "$tag rc=$rc"; grep -hE '^(X|B|T|W|E)	|^V	(tuning|kinds|apis|buffers_completed|kernel_names)' "$W/raw-$tag"/raw-*.txt; } >>"$W/j/raw-lines.txt" 2>&1
  rm -rf "$W/raw-$tag"
}
say "1. launch cost"
for r in 1 2 3; do
  for q in 0 10; do
    $PIN $G/steps launches 300 100 $q >"$W/j/l-plain-q$q-$r.json" 2>>"$L"
    inject $OLD old-q$q-$r -- $G/steps launches 300 100 $q >"$W/j/l-old-q$q-$r.json" 2>>"$L"
    inject $NEW new-q$q-$r -- $G/steps launches 300 100 $q >"$W/j/l-new-q$q-$r.json" 2>>"$L"
    inject $NEW cupti-q$q-$r ATTNPROF_INJECT_KINDS=none ATTNPROF_INJECT_APIS=none -- $G/steps launches 300 100 $q >"$W/j/l-cupti-q$q-$r.json" 2>>"$L"
    inject $NEW kernel-q$q-$r ATTNPROF_INJECT_KINDS=kernel ATTNPROF_INJECT_APIS=none -- $G/steps launches 300 100 $q >"$W/j/l-kernel-q$q-$r.json" 2>>"$L"
    inject $NEW kapi-q$q-$r ATTNPROF_INJECT_KINDS=kernel -- $G/steps launches 300 100 $q >"$W/j/l-kapi-q$q-$r.json" 2>>"$L"
    inject $NEW sync-q$q-$r ATTNPROF_INJECT_KINDS=all -- $G/steps launches 300 100 $q >"$W/j/l-sync-q$q-$r.json" 2>>"$L"
  done
done
say "1 done after $((SECONDS - T0)) s"
tar czf "$OUT/json.tgz" -C "$W" j
say "2. Llama-sized steps"
P="python3 tests/inject/torch_sdpa.py --mode both --layers 4 --dim 4096 --heads 32 --kv-heads 8 --ffn 14336 --batch 1 --decode-batch 8 --seq 2048 --warmup 10 --steps 40"
r=0
while [ $r -lt 6 ] && { [ $r -lt 2 ] || [ $((SECONDS - T0)) -lt $BUDGET ]; }; do
  r=$((r + 1))
  say "round $r"
  timeout 60 $PIN $P --json "$W/j/t-plain-$r.json" >>"$L" 2>&1
  inject $OLD t-old-$r -- timeout 60 $P --json "$W/j/t-old-$r.json" >>"$L" 2>&1
  inject $NEW t-new-$r -- timeout 60 $P --json "$W/j/t-new-$r.json" >>"$L" 2>&1
  tar czf "$OUT/json.tgz" -C "$W" j
done
say "3. a crashing program under record"
$G/attnprof record -q -o "$W/crash" -- $G/steps crash 12 >>"$L" 2>&1; echo "crash record rc=$?" >>"$L"
grep -h '"status"\|"error"' "$W/crash/run.json" >>"$L" 2>&1
tar czf "$OUT/crash.tgz" -C "$W" crash/run.json crash/trace.json
say "done after $((SECONDS - T0)) s"
tar czf "$OUT/json.tgz" -C "$W" j
python3 - "$W/j" <<'PY' 2>&1 | tee -a "$L"
import json, glob, os, re, statistics, sys
d = sys.argv[1]
rows = {}
for f in sorted(glob.glob(f"{d}/l-*.json")):
    m = re.match(r"l-(\w+)-q(\d+)-(\d+)\.json", os.path.basename(f))
    try:
        j = json.load(open(f))
    except Exception:
        continue
    rows.setdefault((m[1], int(m[2])), []).append(j["host_us_per_launch_median"])
for (c, q), v in sorted(rows.items(), key=lambda x: (x[0][1], x[0][0])):
    print(f"launch q={q:2d} {c:8s} " + " ".join(f"{x:.3f}" for x in v) + f"  median {statistics.median(v):.3f} us")
for mode in ("prefill", "decode"):
    for c in ("plain", "old", "new"):
        v = []
        for f in sorted(glob.glob(f"{d}/t-{c}-*.json")):
            try:
                v.append(json.load(open(f))[mode]["median_ms"])
            except Exception:
                pass
        print(f"{mode:7s} {c:5s} " + " ".join(f"{x:.3f}" for x in v))
PY
