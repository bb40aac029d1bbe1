#!/usr/bin/env python3
"""Check and time our sm_90a flash kernels (kernels/flash_fwd_sm90a.cu, loaded as
a shared library through ctypes) against PyTorch in the same process.

Correctness: every configuration (head dim) causal and non-causal on small
shapes with odd S, plus padded head dims; fresh random normal inputs; the
reference is PyTorch's math attention in float64 on the GPU; output poisoned
with NaN before the launch; the log-sum-exp checked against float64; each
launch run twice and the outputs must be bit-identical.

Timing: our kernel and PyTorch's SDPA backends (flash = FlashAttention-2,
cuDNN) interleaved in rounds on the same inputs, rotating among enough input
sets to exceed the L2; CUDA events between back-to-back launches; median.

Sweep: the moonshot grid of ../shared/bench/torch_sweep.py (S 512-16384, D 64
and 128, causal and not), our defaults plus the configurations named, then a
frontier table: ours against FA2, cuDNN and FA4 point by point, and at how
many points ours is at or below the better of FA4 and cuDNN. dims: the same
for D 32, 96 and 256 at S 1024 and 4096.

FA4 (flash-attn-4's SM90 forward) is timed whenever it imports, on contiguous
(B, S, H, D) copies of the same inputs; the first lines say when it does not.

Timeline: the benchmark-only kernels whose names end in _tl stamp each tile's
phases with the global timer (flash_fwd_sm90a.h); one launch after warm-up,
summarised per tile size (key tiles) and per block: where a block's time goes.

A/B: two configurations (name suffixes) launched alternately at one shape.

Usage: python3 bench/flash_sm90a_torch.py LIB [check|bench|all|profile|profile-cudnn|timeline]
       python3 bench/flash_sm90a_torch.py LIB ab NAME_A NAME_B B H S D CAUSAL [...]
       python3 bench/flash_sm90a_torch.py LIB sweep [NAME_PART...]
       python3 bench/flash_sm90a_torch.py LIB dims"""
import ctypes
import math
import os
import re
import sys

MODES = ("check", "bench", "all", "profile", "profile-cudnn", "timeline", "ab", "sweep", "dims")


def usage_error(why):
    """Bad arguments: one line on stderr and exit status 2, before any GPU work."""
    print(f"flash_sm90a_torch.py: {why} (usage: see the top of bench/flash_sm90a_torch.py)", file=sys.stderr)
    sys.exit(2)


if len(sys.argv) < 2:
    usage_error("no library given: pass build/bench/libflash_sm90a.so")
if len(sys.argv) > 2 and sys.argv[2] not in MODES:
    usage_error(f"unknown mode {sys.argv[2]!r}, expected one of {', '.join(MODES)}")
if len(sys.argv) > 2 and sys.argv[2] == "ab":
    ab_args = sys.argv[3:]
    if not ab_args or len(ab_args) % 7:
        usage_error("ab takes groups of seven: NAME_A NAME_B B H S D CAUSAL")
    if not all(x.isdigit() for k in range(0, len(ab_args), 7) for x in ab_args[k + 2:k + 7]):
        usage_error("ab: B H S D CAUSAL must be non-negative integers")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_rounds import interleaved_rounds, print_table, sdpa_impls, spread  # noqa: E402

lib_path = sys.argv[1]
what = sys.argv[2] if len(sys.argv) > 2 else "all"


class Cfg(ctypes.Structure):  # flash_fwd_config
    _fields_ = [("kernel_name", ctypes.c_char_p), ("head_dim", ctypes.c_int), ("block_m", ctypes.c_int),
                ("block_n", ctypes.c_int), ("warps", ctypes.c_int), ("threads", ctypes.c_int),
                ("smem_bytes", ctypes.c_size_t), ("path", ctypes.c_char_p)]


lib = ctypes.CDLL(lib_path)
P, I = ctypes.c_void_p, ctypes.c_int
lib.flash_sm90a_config_at.restype = ctypes.POINTER(Cfg)
lib.launch_flash_sm90a.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, P]
workspace = torch.zeros(2, device="cuda", dtype=torch.int32)
assert lib.flash_sm90a_available() == 1, "sm_90a kernels not available on this GPU/build"
configs = {}   # head dim -> default configuration
variants = []  # every configuration: (index, name, head dim)
for i in range(lib.flash_sm90a_config_count()):
    c = lib.flash_sm90a_config_at(i).contents
    rc = lib.flash_sm90a_prepare(i)
    assert rc == 0, f"prepare {c.kernel_name}: {rc}"
    blocks = ctypes.c_int()
    lib.flash_sm90a_blocks_per_sm(i, ctypes.byref(blocks))
    if c.head_dim not in configs:
        configs[c.head_dim] = (i, c.kernel_name.decode(), c.smem_bytes, blocks.value)
    variants.append((i, c.kernel_name.decode(), c.head_dim))
    print(f"{c.kernel_name.decode()}: {c.smem_bytes} B smem, {c.threads} threads, {blocks.value} block/SM")
print("torch", torch.__version__, torch.cuda.get_device_name(0), "cudnn", torch.backends.cudnn.version())


# FlashAttention-4 (flash-attn-4, CuTe DSL), timed beside PyTorch's backends when it is
# installed (../shared/bench/fa4/prepare.sh brings it onto the GPU machine); said when not.
try:
    from flash_attn.cute.interface import flash_attn_func as fa4_func
    print("fa4: flash_attn.cute.interface found, timed beside the PyTorch backends")
except Exception as e:  # noqa: BLE001 - any import failure means "not installed here"
    fa4_func = None
    print(f"fa4: not installed ({type(e).__name__}: {e}); FlashAttention-4 is not in this run")


def padded(d):
    return min(x for x in configs if x >= d)


def ours(q, k, v, causal, out=None, lse=None, idx=None):
    B, H, S, D = q.shape
    if idx is None:
        idx = configs[padded(D)][0]
    if out is None:
        out = torch.empty_like(q)
    if lse is None:
        lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    rc = lib.launch_flash_sm90a(idx, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr(),
                                workspace.data_ptr(), B, H, S, D, int(causal), torch.cuda.current_stream().cuda_stream)
    assert rc == 0, f"launch rc {rc}"
    return out, lse


def check():
    fails = total = 0
    shapes = []
    for d in sorted(configs):
        shapes += [(1, 3, 77, d), (2, 2, 333, d), (1, 2, 1024, d), (1, 1, 1, d), (1, 2, 129, d)]
        # Several tiles per block (over 132 SMs), so that every tile-to-tile handoff runs; the
        # last query tile has a warpgroup with no rows (three warpgroups: 1000 = 5 x 192 + 40).
        # The single-tile shapes above missed a hang of the overlapped consumers (kernels/sm90a/overlap.cuh).
        shapes += [(4, 16, 1000, d)]
    for d in (8, 40, 80, 112, 200):
        shapes += [(2, 2, 190, d), (1, 1, 257, d)]
    print("| shape | causal | kernel | rel err | lse max abs err | bit-identical | result |")
    print("| --- | --- | --- | ---: | ---: | --- | --- |")
    for (B, H, S, D) in shapes:
        for causal in (True, False):
            q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
            sc = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(D)
            if causal:
                sc = sc.masked_fill(torch.ones(S, S, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
            ref_lse = torch.logsumexp(sc, dim=-1)
            for idx, name, d in variants:
                if d != padded(D):
                    continue
                out = torch.full_like(q, float("nan"))
                lse = torch.full((B, H, S), float("nan"), device="cuda", dtype=torch.float32)
                ours(q, k, v, causal, out, lse, idx)
                out2, lse2 = ours(q, k, v, causal, idx=idx)
                torch.cuda.synchronize()
                finite = bool(torch.isfinite(out).all()) and bool(torch.isfinite(lse).all())
                err = ((out.double() - ref).norm() / ref.norm()).item() if finite else float("nan")
                lerr = (lse.double() - ref_lse).abs().max().item() if finite else float("nan")
                same = torch.equal(out, out2) and torch.equal(lse, lse2) and not workspace.any().item()
                ok = finite and err <= 2.5e-3 and lerr <= 1e-2 and same
                fails += not ok
                total += 1
                print(f"| {B}x{H}x{S}x{D} | {int(causal)} | {name} | {err:.2e} | {lerr:.1e} | "
                      f"{same} | {'ok' if ok else 'FAIL'} |")
    print(f"check: {total - fails}/{total} passed")
    return fails


def warm_up():
    # About a second of work first: the GPU idles at a low clock.
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(400):
        a @ a
    torch.cuda.synchronize()


def time_shape(B, H, S, D, causal, ours_wanted, rounds=7, iters=10, warm=3):
    """PyTorch's flash (FA2) and cuDNN backends, FA4 when installed, and our
    configurations for which ours_wanted(name) holds, interleaved in rounds on
    the same inputs; prints one table and returns {implementation: median us}."""
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    set_bytes = B * H * S * D * 2 * 3
    nsets = max(2, -(-3 * l2 // set_bytes))
    sets = [[torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
            for _ in range(nsets)]
    out = torch.empty(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    impls = sdpa_impls([("torch flash", SDPBackend.FLASH_ATTENTION), ("torch cudnn", SDPBackend.CUDNN_ATTENTION)],
                       sets[0], causal, f"{B}x{H}x{S}x{D}")
    if fa4_func is not None:
        # FA4 takes (B, S, H, D). It gets contiguous copies of its own, made before the
        # timing (a transposed view is a strided input: FA4 would then time a layout it is not
        # tuned for, or copy it inside the timed call); the rounds hand every implementation the
        # same (B, H, S, D) set, and FA4's run finds its copy of that set by the query's address.
        fa4_sets = {s[0].data_ptr(): [t.transpose(1, 2).contiguous() for t in s] for s in sets}

        def fa4(q, k, v):
            q4, k4, v4 = fa4_sets[q.data_ptr()]
            r = fa4_func(q4, k4, v4, causal=causal)
            return (r[0] if isinstance(r, tuple) else r).transpose(1, 2)
        try:
            fa4(*sets[0])
            impls.append(("fa4", fa4))
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"fa4 {B}x{H}x{S}x{D}: unavailable: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    for idx, name, d in variants:
        if d == padded(D) and ours_wanted(name):
            impls.append((name, lambda q, k, v, idx=idx: ours(q, k, v, causal, out, lse, idx)[0]))
    ref = impls[0][1](*sets[0]).float()
    samples, _ = interleaved_rounds(impls, sets, rounds, iters, warm,
                                    lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize)
    print(f"\n{B}x{H}x{S}x{D} causal={int(causal)}: {nsets} input sets, {rounds} rounds x {iters}")
    print_table(impls, samples, flops,
                lambda n, run: f"{((run(*sets[0]).float() - ref).norm() / ref.norm()).item():.1e}")
    return {n: spread(samples[n])[0] for n, _ in impls}


def bench():
    warm_up()
    for (B, H, S, D, causal) in [(8, 16, 1024, 64, True), (4, 16, 4096, 128, True), (4, 16, 4096, 128, False),
                                 (2, 16, 4096, 256, True), (8, 16, 1024, 128, True), (4, 16, 4096, 64, True),
                                 (4, 16, 4096, 96, True), (4, 16, 4096, 32, True)]:
        time_shape(B, H, S, D, causal, lambda name: True)


def frontier(points, defaults):
    """The grid's summary: per point our default kernel against PyTorch's FA2,
    cuDNN and FA4 from the same rounds, the frontier being the faster of FA4
    and cuDNN (FA4 leads long sequences, cuDNN short ones); then how many
    points ours is at or below each. A peer that did not run at a point is
    "–" there and that point is left out of its count (the counts say of how
    many)."""
    print("\n| shape | causal | ours us | TFLOP/s | torch flash | torch cudnn | fa4 | ours / min(fa4, cudnn) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    wins = {"torch flash": [0, 0], "torch cudnn": [0, 0], "fa4": [0, 0], "frontier": [0, 0]}
    for (B, H, S, D, causal), med in points:
        mine = next(med[n] for n in med if n in defaults)
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        peers = {n: med.get(n) for n in ("torch flash", "torch cudnn", "fa4")}
        for n, t in peers.items():
            if t is not None:
                wins[n][1] += 1
                wins[n][0] += mine <= t
        front = [t for n, t in peers.items() if n != "torch flash" and t is not None]
        ratio = "–"
        if front:
            wins["frontier"][1] += 1
            wins["frontier"][0] += mine <= min(front)
            ratio = f"{mine / min(front):.3f}"
        cell = lambda t: "–" if t is None else f"{t:.1f}"  # noqa: E731
        print(f"| {B}x{H}x{S}x{D} | {int(causal)} | {mine:.1f} | {flops / mine / 1e6:.0f} | "
              f"{cell(peers['torch flash'])} | {cell(peers['torch cudnn'])} | {cell(peers['fa4'])} | {ratio} |")
    for n, (won, of) in wins.items():
        label = "the better of fa4 and torch cudnn" if n == "frontier" else n
        print(f"ours at or below {label} at {won} of {of} points")


def sweep(names, dims=(64, 128), seqs=(512, 1024, 2048, 4096, 8192, 16384)):
    """The issue's grid, as ../shared/bench/torch_sweep.py lays it out: S from
    512 to 16384 at D = 64 and 128, B = 32768 / S, H = 16, causal and not;
    our default for each head dim, plus every configuration whose name
    contains one of names; then the frontier table."""
    warm_up()
    defaults = {name for idx, name, d in variants if configs[d][0] == idx}
    wanted = lambda name: name in defaults or any(n in name for n in names)  # noqa: E731
    points = []
    for D in dims:
        for S in seqs:
            for causal in (True, False):
                shape = (max(1, 32768 // S), 16, S, D, causal)
                points.append((shape, time_shape(*shape, wanted, rounds=5)))
    frontier(points, defaults)


def profile(cudnn=False):
    """A few launches of each default kernel at the goal shapes, for ncu (with
    cudnn, PyTorch's cuDNN backend's instead)."""
    for (B, H, S, D, causal) in [(8, 16, 1024, 64, True), (4, 16, 4096, 128, True)]:
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        for _ in range(4):
            if cudnn:
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            else:
                ours(q, k, v, causal)
    torch.cuda.synchronize()


def stamp_slots():
    """The stamp slots (Sm90aTileStamp, Sm90aBlockStamp), read from the kernels'
    kernels/sm90a/timeline.cuh, so that the kernels and this reader share one layout."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels", "sm90a", "timeline.cuh")
    with open(path) as f:
        found = {k: int(v) for k, v in re.findall(r"\b((?:TILE|BLOCK)_STAMP_[A-Z_]+) = (\d+),", f.read())}
    names = ("TILE_STAMP_BLOCK", "TILE_STAMP_START", "TILE_STAMP_Q_ISSUED", "TILE_STAMP_Q_LANDED",
             "TILE_STAMP_FIRST_K", "TILE_STAMP_DONE", "TILE_STAMP_KEY_TILES", "TILE_STAMP_WORDS",
             "BLOCK_STAMP_ENTRY", "BLOCK_STAMP_EXIT", "BLOCK_STAMP_WORDS")
    missing = [n for n in names if n not in found]
    if missing:
        sys.exit(f"flash_sm90a_torch.py: {path} names no {', '.join(missing)}: the stamp layout changed")
    return tuple(found[n] for n in names)


(TILE_STAMP_BLOCK, TILE_STAMP_START, TILE_STAMP_Q_ISSUED, TILE_STAMP_Q_LANDED, TILE_STAMP_FIRST_K, TILE_STAMP_DONE,
 TILE_STAMP_KEY_TILES, TILE_STAMP_WORDS, BLOCK_STAMP_ENTRY, BLOCK_STAMP_EXIT, BLOCK_STAMP_WORDS) = stamp_slots()


def timeline():
    """Where the time goes, from the _tl kernels' stamps (one launch each after
    warm-up and a few untimed launches)."""
    warm_up()
    lib.flash_sm90a_set_timeline.argtypes = [P]
    shapes = {64: [(8, 16, 1024, 64, True), (4, 16, 4096, 64, True)],
              128: [(4, 16, 4096, 128, True), (4, 16, 4096, 128, False), (8, 16, 1024, 128, True)]}
    for idx, name, d in variants:
        if not name.endswith("_tl"):
            continue
        c = lib.flash_sm90a_config_at(idx).contents
        for (B, H, S, D, causal) in shapes.get(d, []):
            q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            tiles = -(-S // c.block_m) * B * H
            buf = torch.zeros(tiles * TILE_STAMP_WORDS + BLOCK_STAMP_WORDS * 1024, device="cuda", dtype=torch.int64)
            for _ in range(5):
                ours(q, k, v, causal, idx=idx)
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            lib.flash_sm90a_set_timeline(buf.data_ptr())
            start.record()
            ours(q, k, v, causal, idx=idx)
            stop.record()
            torch.cuda.synchronize()
            lib.flash_sm90a_set_timeline(None)
            ev_us = start.elapsed_time(stop) * 1e3
            # The same launch without stamps, for the stamps' own cost.
            plain = []
            for _ in range(5):
                start.record()
                ours(q, k, v, causal)
                stop.record()
                torch.cuda.synchronize()
                plain.append(start.elapsed_time(stop) * 1e3)
            print(f"\nunstamped default kernel, 5 single launches: {' '.join(f'{x:.1f}' for x in plain)} us")
            t = buf.cpu().tolist()
            if os.environ.get("TIMELINE_DIR"):
                buf.cpu().numpy().tofile(os.path.join(os.environ["TIMELINE_DIR"],
                                                      f"{name}_{B}x{H}x{S}x{D}_c{int(causal)}.i64"))
            rec = [t[TILE_STAMP_WORDS * i:TILE_STAMP_WORDS * (i + 1)] for i in range(tiles)]
            blocks = {}
            for b in range(1024):
                at = tiles * TILE_STAMP_WORDS + BLOCK_STAMP_WORDS * b
                e, x = t[at + BLOCK_STAMP_ENTRY], t[at + BLOCK_STAMP_EXIT]
                if e:
                    blocks[b] = (e, x)
            t0 = min(e for e, x in blocks.values())
            t_end = max(x for e, x in blocks.values())
            wgs = c.threads // 128 - 1
            by_block = {}
            for i, r in enumerate(rec):
                by_block.setdefault(r[TILE_STAMP_BLOCK] & 0xffffffff, []).append(i)
            print(f"\n{name} {B}x{H}x{S}x{D} causal={int(causal)}: events {ev_us:.1f} us, stamped span "
                  f"{(t_end - t0) / 1e3:.1f} us, {len(blocks)} blocks, {tiles} tiles")
            acc = {"entry skew": 0, "setup (entry to first start)": 0, "tiles (start to last warpgroup done)": 0,
                   "between tiles (last done to next start)": 0, "last tile to exit": 0, "idle after exit": 0}
            for b, (e, x) in blocks.items():
                ts = sorted(by_block.get(b, []), key=lambda i: rec[i][TILE_STAMP_START])
                acc["entry skew"] += e - t0
                acc["idle after exit"] += t_end - x
                if not ts:
                    acc["setup (entry to first start)"] += x - e
                    continue
                acc["setup (entry to first start)"] += rec[ts[0]][TILE_STAMP_START] - e
                for j, i in enumerate(ts):
                    done = max(rec[i][TILE_STAMP_DONE:TILE_STAMP_DONE + wgs])
                    acc["tiles (start to last warpgroup done)"] += done - rec[i][TILE_STAMP_START]
                    nxt = rec[ts[j + 1]][TILE_STAMP_START] if j + 1 < len(ts) else x
                    acc["between tiles (last done to next start)" if j + 1 < len(ts) else "last tile to exit"] += \
                        nxt - done
            print("| per block, mean | us |")
            print("| --- | ---: |")
            for kname, v in acc.items():
                print(f"| {kname} | {v / len(blocks) / 1e3:.2f} |")
            print("| key tiles | tiles | duration us | Q landed after start us | first K landed after start us "
                  "(per warpgroup) | warpgroup done after start us (per warpgroup) | Q issued before start us |")
            print("| ---: | ---: | ---: | ---: | --- | --- | ---: |")
            groups = {}
            for r in rec:
                groups.setdefault(r[TILE_STAMP_KEY_TILES], []).append(r)
            for n in sorted(groups):
                g = groups[n]
                m = lambda f: sum(f(r) for r in g) / len(g) / 1e3  # noqa: E731
                dur = m(lambda r: max(r[TILE_STAMP_DONE:TILE_STAMP_DONE + wgs]) - r[TILE_STAMP_START])
                qw = m(lambda r: r[TILE_STAMP_Q_LANDED] - r[TILE_STAMP_START])
                kw = " / ".join(f"{m(lambda r, w=w: r[TILE_STAMP_FIRST_K + w] - r[TILE_STAMP_START]):.2f}"
                                for w in range(wgs))
                dn = " / ".join(f"{m(lambda r, w=w: r[TILE_STAMP_DONE + w] - r[TILE_STAMP_START]):.2f}"
                                for w in range(wgs))
                qi = m(lambda r: r[TILE_STAMP_START] - r[TILE_STAMP_Q_ISSUED])
                print(f"| {n} | {len(g)} | {dur:.2f} | {qw:.2f} | {kw} | {dn} | {qi:.2f} |")


def ab(name_a, name_b, B, H, S, D, causal, pairs=150):
    """Two of our configurations launched alternately (A, B, A, B, ...), each
    launch between its own events, rotating among input sets that exceed the
    L2: a same-run comparison in which neither is timed after the other's
    heat or clock state. Prints the medians and the median of the pairwise
    ratios A/B."""
    if not 1 <= D <= max(configs):
        usage_error(f"ab: head dim {D} is outside 1..{max(configs)}")

    def pick(part):
        found = [(i, n) for i, n, d in variants if d == padded(D) and n.endswith(part)]
        if not found:
            usage_error(f"ab: no configuration for head dim {D} ends in {part!r}")
        return found[0]
    (ia, na), (ib, nb) = pick(name_a), pick(name_b)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    nsets = max(2, -(-3 * l2 // (B * H * S * D * 2 * 3)))
    sets = [[torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3)] for _ in range(nsets)]
    out = torch.empty(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(B, H, S, device="cuda", dtype=torch.float32)
    for i in range(20):
        for idx in (ia, ib):
            ours(*sets[i % nsets], causal, out, lse, idx)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4 * pairs)]
    for i in range(pairs):
        for j, idx in enumerate((ia, ib)):
            ev[4 * i + 2 * j].record()
            ours(*sets[i % nsets], causal, out, lse, idx)
            ev[4 * i + 2 * j + 1].record()
    torch.cuda.synchronize()
    ta = [ev[4 * i].elapsed_time(ev[4 * i + 1]) * 1e3 for i in range(pairs)]
    tb = [ev[4 * i + 2].elapsed_time(ev[4 * i + 3]) * 1e3 for i in range(pairs)]
    ratio = sorted(a / b for a, b in zip(ta, tb))[pairs // 2]
    flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    (ma, a10, a90), (mb, b10, b90) = spread(ta), spread(tb)
    print(f"| {B}x{H}x{S}x{D} causal={int(causal)} | {na} | {ma:.1f} ({a10:.1f}-{a90:.1f}), "
          f"{flops / ma / 1e6:.0f} TFLOP/s | {nb} | {mb:.1f} ({b10:.1f}-{b90:.1f}), {flops / mb / 1e6:.0f} TFLOP/s "
          f"| {ratio:.3f} |", flush=True)


fails = 0
if what == "ab":
    # ab NAME_A NAME_B B H S D CAUSAL [NAME_A NAME_B B H S D CAUSAL ...]
    warm_up()
    print("| shape | A | A median us (p10-p90) | B | B median us (p10-p90) | median A/B |")
    print("| --- | --- | --- | --- | --- | ---: |")
    for k in range(0, len(ab_args), 7):
        ab(ab_args[k], ab_args[k + 1], *(int(x) for x in ab_args[k + 2:k + 7]))
if what == "timeline":
    timeline()
if what in ("profile", "profile-cudnn"):
    profile(what == "profile-cudnn")
if what in ("check", "all"):
    fails = check()
if what in ("bench", "all"):
    bench()
if what == "sweep":
    sweep(sys.argv[3:])
if what == "dims":
    # The other compiled head dims (the goal: kept at or below cuDNN and FA4) at a short and a long S.
    sweep([], dims=(32, 96, 256), seqs=(1024, 4096))
sys.exit(1 if fails else 0)
