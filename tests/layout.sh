#!/usr/bin/env bash
# The two halves stay apart, and each half's layers stay in order (part of `make test`):
#  1. report/ includes no CUDA header and no header of src/;
#     the layers of report/ include downward only (base < archive < io < analysis < figures
#     < docs: a file never includes a header of a later layer), and src/recorder/ (the
#     recorder's shared object) includes nothing of src/cli/ (the executable);
#  2. no two modules (object files of report/ and src/) call each other in a loop, report/
#     calls nothing of src/, and src/recorder/ nothing of src/cli/;
#  3. the attnprof executable needs no CUDA library: ldd lists none, and rendering an
#     archive loads none (LD_DEBUG);
#  4. without CUDA, `attnprof run` says so in one line and exits 3.
# Env: BUILD (build folder), WITH_CUDA (1 when the recorder was built).
set -euo pipefail
build=${BUILD:-build}
bin=$build/attnprof
fail() { echo "layout: $*" >&2; exit 1; }

# 1. Includes.
if grep -rnE '#include\s*[<"](cuda|cupti|cudnn|cublas|nvtx|nvToolsExt|curand|driver_types|vector_types)' report/; then
  fail "report/ includes a CUDA header (above)"
fi
if grep -rnE '#include\s*"(\.\./)*src/' report/; then fail "report/ includes a header of src/ (above)"; fi
for sh in $(find src -name '*.h' | LC_ALL=C sort); do
  h=${sh##*/}
  if [ -n "$(find report -name "$h")" ]; then fail "$sh and $(find report -name "$h") share a name"; fi
  if grep -rnE "#include\s*\"$h\"" report/; then fail "report/ includes $sh (above)"; fi
done

# Layer order. Headers are included by their bare name (every layer is on the include
# path), so a name is one header in all of report/.
layers="base archive io analysis figures docs"
rank() { local i=0 l; for l in $layers; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
for d in report/*/; do
  d=${d%/}; [ "$(rank "${d#report/}")" -ge 0 ] || fail "$d is no layer of report/ ($layers): put it in one and name it here"
done
loose=$(find report -maxdepth 1 -type f -name '*.[ch]' | LC_ALL=C sort)
[ -z "$loose" ] || fail "$(echo $loose) in no layer: move each into one of report/{${layers// /,}}/ (the Makefile builds only those)"
dup=$(find report -name '*.h' -printf '%f\n' | LC_ALL=C sort | uniq -d)
[ -z "$dup" ] || fail "report/ has two headers named $(echo $dup): a bare #include cannot tell them apart"
upward=$(for f in $(find report -name '*.[ch]' | LC_ALL=C sort); do
  dir=${f%/*}; from=${dir#report/}; from_rank=$(rank "$from")
  { grep -nE '^\s*#\s*include\s*"[^"]+"' "$f" || true; } | sed -E 's/^([0-9]+):.*"([^"]+)".*/\1 \2/' |
  while read -r line inc; do
    if [ -e "$dir/$inc" ]; then continue; fi
    target=$(find report -name "${inc##*/}" | head -1)
    [ -n "$target" ] || continue
    to=${target#report/}; to=${to%%/*}
    if [ "$(rank "$to")" -gt "$from_rank" ]; then
      echo "$f:$line includes $target (layer $from includes layer $to)"
    fi
  done
done
for f in $(find src/recorder -name '*.[ch]' | LC_ALL=C sort); do
  { grep -nE '^\s*#\s*include\s*"[^"]+"' "$f" || true; } | sed -E 's/^([0-9]+):.*"([^"]+)".*/\1 \2/' |
  while read -r line inc; do
    if [ -e "src/cli/${inc##*/}" ] && [ ! -e "${f%/*}/$inc" ] && [ ! -e "src/recorder/$inc" ]; then
      echo "$f:$line includes src/cli/${inc##*/} (the recorder includes the executable's header)"
    fi
  done
done)
if [ -n "$upward" ]; then
  printf '%s\n' "$upward" >&2
  fail "includes that run upward (above): a layer of report/ includes only its own and lower layers ($layers, lowest first), and src/recorder/ nothing of src/cli/; move what the lower file needs down"
fi
echo "layout: report/'s layers include downward only ($layers); src/recorder/ includes nothing of src/cli/"

# No writers in analysis/: a document is written in docs/ (or figures/) from what analysis/
# computes, so no analysis/ header declares a function that takes a FILE * (none is left).
writers=$(grep -lE 'FILE[[:space:]]*\*' report/analysis/*.h 2>/dev/null || true)
[ -z "$writers" ] || fail "$(echo $writers): an analysis/ header declares a FILE * writer; write documents in docs/ from what analysis/ computes"
echo "layout: no FILE * writer declared in analysis/ headers"

# 2. Module graph: an edge A -> B when A's object uses a symbol B's object defines.
objs=$(find "$build/report" "$build/src" -name '*.o' | LC_ALL=C sort)
[ -n "$objs" ] || fail "no objects under $build/report and $build/src; build first"
defs=$(mktemp); edges=$(mktemp); trap 'rm -f "$defs" "$edges"' EXIT
for o in $objs; do
  m=${o#"$build"/}; m=${m%.o}
  nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 { print $3, m }'
done | LC_ALL=C sort -u > "$defs"
for o in $objs; do
  m=${o#"$build"/}; m=${m%.o}
  nm -u "$o" | awk '{ print $NF }' | LC_ALL=C sort -u |
    LC_ALL=C join - "$defs" | awk -v m="$m" '$2 != m { print m, $2 }'
done | LC_ALL=C sort -u > "$edges"
if ! tsort "$edges" >/dev/null 2>"$defs.loop"; then
  cat "$defs.loop" >&2; rm -f "$defs.loop"; fail "modules call each other in a loop (above)"
fi
rm -f "$defs.loop"
if grep -E '^report/[^ ]+ src/' "$edges"; then fail "report/ calls into src/ (above)"; fi
if grep -E '^src/recorder/[^ ]+ src/cli/' "$edges"; then fail "the recorder (src/recorder/) calls into the executable (src/cli/) (above)"; fi
echo "layout: $(wc -l < "$edges") module edges, no loop; report/ includes nothing of src/ or CUDA"

# 3. The executable links no CUDA library and loads none to render.
if ldd "$bin" | grep -E 'lib(cudnn|cublas|cublasLt|cupti|cudart|cuda|nvrtc)\.so'; then
  fail "$bin links a CUDA library (above)"
fi
work=$(mktemp -d); trap 'rm -rf "$work" "$defs" "$edges"' EXIT
cp tests/fixtures/h200-4var/trace.json tests/fixtures/h200-4var/run.json "$work/"
LD_DEBUG=libs "$bin" report "$work" -q 2>"$work/ld.log" || fail "report of the 4-variant fixture failed"
if grep -E 'calling init: .*lib(cudnn|cublas|cupti|cudart|cuda)\.so' "$work/ld.log"; then
  fail "rendering loaded a CUDA library (above)"
fi
[ -f "$work/report.html" ] || fail "no report.html"
echo "layout: $bin links and loads no CUDA library to render an archive"

# 4. A build without CUDA cannot record, and says so.
if [ "${WITH_CUDA:-1}" = 0 ]; then
  set +e; msg=$("$bin" run -o "$work/never" 2>&1 >/dev/null); rc=$?; set -e
  [ "$rc" = 3 ] || fail "attnprof run without CUDA exited $rc, expected 3"
  [ "$(printf '%s\n' "$msg" | wc -l)" = 1 ] || fail "not one line: $msg"
  case $msg in *"built without CUDA"*) ;; *) fail "unexpected message: $msg" ;; esac
  [ ! -e "$work/never" ] || fail "run without CUDA wrote $work/never"
  echo "layout: this build has no recorder; run says: $msg"
fi
