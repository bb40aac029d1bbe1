#!/usr/bin/env bash
# Holistic Trace Analysis (PyPI, with ijson: its fast streaming reader) reads
# attnprof's trace.json like one of PyTorch's (tests/hta/check_hta.py):
#  1. the H200 fixture h200-kineto, recorded on 2026-11-30 by the Kineto drop-in writer
#     and collector (bench/record_kineto_h200.sh);
#  2. the six PyTorch 2.11 traces of tests/fixtures/torch-h200, through `attnprof import`.
set -euo pipefail
bin=${ATTNPROF_BIN:-build/attnprof}
py=${HTA_PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
fx=$here/../fixtures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -r "$fx/h200-kineto" "$work/ours"
"$bin" report "$work/ours" -q
"$py" "$here/check_hta.py" "$work/ours"

t=$fx/torch-h200
"$bin" import "$t/kineto_naive.json.gz" "$t/kineto_naive_inplace.json.gz" "$t/kineto_sdpa_math.json.gz" \
  "$t/kineto_sdpa_efficient.json.gz" "$t/kineto_sdpa_flash.json.gz" "$t/kineto_sdpa_cudnn.json.gz" \
  -o "$work/torch" -q
"$py" "$here/check_hta.py" "$work/torch"
echo "hta-test: HTA reads attnprof's trace.json and an imported PyTorch archive as the reports say"
