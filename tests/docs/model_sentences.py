#!/usr/bin/env python3
"""Audit of what attnprof writes about model traces: imports each model trace of
tests/fixtures (models-roles-h200 and models-h200) alone, three different models side by side,
and compares pairs (two training steps, two inference steps, two different models), renders them,
finds each sentence that makes a claim a trace's JSON can settle, and checks it against the numbers
tests/model_trace_counts.py counts from the JSON alone. Exits 1 naming each false sentence.

    ATTNPROF_BIN=build/attnprof python3 tests/docs/model_sentences.py

The claims and what settles them:
  unit        "CUDA time per step|forward" (abstract, method, summary table, summary.tex):
              "step" exactly when the step launched backward or optimizer work (backward_ops > 0)
  steps       the abstract's "(median of N)": the ProfilerStep#N count
  cuda_time   the abstract's µs per step: the step's GPU op durations summed (median), within 0.1 µs
  attn_share  "Attention's share of the step's CUDA time ...: X%": attn_us / cuda_us, within 0.5 points
              (where an attention op launched work: eager attention's matmuls are not counted from the JSON)
  heads       "Hq=a, Hkv=b": SDPA's q heads and the model's KV heads (before repeat_kv when expanded)
  mask        "a mask (dtype [dims])" exactly when the attention op recorded an attn_mask, with its dims
  gqa_copies  "N copies per step of B B each": repeat_kv's copies and bytes
  host_bound  "host-bound step" exactly when the GPU idles >= 25% of its span for launches; its
              "idles N% ... waiting for launches" within 1 point of launch_gap_share
  csv_roles   kernels.csv's role column: no series word (QKᵀ GEMM, PV GEMM, mask apply, ...)
  side_by_side  different models imported together: no "the fastest is", no ops_vs_previous
  unit_words  of a training step (backward_ops > 0), every sentence of report.md and summary.tex
              that counts or names the recorded range (per/every/each/one/representative/N ...,
              "Recorded ..." fields, the time figures' captions) says step, never forward; the
              phase words (the forward phase, "| forward |", "(forward 1.6%, backward ...)") and
              names (`...forward...`, aten::..._forward) are not the unit and are left aside
  counts      every "1 <noun>" of report.md, summary.tex and findings.json has its noun singular
  layers      "a period of P operations, N times": P x N forward-phase ops fit in the step's ops
  compare_unit      compare.md and compare.tex of two training steps say step, never forward
  compare_roles     compare.md's kernels section of two model traces: no series role word
  compare_inputs    two models whose attention inputs differ in the JSON (heads, KV heads, mask):
                    compare.md never says "Nothing recorded differs" and names "Attention inputs differ"
"""
import concurrent.futures
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
FIXTURE_DIRS = [FIX, os.path.join(ROOT, "tests", "fixtures", "models-h200")]
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


# The recorded range named as the unit: "per forward", "every forward", "N forwards", "the
# representative forward", "Recorded forwards", ... (after names and phase words are removed).
UNIT_FORWARD = re.compile(r"(?i)\b(?:per|every|each|one|a|the representative|the median|the drawn|recorded|warm-up)"
                          r"[- ]forwards?\b|\b\d+ (?:recorded )?forwards\b|\bforwards\b|per-forward|/ forward\b"
                          r"|\bforward call\b|\bforward's (?:range|operations|span)")
UNIT_STEP = re.compile(r"(?i)\b(?:per|every|each|one|a|the representative|the median|the drawn|recorded|warm-up)"
                       r"[- ]steps?\b|\b\d+ (?:recorded )?steps\b|per-step|/ step\b|\bstep's (?:range|span)")
PHASE_WORDS = (r"\| forward \|", r"forward[- ]phase", r"\(forward [0-9.]+%", r"forward,? (?:and|&) backward",
               r"\bforward, backward", r"all parts, forward", r"the forward phase", r"when not the forward")


def unit_text(s):
    """s without what is not the unit: code spans, names, link targets, figure file names, phases."""
    s = re.sub(r"`[^`]*`", "", s)
    s = re.sub(r"\\texttt\{[^}]*\}", "", s)
    s = re.sub(r"\]\([^)]*\)", "]", s)
    s = re.sub(r"[\w./-]*time-per-forward[\w./-]*", "", s)
    s = re.sub(r"aten::\w+|\w+_forward\w*|\w*Forward\w*", "", s)
    for w in PHASE_WORDS:
        s = re.sub(w, "", s)
    return s


def audit_unit_words(label, text, unit):
    """Of a training step (unit "step"), each sentence naming the recorded range says step."""
    if unit != "step":
        return
    for s in sentences(text):
        u = unit_text(s)
        if UNIT_FORWARD.search(u) or UNIT_STEP.search(u):
            claim(not UNIT_FORWARD.search(u), "unit_words (%s: a training step)" % label, s)


SINGULAR_ENDINGS = ("ss", "us", "is", "µs", "ms", "ns", "'s")


def audit_counts(label, text):
    """Each "1 <noun>" has its noun singular (units_count_noun): "1 GEMMs" is false."""
    for m in re.finditer(r"(?<![\w.,/×x–-])1 ([A-Za-z][A-Za-z-]*s)\b(?![.\d])", text):
        w = m.group(1)
        if w.endswith(SINGULAR_ENDINGS) or w in ("GiB", "MiB", "KiB"):
            continue
        claim(False, "counts (%s)" % label, text[max(0, m.start() - 60):m.end() + 20])
    for m in re.finditer(r"(?<![\w.,/×x–-])1 ([A-Za-z][A-Za-z-]*[^s\W])\b", text):
        claim(True, "counts (%s)" % label, m.group(0))


def import_one(fix, name, work):
    subprocess.run([BIN, "import", os.path.join(fix, name + ".json.gz"), "-o", os.path.join(work, name), "-q"],
                   check=True, stdout=subprocess.DEVNULL)


def audit_one(fix, name, work, c):
    out = os.path.join(work, name)
    md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
    tex = open(os.path.join(out, "summary.tex"), encoding="utf-8").read()
    unit = "step" if float(c["backward_ops"]) > 0 else "forward"
    other = "forward" if unit == "step" else "step"
    audit_unit_words(name + " report.md", md, unit)
    audit_unit_words(name + " summary.tex", tex, unit)
    audit_counts(name + " report.md", md)
    audit_counts(name + " summary.tex", tex)
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
        if m and float(c["attn_ops"]) > 0:  # eager attention (no attention op) is not counted from the JSON
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
        m = re.search(r"operations repeat with a period of (\d+) operations?, (\d+) times?, from [\w-]+ operation (\d+) on", s)
        if m:
            period, times, first = int(m.group(1)), int(m.group(2)), int(m.group(3))
            claim(period >= 1 and times >= 2 and first - 1 + period * times <= float(c["step_ops_max"]),
                  "layers (%s: %s ops a step)" % (name, c["step_ops_max"]), s)
    # a host-bound step unsaid is false too: the finding is there exactly when the gaps are
    findings = open(os.path.join(out, "findings.json"), encoding="utf-8").read()
    audit_counts(name + " findings.json", findings)
    claim(("\"cpu_bound_step\"" in findings) == (float(c["launch_gap_share"]) >= 0.25),
          "host_bound (%s: launch gaps %s)" % (name, c["launch_gap_share"]), "findings.json cpu_bound_step")
    roles = set(line.split(",")[5] for line in open(os.path.join(out, "kernels.csv"), encoding="utf-8").readlines()[1:])
    for r in sorted(roles):
        claim(r not in SERIES_WORDS, "csv_roles (%s: a model trace)" % name, "kernels.csv role " + r)
    return unit, other


def compare_docs(work, a, b, out, *extra):
    subprocess.run([BIN, "compare", a, b, "-o", out] + list(extra), check=True, stdout=subprocess.DEVNULL)
    return (open(os.path.join(out, "compare.md"), encoding="utf-8").read(),
            open(os.path.join(out, "compare.tex"), encoding="utf-8").read())


def audit_compares(work):
    """Pairs of model traces compared: two training steps, two inference steps (each imported
    under one variant name, so compare's kernels section pairs them), two different models."""
    pairs = [("models-h200", "llama-gqa-sdpa-train-s8a", "llama-gqa-sdpa-train-s8b"),
             ("models-h200", "llama-gqa-sdpa-infer-s8a", "llama-gqa-sdpa-infer-s8b")]
    for folder, x, y in pairs:
        fix = os.path.join(ROOT, "tests", "fixtures", folder)
        c = counts(os.path.join(fix, x + ".json.gz"))
        unit = "step" if float(c["backward_ops"]) > 0 else "forward"
        dirs = []
        for n in (x, y):
            d = os.path.join(work, "pair-" + n)
            subprocess.run([BIN, "import", os.path.join(fix, n + ".json.gz"), "--variant", "model", "-o", d, "-q"],
                           check=True, stdout=subprocess.DEVNULL)
            dirs.append(d)
        md, tex = compare_docs(work, dirs[0], dirs[1], os.path.join(work, "cmp-" + x))
        audit_unit_words("compare %s" % x, md, unit)
        audit_unit_words("compare.tex %s" % x, tex, unit)
        audit_counts("compare %s" % x, md)
        kernels = md[md.index("## Kernels, variant by variant"):]
        for row in re.findall(r"^\| ([^|]+) \|", kernels, re.M):
            if row.strip() in ("Role", "---"):
                continue
            claim(row.strip() not in SERIES_WORDS + ("QKᵀ GEMM", "fused attention", "cast", "softmax NaN guard",
                                                      "mask build"),
                  "compare_roles (%s: model traces)" % x, "kernels section role " + row.strip())
    # two different models: what their JSON records of attention differs, and compare says so
    a, b = "llama-eager-gqa", "mistral-gqa-window-fp16"
    ca, cb = counts(os.path.join(FIX, a + ".json.gz")), counts(os.path.join(FIX, b + ".json.gz"))
    differ = any(ca.get(k) != cb.get(k) for k in ("heads_q", "heads_kv_before_expand", "mask"))
    md, tex = compare_docs(work, os.path.join(work, a), os.path.join(work, b), os.path.join(work, "cmp-models"),
                           "--allow-shape-mismatch")
    claim(("Nothing recorded differs" not in md) == differ, "compare_inputs (%s vs %s)" % (a, b), md.splitlines()[2])
    claim(("Attention inputs differ" in md) == differ, "compare_inputs (%s vs %s)" % (a, b), md.splitlines()[2])


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
    work = tempfile.mkdtemp(prefix="attnprof-audit-")
    try:
        traces = [(fix, n) for fix in FIXTURE_DIRS
                  for n in sorted(f[:-len(".json.gz")] for f in os.listdir(fix) if f.endswith(".json.gz"))]
        # the imports run side by side while the JSON is counted here (the counting is Python's)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            done = {t: pool.submit(import_one, t[0], t[1], work) for t in traces}
            for fix, n in traces:
                c = counts(os.path.join(fix, n + ".json.gz"))
                done[(fix, n)].result()
                audit_one(fix, n, work, c)
        audit_side_by_side(["llama-eager-gqa", "mistral-gqa-window-fp16", "llama-train-sync-bf16"], work)
        audit_compares(work)
    finally:
        shutil.rmtree(work)
    for f in false:
        print("model_sentences: false:", f, file=sys.stderr)
    print("model_sentences: %d claims checked against the trace JSON, %d false" % (checked, len(false)))
    return 1 if false else 0


if __name__ == "__main__":
    sys.exit(main())
