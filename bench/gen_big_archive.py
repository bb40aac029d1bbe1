#!/usr/bin/env python3
"""Big archives (1M GPU ops, 100k forwards, a run.json of MB) for the render's linear-time
budget and the run.json reader's memory bound (bench/RESULTS.md):

    python3 bench/gen_big_archive.py range    OUT   # 2 forwards of 500k GPU ops each: 1M ops
    python3 bench/gen_big_archive.py forwards OUT   # 100k forwards of 10 GPU ops each: 1M ops
    python3 bench/gen_big_archive.py runjson OUT MB [objects|string]
                                                    # the 4-variant fixture, run.json padded to MB

Each GPU op is a kernel launched by its own cudaLaunchKernel (same correlation id),
inside the forward's `attn_fwd` range, as `attnprof run` records them. The device
properties and the rest of run.json come from tests/fixtures/h200-4var. The trace
is written as a stream (the script itself stays small in memory); then
    /usr/bin/time -v build/attnprof report OUT --format png -q
measures the render.

`runjson` is the run.json reader's memory budget: tests/fixtures/h200-4var with a run.json of
MB megabytes, its padding a key no reader knows holding either empty objects (`objects`, the
default: `{}`, 3 bytes each, the densest thing a DOM can be made to hold, about 70 bytes of heap
a byte of file in jansson) or one long string (`string`: about 3 bytes of heap a byte)."""
import json, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "tests", "fixtures", "h200-4var")

kind, out = sys.argv[1], sys.argv[2]
if kind == "runjson":
    os.makedirs(out, exist_ok=True)
    shutil.copy(os.path.join(FIX, "trace.json"), out)
    text = open(os.path.join(FIX, "run.json")).read().rstrip()
    assert text.endswith("}")
    want = int(float(sys.argv[3]) * 1e6) - len(text)
    with open(os.path.join(out, "run.json"), "w") as f:
        if len(sys.argv) > 4 and sys.argv[4] == "string":
            f.write(text[:-1] + ',\n "padding": "' + "x" * max(0, want - 20) + '"\n}\n')
        else:
            f.write(text[:-1] + ',\n "padding": [{}')
            f.write(",{}" * max(0, (want - 20) // 3))
            f.write("]\n}\n")
    sys.exit(0)
if kind == "range":
    variant, n_fwd, ops_per_fwd = "naive", 2, 500_000
elif kind == "forwards":
    variant, n_fwd, ops_per_fwd = "flash", 100_000, 10
else:
    sys.exit("usage: gen_big_archive.py range|forwards OUT | runjson OUT MB")

os.makedirs(out, exist_ok=True)
run = json.load(open(os.path.join(FIX, "run.json")))
base = json.load(open(os.path.join(FIX, "trace.json")))
v = dict(run["variants"][0])
v.update(name=variant, title=variant, expected_ops=ops_per_fwd, expected_memcpy=0, status="ok", error="",
         facts={})
run["variants"] = [v]
with open(os.path.join(out, "run.json"), "w") as f:
    json.dump(run, f, indent=1)

PID, TID, STREAM = 1, 1, 7
KERNELS = ["attnprof_flash_fwd_bf16_d64_128x64_w4(attnprof::FlashParams)",
           "attnprof_softmax_rows_bf16<4>(__nv_bfloat16 const*, __nv_bfloat16*, int)",
           "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)"]
header = {k: base[k] for k in ("schemaVersion", "deviceProperties", "cupti_version", "cuda_runtime_version",
                               "cuda_driver_version", "displayTimeUnit", "traceName")}
header["baseTimeNanoseconds"] = 1_700_000_000_000_000_000
header["pid"] = PID
with open(os.path.join(out, "trace.json"), "w") as f:
    f.write(json.dumps(header)[:-1] + ', "traceEvents": [\n')
    ts = 100.0
    corr = 1
    first = True

    def ev(e):
        global first
        f.write(("" if first else ",\n") + json.dumps(e, separators=(",", ":")))
        first = False

    start_outer = ts
    for it in range(n_fwd):
        fwd_start = ts
        launches = []
        t = ts + 1.0
        for k in range(ops_per_fwd):
            ev({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": TID,
                "ts": round(t, 3), "dur": 2.5, "args": {"correlation": corr, "External id": corr}})
            launches.append((corr, t + 5.0, k))
            corr += 1
            t += 3.0
        for c, gts, k in launches:
            ev({"ph": "X", "cat": "kernel", "name": KERNELS[k % len(KERNELS)], "pid": 0, "tid": STREAM,
                "ts": round(gts, 3), "dur": 2.0,
                "args": {"correlation": c, "device": 0, "stream": STREAM, "registers per thread": 128,
                         "shared memory": 27648, "static shared memory": 27648, "dynamic shared memory": 0,
                         "grid": [128, 8, 1], "block": [128, 1, 1]}})
        ts = t + 10.0
        ev({"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": PID, "tid": TID,
            "ts": round(fwd_start, 3), "dur": round(ts - fwd_start, 3), "args": {"variant": variant, "iteration": it}})
        ts += 5.0
    ev({"ph": "X", "cat": "user_annotation", "name": variant, "pid": PID, "tid": TID, "ts": round(start_outer, 3),
        "dur": round(ts - start_outer, 3), "args": {"variant": variant, "iteration": -1}})
    f.write("\n]}\n")
