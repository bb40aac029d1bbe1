"""Loads an archive's trace.json with Holistic Trace Analysis (PyPI), with ijson's
streaming reader forced, and checks it reads like a PyTorch profiler trace:
  - the start time is read (baseTimeNanoseconds before traceEvents),
  - rank 0 (distributedInfo, found by HTA's regex),
  - one ProfilerStep per recorded forward (iterations 0..n-1),
  - per variant: GPU operations per forward and kernel time per forward (medians)
    equal to the report's summary.csv.
Variants are told apart by the range named after each variant around its forwards.
HTA rounds ns-resolution timestamps to whole µs unless HTA_DISABLE_NS_ROUNDING=1
(its documented switch; PyTorch's own traces are ns-resolution too): set here, so
kernel times compare exactly.
usage: check_hta.py ARCHIVE_DIR"""
import csv
import json
import os

os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
import shutil
import statistics
import sys
import tempfile

import ijson  # noqa: F401  (HTA's fast reader needs it; fail here if it is missing)
from hta.common.trace_parser import set_default_trace_parsing_backend
from hta.configs.parser_config import ParserBackend
from hta.trace_analysis import TraceAnalysis


def fail(msg):
    print(f"check_hta: {sys.argv[1]}: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    archive = sys.argv[1]
    with open(os.path.join(archive, "summary.csv"), newline="") as f:
        summary = [r for r in csv.DictReader(f) if int(r["forwards"] or 0) > 0]
    with open(os.path.join(archive, "trace.json")) as f:
        base_ns = json.load(f)["baseTimeNanoseconds"]
    work = tempfile.mkdtemp()
    try:
        shutil.copy(os.path.join(archive, "trace.json"), os.path.join(work, "trace.json"))
        set_default_trace_parsing_backend(ParserBackend.IJSON_BATCH_AND_COMPRESS)
        a = TraceAnalysis(trace_dir=work, include_last_profiler_step=True)
    finally:
        shutil.rmtree(work)
    t = a.t
    if t.get_ranks() != [0]:
        fail(f"ranks {t.get_ranks()}, expected [0]")
    start = t.get_trace_start_unixtime_ns(0)
    if start != base_ns:
        fail(f"start time {start} ns, expected baseTimeNanoseconds {base_ns}")
    df = t.get_trace(0)
    names = t.symbol_table.get_sym_table()
    df["s_name"] = df["name"].map(lambda i: names[i])
    df["s_cat"] = df["cat"].map(lambda i: names[i])
    n_fwd = sum(int(r["forwards"]) for r in summary)
    steps = df[df["s_name"].str.startswith("ProfilerStep#")]
    if len(steps) != n_fwd:
        fail(f"{len(steps)} ProfilerStep events, expected one per recorded forward ({n_fwd})")
    if t.get_iterations(0) != list(range(n_fwd)):
        fail(f"iterations {t.get_iterations(0)[:5]}..., expected 0..{n_fwd - 1}")
    gpu = df[df["stream"] > 0]
    for r in summary:
        v = r["variant"]
        outer = df[(df["s_cat"] == "user_annotation") & (df["s_name"] == v)]
        if len(outer) != 1:
            fail(f"variant {v}: {len(outer)} ranges named after it, expected 1")
        lo = outer["ts"].iloc[0]
        hi = lo + outer["dur"].iloc[0] + 1e-6  # float sums: a nanosecond is 1e-3
        its = steps[(steps["ts"] >= lo) & (steps["ts"] + steps["dur"] <= hi)]
        if len(its) != int(r["forwards"]):
            fail(f"variant {v}: {len(its)} steps inside its range, expected {r['forwards']}")
        counts, times = [], []
        for name in its["s_name"]:
            it = int(name.split("#")[1])
            ops = gpu[gpu["iteration"] == it]
            counts.append(len(ops))
            times.append(ops["dur"].sum())
        ops_med = statistics.median(counts)
        us_med = statistics.median(times)
        if round(ops_med) != int(r["ops_per_forward"]):
            fail(f"variant {v}: {ops_med} GPU operations per forward in HTA, {r['ops_per_forward']} in the report")
        if abs(us_med - float(r["cuda_us_median"])) > 0.0015 * max(1, ops_med):
            fail(f"variant {v}: {us_med:.3f} µs kernel time per forward in HTA, {r['cuda_us_median']} in the report")
        print(f"check_hta: {v}: {len(its)} steps, {ops_med:g} ops and {us_med:.3f} µs per forward, as in the report")
    print(f"check_hta: {archive}: HTA (ijson) reads rank 0 from {start} ns, {n_fwd} steps, every variant as reported")


if __name__ == "__main__":
    main()
