#!/usr/bin/env python3
"""Cost of report, compare and sweep --collect at 4 sizes each, on synthetic
archives made by bench/gen_cost_archive.py, timed as whole processes with os.wait4 (the kernel's
own accounting of each finished child, read by bench/rusage_run.c: user + system CPU seconds,
wall seconds, peak RSS).

  cc -O2 -o bench/rusage_run bench/rusage_run.c   (or RUSAGE_RUN=PATH)
  bench/cost_scaling.py BIN WORKDIR [--runs R] [--jobs J] [--scale F] > results.md

  forwards  compare of N forwards a side (3 kernels each; the run 2x slower) against the report
            of one, N = 10k 20k 40k 80k
  kernels   report and compare of one forward of K distinct kernels, K = 8k 16k 32k 64k
  run.json  peak RSS of report of a 5-forward archive whose run.json is M MB (occupancy_api
            entries), M = 8 16 32 60, against the stated bound 8 x the file + 16 MiB
  status    sweep --collect of a one-shape sweep whose status file is padded to 8, 16, 32 and
            64 KiB (the limit, SWEEP_STATUS_MAX_BYTES) and to 15 MB (refused)

Every measurement is made R times (default 2: run A and run B), J processes at a time (default 1;
more only on a machine with that many idle cores); the fitted exponent is the least-squares slope
of log(cost) on log(size), per run. --scale divides every size (a quick check of the script).
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "tests", "fixtures", "h200-4var")
STATUS_LIMIT = 64 << 10


RUSAGE_RUN = os.environ.get("RUSAGE_RUN", os.path.join(HERE, "rusage_run"))


def timed(argv):
    """(cpu s, wall s, peak MiB, exit code) of one run of argv, output discarded, as
    bench/rusage_run.c reads them from wait4 (a small C parent: a child of this Python would
    report Python's own pages as its peak)."""
    out = subprocess.run([RUSAGE_RUN, *argv], stdout=subprocess.PIPE, check=True, text=True).stdout.split()
    return float(out[0]), float(out[1]), int(out[2]) / 1024.0, int(out[3])


def fit(points):
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / sum((a - mx) ** 2 for a in xs)


def gen(out, *args):
    subprocess.run([sys.executable, os.path.join(HERE, "gen_cost_archive.py"), out, *map(str, args)], check=True)


def status_sweep(dst, pad_bytes):
    """A one-shape sweep: the 4-variant fixture as its complete archive and a status file of
    pad_bytes (an unknown key holding a string; the reader ignores it, the limit does not)."""
    os.makedirs(os.path.join(dst, "status"))
    shutil.copytree(FIXTURE, os.path.join(dst, "shapes", "2x4x256x64"))
    base = {"exit_code": 0, "error": "", "gpu": "0", "seconds": 1.0, "slurm_job_id": "", "slurm_task": -1, "log": ""}
    base["pad"] = ""
    base["pad"] = "x" * max(0, pad_bytes - len(json.dumps(base)))
    with open(os.path.join(dst, "status", "2x4x256x64.json"), "w") as f:
        json.dump(base, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("work")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    b, w = os.path.realpath(a.bin), a.work
    os.makedirs(w, exist_ok=True)
    s = lambda n: max(1, int(n / a.scale))
    fw = [s(n) for n in (10000, 20000, 40000, 80000)]
    kk = [s(n) for n in (8000, 16000, 32000, 64000)]
    mb = [m / a.scale for m in (8, 16, 32, 60)]
    st = [8 << 10, 16 << 10, 32 << 10, STATUS_LIMIT, 15 * 1000 * 1000]

    t0 = time.monotonic()
    gens = []
    for n in fw:
        gens += [(f"{w}/a{n}", "--forwards", n, "--seed", 1), (f"{w}/b{n}", "--forwards", n, "--seed", 2, "--slower", 2)]
    for k in kk:
        gens += [(f"{w}/k{k}", "--forwards", 1, "--kernels", k), (f"{w}/j{k}", "--forwards", 1, "--kernels", k, "--seed", 2)]
    for m in mb:
        gens += [(f"{w}/m{m:g}", "--forwards", 5, "--run-json-mb", m)]
    with cf.ThreadPoolExecutor(max(a.jobs, 1)) as ex:
        list(ex.map(lambda g: gen(*g), gens))
    for p in st:
        status_sweep(f"{w}/s{p}", p)
    gen_s = time.monotonic() - t0

    # (section, size, what, argv); each run writes its own output directory
    cases = []
    for n in fw:
        cases += [("fw", n, "report", [b, "report", f"{w}/a{n}", "-o", "OUT", "-q", "--force", "--no-pdf"]),
                  ("fw", n, "compare", [b, "compare", f"{w}/a{n}", f"{w}/b{n}", "-o", "OUT", "-q", "--force"])]
    for k in kk:
        cases += [("kr", k, "report", [b, "report", f"{w}/k{k}", "-o", "OUT", "-q", "--force", "--no-pdf"]),
                  ("kr", k, "compare", [b, "compare", f"{w}/k{k}", f"{w}/j{k}", "-o", "OUT", "-q", "--force"])]
    for m in mb:
        cases += [("rj", m, "report", [b, "report", f"{w}/m{m:g}", "-o", "OUT", "-q", "--force", "--no-pdf"])]
    for p in st:
        cases += [("st", p, "collect", [b, "sweep", "--collect", f"{w}/s{p}", "-q"])]
    jobs = [(r, c) for r in range(a.runs) for c in cases]
    res = {}

    def one(job):
        r, (sec, size, what, argv) = job
        out = f"{w}/out-{r}-{sec}-{size}-{what}"
        argv = [out if x == "OUT" else x for x in argv]
        if sec == "st":  # collect writes into the sweep itself: give each run its own copy
            src = argv[3]
            shutil.copytree(src, out)
            argv[3] = out
        v = timed(argv)
        shutil.rmtree(out, ignore_errors=True)
        return job, v

    t1 = time.monotonic()
    # the longest first, so the pool ends together
    order = sorted(jobs, key=lambda j: -(j[1][1] if j[1][0] != "st" else 0) * (3 if j[1][0] == "rj" else 1))
    with cf.ThreadPoolExecutor(max(a.jobs, 1)) as ex:
        for (r, (sec, size, what, _)), v in ex.map(one, order):
            res[(r, sec, size, what)] = v
    run_s = time.monotonic() - t1

    R = range(a.runs)
    runs = lambda f: " / ".join(f(r) for r in R)
    cpu = lambda *k: res[k][0]
    print(f"{a.runs} runs of each measurement (A / B), {a.jobs} at a time on {os.cpu_count()} CPUs; "
          f"archives made in {gen_s:.0f} s, measured in {run_s:.0f} s; CPU = user + system seconds (os.wait4)\n")
    bad = [(k, v[3]) for k, v in res.items() if v[3] != 0 and k[1] != "st"]
    if bad:
        print(f"exit codes other than 0: {bad}\n")

    print("## Forwards: compare of N forwards a side against the report of one\n")
    print("| N a side | trace.json MB | report CPU s | compare CPU s | compare / report | report wall s | compare wall s | compare peak MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for n in fw:
        mbs = os.path.getsize(f"{w}/a{n}/trace.json") / 1e6
        print(f"| {n} | {mbs:.0f} | {runs(lambda r: '%.3f' % cpu(r, 'fw', n, 'report'))} "
              f"| {runs(lambda r: '%.3f' % cpu(r, 'fw', n, 'compare'))} "
              f"| {runs(lambda r: '%.2f' % (cpu(r, 'fw', n, 'compare') / cpu(r, 'fw', n, 'report')))} "
              f"| {runs(lambda r: '%.3f' % res[(r, 'fw', n, 'report')][1])} "
              f"| {runs(lambda r: '%.3f' % res[(r, 'fw', n, 'compare')][1])} "
              f"| {runs(lambda r: '%.1f' % res[(r, 'fw', n, 'compare')][2])} |")
    print(f"\nfitted exponents in N (CPU): compare {runs(lambda r: '%.2f' % fit([(n, cpu(r, 'fw', n, 'compare')) for n in fw]))}, "
          f"report {runs(lambda r: '%.2f' % fit([(n, cpu(r, 'fw', n, 'report')) for n in fw]))}; "
          f"compare's peak RSS {runs(lambda r: '%.2f' % fit([(n, res[(r, 'fw', n, 'compare')][2]) for n in fw]))}\n")

    print("## Kernels: one forward of K distinct kernels\n")
    print("| K | report CPU s | report peak MiB | compare CPU s | compare peak MiB |")
    print("|---|---|---|---|---|")
    for k in kk:
        print(f"| {k} | {runs(lambda r: '%.3f' % cpu(r, 'kr', k, 'report'))} | {runs(lambda r: '%.1f' % res[(r, 'kr', k, 'report')][2])} "
              f"| {runs(lambda r: '%.3f' % cpu(r, 'kr', k, 'compare'))} | {runs(lambda r: '%.1f' % res[(r, 'kr', k, 'compare')][2])} |")
    print(f"\nfitted exponents in K (CPU): report {runs(lambda r: '%.2f' % fit([(k, cpu(r, 'kr', k, 'report')) for k in kk]))}, "
          f"compare {runs(lambda r: '%.2f' % fit([(k, cpu(r, 'kr', k, 'compare')) for k in kk]))}\n")

    print("## run.json: report of a 5-forward archive whose run.json is padded, against 8 x the file + 16 MiB\n")
    print("| run.json MB | report CPU s | peak MiB | bound MiB | peak / file | exit |")
    print("|---|---|---|---|---|---|")
    pts = {r: [] for r in R}
    for m in mb:
        by = os.path.getsize(f"{w}/m{m:g}/run.json")
        f = by / 2 ** 20
        for r in R:
            pts[r].append((by, res[(r, 'rj', m, 'report')][2]))
        print(f"| {by / 1e6:.1f} | {runs(lambda r: '%.3f' % cpu(r, 'rj', m, 'report'))} "
              f"| {runs(lambda r: '%.1f' % res[(r, 'rj', m, 'report')][2])} | {8 * f + 16:.1f} "
              f"| {runs(lambda r: '%.1f' % (res[(r, 'rj', m, 'report')][2] / f))} | {runs(lambda r: str(res[(r, 'rj', m, 'report')][3]))} |")
    print(f"\nfitted exponents in the file's size: peak RSS {runs(lambda r: '%.2f' % fit(pts[r]))}, "
          f"CPU {runs(lambda r: '%.2f' % fit([(os.path.getsize(f'{w}/m{m:g}/run.json'), cpu(r, 'rj', m, 'report')) for m in mb]))}\n")

    print(f"## Status files: sweep --collect of one shape, its status file at 4 sizes up to the limit ({STATUS_LIMIT} bytes) and one past it\n")
    print("| status bytes | collect CPU s | peak MiB | exit |")
    print("|---|---|---|---|")
    for p in st:
        print(f"| {p} | {runs(lambda r: '%.3f' % cpu(r, 'st', p, 'collect'))} | {runs(lambda r: '%.1f' % res[(r, 'st', p, 'collect')][2])} "
              f"| {runs(lambda r: str(res[(r, 'st', p, 'collect')][3]))} |")
    print(f"\nfitted exponents up to the limit (4 sizes): peak RSS {runs(lambda r: '%.2f' % fit([(p, res[(r, 'st', p, 'collect')][2]) for p in st[:4]]))}, "
          f"CPU {runs(lambda r: '%.2f' % fit([(p, cpu(r, 'st', p, 'collect')) for p in st[:4]]))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
