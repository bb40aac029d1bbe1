#!/usr/bin/env python3
"""Two builds of the production sm_90a flash kernels timed against each other in one process
(the kernel split along its roles must be no slower than the file it replaced).

Each library is kernels/flash_fwd_sm90a.cu of one tree compiled alone, with the production
object's flags (bench/sm90a_split_ab.sh builds them). Both export the same C API
(kernels/flash_fwd_sm90a.h) and are loaded side by side through ctypes (RTLD_LOCAL: each keeps
its own kernels). At every shape the default configuration of each library for that head dim
runs on the same inputs, launched in ABBA order so that neither build always runs first, with a
CUDA event pair around each launch. After a warm-up, PAIRS launches of each are timed; the
medians, their ratio (B / A) and a seeded 95% bootstrap interval of that ratio are printed, with
a verdict against a 2% floor (the CUDA-time floor of `attnprof compare`): "same" when the whole
interval lies within [1/1.02, 1.02], "slower"/"faster" when it lies beyond, else "ambiguous".
Outputs are also checked to be bit-identical between the builds (same SASS, same inputs).

    python3 bench/sm90a_split_ab.py LIB_A LIB_B [PAIRS]
"""
import ctypes
import random
import statistics
import sys

import torch

if len(sys.argv) < 3:
    print("sm90a_split_ab.py: pass two libraries (LIB_A LIB_B [PAIRS])", file=sys.stderr)
    sys.exit(2)
PAIRS = int(sys.argv[3]) if len(sys.argv) > 3 else 60
FLOOR = 0.02


class Cfg(ctypes.Structure):  # flash_fwd_config
    _fields_ = [("kernel_name", ctypes.c_char_p), ("head_dim", ctypes.c_int), ("block_m", ctypes.c_int),
                ("block_n", ctypes.c_int), ("warps", ctypes.c_int), ("threads", ctypes.c_int),
                ("smem_bytes", ctypes.c_size_t), ("path", ctypes.c_char_p)]


P, I = ctypes.c_void_p, ctypes.c_int


def load(path):
    lib = ctypes.CDLL(path)
    lib.flash_sm90a_config_at.restype = ctypes.POINTER(Cfg)
    lib.launch_flash_sm90a.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, P]
    assert lib.flash_sm90a_available() == 1, f"{path}: sm_90a kernels not available"
    defaults = {}
    for i in range(lib.flash_sm90a_config_count()):
        c = lib.flash_sm90a_config_at(i).contents
        assert lib.flash_sm90a_prepare(i) == 0, f"{path}: prepare {c.kernel_name}"
        defaults.setdefault(c.head_dim, (i, c.kernel_name.decode()))
    return lib, defaults


lib_a, cfg_a = load(sys.argv[1])
lib_b, cfg_b = load(sys.argv[2])
assert sorted(cfg_a) == sorted(cfg_b), f"head dims differ: {sorted(cfg_a)} vs {sorted(cfg_b)}"
workspace = torch.zeros(2, device="cuda", dtype=torch.int32)
print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}; A = {sys.argv[1]}, B = {sys.argv[2]}; "
      f"{PAIRS} launches of each per shape after 10 warm-up pairs, ABBA order")


def launch(lib, idx, q, k, v, out, lse, causal):
    B, H, S, D = q.shape
    rc = lib.launch_flash_sm90a(idx, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr(),
                                workspace.data_ptr(), B, H, S, D, int(causal), torch.cuda.current_stream().cuda_stream)
    assert rc == 0, f"launch rc {rc}"


def ratio_ci(a, b, reps=2000, seed=1):
    rng = random.Random(seed)
    rs = []
    for _ in range(reps):
        ra = [a[rng.randrange(len(a))] for _ in a]
        rb = [b[rng.randrange(len(b))] for _ in b]
        rs.append(statistics.median(rb) / statistics.median(ra))
    rs.sort()
    return rs[int(0.025 * reps)], rs[int(0.975 * reps) - 1]


def verdict(lo, hi):
    if lo >= 1 / (1 + FLOOR) and hi <= 1 + FLOOR:
        return "same"
    if lo > 1 + FLOOR:
        return "slower"
    if hi < 1 / (1 + FLOOR):
        return "faster"
    return "ambiguous"


def shape_row(B, H, S, D, causal):
    ia, name = cfg_a[D]
    ib, name_b = cfg_b[D]
    assert name == name_b, f"D {D}: {name} vs {name_b}"
    torch.manual_seed(S + D)
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    out_a, out_b = torch.empty_like(q), torch.empty_like(q)
    lse_a, lse_b = (torch.empty(B, H, S, device="cuda", dtype=torch.float32) for _ in range(2))
    runs = {"A": (lib_a, ia, out_a, lse_a), "B": (lib_b, ib, out_b, lse_b)}
    times = {"A": [], "B": []}
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(4 * PAIRS)]
    order = []
    for p in range(10 + PAIRS):
        for who in ("AB" if p % 2 == 0 else "BA"):
            lib, idx, out, lse = runs[who]
            if p < 10:
                launch(lib, idx, q, k, v, out, lse, causal)
                continue
            e0, e1 = ev[len(order)]
            e0.record()
            launch(lib, idx, q, k, v, out, lse, causal)
            e1.record()
            order.append((who, e0, e1))
    torch.cuda.synchronize()
    for who, e0, e1 in order:
        times[who].append(e0.elapsed_time(e1) * 1000.0)
    same_bits = torch.equal(out_a, out_b) and torch.equal(lse_a, lse_b)
    ma, mb = statistics.median(times["A"]), statistics.median(times["B"])
    lo, hi = ratio_ci(times["A"], times["B"])
    flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    print(f"| {B}x{H}x{S}x{D} | {'causal' if causal else 'full'} | {name} | {ma:.1f} | {mb:.1f} | "
          f"{flops / mb / 1e6:.0f} | {mb / ma:.4f} [{lo:.4f}, {hi:.4f}] | {verdict(lo, hi)} | "
          f"{'yes' if same_bits else 'NO'} |", flush=True)
    return verdict(lo, hi), same_bits


print("| shape | mask | kernel | A µs | B µs | B TFLOP/s | B / A [95% CI] | verdict | outputs bit-identical |")
print("| --- | --- | --- | ---: | ---: | ---: | --- | --- | --- |")
shapes = []
for D in (64, 128):
    shapes += [(8, 16, 1024, D), (4, 16, 4096, D), (1, 16, 16384, D)]
shapes += [(4, 16, 4096, D) for D in sorted(cfg_a) if D not in (64, 128)]
results = [shape_row(*s, causal) for s in shapes for causal in (False, True)]
slower = sum(v == "slower" for v, _ in results)
differ = sum(not same for _, same in results)
print(f"{len(results)} shapes: {sum(v == 'same' for v, _ in results)} same, {slower} slower, "
      f"{sum(v == 'faster' for v, _ in results)} faster, {sum(v == 'ambiguous' for v, _ in results)} ambiguous; "
      f"outputs differ at {differ}")
sys.exit(1 if slower or differ else 0)
