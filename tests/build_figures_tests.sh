#!/bin/sh
# Builds and runs the figure and occupancy tests on their own, while the rest of
# the tree may not link yet: only the sources these tests need.
#   tests/build_figures_tests.sh [criterion options]
set -eu
cd "$(dirname "$0")/.."
out=${BUILD:-build}/figures-tests
mkdir -p "$out"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
${CC:-gcc} -std=c11 -O2 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE \
    -Isrc -Itests -I"$CUDA_HOME/include" $(pkg-config --cflags cairo jansson) \
    tests/test_occupancy.c tests/test_figures.c \
    src/occupancy.c src/figures/*.c \
    src/analysis.c src/findings.c src/trace.c src/trace_read.c src/run_info.c \
    -o "$out/test_figures" \
    $(pkg-config --libs cairo jansson) -lcriterion -lm -lpthread
exec "$out/test_figures" "$@"
