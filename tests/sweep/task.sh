#!/bin/sh
# A sweep task that needs no GPU, for the tests (`attnprof sweep --task-command`):
# re-renders a committed H200 fixture archive into the shape's folder with the
# shape written into its run.json, so the sweep's orchestration, resume and
# collect run for real without a GPU. The trace's times are the fixture's.
#   task.sh FIXTURE DIR B H S D [FAIL_SEQ [SLEEP [VARIANTS]]]
# At S = FAIL_SEQ it fails as `attnprof run --variants …` does when naive does not fit
# the GPU (one line on stderr, exit 4), unless VARIANTS is given and leaves naive out.
# SLEEP seconds of delay before it writes (for the interrupt test).
set -eu
fixture=$1 dir=$2 b=$3 h=$4 s=$5 d=$6 fail=${7:-0} nap=${8:-0} variants=${9:-}
echo "task.sh: variants '${variants}'" >&2
if [ "$s" = "$fail" ] && { [ -z "$variants" ] || echo ",$variants," | grep -q ',naive,'; }; then
  echo "attnprof: variant naive needs 512.00 GiB of device memory at ${b}x${h}x${s}x${d} but 139.00 GiB are free; use a smaller --batch/--seq or drop it from --variants" >&2
  exit 4
fi
[ "$nap" = 0 ] || sleep "$nap"
tmp="$dir.part"
rm -rf "$tmp"
mkdir -p "$tmp"
cp "$fixture/trace.json" "$tmp/trace.json"
# The fixture's run.json with this shape: the four lines of its "shape" object.
awk -v b="$b" -v h="$h" -v s="$s" -v d="$d" '
  /"shape": \{/ { inshape = 1 }
  inshape && /"batch":/ { sub(/[0-9]+/, b) }
  inshape && /"heads":/ { sub(/[0-9]+/, h) }
  inshape && /"seq":/   { sub(/[0-9]+/, s) }
  inshape && /"dim":/   { sub(/[0-9]+/, d); inshape = 0 }
  { print }' "$fixture/run.json" > "$tmp/run.json"
mv "$tmp" "$dir"
echo "task.sh: $b x $h x $s x $d from $fixture" >&2
