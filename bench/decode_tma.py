"""Issue 38's decode points in one process: where the split-KV kernel's time goes, and the TMA ring
beside the cp.async one (bench/decode_probe.cu's library: kernels/flash_decode.cu plus probes),
beside PyTorch's SDPA cuDNN and flash (FA2) backends; and the persistent grid (`_tma_pers`: equal chunk
ranges per block, the ring running on across tiles) beside the fixed and balanced TMA grids.

Per point: every candidate checked against an FP32 SDPA reference on fresh random inputs (output
poisoned first; the balanced and persistent grids three times, so their counters return to zero),
then timed twice in alternation (A B C .. A B C): 20 calls back to back between two CUDA events, per
call, median of 7 such runs after warm-up, the same for every column. Probes: the split kernel alone
(no combine), and at the D = 128 points the fixed and persistent grids with their math left out (the
ring, waits and merges only). The cp.async kernels are checked, not timed. Device ceilings: a 1 GiB
copy (read + write) and a 1 GiB read (16-byte loads) at 4 and 8 blocks of 256 threads per SM.
Correctness only: odd shapes (odd KV lengths, q_seq > 1, MQA, MHA, D 64/128), the persistent grid
also on 1, 5 and 37 blocks. CHECK_ONLY=1: a short check for compute-sanitizer.
Usage: python3 bench/decode_tma.py [build/bench/libdecode_probe.so]"""
import ctypes, os, statistics, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "build/bench/libdecode_probe.so")
I, P, Z = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
lib.launch_flash_decode.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, I, I, I, P]
lib.launch_flash_decode_balanced.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, I, I, P]
lib.probe_decode_split_only.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, I, I, I]
lib.probe_read_launch.argtypes = [P, Z, P, I]
lib.probe_persistent_launch.argtypes = [P, P, P, P, P, P, I, I, I, I, I, I, I]
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
                ("path", ctypes.c_char_p), ("balanced", I), ("merge_rows_max", I)]


lib.flash_decode_config_at.restype = ctypes.POINTER(Cfg)
lib.flash_decode_config_at.argtypes = [I]
dev = "cuda"
torch.manual_seed(5)
sms = torch.cuda.get_device_properties(0).multi_processor_count
names = {lib.flash_decode_config_at(i).contents.kernel_name.decode(): i for i in range(lib.flash_decode_config_count())}
# The recorder's TMA ring per head dim (its fixed grid, the splits merged in the kernel).
TMA_NAME = {D: lib.flash_decode_config_at(lib.flash_decode_config_for_device(D, 9)).contents.kernel_name.decode()
            for D in (64, 128)}


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
    return statistics.median(ts)


print(torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(), f"{sms} SMs", flush=True)
x = torch.randint(0, 255, (1 << 30,), dtype=torch.uint8, device=dev); y = torch.empty_like(x)
sink = torch.zeros(1, dtype=torch.int32, device=dev)
for rep in range(0 if os.environ.get("CHECK_ONLY") == "1" else 2):
    cp = timeit(lambda: y.copy_(x), n=5)
    rd = {bps: timeit(lambda: lib.probe_read_launch(x.data_ptr(), x.numel(), sink.data_ptr(), sms * bps), n=5)
          for bps in (4, 8)}
    print(f"copy 1 GiB: {cp:.1f} us = {2 * x.numel() / cp / 1e3:.0f} GB/s (read+write); read 1 GiB: " +
          ", ".join(f"{bps} blocks/SM {t:.1f} us = {x.numel() / t / 1e3:.0f} GB/s" for bps, t in rd.items()), flush=True)
del x, y


def split_rule(cfg, B, Hq, Hkv, SQ, L):
    """The recorder's fixed-grid rule: one wave of splits (src/recorder/gqa_decode.c), one block per
    multiprocessor on the TMA ring (src/recorder/variants/flash.c)."""
    bps = I(0)
    lib.flash_decode_prepare(cfg); lib.flash_decode_blocks_per_sm(cfg, ctypes.byref(bps))
    slots = sms * (1 if lib.flash_decode_tma_ring(cfg) else max(1, bps.value))
    tiles = B * Hkv * (-(-(Hq // Hkv * SQ) // 16))
    s = 1 if tiles >= 0.8 * slots else max(1, min(128, -(-L // 64), slots // tiles))
    kps = -(-(-(-L // s)) // 64) * 64
    return -(-L // kps), kps


def cand_fixed(cfg, B, Hq, Hkv, SQ, L, D, q, k, v, out, lse, which=None):
    """which: None, the whole forward; else probe_decode_split_only's kernel (a configuration or a probe)."""
    s, kps = split_rule(cfg, B, Hq, Hkv, SQ, L)
    # zeroed: the kernels that merge their own splits count arrivals there (and leave the counters at zero)
    ws = torch.zeros(max(4, lib.flash_decode_workspace_bytes(B, Hq, SQ, D, s)), dtype=torch.uint8, device=dev)
    if which is not None:
        return (lambda: lib.probe_decode_split_only(which, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                                    lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv, SQ, L, D, s, kps)), \
            f"{s} splits", ws
    return (lambda: lib.launch_flash_decode(cfg, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                            lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv, SQ, L, D, s, kps, None)), \
        f"{s} splits", ws


def cand_balanced(cfg, B, Hq, Hkv, SQ, L, D, q, k, v, out, lse, slots=None, probe=False):
    """probe: the persistent grid with its math left out in place of cfg's (cfg, d128 _tma_pers, sets the grid)."""
    lib.flash_decode_prepare(cfg)
    bps = I(0); lib.flash_decode_blocks_per_sm(cfg, ctypes.byref(bps))
    grid = lib.flash_decode_balanced_grid(cfg, B, Hq, Hkv, SQ, L, slots or sms * bps.value)
    pieces = lib.flash_decode_balanced_pieces(cfg, B, Hq, Hkv, SQ, L, grid)
    ws = torch.zeros(max(4, lib.flash_decode_balanced_workspace_bytes(cfg, B, Hq, Hkv, SQ, L, D, grid)),
                     dtype=torch.uint8, device=dev)
    if probe:
        return (lambda: lib.probe_persistent_launch(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                                    lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv, SQ, L, D, grid)), \
            f"grid {grid}, pieces<={pieces}", ws
    return (lambda: lib.launch_flash_decode_balanced(cfg, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                                     lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv, SQ, L, D, grid,
                                                     None)), f"grid {grid}, pieces<={pieces}", ws


def ring_study():
    """RING=1: the recorder's TMA ring beside other ring depths and chunk sizes and the fixed grid with the
    combine fused in (bench/decode_probe.cu's probe_ring_* and probe_fused_*, split for one block per
    multiprocessor), the tensor maps' L2 promotion (none, the recorder's; 256 and 128 bytes) and, where the
    rule splits, other split counts; every candidate checked against FP32 SDPA (the fused ones three times:
    their counters return to zero), then timed in two alternating passes beside PyTorch's SDPA cuDNN."""
    lib.probe_ring_config.restype = ctypes.POINTER(Cfg)
    lib.probe_ring_config.argtypes = [I]
    lib.probe_ring_blocks_per_sm.argtypes = [I, ctypes.POINTER(I)]
    lib.probe_ring_forward.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, I, I, I]
    lib.probe_set_l2_promotion.argtypes = [I]
    rings = [lib.probe_ring_config(i).contents for i in range(lib.probe_ring_count())]
    bad = 0
    for (B, Hq, Hkv, SQ, L, D) in POINTS:
        q = torch.randn(B, Hq, SQ, D, device=dev, dtype=torch.bfloat16)
        k, v = (torch.randn(B, Hkv, L, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
        mask = torch.ones(SQ, L, dtype=torch.bool, device=dev).tril(L - SQ) if SQ > 1 else None
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask, enable_gqa=Hq != Hkv)
        out, lse = torch.empty_like(q), torch.empty(B, Hq, SQ, device=dev, dtype=torch.float32)
        kv_bytes = 2 * B * Hkv * L * D * 2
        tma = names[TMA_NAME[D]]
        s0, _ = split_rule(tma, B, Hq, Hkv, SQ, L)
        plans = [("tma", tma, None, 0, None)] + [(f"tma_l2_{b}", tma, None, b, None) for b in (256, 128)]
        if s0 > 1:
            plans += [(f"tma_splits{n}", tma, None, 0, n) for n in sorted({max(2, s0 // 2), s0 * 2})
                      if n != s0 and n <= 128]
        for i, r in enumerate(rings):
            if r.head_dim == D:
                plans.append((r.kernel_name.decode().replace("probe_ring_", "").replace("probe_", ""), None, i, 0,
                              None))
        calls, res = [], {}
        for tag, cfg, ring, promo, splits in plans:
            if ring is None:
                s, kps = split_rule(cfg, B, Hq, Hkv, SQ, L)
            else:  # one block per multiprocessor, whatever else would fit
                tiles = B * Hkv * (-(-(Hq // Hkv * SQ) // 16))
                s = 1 if tiles >= 0.8 * sms else max(1, min(128, -(-L // 64), sms // tiles))
                kps = -(-(-(-L // s)) // 64) * 64
            if splits:
                kps = -(-(-(-L // splits)) // 64) * 64
            s = -(-L // kps)
            # the fused entries' tile counters after the partials, zero before the first forward
            ws = torch.zeros(lib.flash_decode_workspace_bytes(B, Hq, SQ, D, s) + 4 * B * Hkv * 64 + 16,
                             dtype=torch.uint8, device=dev)
            if ring is None:
                fn = (lambda cfg=cfg, s=s, kps=kps, ws=ws, promo=promo: (lib.probe_set_l2_promotion(promo),
                      lib.launch_flash_decode(cfg, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                              lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv, SQ, L, D, s, kps, None))[1])
            else:
                fn = (lambda ring=ring, s=s, kps=kps, ws=ws: (lib.probe_set_l2_promotion(0),
                      lib.probe_ring_forward(ring, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                             lse.data_ptr(), ws.data_ptr(), B, Hq, Hkv, SQ, L, D, s, kps))[1])
            errs = []
            for _ in range(3):
                out.fill_(float("nan"))
                rc = fn(); torch.cuda.synchronize()
                errs.append(((out.float() - ref).norm() / ref.norm()).item() if rc == 0 else float("nan"))
            err = float("nan") if any(e != e for e in errs) else max(errs)
            ok = err == err and err < 1e-2
            bad += not ok
            res[tag] = [f"{s} splits", err, ok, []]
            if ok:
                calls.append((tag, fn))
        lib.probe_set_l2_promotion(0)
        def sd():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=Hq != Hkv)
        res["cudnn"] = ["sdpa", ((sd().float() - ref).norm() / ref.norm()).item(), True, []]
        calls.append(("cudnn", sd))
        for rep in range(2):
            for tag, fn in calls:
                res[tag][3].append(timeit(fn))
        cols = [f"{tag}({how}): {' / '.join(f'{x:.1f}' for x in ts) or '-'}us"
                f"{f' {kv_bytes / min(ts) / 1e3:.0f}GB/s' if ts else ''} err {err:.1e}{'' if ok else ' FAIL'}"
                for tag, (how, err, ok, ts) in res.items()]
        print(f"B={B} Hq={Hq} Hkv={Hkv} q_seq={SQ} L={L} D={D} kv={kv_bytes / 2**20:.0f}MiB | " + " | ".join(cols),
              flush=True)
        del q, k, v, ref, out, calls
        torch.cuda.empty_cache()
    print(f"{bad} failed correctness (ring study)", flush=True)


CANDS = {D: [("cp", f"attnprof_flash_decode_bf16_d{D}_16x32_w4_s3", 0),
             ("cp_bal", f"attnprof_flash_decode_bf16_d{D}_16x32_w4_s3_bal", 1),
             ("tma", TMA_NAME[D], 0),
             ("tma_bal", f"attnprof_flash_decode_bf16_d{D}_16x32_w4_s3_tma_bal", 1),
             ("tma_pers", f"attnprof_flash_decode_bf16_d{D}_16x32_w4_s3_tma_pers", 1)] for D in (64, 128)}
# Timed at the points (the cp.async kernels are checked only: bench/results/2026-12-04-decode-tma.md timed them).
TIMED = {"tma", "tma_bal", "tma_pers"}
# The persistent grid on small grids too (correctness only): blocks whose ranges cross several tiles, the
# ring running on across each boundary.
SMALL_GRIDS = (1, 5, 37)
POINTS = [(16, 32, 8, 1, 8192, 128), (64, 32, 8, 1, 4096, 128), (1, 32, 8, 1, 131072, 128), (8, 64, 8, 1, 32768, 128),
          (32, 32, 32, 1, 4096, 128), (4, 32, 4, 1, 16384, 64), (8, 32, 8, 1, 131072, 128), (2, 32, 8, 4, 16384, 128)]
ODD = [(2, 8, 2, 1, 1001, 128), (1, 32, 1, 1, 3001, 128), (2, 32, 8, 4, 517, 128), (1, 16, 2, 1, 4099, 64),
       (1, 8, 1, 8, 300, 128), (3, 40, 8, 3, 20011, 128), (1, 4, 4, 1, 65536, 128), (2, 32, 32, 1, 77, 64),
       (1, 64, 2, 2, 33, 128), (2, 8, 8, 5, 4097, 64)]
# CHECK_ONLY=1 (compute-sanitizer): five odd shapes, the fixed TMA grid (its combine) and the persistent grid
# in every mode, no timing.
CHECK_ONLY = os.environ.get("CHECK_ONLY") == "1"
if CHECK_ONLY:  # CHECK_SHAPES=N: the first N odd shapes only (compute-sanitizer's pass)
    POINTS, ODD = [], ODD[:int(os.environ.get("CHECK_SHAPES", "5"))]
    CANDS = {D: [c for c in CANDS[D] if c[0] in ("tma", "tma_pers")] for D in CANDS}
if os.environ.get("RING") == "1":
    ring_study()
    sys.exit(0)
bad = 0
for (B, Hq, Hkv, SQ, L, D) in POINTS + ODD:
    timed = (B, Hq, Hkv, SQ, L, D) in POINTS
    q = torch.randn(B, Hq, SQ, D, device=dev, dtype=torch.bfloat16)
    k, v = (torch.randn(B, Hkv, L, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
    mask = torch.ones(SQ, L, dtype=torch.bool, device=dev).tril(L - SQ) if SQ > 1 else None
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask, enable_gqa=Hq != Hkv)
    out = torch.empty_like(q)
    lse = torch.empty(B, Hq, SQ, device=dev, dtype=torch.float32)
    kv_bytes = 2 * B * Hkv * L * D * 2
    calls, res = [], {}
    pers = CANDS[D][-1][1]
    cands = [(tag, name, balanced, None) for tag, name, balanced in CANDS[D]]
    if not timed:
        cands += [(f"tma_pers_g{g}", pers, 1, g) for g in SMALL_GRIDS]
    for tag, name, balanced, slots in cands:
        cfg = names[name]
        if balanced:
            fn, how, ws = cand_balanced(cfg, B, Hq, Hkv, SQ, L, D, q, k, v, out, lse, slots)
        else:
            fn, how, ws = cand_fixed(cfg, B, Hq, Hkv, SQ, L, D, q, k, v, out, lse)
        errs = []
        for rep in range(3 if balanced or tag == "tma" else 1):
            out.fill_(float("nan"))
            rc = fn(); torch.cuda.synchronize()
            errs.append(((out.float() - ref).norm() / ref.norm()).item() if rc == 0 else float("nan"))
        err = max(errs)
        ok = err == err and err < 1e-2
        bad += not ok
        res[tag] = [how, err, ok, []]
        if timed and ok and tag in TIMED:
            calls.append((tag, fn, ws))
    if timed:
        for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
            def sd(be=be):
                with sdpa_kernel(be):
                    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=Hq != Hkv)
            try:
                e = ((sd().float() - ref).norm() / ref.norm()).item()
                res[name] = ["sdpa", e, e < 1e-2, []]
                calls.append((name, sd, None))
            except Exception as ex:  # noqa: BLE001
                res[name] = [f"n/a ({type(ex).__name__})", float("nan"), False, []]
        if True:  # the probes: the split kernel alone at both head dims, the math left out at D = 128
            cp, tma = names[CANDS[D][0][1]], names[CANDS[D][2][1]]
            probes = (("tma_split_only", tma, tma),) + ((("tma_nomath", cp, -2), ("tma_pers_nomath", None, None))
                                                        if D == 128 else ())
            for tag, cfg, which in probes:
                if cfg is None:  # the persistent grid with its math left out
                    fn, how, ws = cand_balanced(names[pers], B, Hq, Hkv, SQ, L, D, q, k, v, out, lse, probe=True)
                else:
                    fn, how, ws = cand_fixed(cfg, B, Hq, Hkv, SQ, L, D, q, k, v, out, lse, which=which)
                rc = fn(); torch.cuda.synchronize()
                res[tag] = [how, float("nan"), rc == 0, []]
                if rc == 0:
                    calls.append((tag, fn, ws))
        for rep in range(2):
            for tag, fn, _ in calls:
                res[tag][3].append(timeit(fn))
    cols = []
    for tag, (how, err, ok, ts) in res.items():
        t = " / ".join(f"{x:.1f}" for x in ts) if ts else "-"
        gbs = f" {kv_bytes / min(ts) / 1e3:.0f}GB/s" if ts else ""
        cols.append(f"{tag}({how}): {t}us{gbs} err {err:.1e}{'' if ok else ' FAIL'}")
    print(f"B={B} Hq={Hq} Hkv={Hkv} q_seq={SQ} L={L} D={D} kv={kv_bytes / 2**20:.0f}MiB | " + " | ".join(cols),
          flush=True)
    del q, k, v, ref, out, calls
    torch.cuda.empty_cache()
print(f"{bad} failed correctness", flush=True)
