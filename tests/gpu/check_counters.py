#!/usr/bin/env python3
"""GPU test of the counter pass, on an archive of the default shape, where the
[B,H,S,S] score matrices (256 MiB) dwarf the L2 so the minimum-DRAM predictions hold.
Reads run.json (predictions, counter status) and counters.json (the measurements) and
asserts:
  - the counter pass ran (status ok) and every ok variant has kernel ranges and a forward range;
  - naive: the scale kernel's DRAM bytes and the Memcpy DtoD's (forward minus kernels)
    are within 5% of the prediction;
  - math: its GEMMs do no tensor-core math (0 bf16 HMMA/HGMMA FLOPs) and do FP32 FFMA work;
  - flash and cudnn: their fused kernel issues tensor-core instructions.
Prints every measured number it checks. Exit 1 on any failure."""
import json
import sys

d = sys.argv[1]
run = json.load(open(f"{d}/run.json"))
meta = run.get("counters") or {}
bad = []


def fail(msg):
    bad.append(msg)
    print(f"FAIL counters: {msg}")


if meta.get("status") != "ok":
    fail(f"counter pass status {meta.get('status')!r}: {meta.get('reason', '')}")
    sys.exit(1)
cj = json.load(open(f"{d}/counters.json"))
ranges = cj["ranges"]
print(f"  counters: {cj['meta']['chip']}, {cj['meta']['passes']} passes, "
      f"{cj['meta']['pass_seconds']:.2f} s for the pass; unavailable: {cj['meta']['unavailable']}")


def m(r, name):
    v = r["metrics"].get(name)
    return float("nan") if v is None else v


def dram(r):
    return m(r, "dram__bytes_read.sum") + m(r, "dram__bytes_write.sum")


def matches(cls, name):
    return any(p and p in name for p in cls["match"].split("|"))


def class_of(pred, name):
    for i, c in enumerate(pred["classes"]):
        if not c["is_copy"] and matches(c, name):
            return i
    return -1


variants = {v["name"]: v for v in run["variants"]}
for name, v in variants.items():
    if v["status"] != "ok":
        continue
    ks = [r for r in ranges if r["variant"] == name and r["kind"] == "kernel"]
    fw = [r for r in ranges if r["variant"] == name and r["kind"] == "forward"]
    if not ks or len(fw) != 1:
        fail(f"{name}: {len(ks)} kernel ranges, {len(fw)} forward ranges")


def within(label, pred, meas, tol=0.05):
    gap = meas / pred - 1 if pred else float("inf")
    print(f"  {label}: predicted {pred / 2**20:.1f} MiB, measured {meas / 2**20:.1f} MiB ({gap:+.1%})")
    if not abs(gap) <= tol:
        fail(f"{label}: {meas / 2**20:.1f} MiB measured, {pred / 2**20:.1f} MiB predicted ({gap:+.1%}, tolerance {tol:.0%})")


def check_pipe(vname, want_tensor):
    v = variants.get(vname)
    if not v or v["status"] != "ok":
        print(f"  {vname}: not run ({v and v['status']}), pipe not checked")
        return
    pred = v.get("prediction") or {}
    for ci, c in enumerate(pred.get("classes", [])):
        if c["pipe"] == "none" or c["is_copy"]:
            continue
        ks = [r for r in ranges if r["variant"] == vname and r["kind"] == "kernel" and class_of(pred, r["name"]) == ci]
        ti = sum(m(r, "sm__inst_executed_pipe_tensor.sum") for r in ks)
        ffma = sum(m(r, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum") for r in ks)
        print(f"  {vname} {c['label']}: {len(ks)} kernels, {ti:.0f} tensor instructions, {ffma:.3g} FFMA")
        if not ks:
            fail(f"{vname} {c['label']}: no kernel of the class measured")
        elif want_tensor and not ti > 0:
            fail(f"{vname} {c['label']}: no tensor-core instruction")
        elif not want_tensor:
            # No tensor-core math (bf16 HMMA/HGMMA operations) and FP32 FFMA work; the
            # tensor pipe's instruction count is printed, not judged (cuBLAS's FFMA GEMMs
            # issue a few).
            tf = sum(m(r, "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum") +
                     m(r, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum") for r in ks)
            if tf != 0 or not ffma > 0:
                fail(f"{vname} {c['label']}: {tf:.3g} bf16 tensor FLOPs, {ffma:.3g} FFMA; expected 0 and FFMA work")


naive = variants.get("naive")
if naive and naive["status"] == "ok":
    pred = naive["prediction"]
    ks = [r for r in ranges if r["variant"] == "naive" and r["kind"] == "kernel"]
    fw = next(r for r in ranges if r["variant"] == "naive" and r["kind"] == "forward")
    for ci, c in enumerate(pred["classes"]):
        if c["label"] == "scale":
            within("naive scale DRAM", c["dram_bytes"], sum(dram(r) for r in ks if class_of(pred, r["name"]) == ci))
        if c["is_copy"]:
            within("naive Memcpy DtoD DRAM (forward - kernels)", c["dram_bytes"], dram(fw) - sum(dram(r) for r in ks))
            # Cross-check, not asserted: naive and naive_inplace differ by the Memcpy alone.
            fi = [r for r in ranges if r["variant"] == "naive_inplace" and r["kind"] == "forward"]
            if fi:
                print(f"  (cross-check) naive forward - naive_inplace forward: {(dram(fw) - dram(fi[0])) / 2**20:.1f} MiB")
else:
    fail("naive did not run ok: the Memcpy and scale predictions are not checked")
check_pipe("math", False)
check_pipe("flash", True)
check_pipe("cudnn", True)
sys.exit(1 if bad else 0)
