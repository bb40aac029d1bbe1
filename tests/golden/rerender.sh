#!/usr/bin/env bash
# Re-renders every fixture archive under tests/fixtures/ (all figure formats) and checks each
# output file against tests/golden/<fixture>.sha256: the same archive must give the same
# bytes, whatever the code's layout. The generator line of report.html names the renderer's
# version and is left out of the comparison.
#   tests/golden/rerender.sh            check (part of `make test`)
#   tests/golden/rerender.sh --update   rewrite the expected sums after an intended change
set -euo pipefail
bin=${ATTNPROF_BIN:-build/attnprof}
here=$(cd "$(dirname "$0")" && pwd)
update=${1:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for fx in "$here"/../fixtures/h200-*/; do
  name=$(basename "$fx")
  cp -r "$fx" "$work/$name"
  "$bin" report "$work/$name" --format png,svg,pdf -q
  sed -i 's/<meta name="generator" content="attnprof [^"]*">/<meta name="generator" content="attnprof">/' \
    "$work/$name/report.html"
  # report.pdf holds a timestamp (and needs Chromium): left out
  sums=$(cd "$work/$name" && find . -type f ! -name trace.json ! -name run.json ! -name report.pdf | LC_ALL=C sort | xargs sha256sum)
  if [ "$update" = --update ]; then
    printf '%s\n' "$sums" > "$here/$name.sha256"
  elif ! diff <(printf '%s\n' "$sums") "$here/$name.sha256" >"$work/diff"; then
    echo "rerender: $name renders differently from tests/golden/$name.sha256:" >&2
    cat "$work/diff" >&2
    status=1
  fi
done
[ "$status" = 0 ] && [ "$update" != --update ] && echo "rerender: every fixture re-renders byte-identical"
exit $status
