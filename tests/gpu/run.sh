#!/usr/bin/env bash
# GPU test (make gpu-test): every variant on small shapes, for real (head dims 32 to 256;
# D = 80 runs the fused kernels compiled for 96, which must say so). Asserts that each
# variant is correct against the FP64 reference (attnprof's own check, threshold 2e-2),
# launches the GPU operations its expectation says (extra library memsets are allowed and reported), and that the fully-masked-rows check
# gives NaN for the plain softmax and 0 for the safe one; that the counter pass ran on
# every shape, and at the default shape (score matrices far larger than the L2) that the
# counters confirm the predictions (tests/gpu/check_counters.py); and a two-shape
# `attnprof sweep` whose archives record the GPU and device bytes; and grouped-query and decode
# shapes (--kv-heads, --q-seq) for every variant. Needs a CUDA GPU.
set -u
bin=${ATTNPROF_BIN:-build/attnprof}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
pass=0
# GPU_TEST_SHAPES="BxHxSxD ..." runs those shapes only, without the counters and sweep checks.
shapes=${GPU_TEST_SHAPES:-"2x3x77x64 1x4x256x128 2x4x1000x64 1x2x1024x128 1x2x3000x64 1x2x4096x128
        1x3x77x32 1x2x333x96 1x2x257x256 2x2x190x80"}
# GPU_TEST_ONLY=gqa: the grouped-query and decode shapes below, nothing else.
[ "${GPU_TEST_ONLY:-}" = gqa ] || [ "${GPU_TEST_ONLY:-}" = backward ] && shapes=""
for shape in $shapes; do
  IFS=x read -r B H S D <<<"$shape"
  dir="$work/$shape"
  "$bin" run --batch "$B" --heads "$H" --seq "$S" --dim "$D" --iters 3 --warmup 1 --no-calibrate --quiet -o "$dir" --format png
  rc=$?
  if [ ! -f "$dir/summary.csv" ]; then
    echo "FAIL $shape: attnprof exited $rc without an archive"; fail=$((fail + 1)); continue
  fi
  python3 - "$dir" "$shape" <<'PY' && pass=$((pass + 1)) || fail=$((fail + 1))
import csv, json, sys
d, shape = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
bad = []
for row in csv.DictReader(open(f"{d}/summary.csv")):
    v, st = row["variant"], row["status"]
    if st == "unavailable":
        err = next(x["error"] for x in run["variants"] if x["name"] == v)
        print(f"  {shape} {v}: unavailable: {err}")
        continue
    if st != "ok":
        bad.append(f"{v} status {st}: " + next(x["error"] for x in run["variants"] if x["name"] == v))
        continue
    ops, want, memsets = int(row["ops_per_forward"]), int(row["expected_ops"]), int(row["memset_per_forward"])
    # cuBLAS adds a small workspace memset at some shapes; the report names it. Anything
    # else that differs from the expectation fails.
    if ops != want and not (0 < ops - want <= memsets):
        bad.append(f"{v}: {ops} ops per forward, expected {want}")
    elif ops != want:
        print(f"  {shape} {v}: {ops - want} library Memset(s) beyond the expected {want} ops (reported)")
    print(f"  {shape} {v}: ok, rel.err {float(row['rel_error']):.2e}, {row['ops_per_forward']} ops, "
          f"{float(row['cuda_us_median']):.1f} us")
# The fused kernels are compiled for these head dims; any other runs the next one up
# and records the padding as a fact (the report shows it).
D = int(shape.split("x")[3])
for x in run["variants"]:
    if x["name"] in ("flash", "efficient") and x["status"] == "ok":
        pad = x["facts"].get("head_dim_padding")
        if D in (32, 64, 96, 128, 256) and pad:
            bad.append(f"{x['name']}: D={D} has its own kernel, yet: {pad['text']}")
        elif D not in (32, 64, 96, 128, 256) and not (pad and pad["text"].startswith(f"D={D} runs the D=")):
            bad.append(f"{x['name']}: D={D} runs a padded kernel but records no head_dim_padding fact")
# On compute capability 9.0 the flash variant runs the Hopper-native (sm_90a) kernel.
if run["gpu"].get("compute_capability") == "9.0":
    for x in run["variants"]:
        k = (x["facts"].get("kernel") or {}).get("text", "")
        if x["name"] == "flash" and x["status"] == "ok" and "sm90a" not in k:
            bad.append(f"flash ran {k!r} on a 9.0 GPU, not the sm_90a kernel")
# The CUPTI overhead probe queues each sample behind a hold kernel (runner_checks.c), so that
# the host's time of queuing the first forward stays out of the GPU figure; it records the hold.
for x in run["variants"]:
    hold = x["facts"].get("overhead_probe_hold_us")
    if x["status"] == "ok" and not (hold and hold.get("value", 0) > 0):
        bad.append(f"{x['name']}: no overhead_probe_hold_us fact (the probe's samples were not held)")
for x in run["variants"]:
    fm = x["facts"].get("fully_masked_rows")
    want = {"naive": "NaN", "naive_inplace": "NaN", "math": "0"}.get(x["name"])
    if fm and want and not fm["text"].startswith(want + ":"):
        bad.append(f"{x['name']}: fully-masked rows gave '{fm['text']}', expected {want}")
    elif want and x["status"] == "ok" and not fm:
        bad.append(f"{x['name']}: no fully-masked-rows check recorded")
meta = run.get("counters") or {}
if meta.get("status") != "ok":
    bad.append(f"counter pass {meta.get('status')!r}: {meta.get('reason', '')}")
else:
    ranges = json.load(open(f"{d}/counters.json"))["ranges"]
    for x in run["variants"]:
        if x["status"] == "ok" and not any(r["variant"] == x["name"] and r["kind"] == "kernel" for r in ranges):
            bad.append(f"{x['name']}: no kernel counters in counters.json")
for b in bad:
    print(f"FAIL {shape}: {b}")
sys.exit(1 if bad else 0)
PY
done
# Grouped-query and decode shapes, B:Hq:Hkv:q_seq:S:D (odd key counts, one query, Hq/Hkv of 1, 4, 8
# and 32, prefill and decode): every variant correct against the FP64 reference (attnprof's own
# check) and launching what it expects, or skipped with its reason; the split-KV decode records its
# split count; the report has its decode_bandwidth finding at every decode shape and kv_expansion
# exactly where K/V are copied (naive, in-place, math with fewer K/V heads). GPU_TEST_GQA_SHAPES="" skips them.
gqa_shapes=${GPU_TEST_GQA_SHAPES-"2:8:8:1:777:128 2:8:2:1:1001:128 1:16:2:1:4099:64 1:32:1:1:3001:128
        2:32:8:4:517:128 1:8:1:8:300:128 2:8:2:333:333:64 1:32:8:1024:1024:128 1:16:16:77:1000:80
        1:8:1:129:4096:128 1:4:4:1:65536:128"}
[ "${GPU_TEST_ONLY:-}" = backward ] && gqa_shapes=""
for spec in $gqa_shapes; do
  IFS=: read -r B H HKV SQ S D <<<"$spec"
  dir="$work/gqa-$B-$H-$HKV-$SQ-$S-$D"
  "$bin" run --batch "$B" --heads "$H" --kv-heads "$HKV" --q-seq "$SQ" --seq "$S" --dim "$D" --iters 3 --warmup 1 \
    --no-calibrate --no-counters --quiet -o "$dir" --format png
  rc=$?
  if [ ! -f "$dir/run.json" ]; then
    echo "FAIL $spec: attnprof exited $rc without an archive"; fail=$((fail + 1)); continue
  fi
  python3 - "$dir" "$spec" <<'PY' && pass=$((pass + 1)) || fail=$((fail + 1))
import csv, json, sys
d, spec = sys.argv[1], sys.argv[2]
B, H, HKV, SQ, S, D = map(int, spec.split(":"))
run = json.load(open(f"{d}/run.json"))
bad = []
sh = run["shape"]
if sh.get("kv_heads", H) != HKV or sh.get("q_seq", S) != SQ:
    bad.append(f"run.json shape {sh} does not record kv_heads {HKV}, q_seq {SQ}")
rows = {r["variant"]: r for r in csv.DictReader(open(f"{d}/summary.csv"))}
findings = {x["variant"]: x["findings"] for x in json.load(open(f"{d}/findings.json"))["variants"]}
for x in run["variants"]:
    v, st = x["name"], x["status"]
    if st in ("skipped", "unavailable"):
        if not x.get("error"):
            bad.append(f"{v} {st} without a reason")
        print(f"  {spec} {v}: {st}: {x['error'][:150]}")
        continue
    if st != "ok":
        bad.append(f"{v} status {st}: {x.get('error', '')}")
        continue
    row = rows[v]
    ops, want, memsets = int(row["ops_per_forward"]), int(row["expected_ops"]), int(row["memset_per_forward"])
    # cuDNN's own split-KV merge at one query (cudnn.c: its choice, not the shape's), like a library memset
    lean = sum(1 for k in csv.DictReader(open(f"{d}/kernels.csv")) if k["variant"] == v and k["pass"] == "0"
               and k["iteration"] == "0" and "lean_reduction" in k["name"]) if v == "cudnn" and SQ == 1 else 0
    if ops != want and not (0 < ops - want <= memsets + lean):
        bad.append(f"{v}: {ops} ops per forward, expected {want}")
    if v == "flash" and SQ < S and "split_count" not in x["facts"]:
        bad.append("flash decode records no split_count")
    if v in ("naive", "naive_inplace", "math") and HKV < H and "kv_expansion_bytes" not in x["facts"]:
        bad.append(f"{v}: grouped-query K/V expansion not recorded")
    ids = {g["id"] for g in findings.get(v, [])}
    if SQ < S and "decode_bandwidth" not in ids:
        bad.append(f"{v}: decode step without a decode_bandwidth finding")
    if v in ("naive", "naive_inplace", "math") and HKV < H and "kv_expansion" not in ids:
        bad.append(f"{v}: grouped-query K/V copies without a kv_expansion finding")
    if v in ("efficient", "flash", "cudnn") and "kv_expansion" in ids:
        bad.append(f"{v}: a native grouped-query kernel with a kv_expansion finding")
    extra = (x["facts"].get("split_count") or {}).get("text", "")
    print(f"  {spec} {v}: ok, rel.err {x['rel_error']:.2e}, {ops} ops, {float(row['cuda_us_median']):.1f} us {extra[:60]}")
if not any(x["status"] == "ok" for x in run["variants"]):
    bad.append("no variant ran")
for b in bad:
    print(f"FAIL {spec}: {b}")
sys.exit(1 if bad else 0)
PY
done
# The backward (run --backward) on odd S and every head dim (D = 80 pads to 96 in the fused
# kernels): every variant's backward ok with dQ, dK and dV within the run's tolerance of the FP64
# reference, or skipped with its reason; the GPU operations of each attn_bwd range as the variant
# predicts (a library Memset beyond them allowed and printed). attnprof runs causal attention only:
# the non-causal backward is the tensor-core harness's (bench/bwd_tc_bench check: every tile
# configuration, causal and not, odd S, D 64 and 128). GPU_TEST_BWD_SHAPES="" skips the runs;
# GPU_TEST_ONLY=backward runs this part alone.
bwd_shapes=${GPU_TEST_BWD_SHAPES-"2x3x77x64 1x3x77x32 1x2x333x96 2x2x190x80 1x4x256x128 1x2x257x256 2x2x1000x64
        1x2x1024x128"}
[ "${GPU_TEST_ONLY:-}" = gqa ] && bwd_shapes=""
for shape in $bwd_shapes; do
  IFS=x read -r B H S D <<<"$shape"
  dir="$work/bwd-$shape"
  "$bin" run --backward --batch "$B" --heads "$H" --seq "$S" --dim "$D" --iters 3 --warmup 1 --no-calibrate \
    --no-counters --quiet -o "$dir" --format png
  rc=$?
  if [ ! -f "$dir/run.json" ]; then
    echo "FAIL backward $shape: attnprof exited $rc without an archive"; fail=$((fail + 1)); continue
  fi
  python3 "$(dirname "$0")/check_backward.py" "$dir" "$shape" && pass=$((pass + 1)) || fail=$((fail + 1))
done
# The mma.sync configurations (what flash and efficient run) hold the verdict; the sm_90a ones
# (kernels/attn_bwd_sm90a.cu, bench-only and not yet run on a GPU when this was written: see
# bench/results/2026-12-04-backward-wgmma-pending.md) are checked and printed beside them without
# counting, until bench/bwd_wgmma_h200.sh has passed them and they join the verdict.
if [ "${GPU_TEST_ONLY:-}" != gqa ] && [ -x "${BWD_TC_BENCH:-}" ]; then
  if "$BWD_TC_BENCH" check mma > "$work/bwd_tc_check.txt" 2>&1; then
    pass=$((pass + 1))
    echo "  tensor-core backward: $(grep -c ' dq .* dv [0-9.e+-]*$' "$work/bwd_tc_check.txt") configurations checked" \
         "($(grep -c 'causal=0 .* dv [0-9.e+-]*$' "$work/bwd_tc_check.txt") non-causal), every one within tolerance"
  else
    fail=$((fail + 1))
    grep -E "FAIL|error" "$work/bwd_tc_check.txt" | head -20 | sed 's/^/FAIL bwd_tc: /'
  fi
  if "$BWD_TC_BENCH" list | grep -q ' sm90a$'; then
    timeout 120 "$BWD_TC_BENCH" check sm90a > "$work/bwd_sm90a_check.txt" 2>&1
    echo "  sm_90a backward (bench-only, not in the verdict): rc=$? $(tail -1 "$work/bwd_sm90a_check.txt")"
  fi
fi
if [ "${GPU_TEST_ONLY:-}" = backward ]; then
  echo "$pass passed, $fail failed (GPU_TEST_ONLY=backward)"
  [ "$fail" -eq 0 ]; exit
fi
if [ -n "${GPU_TEST_SHAPES:-}" ] || [ "${GPU_TEST_ONLY:-}" = gqa ]; then
  echo "$pass passed, $fail failed (GPU_TEST_SHAPES or GPU_TEST_ONLY: counters and sweep checks not run)"
  [ "$fail" -eq 0 ]; exit
fi
# The predictions against the counters, at the default shape (8x16x1024x64).
dir="$work/default-counters"
"$bin" run --iters 3 --warmup 1 --quiet -o "$dir" --format png
if [ -f "$dir/counters.json" ] || [ -f "$dir/run.json" ]; then
  python3 tests/gpu/check_counters.py "$dir" && pass=$((pass + 1)) || fail=$((fail + 1))
else
  echo "FAIL default shape with counters: no archive"; fail=$((fail + 1))
fi
# attnprof sweep for real: two shapes, each a child `attnprof run` on GPU 0;
# each archive records the GPU (UUID, CUDA_VISIBLE_DEVICES) and every variant's device bytes.
dir="$work/sweep"
"$bin" sweep --seq 256,512 --dim 64 --tokens 1024 --heads 4 --iters 2 --warmup 1 --no-counters --no-calibrate \
  --gpus 0 -q -o "$dir"
rc=$?
python3 - "$dir" "$rc" <<'PY' && pass=$((pass + 1)) || fail=$((fail + 1))
import json, os, sys
d, rc = sys.argv[1], int(sys.argv[2])
bad = [] if rc == 0 else [f"sweep exited {rc}"]
for shape in ("4x4x256x64", "2x4x512x64"):
    p = f"{d}/shapes/{shape}/run.json"
    if not os.path.exists(p):
        bad.append(f"{shape}: no archive"); continue
    run = json.load(open(p))
    gpu = run["gpu"]
    if not gpu.get("uuid", "").startswith("GPU-") or gpu.get("cuda_visible_devices") != "0":
        bad.append(f"{shape}: GPU not recorded: {gpu.get('uuid')!r} {gpu.get('cuda_visible_devices')!r}")
    for v in run["variants"]:
        if v["status"] in ("ok", "skipped") and not v.get("device_bytes", 0) > 0:
            bad.append(f"{shape} {v['name']}: no device_bytes")
    st = json.load(open(f"{d}/status/{shape}.json"))
    if st["exit_code"] != 0 or st["gpu"] != "0":
        bad.append(f"{shape}: status {st}")
for f in ("sweep.md", "sweep.csv", "sweep.tex", "figures/sweep-memory.png"):
    if not os.path.exists(f"{d}/{f}"):
        bad.append(f"no {f}")
for b in bad:
    print(f"FAIL sweep: {b}")
if not bad:
    print("  sweep: 2 shapes archived with GPU UUID and device bytes")
sys.exit(1 if bad else 0)
PY
# The fused kernels' own check (bench/fused_bench.cu --check): every configuration on
# every head dim (and padded ones), odd S included, against an FP64 reference at rel.
# error <= 2.5e-3; the sm_90a flash kernels (on a 9.0 GPU) causal and non-causal.
if [ -z "${GPU_TEST_SHAPES:-}" ] && [ -x "${FUSED_BENCH:-}" ]; then
  if "$FUSED_BENCH" --check > "$work/fused_check.txt" 2>&1; then
    pass=$((pass + 1))
    echo "  fused kernels: $(grep -c ' ok$' "$work/fused_check.txt") checks ok" \
         "($(grep -c 'sm90a.*noncausal.* ok$' "$work/fused_check.txt") of them sm_90a non-causal)"
  else
    fail=$((fail + 1))
    grep -E "FAIL|error|correctness" "$work/fused_check.txt" | head -20 | sed 's/^/FAIL fused: /'
  fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
