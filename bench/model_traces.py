#!/usr/bin/env python3
"""PyTorch profiler traces of real models, for `attnprof import` (the fixtures
tests/fixtures/models-h200).

Every model is built from its library's config with random weights (nothing is downloaded:
the GPU machine reaches no registry). Each trace follows the pattern the README's "Profile
your own model" shows: a schedule (wait 1, warmup 1, active 2), `p.step()` once per step,
`record_shapes=True`, CPU and CUDA activities. One model failing does not stop the others; its
error goes into the log and into $OUT/model-traces.txt.

    python3 bench/model_traces.py OUTDIR [name ...]

Writes OUTDIR/<name>.json.gz and OUTDIR/model-traces.txt (versions, what each trace holds).
MODEL_TRACE_STEPS=N records N active steps instead of 2 (compare's verdicts bootstrap over
steps); MODEL_TRACE_SUFFIX=-x appends -x to every file name (two recordings of one model).
"""
import gzip
import json
import os
import sys
import time
import traceback

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else "out/model-traces"
ONLY = set(sys.argv[2:])
os.makedirs(OUT, exist_ok=True)
DEV = "cuda"
LOG = open(os.path.join(OUT, "model-traces.txt"), "a")
ACTIVE = int(os.environ.get("MODEL_TRACE_STEPS", "2"))
SUFFIX = os.environ.get("MODEL_TRACE_SUFFIX", "")


def say(*a):
    line = " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


def profile(name, step, meta):
    """Runs step() under the profiler for ACTIVE + 2 steps (ACTIVE recorded) and writes NAME.json.gz."""
    if ONLY and name not in ONLY:
        return
    path = os.path.join(OUT, name + SUFFIX + ".json")
    try:
        for _ in range(2):  # compile, autotune and cuDNN plan caches before the profiler's steps
            step()
        torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        sched = torch.profiler.schedule(wait=1, warmup=1, active=ACTIVE, repeat=1)
        t0 = time.time()
        with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                    on_trace_ready=lambda p: p.export_chrome_trace(path)) as p:
            for _ in range(ACTIVE + 2):
                step()
                torch.cuda.synchronize()
                p.step()
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
            g.write(f.read())
        os.remove(path)
        events = json.load(gzip.open(path + ".gz"))["traceEvents"]
        kernels = [e for e in events if e.get("cat") == "kernel"]
        sdpa = sorted({e["name"] for e in events if e.get("cat") == "cpu_op" and "scaled_dot_product" in e["name"]})
        say(f"{name}{SUFFIX}: {meta}; {len(events)} events, {len(kernels)} kernels in {ACTIVE} steps, "
            f"{os.path.getsize(path + '.gz') / 1e6:.2f} MB gz, {time.time() - t0:.1f} s; sdpa ops: {sdpa}")
    except Exception:
        say(f"{name}: FAILED\n" + traceback.format_exc())


def llama(attn, layers=4, kv_heads=4):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=layers,
                      num_attention_heads=16, num_key_value_heads=kv_heads, max_position_embeddings=8192,
                      attn_implementation=attn)
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).to(DEV, torch.bfloat16).eval()


def llama_infer(attn):
    model = llama(attn)
    ids = torch.randint(0, 32000, (4, 1024), device=DEV)

    @torch.no_grad()
    def step():
        model(input_ids=ids, use_cache=False)
    return model, step


def main():
    import transformers
    say(f"== {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} torch {torch.__version__} "
        f"transformers {transformers.__version__} cuda {torch.version.cuda} cudnn {torch.backends.cudnn.version()} "
        f"gpu {torch.cuda.get_device_name()}")

    for attn in ("eager", "sdpa"):
        if not ONLY or f"llama-gqa-{attn}-infer" in ONLY:
            model, step = llama_infer(attn)
            profile(f"llama-gqa-{attn}-infer", step,
                    f"LlamaForCausalLM 4 layers, hidden 2048, 16 q heads / 4 kv heads (GQA), D 128, "
                    f"B 4 x S 1024, bf16, attn_implementation={attn}, inference (no_grad)")
            del model
            torch.cuda.empty_cache()

    if not ONLY or "llama-gqa-sdpa-math-infer" in ONLY:
        # SDPA held to its math backend (the series' 20-kernel reference): what a fallback looks
        # like beside the backend PyTorch picks, for `attnprof compare` of two model traces.
        from torch.nn.attention import SDPBackend, sdpa_kernel
        model, plain_step = llama_infer("sdpa")

        def step():
            with sdpa_kernel([SDPBackend.MATH]):
                plain_step()
        profile("llama-gqa-sdpa-math-infer", step,
                "LlamaForCausalLM 4 layers, GQA 16/4, B 4 x S 1024, bf16, attn_implementation=sdpa "
                "under sdpa_kernel([SDPBackend.MATH]), inference (no_grad)")
        del model
        torch.cuda.empty_cache()

    if not ONLY or "llama-gqa-sdpa-train" in ONLY:
        model = llama("sdpa", layers=2).train()
        model.float()  # fp32 master weights, bf16 autocast: the usual mixed-precision step
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        ids = torch.randint(0, 32000, (2, 1024), device=DEV)

        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=ids, use_cache=False).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        profile("llama-gqa-sdpa-train", step, "LlamaForCausalLM 2 layers, GQA 16/4, B 2 x S 1024, "
                "fp32 weights + bf16 autocast, one training step (forward, backward, fused AdamW)")
        del model, opt
        torch.cuda.empty_cache()

    if not ONLY or "llama-gqa-sdpa-decode" in ONLY:
        from transformers import DynamicCache
        model = llama("sdpa")
        ids = torch.randint(0, 32000, (8, 4096), device=DEV)
        with torch.no_grad():
            prefill = model(input_ids=ids, use_cache=True, past_key_values=DynamicCache())
        cache = prefill.past_key_values
        nxt = torch.randint(0, 32000, (8, 1), device=DEV)

        @torch.no_grad()
        def step():
            model(input_ids=nxt, past_key_values=cache, use_cache=True)
        profile("llama-gqa-sdpa-decode", step, "LlamaForCausalLM 4 layers, GQA 16/4, decode: B 8, 1 new token "
                "after a 4096-token prefill (KV cache grows a token per step), bf16")
        del model, cache, prefill
        torch.cuda.empty_cache()

    if not ONLY or "gpt2-eager-fp16" in ONLY:
        from transformers import GPT2Config, GPT2LMHeadModel
        torch.manual_seed(0)
        cfg = GPT2Config(n_layer=4, n_embd=1024, n_head=16, n_positions=1024, attn_implementation="eager")
        model = GPT2LMHeadModel(cfg).to(DEV, torch.float16).eval()
        ids = torch.randint(0, 50257, (8, 1024), device=DEV)

        @torch.no_grad()
        def step():
            model(input_ids=ids, use_cache=False)
        profile("gpt2-eager-fp16", step, "GPT2LMHeadModel 4 layers, hidden 1024, 16 heads, D 64, B 8 x S 1024, "
                "fp16, attn_implementation=eager, inference")
        del model
        torch.cuda.empty_cache()

    if not ONLY or "vit-b16-bf16" in ONLY:
        import timm
        torch.manual_seed(0)
        model = timm.create_model("vit_base_patch16_224", pretrained=False).to(DEV).eval()
        x = torch.randn(64, 3, 224, 224, device=DEV)

        @torch.no_grad()
        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                model(x)
        profile("vit-b16-bf16", step, "timm vit_base_patch16_224 (12 layers, 12 heads, D 64, 197 tokens), "
                "B 64, fp32 weights + bf16 autocast, inference")
        del model
        torch.cuda.empty_cache()

    if not ONLY or "flex-causal-bf16" in ONLY:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        torch.manual_seed(0)
        B, H, S, D, E = 4, 16, 2048, 128, 2048
        flex = torch.compile(flex_attention)

        def causal(b, h, q, kv):
            return q >= kv
        mask = create_block_mask(causal, None, None, S, S, device=DEV)
        qkv = torch.nn.Linear(E, 3 * E, device=DEV, dtype=torch.bfloat16)
        out = torch.nn.Linear(E, E, device=DEV, dtype=torch.bfloat16)
        x = torch.randn(B, S, E, device=DEV, dtype=torch.bfloat16)

        @torch.no_grad()
        def step():
            q, k, v = qkv(x).view(B, S, 3, H, D).permute(2, 0, 3, 1, 4)
            o = flex(q, k, v, block_mask=mask)
            out(o.transpose(1, 2).reshape(B, S, E))
        profile("flex-causal-bf16", step, "torch.compile(flex_attention), causal block mask, B 4, H 16, S 2048, "
                "D 128, bf16, between a QKV and an output projection")


main()
