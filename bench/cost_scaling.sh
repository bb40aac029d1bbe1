#!/usr/bin/env bash
# Cost of report and compare at 4 sizes each (issue 36, E10-E13), on synthetic archives made by
# bench/gen_cost_archive.py in a temp directory (removed after):
#   forwards  compare of N forwards a side (3 kernels each; the run 2x slower) against the report
#             of one, N = 10k 20k 40k 80k
#   kernels   report and compare of one forward of K distinct kernels, K = 8k 16k 32k 64k
#   run.json  peak RSS of report of a 5-forward archive whose run.json is M MB (occupancy_api
#             entries), M = 8 16 32 60, against the stated bound 8 x the file + 16 MiB
# Each timing is farm-bench's median of RUNS runs (default 3) (CPU seconds, peak MiB); the fitted exponent is the
# least-squares slope of log(time) on log(size). CPU timings of this machine: say which.
#   bench/cost_scaling.sh [BIN] > bench/results/....md
set -euo pipefail
bin=$(realpath "${1:-build/attnprof}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen() { python3 "$here/gen_cost_archive.py" "$@"; }
# "cpu_median peak_median" of farm-bench's output for COMMAND: CPU seconds (user + system), not
# wall, since the machine is shared and wall time holds the waits for the other processes
bench() {
  farm-bench -n "${RUNS:-3}" --warmup 0 --timeout 900 -- "$@" 2>&1 |
    awk '/^A cpu s/ {w=$5} /^A peak MiB/ {p=$5} END {print w, p}'
}
fit() { python3 -c '
import math,sys
xs,ys=[],[]
for line in sys.stdin:
    x,y=map(float,line.split()); xs.append(math.log(x)); ys.append(math.log(y))
n=len(xs); mx=sum(xs)/n; my=sum(ys)/n
print("%.2f" % (sum((a-mx)*(b-my) for a,b in zip(xs,ys))/sum((a-mx)**2 for a in xs)))'; }

echo "## forwards: compare of N forwards a side against the report of one"
echo
echo "| N a side | trace.json MB | report CPU s | compare CPU s | compare / report | compare peak MiB |"
echo "|---|---|---|---|---|---|"
: > "$work/fw.fit"
for n in 10000 20000 40000 80000; do
  gen "$work/a$n" --forwards "$n" --seed 1
  gen "$work/b$n" --forwards "$n" --seed 2 --slower 2
  read -r rw rp < <(bench "$bin" report "$work/a$n" -o "$work/r$n" -q --force)
  read -r cw cp < <(bench "$bin" compare "$work/a$n" "$work/b$n" -o "$work/c$n" -q --force)
  mb=$(du -m "$work/a$n/trace.json" | cut -f1)
  echo "| $n | $mb | $rw | $cw | $(python3 -c "print('%.2f' % ($cw / $rw))") | $cp |"
  echo "$n $cw" >> "$work/fw.fit"
  rm -rf "$work/a$n" "$work/b$n" "$work/r$n" "$work/c$n"
done
echo
echo "compare's fitted exponent (time ~ N^e): $(fit < "$work/fw.fit")"
echo
echo "## kernels: one forward of K distinct kernels"
echo
echo "| K | report CPU s | report peak MiB | compare CPU s |"
echo "|---|---|---|---|"
: > "$work/kr.fit"; : > "$work/kc.fit"
for k in 8000 16000 32000 64000; do
  gen "$work/k$k" --forwards 1 --kernels "$k"
  gen "$work/j$k" --forwards 1 --kernels "$k" --seed 2
  read -r rw rp < <(bench "$bin" report "$work/k$k" -o "$work/rk$k" -q --force)
  read -r cw cp < <(bench "$bin" compare "$work/k$k" "$work/j$k" -o "$work/ck$k" -q --force)
  echo "| $k | $rw | $rp | $cw |"
  echo "$k $rw" >> "$work/kr.fit"; echo "$k $cw" >> "$work/kc.fit"
  rm -rf "$work/k$k" "$work/j$k" "$work/rk$k" "$work/ck$k"
done
echo
echo "fitted exponents (time ~ K^e): report $(fit < "$work/kr.fit"), compare $(fit < "$work/kc.fit")"
echo
echo "## run.json: peak RSS of report against the bound 8 x the file + 16 MiB"
echo
echo "| run.json MB | report CPU s | peak MiB | bound MiB | peak / file |"
echo "|---|---|---|---|---|"
: > "$work/rj.fit"
for m in 8 16 32 60; do
  gen "$work/m$m" --forwards 5 --run-json-mb "$m"
  read -r rw rp < <(bench "$bin" report "$work/m$m" -o "$work/rm$m" -q --force)
  bytes=$(stat -c %s "$work/m$m/run.json")
  python3 -c "
b=$bytes/2**20; p=$rp
print('| %.1f | $rw | %.1f | %.1f | %.1f |' % ($bytes/1e6, p, 8*b+16, p/b))"
  echo "$bytes $rp" >> "$work/rj.fit"
  rm -rf "$work/m$m" "$work/rm$m"
done
echo
echo "peak RSS's fitted exponent (peak ~ size^e): $(fit < "$work/rj.fit")"
