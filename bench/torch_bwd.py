"""PyTorch's backward beside attnprof's (bench/backward_h200.sh runs both in one device run).
For each point of S x D x causal (B = 32768/S, H = 16, bf16): CUDA-event median of 10 timed
torch.autograd.grad calls (3 warm-ups) of a kept forward, for the series' eager code (naive:
out-of-place masked_fill; naive_inplace: masked_fill_), SDPA pinned to math, efficient, flash
and cuDNN. The in-place advice is checked once on a small shape: does autograd raise, and do
the gradients equal the out-of-place ones bit for bit, and which tensors autograd saved for the
backward (torch.autograd.graph.saved_tensors_hooks) with their version counters after the forward:
a saved tensor the in-place fill had modified would show a version above the one it was saved at.
What each variant's autograd keeps from forward to backward is printed at the default shape
(8x16x1024x64, causal): the bytes of the distinct saved tensors, and the time of its backward
there. Prints one line per point and backend.
`torch_bwd.py efficient,flash,cudnn` times those backends only (and skips the in-place check);
`torch_bwd.py all causal` every variant at the causal points only (attnprof's run is causal);
`torch_bwd.py flash,cudnn all 4096,16384 128` those at the listed S and D only (third and fourth
arguments; "all" for both masks)."""
import math, statistics, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

dev = "cuda"
torch.manual_seed(0)


def timeit(fn, n=10, w=3):
    for _ in range(w):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


def eager(q, k, v, causal, inplace):
    S, D = q.shape[-2], q.shape[-1]
    s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
    if causal:
        mask = torch.triu(torch.ones(S, S, dtype=torch.bool, device=q.device), 1)
        s = s.masked_fill_(mask, float("-inf")) if inplace else s.masked_fill(mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def sdpa(be):
    def f(q, k, v, causal):
        with sdpa_kernel(be):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return f


IMPLS = {
    "naive": lambda q, k, v, c: eager(q, k, v, c, False),
    "naive_inplace": lambda q, k, v, c: eager(q, k, v, c, True),
    "math": sdpa(SDPBackend.MATH),
    "efficient": sdpa(SDPBackend.EFFICIENT_ATTENTION),
    "flash": sdpa(SDPBackend.FLASH_ATTENTION),
    "cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
}


def saved_by_autograd(f, q, k, v, causal):
    """The distinct tensors autograd saves for f's backward (beyond q, k, v): (bytes, [(shape, dtype,
    version at save, version after the forward)])."""
    saved = []

    def pack(t):
        saved.append((t, t._version))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        o = f(q, k, v, causal)
    inputs = {q.data_ptr(), k.data_ptr(), v.data_ptr()}
    seen, out, total = set(), [], 0
    for t, ver in saved:
        key = (t.data_ptr(), tuple(t.shape), t.dtype)
        if t.data_ptr() in inputs or key in seen or t.numel() == 0:
            continue
        seen.add(key)
        total += t.numel() * t.element_size()
        out.append((tuple(t.shape), str(t.dtype).replace("torch.", ""), ver, t._version))
    return o, total, out


def kept_report():
    B, H, S, D = 8, 16, 1024, 64
    q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    do = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16)
    for name, f in IMPLS.items():
        try:
            o, total, items = saved_by_autograd(f, q, k, v, True)
            us = timeit(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
            desc = "; ".join(f"{list(sh)} {dt} v{a}->{b}" for sh, dt, a, b in items)
            print(f"torch_kept 8x16x1024x64 causal {name} {total} B ({total / 1048576:.1f} MiB) bwd {us:.1f} us: {desc}")
            del o
        except Exception as e:  # noqa: BLE001
            print(f"torch_kept 8x16x1024x64 causal {name} failed: {type(e).__name__} {str(e)[:80]}")
        torch.cuda.empty_cache()


def inplace_check():
    q, k, v = (torch.randn(2, 4, 333, 64, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    do = torch.randn(2, 4, 333, 64, device=dev, dtype=torch.bfloat16)
    a = torch.autograd.grad(eager(q, k, v, True, False), (q, k, v), do)
    try:
        b = torch.autograd.grad(eager(q, k, v, True, True), (q, k, v), do)
    except RuntimeError as e:
        print(f"inplace_check: autograd raised: {str(e)[:200]}")
        return
    same = all(torch.equal(x, y) for x, y in zip(a, b))
    print(f"inplace_check: autograd raised nothing; gradients bitwise equal to out-of-place: {same}")


def main():
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    only = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] != "all" else None
    causal_only = len(sys.argv) > 2 and sys.argv[2] == "causal"
    if only is None:
        inplace_check()
        kept_report()
    seqs = tuple(int(x) for x in sys.argv[3].split(",")) if len(sys.argv) > 3 else (1024, 4096, 16384)
    dims = tuple(int(x) for x in sys.argv[4].split(",")) if len(sys.argv) > 4 else (64, 128)
    grid = [(S, D, c) for D in dims for c in ((True,) if causal_only else (True, False)) for S in seqs]
    for S, D, causal in grid:
        B, H = 32768 // S, 16
        q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        do = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16)
        flops = 2.5 * 4.0 * B * H * S * S * D / (2 if causal else 1)
        for name, f in IMPLS.items():
            if only is not None and name not in only:
                continue
            try:
                o = f(q, k, v, causal)
                us = timeit(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
                print(f"torch_bwd S={S} D={D} causal={int(causal)} {name} {us:.1f} us {flops / us / 1e6:.1f} TFLOP/s")
                del o
            except Exception as e:  # noqa: BLE001 (out of memory at the long S: reported)
                print(f"torch_bwd S={S} D={D} causal={int(causal)} {name} failed: {type(e).__name__} {str(e)[:80]}")
            torch.cuda.empty_cache()
        sys.stdout.flush()


main()
