#!/usr/bin/env bash
# Render time of the sweep report for 40 shapes (the target: <= 2 s on 2
# cores). Builds a 40-shape sweep without a GPU by re-rendering the committed H200
# archive tests/fixtures/h200-cudnn919-a (6 variants x 20 recorded forwards, 0.9
# MB of trace per shape) into every shape folder, then times `sweep --collect`
# (read 40 archives, analyse, findings, 4 figures in png+svg, md/html/csv/tex)
# pinned to 2 cores. Usage: bench/sweep_render.sh [BIN] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/build/attnprof}")
runs=${2:-5}
dir=$(mktemp -d /tmp/attnprof-sweep-render.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$bin" sweep --seq 256:5120:+256 --dim 64,128 --batch 1 --heads 16 -o "$dir/s" -q --force \
  --task-command "$root/tests/sweep/task.sh $root/tests/fixtures/h200-cudnn919-a {dir} {batch} {heads} {seq} {dim} 0"
n=$(ls "$dir/s/shapes" | wc -l)
echo "shapes: $n ($(du -sh "$dir/s/shapes" | cut -f1) of archives); cores: $(nproc), pinned to 0,1"
for i in $(seq "$runs"); do
  s=$(date +%s.%N)
  taskset -c 0,1 "$bin" sweep --collect "$dir/s" -q
  e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" -v i="$i" 'BEGIN { printf "collect run %d: %.2f s\n", i, e - s }'
done
