#!/usr/bin/env python3
"""Audit of what attnprof writes about model traces: imports each trace of
tests/fixtures/models-roles-h200 alone and the three side by side, renders them, finds each
sentence that makes a claim a trace's JSON can settle, and checks it against the numbers
tests/model_trace_counts.py counts from the JSON alone. Exits 1 naming each false sentence.

    ATTNPROF_BIN=build/attnprof python3 tests/docs/model_sentences.py

The claims and what settles them:
  unit        "CUDA time per step|forward" (abstract, method, summary table, summary.tex):
              "step" exactly when the step launched backward or optimizer work (backward_ops > 0)
  steps       the abstract's "(median of N)": the ProfilerStep#N count
  cuda_time   the abstract's µs per step: the step's GPU op durations summed (median), within 0.1 µs
  attn_share  "Attention's share of the step's CUDA time ...: X%": attn_us / cuda_us, within 0.5 points
  heads       "Hq=a, Hkv=b": SDPA's q heads and the model's KV heads (before repeat_kv when expanded)
  mask        "a mask (dtype [dims])" exactly when the attention op recorded an attn_mask, with its dims
  gqa_copies  "N copies per step of B B each": repeat_kv's copies and bytes
  host_bound  "host-bound step" exactly when the GPU idles >= 25% of its span for launches; its
              "idles N% ... waiting for launches" within 1 point of launch_gap_share
  csv_roles   kernels.csv's role column: no series word (QKᵀ GEMM, PV GEMM, mask apply, ...)
  side_by_side  different models imported together: no "the fastest is", no ops_vs_previous
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "tests", "fixtures", "models-roles-h200")
BIN = os.environ.get("ATTNPROF_BIN", os.path.join(ROOT, "build", "attnprof"))
SERIES_WORDS = ("QKᵀ GEMM", "PV GEMM", "mask apply", "scale", "softmax (series)", "masked_fill copy")

spec = importlib.util.spec_from_file_location("counts", os.path.join(ROOT, "tests", "model_trace_counts.py"))
counts_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(counts_mod)

checked = 0
false = []


def claim(ok, what, sentence):
    global checked
    checked += 1
    if not ok:
        false.append("%s: %s" % (what, sentence.strip()[:300]))


def counts(path):
    return {k: v for _, k, v in counts_mod.count_all(path)}


def sentences(text):
    """Lines and list items, each split into its sentences at '. ' before a capital."""
    out = []
    for line in text.splitlines():
        out.extend(re.split(r"(?<=[.;])\s+(?=[A-Z])", line))
    return out


def audit_one(name, work):
    c = counts(os.path.join(FIX, name + ".json.gz"))
    out = os.path.join(work, name)
    subprocess.run([BIN, "import", os.path.join(FIX, name + ".json.gz"), "-o", out, "-q"], check=True,
                   stdout=subprocess.DEVNULL)
    md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
    tex = open(os.path.join(out, "summary.tex"), encoding="utf-8").read()
    unit = "step" if float(c["backward_ops"]) > 0 else "forward"
    other = "forward" if unit == "step" else "step"
    for s in sentences(md) + sentences(tex):
        m = re.search(r"CUDA (?:and CPU )?time (?:per|/) (forward|step)\b", s)
        if m:
            claim(m.group(1) == unit, "unit (%s: a %s)" % (name, unit), s)
        m = re.search(r"`%s` at ([0-9.]+) µs CUDA time per \w+ \(median of (\d+)\)" % re.escape(name), s)
        if m:
            claim(abs(float(m.group(1)) - float(c["cuda_us"])) <= 0.1, "cuda_time (%s: %s µs)" % (name, c["cuda_us"]), s)
            claim(int(m.group(2)) == int(c["steps"]), "steps (%s: %s)" % (name, c["steps"]), s)
        m = re.search(r"Attention's share of the step's CUDA time \(median over \d+ steps of [0-9.]+ µs CUDA time\): "
                      r"([0-9.]+)%", s)
        if m:
            want = 100 * float(c["attn_us"]) / float(c["cuda_us"])
            claim(abs(float(m.group(1)) - want) <= 0.5, "attn_share (%s: %.1f%%)" % (name, want), s)
        m = re.search(r"Hq=(\d+), Hkv=(\d+)", s)
        if m and "heads_q" in c and s.startswith("Facts recorded"):
            # the facts say what the attention op recorded (K after any repeat), then the model's
            kv = re.search(r"kv_heads (\d+) by", s)
            claim(m.group(1) == c["heads_q"] and m.group(2) == c["heads_kv"] and
                  (kv.group(1) if kv else None) == c.get("heads_kv_before_expand"),
                  "heads (%s: SDPA's Hq %s, Hkv %s, model's %s)" % (name, c["heads_q"], c["heads_kv"],
                                                                  c.get("heads_kv_before_expand")), s)
        elif m and "heads_q" in c:
            kv = c.get("heads_kv_before_expand", c["heads_kv"])
            claim(m.group(1) == c["heads_q"] and m.group(2) == kv,
                  "heads (%s: Hq %s, KV heads %s)" % (name, c["heads_q"], kv), s)
        if s.startswith("- Attention inputs") and "mask" in c:
            m = re.search(r"a mask \((\w+) \\\[([0-9,]+)\\\]\)", s)
            if c["mask"] == "none":
                claim(m is None, "mask (%s: none recorded)" % name, s)
            else:
                dims = c["mask"][c["mask"].index("["):]
                claim(m is not None and "[%s]" % m.group(2) == dims, "mask (%s: %s)" % (name, c["mask"]), s)
        m = re.search(r"(\d+) copies per step of (\d+) B each", s)
        if m:
            claim(int(m.group(1)) == int(float(c["gqa_copy_ops"])) and
                  int(m.group(1)) * int(m.group(2)) == int(float(c["gqa_copy_bytes"])),
                  "gqa_copies (%s: %s ops, %s B)" % (name, c["gqa_copy_ops"], c["gqa_copy_bytes"]), s)
        m = re.search(r"host-bound step: the GPU idles (\d+)% of its span waiting for launches", s)
        if m:
            claim(float(c["launch_gap_share"]) >= 0.25 and abs(int(m.group(1)) - 100 * float(c["launch_gap_share"])) <= 1,
                  "host_bound (%s: launch gaps %s)" % (name, c["launch_gap_share"]), s)
        m = re.search(r"the GPU sets the pace: .* idles (\d+)% of its span, (\d+)% waiting for launches", s)
        if m:
            claim(float(c["launch_gap_share"]) < 0.25 and abs(int(m.group(2)) - 100 * float(c["launch_gap_share"])) <= 1,
                  "host_bound (%s: launch gaps %s)" % (name, c["launch_gap_share"]), s)
    # a host-bound step unsaid is false too: the finding is there exactly when the gaps are
    findings = open(os.path.join(out, "findings.json"), encoding="utf-8").read()
    claim(("\"cpu_bound_step\"" in findings) == (float(c["launch_gap_share"]) >= 0.25),
          "host_bound (%s: launch gaps %s)" % (name, c["launch_gap_share"]), "findings.json cpu_bound_step")
    roles = set(line.split(",")[5] for line in open(os.path.join(out, "kernels.csv"), encoding="utf-8").readlines()[1:])
    for r in sorted(roles):
        claim(r not in SERIES_WORDS, "csv_roles (%s: a model trace)" % name, "kernels.csv role " + r)
    return unit, other


def audit_side_by_side(names, work):
    out = os.path.join(work, "side")
    subprocess.run([BIN, "import"] + [os.path.join(FIX, n + ".json.gz") for n in names] + ["-o", out, "-q"],
                   check=True, stdout=subprocess.DEVNULL)
    md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
    for s in sentences(md):
        if "the fastest is" in s:
            claim(False, "side_by_side (different models)", s)
        m = re.search(r"`([\w.-]+)` at ([0-9.]+) µs CUDA time per (forward|step)", s)
        while m:
            c = counts(os.path.join(FIX, m.group(1) + ".json.gz"))
            unit = "step" if float(c["backward_ops"]) > 0 else "forward"
            claim(abs(float(m.group(2)) - float(c["cuda_us"])) <= 0.1 and m.group(3) == unit,
                  "side_by_side (%s: %s µs per %s)" % (m.group(1), c["cuda_us"], unit), s)
            s = s[m.end():]
            m = re.search(r"`([\w.-]+)` at ([0-9.]+) µs CUDA time per (forward|step)", s)
    findings = json.load(open(os.path.join(out, "findings.json"), encoding="utf-8"))
    text = json.dumps(findings)
    claim("ops_vs_previous" not in text, "side_by_side (different models)", "findings.json ops_vs_previous")


def main():
    names = sorted(f[:-len(".json.gz")] for f in os.listdir(FIX) if f.endswith(".json.gz"))
    work = tempfile.mkdtemp(prefix="attnprof-audit-")
    try:
        for n in names:
            audit_one(n, work)
        audit_side_by_side(["llama-eager-gqa", "mistral-gqa-window-fp16", "llama-train-sync-bf16"], work)
    finally:
        shutil.rmtree(work)
    for f in false:
        print("model_sentences: false:", f, file=sys.stderr)
    print("model_sentences: %d claims checked against the trace JSON, %d false" % (checked, len(false)))
    return 1 if false else 0


if __name__ == "__main__":
    sys.exit(main())
