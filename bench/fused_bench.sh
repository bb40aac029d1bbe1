#!/usr/bin/env bash
# Builds bench/fused_bench with nvcc on the GPU machine and runs it:
#   1. correctness of every kernel configuration on every check shape, timings on
#      the goal shapes, the cuBLAS bf16 ceiling;
#   2. PyTorch's SDPA backends (efficient, flash, cudnn) and our kernels (as a
#      shared library through ctypes) timed in interleaved rounds in one Python
#      process, when python3 has torch: the like-for-like comparison;
#   3. compute-sanitizer memcheck and racecheck on small shapes.
# Logs go to $OUT (the device tool's folder) or out/fused_bench.
# Usage: bash bench/fused_bench.sh [all|bench|torch|sanitize]
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
LOG=${OUT:-out/fused_bench}
mkdir -p "$LOG"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
BIN=build/bench/fused_bench
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv 2>&1 | tee "$LOG/gpu.txt"

mkdir -p build/bench
# sm_90 only: this program is for the H200; the library build keeps the Makefile's arch list.
# The Hopper flash kernels are their own object, sm_90a (wgmma and setmaxnreg need it), with
# their bench-only configurations (bench/flash_sm90a_experiments.cu).
NVCC_BENCH=("$CUDA_HOME/bin/nvcc" -std=c++17 -O3 -lineinfo -DATTNPROF_FLASH_EXPERIMENTAL_TILES -Ikernels
            -Xcompiler -fPIC -Xptxas -v)
{ "${NVCC_BENCH[@]}" -gencode arch=compute_90a,code=sm_90a -DATTNPROF_HAVE_SM90A -c bench/flash_sm90a_experiments.cu \
      -o build/bench/flash_fwd_sm90a.o &&
  "${NVCC_BENCH[@]}" -gencode arch=compute_90,code=sm_90 -Xcompiler -fopenmp bench/fused_bench.cu \
      kernels/flash_fwd.cu kernels/efficient_fwd.cu build/bench/flash_fwd_sm90a.o -lcublas -lgomp -o "$BIN"; } \
    > "$LOG/build.txt" 2>&1 || { cat "$LOG/build.txt"; exit 1; }
grep -E "spill" "$LOG/build.txt" | grep -v " 0 bytes spill stores" || true

if [ "$what" = all ] || [ "$what" = bench ]; then
    OMP_NUM_THREADS=$(nproc) "$BIN" 2>&1 | tee "$LOG/bench.txt" || status=1
fi

nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv 2>&1 | tee -a "$LOG/gpu.txt"

if [ "$what" = all ] || [ "$what" = torch ]; then
    # Our kernels as a shared library, called through ctypes from the same Python
    # process as PyTorch: rounds interleave PyTorch's backends and ours on the
    # same inputs, so clock or power drift during the run affects all alike.
    "${NVCC_BENCH[@]}" -shared -gencode arch=compute_90,code=sm_90 kernels/flash_fwd.cu kernels/efficient_fwd.cu \
        build/bench/flash_fwd_sm90a.o -o build/bench/libattnfused.so >> "$LOG/build.txt" 2>&1 ||
        { tail "$LOG/build.txt"; exit 1; }
    PYTHONUNBUFFERED=1 python3 - <<'PY' 2>&1 | tee "$LOG/torch.txt"
import ctypes, sys, torch
sys.path.insert(0, "bench")
from torch_rounds import interleaved_rounds, print_table, sdpa_impls
from torch.nn.attention import SDPBackend

class Cfg(ctypes.Structure):  # flash_fwd_config / efficient_fwd_config (same layout)
    _fields_ = [("kernel_name", ctypes.c_char_p), ("head_dim", ctypes.c_int), ("block_m", ctypes.c_int),
                ("block_n", ctypes.c_int), ("warps", ctypes.c_int), ("threads", ctypes.c_int),
                ("smem_bytes", ctypes.c_size_t), ("path", ctypes.c_char_p)]

lib = ctypes.CDLL("build/bench/libattnfused.so")
P = ctypes.c_void_p
I = ctypes.c_int
for fam in ("flash", "efficient"):
    getattr(lib, fam + "_fwd_config_at").restype = ctypes.POINTER(Cfg)
    getattr(lib, fam + "_fwd_config_count").restype = I
    getattr(lib, fam + "_fwd_prepare").restype = I
    getattr(lib, fam + "_fwd_padded_dim").argtypes = [I]
    getattr(lib, fam + "_fwd_padded_dim").restype = I
# (config, q, k, v, out, lse, workspace, batch, heads, seq, head_dim, causal, stream)
lib.launch_flash_fwd.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, P]
workspace = torch.zeros(16, device="cuda", dtype=torch.int32)  # the sm_90a kernels' tile counter
lib.launch_flash_fwd.restype = I
# (config, q, k, v, out, batch, heads, seq, head_dim, stream)
lib.launch_efficient_fwd.argtypes = [I, P, P, P, P, I, I, I, I, P]
lib.launch_efficient_fwd.restype = I
ours = []
for fam in ("efficient", "flash"):
    for i in range(getattr(lib, fam + "_fwd_config_count")()):
        c = getattr(lib, fam + "_fwd_config_at")(i).contents
        assert getattr(lib, fam + "_fwd_prepare")(i) == 0
        ours.append((fam, i, c.kernel_name.decode(), c.head_dim))

print("torch", torch.__version__, torch.cuda.get_device_name(0))
l2 = torch.cuda.get_device_properties(0).L2_cache_size
ROUNDS, ITERS, WARM = 7, 10, 3
for (B, H, S, D) in [(8, 16, 1024, 64), (4, 16, 4096, 128), (4, 16, 4096, 32), (4, 16, 4096, 96),
                     (4, 16, 4096, 80), (4, 16, 4096, 256)]:
    set_bytes = B * H * S * D * 2 * 3
    nsets = max(2, -(-3 * l2 // set_bytes))
    sets = [[torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3)] for _ in range(nsets)]
    out = torch.empty(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(B * H * S, device="cuda", dtype=torch.float32)
    stream = torch.cuda.current_stream().cuda_stream
    flops = 2.0 * B * H * S * S * D
    impls = sdpa_impls([("torch efficient", SDPBackend.EFFICIENT_ATTENTION),
                        ("torch flash", SDPBackend.FLASH_ATTENTION), ("torch cudnn", SDPBackend.CUDNN_ATTENTION)],
                       sets[0], True, f"{B}x{H}x{S}x{D}")
    for fam, idx, kname, d in ours:
        if d != getattr(lib, fam + "_fwd_padded_dim")(D):  # the kernel of D, or of the next D up
            continue
        if fam == "flash":
            def run(q, k, v, idx=idx):
                rc = lib.launch_flash_fwd(idx, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                          lse.data_ptr(), workspace.data_ptr(), B, H, S, D, 1, stream)
                assert rc == 0, rc
                return out
        else:
            def run(q, k, v, idx=idx):
                rc = lib.launch_efficient_fwd(idx, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                              B, H, S, D, stream)
                assert rc == 0, rc
                return out
        impls.append((kname, run))
    # Sanity: each of ours against PyTorch's flash on the same inputs.
    ref_run = dict(impls).get("torch flash")
    ref = ref_run(*sets[0]).float() if ref_run else None
    samples, rmed = interleaved_rounds(impls, sets, ROUNDS, ITERS, WARM,
                                       lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize)
    print(f"\n{B}x{H}x{S}x{D}: {nsets} input sets, {ROUNDS} interleaved rounds x {ITERS} launches")
    def diff(n, run):
        if ref is None or n.startswith("torch"):
            return "-"
        return f"{((run(*sets[0]).float() - ref).norm() / ref.norm()).item():.1e}"
    print_table(impls, samples, flops, diff, rmed)
PY
fi

nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv 2>&1 | tee -a "$LOG/gpu.txt"

if [ "$what" = all ] || [ "$what" = sanitize ]; then
    CS=${COMPUTE_SANITIZER:-$CUDA_HOME/bin/compute-sanitizer}
    for tool in memcheck racecheck; do
        echo "== compute-sanitizer --tool $tool (small shapes)"
        timeout 150 "$CS" --tool "$tool" --error-exitcode 3 "$BIN" --sanitize > "$LOG/sanitize_$tool.txt" 2>&1
        rc=$?
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|correctness|FAIL|Error|error" "$LOG/sanitize_$tool.txt" | head -20
        echo "compute-sanitizer $tool exit status $rc"
        [ $rc -eq 0 ] || status=1
    done
fi
exit $status
