#!/usr/bin/env bash
# Builds build/variant_check (tests/gpu/variant_check.c) on a machine with CUDA, cuBLAS,
# cuDNN 9 and CUPTI. Run from the repository root. Every object of the project's
# variants and kernels that compiles is linked through src/recorder/registry.c; if that link
# fails (another variant still being written), the check links math, cudnn and
# naive_inplace directly instead. The binary's RUNPATH names the cuDNN found here, so
# LD_LIBRARY_PATH can point it at another cuDNN 9.
# Env: CUDA_HOME, CUDNN_INCLUDE, CUDNN_LIB, CUDA_ARCH (default sm_90), JOBS.
set -u
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
CC=${CC:-gcc}
ARCH=${CUDA_ARCH:--gencode arch=compute_90,code=sm_90}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
OUTDIR=build/vc
mkdir -p "$OUTDIR/src/recorder/variants" "$OUTDIR/kernels" "$OUTDIR/report/archive"

first_dir_with() { # first directory among $2... holding a file matching $1
    local pat=$1; shift
    for d in "$@"; do compgen -G "$d/$pat" >/dev/null && { echo "$d"; return 0; }; done
    return 1
}
CUDNN_INCLUDE=${CUDNN_INCLUDE:-$(first_dir_with 'cudnn_graph*.h' "$CUDA_HOME/include" /usr/include \
    /usr/include/x86_64-linux-gnu /usr/local/include)}
CUDNN_LIB=${CUDNN_LIB:-$(first_dir_with 'libcudnn.so.9*' "$CUDA_HOME/lib64" /usr/lib/x86_64-linux-gnu \
    /usr/local/cuda/lib64 /usr/lib64)}
CUPTI_INCLUDE=$(first_dir_with 'cupti.h' "$CUDA_HOME/include" "$CUDA_HOME/extras/CUPTI/include" /usr/local/include)
CUPTI_LIB=$(first_dir_with 'libcupti.so*' "$CUDA_HOME/extras/CUPTI/lib64" "$CUDA_HOME/lib64" "$CUDA_HOME/lib" \
    /usr/lib/x86_64-linux-gnu)
echo "cuDNN headers: ${CUDNN_INCLUDE:-none} (version $(grep -hE '^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ' "$CUDNN_INCLUDE"/cudnn_version.h 2>/dev/null | awk '{printf "%s.", $3}'))"
echo "cuDNN library: ${CUDNN_LIB:-none}"
echo "CUPTI: headers ${CUPTI_INCLUDE:-none}, library ${CUPTI_LIB:-none}"
[ -n "$CUDNN_INCLUDE" ] && [ -n "$CUDNN_LIB" ] || { echo "no cuDNN 9 found" >&2; exit 1; }

CFLAGS="-O2 -g -std=c11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -Isrc/recorder -Ireport/base -Ireport/archive -Ikernels -I$CUDA_HOME/include -I$CUDNN_INCLUDE"
NVFLAGS="-O3 -lineinfo -std=c++17 $ARCH -Ikernels -I$CUDNN_INCLUDE"

# Compile everything in parallel; a source that fails is reported and left out.
compile() {
    local src=$1 obj=$OUTDIR/${1%.*}.o log=$OUTDIR/${1%.*}.log
    case $src in
        *.cu) $NVCC $NVFLAGS -c "$src" -o "$obj" >"$log" 2>&1 ;;
        *.c) $CC $CFLAGS -c "$src" -o "$obj" >"$log" 2>&1 ;;
    esac || { echo "  compile FAILED: $src"; sed -n 1,15p "$log"; rm -f "$obj"; return 0; }
}
export -f compile
export NVCC NVFLAGS CC CFLAGS OUTDIR
ls src/recorder/variant_util.c report/archive/prediction.c src/recorder/registry.c src/recorder/variants/*.c kernels/*.cu 2>/dev/null | xargs -P "$JOBS" -I{} bash -c 'compile {}'

objs_of() { for f in "$@"; do o=$OUTDIR/${f%.*}.o; [ -f "$o" ] && echo "$o"; done; }
CUPTI_FLAGS="-DVC_NO_CUPTI"
CUPTI_LIBS=""
if [ -n "$CUPTI_INCLUDE" ] && [ -n "$CUPTI_LIB" ]; then
    CUPTI_FLAGS="-I$CUPTI_INCLUDE"
    CUPTI_LIBS="-L$CUPTI_LIB -lcupti"
fi
LIBS="-L$CUDA_HOME/lib64 -L$CUDNN_LIB $CUPTI_LIBS -l:libcudnn.so.9 -lcublas -lcudart -ljansson -lstdc++ -lm -ldl -lpthread \
      -Wl,--enable-new-dtags,-rpath,$CUDNN_LIB:$CUDA_HOME/lib64${CUPTI_LIB:+:$CUPTI_LIB}:$CUDA_HOME/extras/CUPTI/lib64"

ALL_OBJS=$(objs_of src/recorder/variant_util.c report/archive/prediction.c src/recorder/registry.c src/recorder/variants/*.c kernels/*.cu)
if $CC $CFLAGS $CUPTI_FLAGS -DVC_REGISTRY tests/gpu/variant_check.c $ALL_OBJS -o build/variant_check $LIBS \
    >"$OUTDIR/link_registry.log" 2>&1; then
    echo "linked build/variant_check through the registry"
else
    echo "registry link failed (first lines below); linking math/cudnn/naive_inplace directly"
    sed -n 1,10p "$OUTDIR/link_registry.log"
    DIRECT="$(objs_of src/recorder/variant_util.c report/archive/prediction.c)"
    DEFS=""
    if [ -f "$OUTDIR/src/recorder/variants/math.o" ] && [ -f "$OUTDIR/kernels/math_kernels.o" ]; then
        DIRECT="$DIRECT $OUTDIR/src/recorder/variants/math.o $OUTDIR/kernels/math_kernels.o $(objs_of kernels/softmax_staged.cu)"
        DEFS="$DEFS -DVC_HAVE_MATH"
    fi
    if [ -f "$OUTDIR/src/recorder/variants/cudnn.o" ]; then
        DIRECT="$DIRECT $OUTDIR/src/recorder/variants/cudnn.o"; DEFS="$DEFS -DVC_HAVE_CUDNN"
    fi
    if [ -f "$OUTDIR/src/recorder/variants/naive_inplace.o" ] && [ -f "$OUTDIR/src/recorder/variants/unfused.o" ] &&
        [ -f "$OUTDIR/kernels/elementwise.o" ]; then
        DIRECT="$DIRECT $OUTDIR/src/recorder/variants/naive_inplace.o $OUTDIR/src/recorder/variants/unfused.o $OUTDIR/kernels/elementwise.o"
        case $DIRECT in *softmax_staged.o*) ;; *) DIRECT="$DIRECT $(objs_of kernels/softmax_staged.cu)" ;; esac
        DEFS="$DEFS -DVC_HAVE_NAIVE_INPLACE"
    fi
    $CC $CFLAGS $CUPTI_FLAGS $DEFS tests/gpu/variant_check.c $DIRECT -o build/variant_check $LIBS || exit 1
    echo "linked build/variant_check directly ($DEFS)"
fi
