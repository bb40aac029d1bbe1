#!/usr/bin/env python3
"""PyTorch profiler traces of the model kinds the model rules must read as models: a compiled
model, a CUDA-graph replay of SDPA, an eager GQA model whose KV heads are expanded by repeat_kv
before SDPA with a boolean (sliding-window) mask, and a training step with a synchronize inside
the step. Fixtures for `attnprof import` (tests/fixtures/models-roles-h200).

Every model is built from its library's config with random weights (the GPU machine reaches no
registry). Each trace: a schedule (wait 1, warmup 1, active MODEL_TRACE_STEPS, default 6),
`p.step()` once per step, record_shapes=True, CPU and CUDA activities. One model failing does
not stop the others; its error goes into OUTDIR/model-traces.txt.

    python3 bench/model_role_traces.py OUTDIR [name ...]

The counts the rules must reproduce are taken from the JSON by tests/model_trace_counts.py,
not here: this script only records.
"""
import gzip
import json
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "out/model-role-traces"
ONLY = set(sys.argv[2:])
os.makedirs(OUT, exist_ok=True)
DEV = "cuda"
LOG = open(os.path.join(OUT, "model-traces.txt"), "a")
ACTIVE = int(os.environ.get("MODEL_TRACE_STEPS", "6"))


def say(*a):
    line = " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


def profile(name, step, meta, sync_after=True):
    """Runs step() under the profiler for ACTIVE + 2 steps (ACTIVE recorded) and writes NAME.json.gz."""
    if ONLY and name not in ONLY:
        return
    path = os.path.join(OUT, name + ".json")
    try:
        t0 = time.time()
        for _ in range(3):  # compile, autotune, cuDNN plans and graph warm-up before the profiler's steps
            step()
        torch.cuda.synchronize()
        warm = time.time() - t0
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        sched = torch.profiler.schedule(wait=1, warmup=1, active=ACTIVE, repeat=1)
        with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                    on_trace_ready=lambda p: p.export_chrome_trace(path)) as p:
            for _ in range(ACTIVE + 2):
                step()
                if sync_after:
                    torch.cuda.synchronize()
                p.step()
        torch.cuda.synchronize()
        with open(path, "rb") as f:
            raw = f.read()
        # mtime 0: the same trace gives the same bytes
        with open(path + ".gz", "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0) as g:
            g.write(raw)
        os.remove(path)
        events = json.loads(raw)["traceEvents"]
        kernels = [e for e in events if e.get("cat") == "kernel"]
        sdpa = sorted({e["name"] for e in events if e.get("cat") == "cpu_op" and "scaled_dot_product" in e["name"]})
        say(f"{name}: {meta}; {len(events)} events, {len(kernels)} kernels in {ACTIVE} steps, "
            f"{os.path.getsize(path + '.gz') / 1e6:.2f} MB gz, warm-up {warm:.1f} s; sdpa ops: {sdpa}")
    except Exception:
        say(f"{name}: FAILED\n" + traceback.format_exc())


def llama(layers, hidden, heads, kv_heads, attn="sdpa"):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=8192, hidden_size=hidden, intermediate_size=hidden * 11 // 4,
                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                      max_position_embeddings=4096, attn_implementation=attn)
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).to(DEV, torch.bfloat16).eval()


def compiled_llama():
    model = llama(4, 1024, 16, 4)
    compiled = torch.compile(model)
    ids = torch.randint(0, 8192, (2, 1024), device=DEV)

    @torch.no_grad()
    def step():
        compiled(input_ids=ids, use_cache=False)
    profile("llama-compiled-gqa", step, "torch.compile(LlamaForCausalLM) 4 layers, hidden 1024, 16 q / 4 kv "
            "heads, D 64, B 2 x S 1024, bf16, attn_implementation=sdpa, inference (no_grad)")
    # the same model eager: compare's 'compiled or not' field
    eager = torch.no_grad()(lambda: model(input_ids=ids, use_cache=False))
    profile("llama-eager-gqa", eager, "the same LlamaForCausalLM, eager (no torch.compile), inference")


def graph_sdpa():
    torch.manual_seed(0)
    B, H, S, D = 4, 16, 2048, 64
    E = H * D
    qkv = torch.nn.Linear(E, 3 * E, device=DEV, dtype=torch.float16)
    proj = torch.nn.Linear(E, E, device=DEV, dtype=torch.float16)
    x = torch.randn(B, S, E, device=DEV, dtype=torch.float16)

    def block():
        q, k, v = qkv(x).view(B, S, 3, H, D).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return proj(o.transpose(1, 2).reshape(B, S, E))

    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                block()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            block()
    profile("sdpa-cudagraph-fp16", graph.replay, "QKV projection, SDPA (is_causal) and output projection "
            "captured in one torch.cuda.CUDAGraph before profiling and replayed once a step; B 4, H 16, "
            "S 2048, D 64, fp16")


def mistral_masked():
    from transformers import MistralConfig, MistralForCausalLM
    cfg = MistralConfig(vocab_size=8192, hidden_size=2048, intermediate_size=5632, num_hidden_layers=4,
                        num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                        max_position_embeddings=4096, sliding_window=512, attn_implementation="sdpa")
    torch.manual_seed(0)
    model = MistralForCausalLM(cfg).to(DEV, torch.float16).eval()
    ids = torch.randint(0, 8192, (2, 1024), device=DEV)

    @torch.no_grad()
    def step():
        model(input_ids=ids, use_cache=False)
    # what SDPA is given: the mask's dtype and shape, once, for the log
    seen = []
    orig = F.scaled_dot_product_attention

    def spy(q, k, v, attn_mask=None, *a, **kw):
        if not seen:
            seen.append((tuple(q.shape), tuple(k.shape), None if attn_mask is None else
                         (str(attn_mask.dtype), tuple(attn_mask.shape)), kw.get("is_causal"), kw.get("enable_gqa")))
        return orig(q, k, v, attn_mask, *a, **kw)
    F.scaled_dot_product_attention = spy
    torch.nn.functional.scaled_dot_product_attention = spy
    try:
        step()
    finally:
        F.scaled_dot_product_attention = orig
    say(f"mistral sdpa call (q, k, mask, is_causal, enable_gqa): {seen}")
    profile("mistral-gqa-window-fp16", step, "MistralForCausalLM 4 layers, hidden 2048, 16 q / 8 kv heads, "
            "D 128, sliding_window 512, B 2 x S 1024, fp16, attn_implementation=sdpa (repeat_kv before SDPA, "
            "boolean mask), inference (no_grad)")


def train_sync():
    model = llama(2, 2048, 16, 16).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, 8192, (4, 2048), device=DEV)

    def step():
        loss = model(input_ids=ids, labels=ids, use_cache=False).loss
        loss.backward()
        torch.cuda.synchronize()  # the host waits for the backward inside the step
        opt.step()
        opt.zero_grad(set_to_none=True)
    profile("llama-train-sync-bf16", step, "LlamaForCausalLM 2 layers, hidden 2048, 16 heads (MHA), D 128, "
            "B 4 x S 2048, bf16 weights, one training step (forward, backward, torch.cuda.synchronize, fused "
            "AdamW)", sync_after=False)


def main():
    import transformers
    say(f"== {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} torch {torch.__version__} "
        f"transformers {transformers.__version__} cuda {torch.version.cuda} cudnn {torch.backends.cudnn.version()} "
        f"gpu {torch.cuda.get_device_name()}")
    for make in (graph_sdpa, mistral_masked, train_sync, compiled_llama):
        try:
            make()
        except Exception:
            say(f"{make.__name__}: FAILED\n" + traceback.format_exc())
        torch.cuda.empty_cache()


main()
