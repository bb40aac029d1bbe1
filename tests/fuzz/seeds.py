#!/usr/bin/env python3
"""Seeds for `make fuzz`, written into the folder given: every fixture and hostile
archive as one input (run.json, the separator line, trace.json), and small cuts
of each (its first forwards only) so the fuzzer starts from inputs it can mutate
quickly. An archive with counters.json carries it after a second separator, and
the sweep fixture's sweep.json rides along after a third on one seed, and a staging
folder's manifest (the document pipeline's, as a killed commit leaves it) after a fourth,
and a PyTorch profiler trace (compare's model-trace path) after a fifth."""
import glob, gzip, json, os, sys

SEP = "\n#--trace.json--\n"
SEP_COUNTERS = "\n#--counters.json--\n"
SEP_SWEEP = "\n#--sweep.json--\n"
SEP_MANIFEST = "\n#--manifest--\n"
SEP_MODEL = "\n#--model-trace--\n"
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
dirs = sorted(glob.glob(os.path.join(root, "h200-*"))) + sorted(glob.glob(os.path.join(root, "hostile", "*")))
for d in dirs:
    if not os.path.isfile(os.path.join(d, "run.json")):
        continue
    name = os.path.basename(d)
    run_text = open(os.path.join(d, "run.json")).read()
    trace_text = open(os.path.join(d, "trace.json")).read()
    counters = os.path.join(d, "counters.json")
    counters_text = SEP_COUNTERS + open(counters).read() if os.path.isfile(counters) else ""
    with open(os.path.join(out, name), "w") as f:
        f.write(run_text + SEP + trace_text + counters_text)
    # A small cut: one variant, the events of its first forward's window.
    try:
        run, trace = json.loads(run_text), json.loads(trace_text)
    except ValueError:
        continue
    ranges = [e for e in trace.get("traceEvents", []) if e.get("cat") == "user_annotation"
              and e.get("name") == "attn_fwd" and isinstance(e.get("ts"), (int, float))]
    if not ranges or not run.get("variants"):
        continue
    lo = ranges[0]["ts"]
    hi = lo + max(float(ranges[0].get("dur", 0) or 0), 1) * 3
    keep = [e for e in trace["traceEvents"] if isinstance(e.get("ts"), (int, float)) and lo - 50 <= e["ts"] <= hi]
    var = ranges[0].get("args", {}).get("variant")
    run["variants"] = [v for v in run["variants"] if v.get("name") == var][:1] or run["variants"][:1]
    trace["traceEvents"] = keep
    with open(os.path.join(out, name + "-cut"), "w") as f:
        f.write(json.dumps(run) + SEP + json.dumps(trace, separators=(",", ":")))
# The sweep plan reader: the H200 sweep's sweep.json after the smallest archive.
small = min((d for d in dirs if os.path.isfile(os.path.join(d, "run.json"))), key=lambda d: os.path.getsize(os.path.join(d, "trace.json")))
with open(os.path.join(out, "sweep-plan"), "w") as f:
    f.write(open(os.path.join(small, "run.json")).read() + SEP + open(os.path.join(small, "trace.json")).read()
            + SEP_SWEEP + open(os.path.join(root, "sweep-h200", "sweep.json")).read())
# The manifest reader on its own: the lines a commit writes ("NAME INODE").
with open(os.path.join(out, "manifest"), "w") as f:
    f.write(SEP_MANIFEST + "figures 1234567\nsamples.csv 1234568\nreport.md 1234569\nreport.html 99\n")
with open(os.path.join(out, "record"), "w") as f:
    f.write(SEP_MANIFEST + "# attnprof: the outputs\nreport.md\treport --format png,svg --figure-size screen\n"
            "figures/occupancy-column.pdf\treport --format png,pdf --figure-size column\n")
# compare's model-trace path: the smallest model trace (a CUDA-graph replay, 34 KB).
model = gzip.open(os.path.join(root, "models-roles-h200", "sdpa-cudagraph-fp16.json.gz"), "rt").read()
with open(os.path.join(out, "model-trace"), "w") as f:
    f.write(SEP_MODEL + model)
