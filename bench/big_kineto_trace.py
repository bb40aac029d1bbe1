#!/usr/bin/env python3
"""Writes a large synthetic PyTorch-profiler (Kineto) trace for the import budget of
issue #11 (a 200 MB, 2-million-event trace imports in <= 5 s and <= 2 GB on 2 cores;
bench/RESULTS.md). Each forward is what PyTorch 2.11 records for the naive variant on
the H200 (tests/fixtures/torch-h200/kineto_naive.json.gz): a record_function
"attn_fwd" range, its ATen ops, the runtime/driver calls, 7 GPU operations (cuBLAS
memset, nvjet GEMM, scale, Memcpy DtoD, masked_fill, softmax, GEMM) with ac2g flows,
laid out as Kineto writes them. Messy on purpose: a second GPU's kernels, runtime
calls without correlation, instant and metadata events, non-ASCII names.

usage: big_kineto_trace.py OUT.json[.gz] [--events N]   (default 2,000,000)"""
import argparse
import gzip
import sys

KERNELS = [
    ("gpu_memset", "Memset (Device)", "cudaMemsetAsync", "aten::bmm", 1),
    ("kernel", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", "cuLaunchKernelEx", "aten::bmm", 170),
    ("kernel", "void at::native::vectorized_elementwise_kernel<8, at::native::AUnaryFunctor<c10::BFloat16> >",
     "cudaLaunchKernel", "aten::mul", 120),
    ("gpu_memcpy", "Memcpy DtoD (Device -> Device)", "cudaMemcpyAsync", "aten::copy_", 129),
    ("kernel", "void at::native::elementwise_kernel<128, 4, (anonymous namespace)::masked_fill_kernel>",
     "cudaLaunchKernel", "aten::masked_fill_", 357),
    ("kernel", "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, float, 10>",
     "cudaLaunchKernel", "aten::_softmax", 190),
    ("kernel", "nvjet_sm90_tst_64x512_64x2_1x2_h_bz_coopB_NNT", "cuLaunchKernelEx", "aten::bmm", 120),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--events", type=int, default=2_000_000)
    a = ap.parse_args()
    opener = gzip.open if a.out.endswith(".gz") else open
    pid = tid = 638
    out = opener(a.out, "wt", encoding="utf-8")
    w = out.write
    w('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {\n      "id": 0, "name": "NVIDIA H200", '
      '"totalGlobalMem": 150109880320,\n      "computeMajor": 9, "computeMinor": 0,\n      "maxThreadsPerBlock": 1024,'
      ' "maxThreadsPerMultiprocessor": 2048,\n      "regsPerBlock": 65536, "warpSize": 32,\n      '
      '"sharedMemPerBlock": 49152, "numSms": 132\n    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": '
      '232448, "sharedMemPerMultiprocessor": 233472\n    }\n  ],\n  "cupti_version": 130001,\n'
      '  "cuda_runtime_version": 13000,\n  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": 1790857026000000000,\n'
      '  "traceEvents": [\n')
    n = 0
    first = True
    ts = 5155312983000.0
    corr = 1
    ext = 1
    it = 0

    def ev(s):
        nonlocal n, first
        # Kineto's layout without the optional spaces: 2 M events make ~200 MB.
        s = s.replace('": ', '":').replace(', "', ',"')
        w(("" if first else ",\n") + s)
        first = False
        n += 1

    while n < a.events:
        t0 = ts
        fwd_dur = 1200.0
        ev('{"ph": "X", "cat": "user_annotation", "name": "attn_fwd", "pid": %d, "tid": %d, "ts": %.3f, "dur": %.3f, '
           '"args": {"External id": %d, "Record function id": 0}}' % (pid, tid, t0, fwd_dur, ext))
        ext += 1
        gpu_t = t0 + 300.0
        for k, (cat, name, api, aten, dur) in enumerate(KERNELS):
            ct = t0 + 5.0 + k * 40.0
            ev('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d, "ts": %.3f, "dur": 35.000, '
               '"args": {"External id": %d}}' % (aten, pid, tid, ct, ext))
            ev('{"ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d, "ts": %.3f, "dur": 6.000, '
               '"args": {"External id": %d, "cbid": 211, "correlation": %d}}'
               % ("cuda_driver" if api.startswith("cu") and not api.startswith("cuda") else "cuda_runtime", api,
                  pid, tid, ct + 2.0, ext, corr))
            args = '"device": 0, "stream": 7, "correlation": %d' % corr
            if cat == "kernel":
                args += (', "registers per thread": 32, "shared memory": 0, "grid": [131072, 1, 1], '
                         '"block": [128, 1, 1]')
            else:
                args += ', "bytes": %d' % (4 if cat == "gpu_memset" else 268435456)
            ev('{"ph": "X", "cat": "%s", "name": "%s", "pid": 0, "tid": 7, "ts": %.3f, "dur": %.3f, "args": {%s}}'
               % (cat, name, gpu_t, dur, args))
            ev('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %.3f, "cat": "ac2g", "name": "ac2g"}'
               % (corr, pid, tid, ct + 2.0))
            ev('{"ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %.3f, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
               % (corr, gpu_t))
            gpu_t += dur + 2.0
            corr += 1
            ext += 1
        # messy: another GPU, a call without correlation, an instant, non-ASCII
        ev('{"ph": "X", "cat": "kernel", "name": "nccl_fremde_Gerät_κ", "pid": 1, "tid": 9, "ts": %.3f, "dur": 3.0, '
           '"args": {"device": 1, "stream": 9, "correlation": %d}}' % (t0 + 10, corr))
        corr += 1
        ev('{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamIsCapturing", "pid": %d, "tid": %d, "ts": %.3f, '
           '"dur": 0.5, "args": {"cbid": 317}}' % (pid, tid, t0 + 1))
        ev('{"ph": "i", "s": "t", "name": "synchronize", "pid": %d, "tid": %d, "ts": %.3f}' % (pid, tid, t0 + fwd_dur))
        ts = gpu_t + 50.0
        it += 1
    w('\n  ],\n  "traceName": "big_kineto_trace.py"\n}\n')
    out.close()
    print(f"{a.out}: {n} events, {it} forwards", file=sys.stderr)


if __name__ == "__main__":
    main()
