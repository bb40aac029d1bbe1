"""A Llama-like decoder in plain PyTorch, with no profiler code: for `attnprof record`.

Each step is one inference step inside an NVTX range named "step" (torch.cuda.nvtx):
  --mode prefill  the whole prompt (B x S tokens) through every layer
  --mode decode   one new token per sequence against a KV cache of S tokens
  --mode both     prefill's steps, then decode's, in one process
Each layer: RMSNorm, fused QKV projection, SDPA (F.scaled_dot_product_attention, causal
for prefill), output projection, RMSNorm, SwiGLU MLP. bf16. CUDA events around every
step measure it inside the program, so the same script run with and without
`attnprof record` gives the injection's overhead; --json writes those times.
--kineto TRACE runs the same steps under PyTorch's profiler (record_shapes, one
ProfilerStep a step) and exports its trace, so the one model can be recorded both ways
(`attnprof record` and `attnprof import`) and the two archives compared.
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def rms_norm(x, w, eps=1e-5):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps).to(x.dtype) * w


class Layer(torch.nn.Module):
    def __init__(self, d, heads, kv_heads, ffn):
        super().__init__()
        self.h, self.kvh, self.hd = heads, kv_heads, d // heads
        self.qkv = torch.nn.Linear(d, (heads + 2 * kv_heads) * self.hd, bias=False)
        self.o = torch.nn.Linear(d, d, bias=False)
        self.up = torch.nn.Linear(d, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, d, bias=False)
        self.n1 = torch.nn.Parameter(torch.ones(d))
        self.n2 = torch.nn.Parameter(torch.ones(d))

    def forward(self, x, cache=None):
        b, s, d = x.shape
        q, k, v = self.qkv(rms_norm(x, self.n1)).split(
            [self.h * self.hd, self.kvh * self.hd, self.kvh * self.hd], dim=-1)
        q = q.view(b, s, self.h, self.hd).transpose(1, 2)
        k = k.view(b, s, self.kvh, self.hd).transpose(1, 2)
        v = v.view(b, s, self.kvh, self.hd).transpose(1, 2)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None, enable_gqa=self.kvh != self.h)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
        gate, up = self.up(rms_norm(x, self.n2)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def run(mode, layers, a, dev):
    """The steps' CUDA-event times (ms) of one mode, after its warm-up steps."""
    hd = a.dim // a.heads
    batch = a.batch if mode == "prefill" else a.decode_batch
    if mode == "prefill":
        x = torch.randn(batch, a.seq, a.dim, device=dev, dtype=torch.bfloat16)
        caches = [None] * a.layers
    else:
        x = torch.randn(batch, 1, a.dim, device=dev, dtype=torch.bfloat16)
        caches = [(torch.randn(batch, a.kv_heads, a.seq, hd, device=dev, dtype=torch.bfloat16),
                   torch.randn(batch, a.kv_heads, a.seq, hd, device=dev, dtype=torch.bfloat16))
                  for _ in range(a.layers)]
    times = []
    prof = None
    if a.kineto:
        from torch.profiler import ProfilerActivity, profile, schedule
        # A schedule, or the profiler marks no ProfilerStep#N (record_steps is set only with
        # one): the warm-up steps waited out, then every measured step active, one cycle; the
        # trace exported by on_trace_ready when the cycle ends (after it, its events are cleared).
        path = a.kineto if a.mode != "both" else f"{a.kineto}.{mode}.json"
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                       schedule=schedule(wait=a.warmup, warmup=0, active=a.steps, repeat=1),
                       on_trace_ready=lambda p: p.export_chrome_trace(path))
    with torch.inference_mode():
        for i in range(a.warmup + a.steps):
            if prof and i == 0:
                prof.start()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.nvtx.range_push("step")
            start.record()
            h = x
            for layer, cache in zip(layers, caches):
                h = layer(h, cache)
            end.record()
            torch.cuda.nvtx.range_pop()
            end.synchronize()
            if i >= a.warmup:
                times.append(start.elapsed_time(end))
            if prof:
                prof.step()
    if prof:
        prof.stop()
    med = statistics.median(times)
    print(f"torch_sdpa: {mode}, {a.layers} layers, B={batch} S={a.seq}: median step {med:.4f} ms "
          f"over {len(times)} steps")
    return {"batch": batch, "seq": a.seq, "step_ms": times, "median_ms": med}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["prefill", "decode", "both"], default="prefill")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=16)
    p.add_argument("--ffn", type=int, default=5632)
    p.add_argument("--batch", type=int, default=1, help="prefill's batch")
    p.add_argument("--decode-batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=2048, help="prefill's prompt, decode's KV cache")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--json", help="write the steps' CUDA-event times (ms) here")
    p.add_argument("--kineto", help="run the steps under PyTorch's profiler and export its trace here")
    a = p.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    with torch.device(dev):  # initialised on the GPU: seconds less per process than on the CPU
        layers = torch.nn.ModuleList(Layer(a.dim, a.heads, a.kv_heads, a.ffn)
                                     for _ in range(a.layers)).to(torch.bfloat16).eval()
    modes = ["prefill", "decode"] if a.mode == "both" else [a.mode]
    result = {"layers": a.layers, "dim": a.dim}
    for mode in modes:
        result[mode] = run(mode, layers, a, dev)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main()
