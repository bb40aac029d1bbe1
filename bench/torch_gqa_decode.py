"""PyTorch beside attnprof for grouped-query attention and decode, in the same device run
(bench/gqa_decode_h200.sh): SDPA's flash (FA2), efficient, cuDNN and math backends with
enable_gqa, (1) at the decode points of the series' table (one query token against a KV cache,
no mask: one query sees every key), with the K+V bytes per microsecond against a 1 GiB copy
measured in the same process, and (2) at GQA prefill shapes (causal, Hkv = H/4), in TFLOP/s of the
causal half. PyTorch's six variants, as the series runs them: naive and naive in-place are its
eager code with K/V expanded by repeat_kv (expand + reshape, HF Llama's), the causal mask aligned
to the end of the keys (bottom-right; all keys visible at one query) applied by masked_fill or
masked_fill_; math, efficient, flash and cuDNN are SDPA's backends with enable_gqa. The timing follows /work/shared/bench/torch_bwd_decode.py: CUDA events around one
call, median of 20 after 5 warm-ups. FlashAttention-4 is not staged here. One line per point."""
import math
import statistics
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

torch.manual_seed(0)
dev = "cuda"
BACKENDS = [("fa2", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION), ("math", SDPBackend.MATH)]
DECODE = [(16, 32, 8, 8192, 128), (64, 32, 8, 4096, 128), (1, 32, 8, 131072, 128), (8, 64, 8, 32768, 128),
          (32, 32, 32, 4096, 128), (4, 32, 4, 16384, 64)]
PREFILL = [(8, 16, 4, 1024, 64), (2, 16, 4, 16384, 128)]


def timeit(fn, n=20, w=5):
    for _ in range(w):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


def repeat_kv(x, group):
    """HF Llama's repeat_kv: [B, Hkv, L, D] -> [B, Hkv*group, L, D] (expand, then a copy by reshape)."""
    if group == 1:
        return x
    B, H, L, D = x.shape
    return x[:, :, None, :, :].expand(B, H, group, L, D).reshape(B, H * group, L, D)


def eager(q, k, v, causal, inplace):
    """The series' naive attention over repeat_kv'd K/V, the mask bottom-right aligned."""
    g = q.shape[1] // k.shape[1]
    k, v = repeat_kv(k, g), repeat_kv(v, g)
    sq, sk = q.shape[-2], k.shape[-2]
    mask = torch.ones(sq, sk, dtype=torch.bool, device=q.device).triu(sk - sq + 1) if causal else \
        torch.zeros(sq, sk, dtype=torch.bool, device=q.device)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if inplace:
        scores.masked_fill_(mask, float("-inf"))
    else:
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def run(q, k, v, causal, gqa, skip_math=False):
    row = {}
    for name, inplace in (("naive", False), ("naive_inplace", True)):
        if skip_math:
            row[name] = None
            continue
        try:
            fn = lambda: eager(q, k, v, causal, inplace)
            fn()
            row[name] = timeit(fn)
        except Exception as e:  # noqa: BLE001
            row[name] = None
            row[name + "_why"] = type(e).__name__
    for name, be in BACKENDS:
        if name == "math" and skip_math:
            row[name] = None
            continue
        try:
            with sdpa_kernel(be):
                fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
                fn()
                row[name] = timeit(fn)
        except Exception as e:  # noqa: BLE001
            row[name] = None
            row[name + "_why"] = type(e).__name__
    return row


print(torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(), flush=True)
x = torch.empty(1 << 30, dtype=torch.uint8, device=dev); y = torch.empty_like(x)
cp = timeit(lambda: y.copy_(x))
print(f"copy 1 GiB: {cp:.1f} us = {2 * x.numel() / cp / 1e3:.0f} GB/s (read+write)", flush=True)
del x, y
for (B, Hq, Hkv, L, D) in DECODE:
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
    k, v = (torch.randn(B, Hkv, L, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
    kv_bytes = 2 * B * Hkv * L * D * 2
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), enable_gqa=Hq != Hkv)
    err = (eager(q, k, v, False, False).float() - ref).abs().max().item() / ref.abs().max().item()
    del ref
    row = run(q, k, v, False, Hq != Hkv)
    txt = "  ".join(f"{n}={t:.1f}us/{kv_bytes / t / 1e3:.0f}GB/s" if t else f"{n}=n/a"
                    for n, t in row.items() if not n.endswith("_why"))
    print(f"decode B={B} Hq={Hq} Hkv={Hkv} L={L} D={D} kv={kv_bytes / 2**20:.0f}MiB eager_err={err:.1e}  {txt}",
          flush=True)
    del q, k, v
    torch.cuda.empty_cache()
for (B, Hq, Hkv, S, D) in PREFILL:
    q = torch.randn(B, Hq, S, D, device=dev, dtype=torch.bfloat16)
    k, v = (torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16) for _ in range(2))
    flops = 2.0 * B * Hq * S * S * D  # the causal half of 4·B·H·S²·D
    row = run(q, k, v, True, True, skip_math=S > 4096)
    txt = "  ".join(f"{n}={t:.1f}us/{flops / t / 1e6:.0f}TF" if t else f"{n}=n/a"
                    for n, t in row.items() if not n.endswith("_why"))
    print(f"prefill B={B} Hq={Hq} Hkv={Hkv} S={S} D={D}  {txt}", flush=True)
    del q, k, v
    torch.cuda.empty_cache()
