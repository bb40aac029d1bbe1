"""Issue 38's decode table in one process: our split-KV kernels (the fixed split grid the recorder
runs, and the balanced grid, kernels/flash_decode.h) called directly through ctypes, beside
PyTorch's SDPA cuDNN and flash backends (enable_gqa, no mask: one query sees every key). Each
output is checked against an FP32 SDPA reference on fresh random inputs (poisoned output first).
Timing: 20 calls back to back between two CUDA events, per call, median of 7 such runs after
warm-up: launch latency from Python is hidden the same way for every column (the one-call method
of bench/decode_splits.py charged it to ours). GB/s: K+V bytes over the time.
Usage: python3 bench/decode_balanced.py [build/libattnprof_recorder.so]"""
import ctypes, statistics, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "build/libattnprof_recorder.so")
I, P, Z = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
lib.launch_flash_decode.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, I, I, I, P]
lib.launch_flash_decode_balanced.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, I, I, P]
lib.flash_decode_workspace_bytes.argtypes = [I, I, I, I, I]
lib.flash_decode_workspace_bytes.restype = Z
lib.flash_decode_balanced_workspace_bytes.argtypes = [I, I, I, I, I, I, I, I]
lib.flash_decode_balanced_workspace_bytes.restype = Z
lib.flash_decode_balanced_grid.argtypes = [I, I, I, I, I, I, I]
lib.flash_decode_balanced_pieces.argtypes = [I, I, I, I, I, I, I]
lib.flash_decode_blocks_per_sm.argtypes = [I, ctypes.POINTER(I)]


class Cfg(ctypes.Structure):
    _fields_ = [("kernel_name", ctypes.c_char_p), ("combine_name", ctypes.c_char_p), ("head_dim", I),
                ("block_rows", I), ("chunk_keys", I), ("warps", I), ("threads", I), ("smem_bytes", Z),
                ("path", ctypes.c_char_p), ("balanced", I)]


lib.flash_decode_config_at.restype = ctypes.POINTER(Cfg)
lib.flash_decode_config_at.argtypes = [I]
dev = "cuda"
torch.manual_seed(2)
sms = torch.cuda.get_device_properties(0).multi_processor_count


def timeit(fn, reps=7, n=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n):
            fn()
        b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3 / n)
    return statistics.median(ts), min(ts), max(ts)


print(torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(), f"{sms} SMs", flush=True)
x = torch.empty(1 << 30, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
cp = timeit(lambda: y.copy_(x), n=5)[0]
print(f"copy 1 GiB: {cp:.1f} us = {2 * x.numel() / cp / 1e3:.0f} GB/s (read+write)", flush=True)
del x, y
fixed = {D: lib.flash_decode_config_for_dim(D) for D in (64, 128)}
bal = {D: next(i for i in range(lib.flash_decode_config_count())
               if lib.flash_decode_config_at(i).contents.head_dim == D and lib.flash_decode_config_at(i).contents.balanced)
       for D in (64, 128)}
# The six points, then odd shapes for correctness only (odd KV length, q_seq > 1, MQA).
POINTS = [(16, 32, 8, 1, 8192, 128), (64, 32, 8, 1, 4096, 128), (1, 32, 8, 1, 131072, 128), (8, 64, 8, 1, 32768, 128),
          (32, 32, 32, 1, 4096, 128), (4, 32, 4, 1, 16384, 64)]
ODD = [(2, 8, 2, 1, 1001, 128), (1, 32, 1, 1, 3001, 128), (2, 32, 8, 4, 517, 128), (1, 16, 2, 1, 4099, 64),
       (1, 8, 1, 8, 300, 128), (3, 40, 8, 3, 20011, 128), (1, 4, 4, 1, 65536, 128)]
bad = 0
for (B, Hq, Hkv, SQ, L, D) in POINTS + ODD:
    timed = (B, Hq, Hkv, SQ, L, D) in POINTS
    q = torch.randn(B, Hq, SQ, D, device=dev, dtype=torch.bfloat16)
    k, v = (torch.randn(B, Hkv, L, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
    # Bottom-right causal mask: query i sees keys 0 .. i + L - SQ.
    mask = torch.ones(SQ, L, dtype=torch.bool, device=dev).tril(L - SQ) if SQ > 1 else None
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask, enable_gqa=Hq != Hkv)
    out = torch.empty_like(q)
    lse = torch.empty(B, Hq, SQ, device=dev, dtype=torch.float32)
    kv_bytes = 2 * B * Hkv * L * D * 2
    cols = []
    for name, cfg in (("fixed", fixed[D]), ("balanced", bal[D])):
        lib.flash_decode_prepare(cfg)
        bps = I(0); lib.flash_decode_blocks_per_sm(cfg, ctypes.byref(bps))
        slots = sms * bps.value
        if name == "balanced":
            grid = lib.flash_decode_balanced_grid(cfg, B, Hq, Hkv, SQ, L, slots)
            pieces = lib.flash_decode_balanced_pieces(cfg, B, Hq, Hkv, SQ, L, grid)
            ws = torch.zeros(max(4, lib.flash_decode_balanced_workspace_bytes(cfg, B, Hq, Hkv, SQ, L, D, grid)),
                             dtype=torch.uint8, device=dev)
            call = lambda: lib.launch_flash_decode_balanced(cfg, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                                             out.data_ptr(), lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv,
                                                             SQ, L, D, grid, None)
            how = f"grid {grid}, pieces<={pieces}"
        else:
            tiles = B * Hkv * (-(-(Hq // Hkv * SQ) // 16))
            s = 1 if tiles >= 0.8 * slots else max(1, min(128, -(-L // 64), slots // tiles))
            kps = -(-(-(-L // s)) // 64) * 64
            s = -(-L // kps)
            ws = torch.empty(max(4, lib.flash_decode_workspace_bytes(B, Hq, SQ, D, s)), dtype=torch.uint8, device=dev)
            call = lambda: lib.launch_flash_decode(cfg, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                                   lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv, SQ, L, D, s, kps, None)
            how = f"{s} splits"
        errs = []
        for rep in range(3 if name == "balanced" else 1):  # the counters must return to zero: run it again
            out.fill_(float("nan"))
            rc = call(); torch.cuda.synchronize()
            errs.append(((out.float() - ref).norm() / ref.norm()).item() if rc == 0 else float("nan"))
        err = max(errs)
        ok = err == err and err < 1e-2
        bad += not ok
        t = timeit(call) if timed and ok else (float("nan"),) * 3
        cols.append(f"{name}({how}): {t[0]:.1f}us [{t[1]:.1f}-{t[2]:.1f}] {kv_bytes / t[0] / 1e3:.0f}GB/s "
                    f"err {err:.1e}{'' if ok else ' FAIL'}")
    if timed:
        for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("sdpa_flash", SDPBackend.FLASH_ATTENTION)):
            try:
                with sdpa_kernel(be):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=Hq != Hkv)
                    e = ((fn().float() - ref).norm() / ref.norm()).item()
                    t = timeit(fn)
                cols.append(f"{name}: {t[0]:.1f}us [{t[1]:.1f}-{t[2]:.1f}] {kv_bytes / t[0] / 1e3:.0f}GB/s err {e:.1e}")
            except Exception as ex:  # noqa: BLE001
                cols.append(f"{name}: n/a ({type(ex).__name__})")
    print(f"B={B} Hq={Hq} Hkv={Hkv} q_seq={SQ} L={L} D={D} kv={kv_bytes / 2**20:.0f}MiB | " + " | ".join(cols),
          flush=True)
    del q, k, v, ref, out
    torch.cuda.empty_cache()
print(f"{bad} failed correctness", flush=True)
