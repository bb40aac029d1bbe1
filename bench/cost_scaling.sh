#!/usr/bin/env bash
# Cost of report, compare and sweep --collect at 4 sizes each (CPU seconds, wall, peak RSS): builds
# bench/rusage_run (the wait4 timer) and runs bench/cost_scaling.py, whose header says what is
# measured. On an idle machine of many cores, JOBS processes at a time (default 1).
#   bench/cost_scaling.sh [BIN] > bench/results/....md
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:-build/attnprof}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/rusage_run" "$here/rusage_run.c"
RUSAGE_RUN="$work/rusage_run" python3 "$here/cost_scaling.py" "$bin" "$work/data" --runs "${RUNS:-2}" --jobs "${JOBS:-1}"
