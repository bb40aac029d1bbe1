"""One `attnprof run --backward` archive checked (tests/gpu/run.sh): every variant's backward ok with
dQ, dK and dV within the tolerance run.json states, or skipped with its reason; each attn_bwd
range launching the GPU operations the variant predicts (a library Memset beyond them allowed and
printed, anything else fails). Usage: check_backward.py ARCHIVE BxHxSxD. Exit 1 on any failure."""
import json
import math
import sys

d, shape = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
trace = json.load(open(f"{d}/trace.json"))
events = trace["traceEvents"] if isinstance(trace, dict) else trace
apis = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"]
ops = {}
for e in events:
    if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
        ops.setdefault(e["args"].get("correlation"), []).append(e)


def ops_of_range(r):
    s, t = r["ts"], r["ts"] + r["dur"]
    out = []
    for a in apis:
        if a["ts"] >= s and a["ts"] + a.get("dur", 0) <= t:
            out += ops.get(a["args"].get("correlation"), [])
    return out


bad = []
if not run.get("backward"):
    bad.append("run.json does not say backward")
for x in run["variants"]:
    v, b = x["name"], x.get("backward")
    if x["status"] != "ok":
        print(f"  backward {shape} {v}: forward {x['status']}: {x.get('error', '')[:120]}")
        continue
    if b is None:
        bad.append(f"{v}: no backward object")
        continue
    if b["status"] == "skipped":
        if not b.get("error"):
            bad.append(f"{v}: backward skipped without a reason")
        print(f"  backward {shape} {v}: skipped: {b.get('error', '')[:150]}")
        continue
    if b["status"] != "ok":
        bad.append(f"{v}: backward {b['status']}: {b.get('error', '')}")
        continue
    errs = [b.get(k) for k in ("rel_error_dq", "rel_error_dk", "rel_error_dv")]
    tol = b.get("tolerance")
    if tol is None or any(e is None or not math.isfinite(e) or e > tol for e in errs):
        bad.append(f"{v}: gradient errors {errs} against tolerance {tol}")
    ranges = [e for e in events if e.get("name") == "attn_bwd" and (e.get("args") or {}).get("variant") == v]
    if not ranges:
        bad.append(f"{v}: no attn_bwd range in trace.json")
        continue
    want = b.get("expected_ops")
    for r in ranges:
        got = ops_of_range(r)
        memsets = sum(o["cat"] == "gpu_memset" for o in got)
        if want is not None and len(got) != want and not (0 < len(got) - want <= memsets):
            bad.append(f"{v}: {len(got)} operations in an attn_bwd range, expected {want}: "
                       + ", ".join(o["name"][:40] for o in got))
            break
    n = len(ops_of_range(ranges[0]))
    extra = f" ({n - want} library Memset(s) beyond the expected {want})" if want is not None and n > want else ""
    print(f"  backward {shape} {v}: ok, dq/dk/dv {errs[0]:.2e}/{errs[1]:.2e}/{errs[2]:.2e} (tol {tol:.0e}), "
          f"{n} ops{extra}, {b.get('event_us') or 0:.1f} us")
for m in bad:
    print(f"FAIL backward {shape}: {m}")
sys.exit(1 if bad else 0)
