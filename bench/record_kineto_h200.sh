#!/usr/bin/env bash
# Device run after the Kineto drop-in writer landed (2026-11-30): from the project root on
# the H200 after `source .devdeps/env.sh`, build/ carried. Under $OUT: record.log and
# fixtures.tgz (torch-h200/ from bench/torch_traces.py; h200-kineto/, a small batch written
# by the new trace writer and collector).
source "$(dirname "$0")/lib.sh" record-kineto
L=$OUT/record.log

say "attnprof $(build/attnprof --version)"
if [ -z "${SKIP_TORCH:-}" ]; then
  say "PyTorch traces of the six variants at 8x16x1024x64 (bench/torch_traces.py)"
  PYTHONUNBUFFERED=1 timeout 240 python3 bench/torch_traces.py --out "$W/torch-h200" >>"$L" 2>&1; echo "rc=$?" >>"$L"
  build/attnprof import "$W"/torch-h200/kineto_*.json.gz -o "$W/torch-archive" --force >>"$L" 2>&1
  echo "import rc=$?" >>"$L"
fi

say "small batch with the new writer and collector (cuDNN 9.19)"
cudnn_torch build/attnprof run --batch 2 --heads 4 --seq 256 --iters 4 --warmup 2 -o "$W/h200-kineto" --force \
  --format png >>"$L" 2>&1; echo "rc=$?" >>"$L"
python3 - "$W/h200-kineto/trace.json" >>"$L" 2>&1 <<'PY'
import json, sys, collections
t = json.load(open(sys.argv[1]))
print("top-level keys in order:", list(t.keys()))
ev = t["traceEvents"]
host = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver", "user_annotation")]
print("host pids/tids:", collections.Counter((e["pid"], e["tid"]) for e in host).most_common(4))
print("steps:", sum(1 for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")))
k = [e for e in ev if e.get("cat") == "kernel"][:1]
print("a kernel's args:", k and sorted(k[0]["args"].keys()))
a = [e for e in ev if e.get("cat") == "cuda_runtime"][:1]
print("an API call's args:", a and a[0]["args"])
PY

say "gpu-test (cuDNN 9.19)"
cudnn_torch env ATTNPROF_BIN=build/attnprof bash tests/gpu/run.sh >>"$L" 2>&1; echo "gpu-test rc=$?" >>"$L"

mkdir -p "$W/fx/h200-kineto"
cp "$W"/h200-kineto/{trace.json,run.json,counters.json} "$W/fx/h200-kineto/" 2>>"$L"
[ -d "$W/torch-h200" ] && cp -r "$W/torch-h200" "$W/fx/"
tar czf "$OUT/fixtures.tgz" -C "$W/fx" . && ls -la "$OUT" >>"$L"
