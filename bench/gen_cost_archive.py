#!/usr/bin/env python3
"""Synthetic archives for timing report and compare (cost_scaling.py): the shape of what
`attnprof run` writes (run.json, trace.json), with made-up times, so that report and compare
can be timed at sizes no fixture has. Nothing in them is a measurement of a GPU.

  gen_cost_archive.py OUT --forwards N [--kernels K] [--run-json-mb M] [--slower F] [--seed S]

OUT          the archive directory (created; must not exist)
--forwards   N recorded forwards of one variant ("naive")
--kernels    K distinct kernels in each forward (names k0..k{K-1}, each launched once), default 3
--run-json-mb  pad run.json to about M MB with occupancy_api entries (one per made-up kernel),
             default 0 (no padding)
--slower     every kernel's duration multiplied by F (a run to compare against), default 1
--seed       the durations' jitter seed, default 1
"""
import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, "..", "tests", "fixtures", "h200-4var")
PID, TID, STREAM = 549, 254230528, 29


def run_json(args, template):
    r = json.load(open(os.path.join(template, "run.json")))
    v = dict(r["variants"][0])
    v.update(name="naive", expected_ops=args.kernels, expected_memcpy=0, status="ok", error="", facts={})
    r["variants"] = [v]
    r["iters"] = args.forwards
    r["command_line"] = "bench/gen_cost_archive.py (synthetic: no GPU ran)"
    r.pop("occupancy_api", None)
    if args.run_json_mb > 0:
        entry = {"kernel": "k", "threads": 256, "registers": 32, "static_smem": 0, "dynamic_smem": 0,
                 "blocks_per_sm": 8}
        size = len(json.dumps(entry)) + 16
        n = int(args.run_json_mb * 1e6 / size)
        r["occupancy_api"] = [dict(entry, kernel="k%d_pad(int)" % i) for i in range(n)]
    return r


def events(args):
    rnd = random.Random(args.seed)
    ev = [{"name": "process_name", "ph": "M", "pid": PID, "tid": 0, "args": {"name": "attnprof"}}]
    corr, t = 1, 1000.0
    per_forward = 4.0 + 3.0 * args.kernels
    ev.append({"ph": "X", "cat": "user_annotation", "name": "naive", "pid": PID, "tid": TID, "ts": t - 10,
               "dur": per_forward * args.forwards + 20, "args": {"variant": "naive", "iteration": -1}})
    for i in range(args.forwards):
        start = t
        ev.append({"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": PID, "tid": TID, "ts": round(start, 3),
                   "dur": round(per_forward - 1.0, 3), "args": {"variant": "naive", "iteration": i}})
        gpu = start + 2.0
        for k in range(args.kernels):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": TID,
                       "ts": round(start + 0.5 + 0.001 * k, 3), "dur": 0.0005,
                       "args": {"External id": corr, "correlation": corr}})
            dur = (1.0 + 0.05 * rnd.random()) * args.slower
            ev.append({"ph": "X", "cat": "kernel", "name": "k%d(int)" % k, "pid": 0, "tid": STREAM,
                       "ts": round(gpu, 3), "dur": round(dur, 3),
                       "args": {"External id": corr, "device": 0, "stream": STREAM, "correlation": corr,
                                "registers per thread": 32, "shared memory": 0, "static shared memory": 0,
                                "dynamic shared memory": 0, "grid": [132, 1, 1], "block": [256, 1, 1]}})
            gpu += 3.0 * args.slower
            corr += 1
        t = max(start + per_forward, gpu + 1.0)
    return ev


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--forwards", type=int, required=True)
    p.add_argument("--kernels", type=int, default=3)
    p.add_argument("--run-json-mb", type=float, default=0)
    p.add_argument("--slower", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    template = json.load(open(os.path.join(TEMPLATE, "trace.json")))
    os.makedirs(args.out)
    with open(os.path.join(args.out, "run.json"), "w") as f:
        json.dump(run_json(args, TEMPLATE), f)
    trace = {k: template[k] for k in ("schemaVersion", "deviceProperties", "cupti_version", "cuda_runtime_version",
                                      "cuda_driver_version", "displayTimeUnit", "baseTimeNanoseconds", "traceName")}
    trace["pid"] = PID
    trace["traceEvents"] = events(args)
    with open(os.path.join(args.out, "trace.json"), "w") as f:
        json.dump(trace, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
