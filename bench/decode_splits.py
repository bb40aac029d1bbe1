"""The split-KV decode kernel of libattnprof_recorder.so called directly (ctypes, as
bench/fused_bench.sh calls the fused kernels), beside PyTorch in the same process: at each decode
point of the series' table, its output against an FP32 SDPA reference (relative error), and its
time per call for several split counts around the one the recorder chooses (one wave
rule, src/recorder/gqa_decode.c: *, FlashAttention-2's: f), for each compiled configuration of the
head dim, CUDA events, median of 20 after 5 warm-ups. One line per point and configuration.
Usage: python3 bench/decode_splits.py [build/libattnprof_recorder.so]"""
import ctypes, math, statistics, sys
import torch
import torch.nn.functional as F

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "build/libattnprof_recorder.so")
I, P, Z = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
lib.launch_flash_decode.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, I, I, I, P]
lib.launch_flash_decode.restype = I
lib.flash_decode_workspace_bytes.argtypes = [I, I, I, I, I]
lib.flash_decode_workspace_bytes.restype = Z
lib.flash_decode_config_for_dim.argtypes = [I]
lib.flash_decode_prepare.argtypes = [I]
lib.flash_decode_blocks_per_sm.argtypes = [I, ctypes.POINTER(I)]
dev = "cuda"
torch.manual_seed(1)
sms = torch.cuda.get_device_properties(0).multi_processor_count


def timeit(fn, n=20, w=5):
    for _ in range(w):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


def fa2_splits(tiles, seq, slots, block):
    n_blocks = (seq + block - 1) // block
    if tiles >= 0.8 * slots:
        return 1
    mx = min(128, slots, n_blocks)
    eff = []
    for s in range(1, mx + 1):
        ok = s == 1 or -(-n_blocks // s) != -(-n_blocks // (s - 1))
        w = tiles * s / slots
        eff.append(w / math.ceil(w) if ok else 0)
    best = max(eff)
    return next(s for s, e in enumerate(eff, 1) if e > 0 and e >= 0.85 * best)


def one_wave(tiles, seq, slots, block):
    """src/recorder/gqa_decode.c's rule: as many splits as fit in one wave."""
    n_blocks = (seq + block - 1) // block
    if tiles >= 0.8 * slots:
        return 1
    return max(1, min(128, n_blocks, slots // tiles))


class Cfg(ctypes.Structure):
    _fields_ = [("kernel_name", ctypes.c_char_p), ("combine_name", ctypes.c_char_p), ("head_dim", I),
                ("block_rows", I), ("chunk_keys", I), ("warps", I), ("threads", I), ("smem_bytes", Z),
                ("path", ctypes.c_char_p)]


lib.flash_decode_config_at.argtypes = [I]
lib.flash_decode_config_at.restype = ctypes.POINTER(Cfg)
n_cfg = lib.flash_decode_config_count()
for (B, Hq, Hkv, L, D) in [(16, 32, 8, 8192, 128), (64, 32, 8, 4096, 128), (1, 32, 8, 131072, 128),
                           (8, 64, 8, 32768, 128), (32, 32, 32, 4096, 128), (4, 32, 4, 16384, 64)]:
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
    k, v = (torch.randn(B, Hkv, L, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), enable_gqa=Hq != Hkv)
    out = torch.empty_like(q)
    lse = torch.empty(B, Hq, 1, device=dev, dtype=torch.float32)
    tiles = B * Hkv * (-(-(Hq // Hkv) // 16))
    kv_bytes = 2 * B * Hkv * L * D * 2
    default = lib.flash_decode_config_for_dim(D)
    for cfg in range(n_cfg):
        c = lib.flash_decode_config_at(cfg).contents
        if c.head_dim != D:
            continue
        if lib.flash_decode_prepare(cfg) != 0:
            print(f"  {c.kernel_name.decode()}: cannot run here", flush=True)
            continue
        bps = I(0)
        lib.flash_decode_blocks_per_sm(cfg, ctypes.byref(bps))
        slots = sms * bps.value
        chosen = one_wave(tiles, L, slots, 64)
        fa2 = fa2_splits(tiles, L, slots, 64)
        txt = []
        for s in sorted({1, chosen, fa2, 2 * chosen}):
            kps = -(-(-(-L // s)) // 64) * 64
            s_real = -(-L // kps)
            ws = torch.empty(max(1, lib.flash_decode_workspace_bytes(B, Hq, 1, D, s_real)), dtype=torch.uint8,
                             device=dev)
            call = lambda: lib.launch_flash_decode(cfg, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                                   lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv, 1, L, D, s_real, kps,
                                                   None)
            out.fill_(float("nan"))
            rc = call(); torch.cuda.synchronize()
            err = ((out.float() - ref).norm() / ref.norm()).item() if rc == 0 else float("nan")
            t = timeit(call) if rc == 0 else float("nan")
            mark = ("*" if s == chosen else "") + ("f" if s == fa2 else "")
            txt.append(f"{s_real}{mark}:{t:.1f}us/{kv_bytes / t / 1e3:.0f}GB/s/err{err:.1e}")
        name = c.kernel_name.decode() + (" (runs)" if cfg == default else "")
        print(f"splits B={B} Hq={Hq} Hkv={Hkv} L={L} D={D} tiles={tiles} slots={slots} {name}  " + "  ".join(txt),
              flush=True)
    del q, k, v, ref, out
    torch.cuda.empty_cache()
