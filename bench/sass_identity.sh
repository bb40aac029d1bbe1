#!/usr/bin/env bash
# Whether the sm_90a flash kernels compile to the same machine code as at a git revision:
# a refactoring of kernels/flash_fwd_sm90a.cu and kernels/sm90a/ that claims "no change"
# proves it here without a GPU (stronger than a timing, which only bounds a change).
#
#   bench/sass_identity.sh [REV]            (REV: default HEAD; compares it with the work tree)
#   bench/sass_identity.sh REV --prepare    (only builds REV's side, kept for the runs after:
#                                            start it before editing, the build is slow)
#
# Builds, for REV (a copy made with `git archive`) and for the work tree, the production
# object ($(BUILD)/kernels/flash_fwd_sm90a.o) and the bench library
# ($(BUILD)/bench/libflash_sm90a.so) with each side's own Makefile rules, the production
# object with `-Xptxas -v` added (it only prints). Then, kernel by kernel (by name, so that
# a change of order or symbol index does not count):
#   - SASS: `cuobjdump -sass` of the kernel, instructions and their encodings, identical;
#   - resources: ptxas -v's lines (registers, barriers, smem, cmem, stack, spills; production
#     object), `cuobjdump -res-usage`, the kernel's .nv.info attributes (barriers, mbarriers,
#     register count, parameter layout, instruction offsets) and its .text/.nv.shared/
#     .nv.constant0 sections (size, alignment, flags), identical.
# Prints one table row per kernel and exits 1 when a kernel on both sides differs. Kernels
# on one side only (configurations added or removed) are listed, not counted as differing.
# SASS_TARGETS=production skips the bench library (the slow half of the build); any other
# value is a list of objects under $(BUILD) to compare instead, e.g.
# SASS_TARGETS="kernels/elementwise.o kernels/math_kernels.o" (their sm_80 and sm_90 SASS,
# one after the other in the kernel's file; resources from cuobjdump and the ELF only, the
# ptxas -v lines being kept for the sm_90a object alone).
# SASS_WORK (default /tmp/attnprof-sass) keeps REV's build, keyed by commit, for reruns.
# cuobjdump: CUOBJDUMP, else on PATH, else $CUDA_HOME/bin (the CUDA toolkit's, or PyPI's
# nvidia-cuda-cuobjdump). nvcc: the Makefile's (CUDA_HOME, default /usr/local/cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || echo "$CUDA_HOME/bin/cuobjdump")}
[ -x "$cuobjdump" ] || { echo "sass_identity: no cuobjdump (set CUOBJDUMP=/path/to/cuobjdump)" >&2; exit 2; }
sha=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "sass_identity: $rev is no commit" >&2; exit 2; }
work=${SASS_WORK:-/tmp/attnprof-sass}
case ${SASS_TARGETS:-all} in
  all) targets=(kernels/flash_fwd_sm90a.o bench/libflash_sm90a.so) ;;
  production) targets=(kernels/flash_fwd_sm90a.o) ;;
  *) read -ra targets <<<"$SASS_TARGETS" ;;
esac
nvccflags="${NVCCFLAGS:--O3 -lineinfo} -Xptxas -v"

# build TREE OUT: the targets under OUT/build, the log in OUT/build.log.
build() {
  local tree=$1 out=$2 t goals=()
  for t in "${targets[@]}"; do goals+=("$out/build/$t"); done
  mkdir -p "$out"
  echo "sass_identity: building ${targets[*]} of $tree (log: $out/build.log)" >&2
  NVCCFLAGS=$nvccflags make -C "$tree" --no-print-directory CUDA_HOME="$CUDA_HOME" BUILD="$out/build" \
    "${goals[@]}" > "$out/build.log" 2>&1 || { tail -20 "$out/build.log" >&2; exit 1; }
}

# dump BINARY DIR: per kernel DIR/NAME.sass (its SASS) and DIR/NAME.res (its resources).
dump() {
  local bin=$1 dir=$2
  rm -rf "$dir"; mkdir -p "$dir"
  # Runs of blanks as one: cuobjdump pads every line to the dump's longest instruction, so a
  # kernel added beside the others would otherwise make each of them "differ".
  "$cuobjdump" -sass "$bin" | awk -v d="$dir" '
    /^[ \t]*Function : / { f = d "/" $3 ".sass"; next }
    /^[ \t]*\.\.\.\.\.\.\.\.\.\./ { f = ""; next }
    f != "" && NF { gsub(/[ \t]+/, " "); print > f }'
  "$cuobjdump" -res-usage "$bin" | awk -v d="$dir" '
    /^ Function / { n = $2; sub(/:$/, "", n); next }
    n != "" && /REG:/ { print "res-usage:", $0 > (d "/" n ".res"); n = "" }'
  # Sections by name: size, entry size, alignment, type, flags (not index, offset, link, info);
  # the attributes without the section index of EIATTR_PARAM_CBANK.
  "$cuobjdump" -elf "$bin" | awk -v d="$dir" '
    NF == 10 && $NF ~ /^\.(text|nv\.shared|nv\.constant0)\.[A-Za-z_]/ {
      n = $NF; sub(/^\.(text|nv\.shared|nv\.constant0)\./, "", n); s = $NF; sub("\\." n "$", "", s)
      print "section:", s, "size", $3, "es", $4, "align", $5, $6, "flags", $7 >> (d "/" n ".res"); next }
    /^\.nv\.info\./ { n = $1; sub(/^\.nv\.info\./, "", n); info = 1; next }
    info && /^[^ \t]/ { info = 0 }
    info && /Attribute:/ { cbank = /EIATTR_PARAM_CBANK/ }
    info && cbank && /Value:/ { sub(/Value:[ \t]*0x[0-9a-f]+/, "Value: (section)") }
    info && NF { print "nv.info:", $0 >> (d "/" n ".res") }'
}

# ptxas LOG DIR: ptxas -v lines of each kernel appended to DIR/NAME.res.
ptxas_lines() {
  awk -v d="$2" '
    /Compiling entry function/ { n = $0; sub(/.*function .\047?/, "", n); sub(/\047.*/, "", n); next }
    /Function properties for/ { n = $NF; next }
    n != "" && /(bytes stack frame|Used [0-9]+ registers)/ { sub(/^[^:]*: */, ""); print "ptxas:", $0 >> (d "/" n ".res") }' "$1"
}

side() { # side TREE OUT: builds the targets (make skips what is up to date) and dumps them
  local out=$2 t
  build "$1" "$out"
  for t in "${targets[@]}"; do
    dump "$out/build/$t" "$out/$(basename "$t")"
    [ "$t" != kernels/flash_fwd_sm90a.o ] || ptxas_lines "$out/build/$t.ptxas" "$out/$(basename "$t")"
  done
}

# REV's tree keeps `git archive`'s times (the commit's), so its build is made once.
base=$work/$sha
if [ ! -f "$base/tree/Makefile" ]; then
  rm -rf "$base/tree"; mkdir -p "$base/tree"
  git archive "$sha" | tar -x -C "$base/tree"
fi
side "$base/tree" "$base"
[ "${2:-}" = --prepare ] && exit 0
side "$PWD" "$work/worktree"

differ=0
printf '| kernel | in | SASS | resources |\n| --- | --- | --- | --- |\n'
for t in "${targets[@]}"; do
  o=$(basename "$t"); a=$base/$o; b=$work/worktree/$o
  for n in $( (ls "$a"; ls "$b") | sed -n 's/\.sass$//p' | LC_ALL=C sort -u); do
    if [ ! -f "$a/$n.sass" ]; then printf '| %s | %s | only in the work tree | |\n' "$n" "$o"; continue; fi
    if [ ! -f "$b/$n.sass" ]; then printf '| %s | %s | only in %s | |\n' "$n" "$o" "${sha:0:10}"; continue; fi
    s=identical; r=identical
    if ! cmp -s "$a/$n.sass" "$b/$n.sass"; then
      s="differs ($( (diff "$a/$n.sass" "$b/$n.sass" || true) | grep -c '^[<>]') lines)"; differ=1
    fi
    if ! cmp -s "$a/$n.res" "$b/$n.res"; then
      r="differs: $( (diff "$a/$n.res" "$b/$n.res" || true) | awk '/^>/ && n++ < 2 { printf "%s ", substr($0, 3) }')"; differ=1
    fi
    printf '| %s | %s | %s | %s |\n' "$n" "$o" "$s" "$r"
  done
done
echo "sass_identity: ${sha:0:10} against the work tree: $([ $differ = 0 ] && echo 'every kernel on both sides identical' || echo 'some kernels differ')" >&2
exit $differ
