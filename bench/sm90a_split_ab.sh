#!/usr/bin/env bash
# The production sm_90a flash kernels of a git revision and of the work tree, each compiled alone
# as a shared library with the production object's flags, for bench/sm90a_split_ab.py (the two
# timed against each other in one process on the GPU). Build here, run there:
#
#   bench/sm90a_split_ab.sh REV            → build/ab/libsm90a_old.so (REV), build/ab/libsm90a_new.so
#   python3 bench/sm90a_split_ab.py build/ab/libsm90a_old.so build/ab/libsm90a_new.so [PAIRS]
#
# REV's tree is a `git archive` copy under AB_WORK (default /tmp/attnprof-ab/REV).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: bench/sm90a_split_ab.sh REV}
sha=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "sm90a_split_ab: $rev is no commit" >&2; exit 2; }
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
flags=(-O3 -lineinfo -std=c++17 -gencode arch=compute_90a,code=sm_90a -DATTNPROF_HAVE_SM90A -Ikernels
       -shared -Xcompiler -fPIC)
tree=${AB_WORK:-/tmp/attnprof-ab}/$sha
if [ ! -d "$tree" ]; then
  mkdir -p "$tree"
  git archive "$sha" kernels | tar -x -C "$tree"
fi
mkdir -p build/ab
(cd "$tree" && "$nvcc" "${flags[@]}" kernels/flash_fwd_sm90a.cu -o "$OLDPWD/build/ab/libsm90a_old.so")
"$nvcc" "${flags[@]}" kernels/flash_fwd_sm90a.cu -o build/ab/libsm90a_new.so
echo "build/ab/libsm90a_old.so (${sha:0:7}) and build/ab/libsm90a_new.so (work tree) built"
