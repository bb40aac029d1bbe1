#!/usr/bin/env python3
"""PyTorch profiler (Kineto) traces of the series' six attention variants, as test
fixtures for `attnprof import` (tests/fixtures/torch-h200).

Each variant runs in its own profiling session; every recorded forward sits inside
`torch.profiler.record_function("attn_fwd")` (the series' pattern) and is followed by a
synchronization outside the range, as attnprof's own runner does. Each session is
exported with `prof.export_chrome_trace` and stored gzip'd (mtime 0, so the same trace
gives the same bytes) as kineto_<variant>.json.gz. A summary (torch.log) lists, per
variant, the GPU operations each forward launched, counted the way attnprof counts
them: GPU ops whose launching cuda_runtime/cuda_driver call (same args.correlation)
starts inside the forward's range.

Run on the GPU machine (needs torch with CUDA):
    python3 bench/torch_traces.py --out tests/fixtures/torch-h200            # 8x16x1024x64
    python3 bench/torch_traces.py --shape 2x4x256x64 --out /tmp/torch-small   # a small shape
then check them with
    build/attnprof import tests/fixtures/torch-h200/kineto_*.json.gz -o /tmp/torch-archive
"""
import argparse
import gzip
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile, record_function

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")


def naive(q, k, v, mask, inplace):
    """The series' naive attention: two matmuls around scale, mask and softmax."""
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if inplace:
        scores.masked_fill_(mask, float("-inf"))
    else:
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def sdpa(backend):
    def run(q, k, v, mask):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return run


VARIANTS = [
    ("naive", lambda q, k, v, m: naive(q, k, v, m, inplace=False)),
    ("naive_inplace", lambda q, k, v, m: naive(q, k, v, m, inplace=True)),
    ("sdpa_math", sdpa(SDPBackend.MATH)),
    ("sdpa_efficient", sdpa(SDPBackend.EFFICIENT_ATTENTION)),
    ("sdpa_flash", sdpa(SDPBackend.FLASH_ATTENTION)),
    ("sdpa_cudnn", sdpa(SDPBackend.CUDNN_ATTENTION)),
]


def ops_per_forward(trace):
    """[(forward index, [GPU op events])] by attnprof's rule (launch inside the range)."""
    ev = trace["traceEvents"]
    fwds = sorted((e for e in ev if e.get("cat") == "user_annotation" and e.get("name") == "attn_fwd"),
                  key=lambda e: e["ts"])
    launch = {}
    for e in ev:
        if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {}):
            launch.setdefault(e["args"]["correlation"], e)
    out = []
    for i, f in enumerate(fwds):
        lo, hi = f["ts"], f["ts"] + f["dur"]
        ops = [e for e in ev if e.get("cat") in GPU_CATS and (l := launch.get(e.get("args", {}).get("correlation")))
               and l.get("tid") == f.get("tid") and lo <= l["ts"] and l["ts"] + l["dur"] <= hi]
        out.append((i, sorted(ops, key=lambda e: e["ts"])))
    return out


def record(name, fn, q, k, v, mask, forwards, warmup, out_dir, log):
    with torch.no_grad():
        for _ in range(warmup):
            fn(q, k, v, mask)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(forwards):
                with record_function("attn_fwd"):
                    fn(q, k, v, mask)
                torch.cuda.synchronize()
    plain = os.path.join(out_dir, f"kineto_{name}.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as f:
        raw = f.read()
    os.remove(plain)
    with open(plain + ".gz", "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw)
    trace = json.loads(raw)
    per = ops_per_forward(trace)
    counts = [len(ops) for _, ops in per]
    kern_us = [sum(e["dur"] for e in ops) for _, ops in per]
    print(f"## {name}: {len(per)} forwards, GPU ops per forward {counts}, kernel µs per forward "
          f"{', '.join(f'{x:.1f}' for x in kern_us)}", file=log)
    for e in per[0][1] if per else []:
        a = e.get("args", {})
        extra = f" {a.get('bytes')} B" if e["cat"] != "kernel" else f" grid={a.get('grid')} block={a.get('block')}"
        print(f"    {e['cat']:10s} {e['name'][:100]}{extra}", file=log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="8x16x1024x64", help="BxHxSxD, bf16 causal (default 8x16x1024x64)")
    ap.add_argument("--forwards", type=int, default=5, help="recorded forwards per variant (default 5)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", required=True, help="directory for kineto_<variant>.json.gz and torch.log")
    ap.add_argument("--variants", default=",".join(n for n, _ in VARIANTS))
    a = ap.parse_args()
    B, H, S, D = (int(x) for x in a.shape.split("x"))
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    mask = torch.triu(torch.ones(S, S, dtype=torch.bool, device="cuda"), 1)
    wanted = set(a.variants.split(","))
    with open(os.path.join(a.out, "torch.log"), "w") as log:
        print(f"torch {torch.__version__} CUDA {torch.version.cuda} cuDNN {torch.backends.cudnn.version()} "
              f"{torch.cuda.get_device_name()}; shape {B}x{H}x{S}x{D} bf16 causal; {a.forwards} forwards "
              f"in record_function('attn_fwd')", file=log)
        for name, fn in VARIANTS:
            if name not in wanted:
                continue
            try:
                record(name, fn, q, k, v, mask, a.forwards, a.warmup, a.out, log)
            except RuntimeError as e:  # a backend this GPU/build lacks: say so, go on
                print(f"## {name}: not recorded: {str(e).splitlines()[0][:200]}", file=log)
            log.flush()
    sys.stdout.write(open(os.path.join(a.out, "torch.log")).read())


if __name__ == "__main__":
    main()
