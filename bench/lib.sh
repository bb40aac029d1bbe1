# bench/lib.sh: the preamble the device scripts share. Source it first thing, from the script
# itself (it finds the project's root from the script's own path):
#   source "$(dirname "$0")/lib.sh" NAME
# Then: the working directory is the project's root; OUT (default out/NAME) and W (WORK,
# default /tmp/attnprof-NAME) exist; L is $OUT/NAME.log; say logs a stamped line to the
# terminal and L; gpu_state appends the GPUs' state to L; TORCH_CUDNN is the cuDNN that
# PyTorch ships (found from the PyTorch install, or as given), and `cudnn_torch CMD…` runs
# CMD with it first on the loader's path.
bench_name=${1:?bench/lib.sh: source it with a name, e.g. source bench/lib.sh sweep}
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
OUT=${OUT:-out/$bench_name}
W=${WORK:-/tmp/attnprof-$bench_name}
mkdir -p "$OUT" "$W"
L=$OUT/$bench_name.log

say() { echo "== $(date -u +%T) $*" | tee -a "$L"; }

gpu_state() {
  nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv >>"$L" 2>&1
}

# PyTorch's own cuDNN (a wheel's nvidia/cudnn/lib), from whichever python3 has torch: the one
# the PyTorch-side figures of the same run use, so the cudnn rows compare one library.
torch_cudnn_dir() {
  python3 - <<'PY' 2>/dev/null
import importlib.util, os
spec = importlib.util.find_spec("nvidia.cudnn")
for base in (spec.submodule_search_locations if spec else []):
    lib = os.path.join(base, "lib")
    if os.path.isdir(lib):
        print(lib)
        break
PY
}
TORCH_CUDNN=${TORCH_CUDNN:-$(torch_cudnn_dir)}
cudnn_torch() {
  if [ -z "$TORCH_CUDNN" ]; then
    say "no PyTorch cuDNN found (python3 -c 'import nvidia.cudnn' fails; set TORCH_CUDNN): the system cuDNN runs"
  fi
  LD_LIBRARY_PATH="${TORCH_CUDNN:+$TORCH_CUDNN:}${LD_LIBRARY_PATH:-}" "$@"
}
