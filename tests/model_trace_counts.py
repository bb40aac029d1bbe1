#!/usr/bin/env python3
"""The numbers attnprof's model rules must reproduce on a PyTorch profiler trace, counted
here from the trace JSON alone, independently of attnprof's reader (plain json + gzip):

    python3 tests/model_trace_counts.py TRACE.json.gz [...] > counts.txt

tests/fixtures/models-roles-h200/counts.txt is this script's output for that folder's traces and
tests/fixtures/models-h200/llama-gqa-eager-infer-s8a.json.gz (eager GQA behind repeat_kv).

One line per number, `<trace> <key> <value>`; medians over the ProfilerStep#N steps:
  steps                  ProfilerStep#N ranges
  attn_ops, attn_us      GPU ops launched inside an attention op (aten::scaled_dot_product_attention,
                         a backend op aten::_scaled_dot_product_*, aten::_flash_attention_*, ...,
                         the innermost CPU ops around the launch call), or, for work replayed by
                         cudaGraphLaunch, kernels whose name is a fused attention kernel
  mask_conv_ops/_us      of those, launched inside aten::scaled_dot_product_attention but outside
                         its backend op (SDPA's own mask conversion)
  inductor_ops           kernels launched by an Inductor Triton kernel's own range
                         (args.kernel_backend == "triton")
  gqa_copy_ops/_bytes    copy kernels launched inside an aten::reshape (or repeat_interleave) whose
                         input is 5-D [B, Hkv, n_rep, S, D] with n_rep > 1: repeat_kv's expansion
  mask                   dtype and dims of SDPA's (or its backend op's) attn_mask input
  heads_q, heads_kv      SDPA's q and k heads, and the KV heads before repeat_kv (the 5-D input)
  gpu_idle_share         1 - (union of the step's GPU op intervals) / (first start .. last end)
  launch_gap_share       the idle time in gaps whose next GPU op was launched after the gap began
                         (the GPU waited for the host), over the same span
  host_us, host_wait_us  the step's range, and the host's waits in it (cuda*Synchronize,
                         cudaEventSynchronize, cudaStreamWaitEvent, cudaMemcpy without Async)
  graph_launches         cudaGraphLaunch calls per step
  cuda_us                the step's GPU op durations summed (the report's CUDA time per step)
  step_ops_max           the most GPU ops any step launched
  backward_ops           GPU ops launched inside autograd's engine (autograd::engine::evaluate_function)
                         or an optimizer's step (Optimizer.step#...): the step is a training step
"""
import bisect
import gzip
import json
import statistics
import sys

ATTN_OPS = ("aten::scaled_dot_product_attention", "aten::_scaled_dot_product_cudnn_attention",
            "aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_efficient_attention",
            "aten::_scaled_dot_product_attention_math", "aten::_scaled_dot_product_flash_attention_for_cpu",
            "aten::_scaled_dot_product_fused_attention_overrideable", "aten::_flash_attention_forward",
            "aten::_efficient_attention_forward", "aten::_cudnn_attention_forward",
            "aten::_native_multi_head_attention", "aten::_scaled_dot_product_cudnn_attention_backward",
            "aten::_scaled_dot_product_flash_attention_backward",
            "aten::_scaled_dot_product_efficient_attention_backward")
WAITS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaStreamWaitEvent",
         "cudaMemcpy", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize")
FUSED_ATTN_NAMES = ("fmha", "flash_fwd", "flash_bwd", "_sdpa_", "attention")


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)["traceEvents"]


def median(xs):
    return statistics.median(xs) if xs else 0.0


def count(path):
    ev = load(path)
    steps = sorted((e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    launch = {}
    apis = []
    for e in ev:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            apis.append(e)
            c = e.get("args", {}).get("correlation")
            if c is not None:
                launch[c] = e
    cpu_by_tid = {}
    for e in ev:
        if e.get("cat") == "cpu_op":
            cpu_by_tid.setdefault(e["tid"], []).append(e)
    for v in cpu_by_tid.values():
        v.sort(key=lambda e: e["ts"])
    starts = {t: [e["ts"] for e in v] for t, v in cpu_by_tid.items()}

    def chain(api):
        """The cpu_op ranges around the launch call on its thread, outermost first."""
        v = cpu_by_tid.get(api["tid"], [])
        i = bisect.bisect_right(starts.get(api["tid"], []), api["ts"])
        out = [e for e in v[:i] if e["ts"] <= api["ts"] <= e["ts"] + e["dur"]]
        return out

    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
           and e.get("args", {}).get("correlation") in launch]
    dev = min(e["args"].get("device", 0) for e in gpu)
    gpu = [e for e in gpu if e["args"].get("device", 0) == dev]
    per = [dict(attn_ops=0, attn_us=0.0, mask_conv_ops=0, mask_conv_us=0.0, inductor_ops=0, gqa_copy_ops=0,
                gqa_copy_bytes=0, ops=[], graph_launches=0, cuda_us=0.0, backward_ops=0) for _ in steps]
    found = {}
    for g in gpu:
        api = launch[g["args"]["correlation"]]
        s = next((k for k, st in enumerate(steps) if st["ts"] <= api["ts"] <= st["ts"] + st["dur"]), None)
        if s is None:
            continue
        p = per[s]
        p["ops"].append((g["ts"], g["ts"] + g["dur"], api["ts"]))
        ch = chain(api)
        names = [c["name"] for c in ch]
        p["cuda_us"] += g["dur"]
        if any(n.startswith("autograd::engine::evaluate_function") or n.startswith("Optimizer.step") for n in names):
            p["backward_ops"] += 1
        graph = api["name"] in ("cudaGraphLaunch", "cuGraphLaunch")
        if any(n in ATTN_OPS for n in names) or (graph and g.get("cat") == "kernel" and
                                                 any(k in g["name"].lower() for k in FUSED_ATTN_NAMES)):
            p["attn_ops"] += 1
            p["attn_us"] += g["dur"]
            if "aten::scaled_dot_product_attention" in names and not any(
                    n in ATTN_OPS and n != "aten::scaled_dot_product_attention" for n in names):
                p["mask_conv_ops"] += 1
                p["mask_conv_us"] += g["dur"]
        if ch and ch[-1].get("args", {}).get("kernel_backend") == "triton":
            p["inductor_ops"] += 1
        for c in ch:
            a = c.get("args", {})
            dims = a.get("Input Dims") or []
            if c["name"] in ("aten::reshape", "aten::repeat_interleave") and dims and len(dims[0]) == 5 \
                    and dims[0][2] > 1 and g.get("cat") == "kernel":
                b, hkv, rep, sq, d = dims[0]
                size = {"c10::BFloat16": 2, "c10::Half": 2, "float": 4}.get(a.get("Input type", [""])[0], 0)
                p["gqa_copy_ops"] += 1
                p["gqa_copy_bytes"] += b * hkv * rep * sq * d * size
                found.setdefault("heads_kv_before_expand", hkv)
                break
        for c in ch:
            a = c.get("args", {})
            if c["name"] in ATTN_OPS and "Input Dims" in a and "mask" not in found:
                dims, types = a["Input Dims"], a.get("Input type", [])
                if len(dims) >= 2 and len(dims[0]) == 4 and len(dims[1]) == 4:
                    found["heads_q"], found["heads_kv"] = dims[0][1], dims[1][1]
                    found["mask"] = "%s %s" % (types[3], dims[3]) if len(dims) > 3 and dims[3] else "none"
    for k, st in enumerate(steps):
        st_apis = [a for a in apis if st["ts"] <= a["ts"] <= st["ts"] + st["dur"] and a["tid"] == st["tid"]]
        per[k]["host_us"] = st["dur"]
        per[k]["host_wait_us"] = sum(a["dur"] for a in st_apis if a["name"] in WAITS)
        per[k]["graph_launches"] = sum(a["name"] in ("cudaGraphLaunch", "cuGraphLaunch") for a in st_apis)
        ops = sorted(per[k]["ops"])
        if not ops:
            per[k]["gpu_idle_share"] = per[k]["launch_gap_share"] = 0.0
            continue
        lo, hi = ops[0][0], max(o[1] for o in ops)
        busy, cur_lo, cur_hi, launch_gap = 0.0, ops[0][0], ops[0][1], 0.0
        for a, b, lt in ops[1:]:
            if a > cur_hi:
                busy += cur_hi - cur_lo
                if lt > cur_hi:  # launched after the GPU went idle: the gap waited for the host
                    launch_gap += a - cur_hi
                cur_lo, cur_hi = a, b
            else:
                cur_hi = max(cur_hi, b)
        busy += cur_hi - cur_lo
        span = hi - lo
        per[k]["gpu_idle_share"] = 1 - busy / span if span > 0 else 0.0
        per[k]["launch_gap_share"] = launch_gap / span if span > 0 else 0.0
    name = path.rsplit("/", 1)[-1].split(".json")[0]
    out = [(name, "steps", len(steps))]
    for key in ("attn_ops", "attn_us", "mask_conv_ops", "mask_conv_us", "inductor_ops", "gqa_copy_ops",
                "gqa_copy_bytes", "gpu_idle_share", "launch_gap_share", "host_us", "host_wait_us", "graph_launches"):
        m = median([p[key] for p in per])
        out.append((name, key, ("%.3f" % m) if isinstance(m, float) else m))
    for key in ("heads_q", "heads_kv", "heads_kv_before_expand", "mask"):
        if key in found:
            out.append((name, key, str(found[key]).replace(" ", "")))
    for key in ("cuda_us", "backward_ops"):
        m = median([p[key] for p in per])
        extra.append((name, key, ("%.3f" % m) if isinstance(m, float) else m))
    extra.append((name, "step_ops_max", max((len(p["ops"]) for p in per), default=0)))
    return out


extra = []  # keys counts.txt predates; count_all() returns them too


def count_all(path):
    del extra[:]
    rows = count(path)
    return rows + list(extra)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        for row in count(path):
            print(*row)
