#!/usr/bin/env bash
# The two halves stay apart (part of `make test`):
#  1. report/ includes no CUDA header and no header of src/;
#  2. no two modules (object files of report/ and src/) call each other in a loop;
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
