#!/usr/bin/env bash
# The printed report keeps every column: report.html of an H200 fixture
# printed by headless Chromium to A4 and to Letter; pdftotext must find every op
# table's header cells, the last column ("Launch → start") and every "Launched by"
# value of report.md, and no word may lie beyond a page's right edge. Then
# `attnprof report` writes report.pdf itself, and without Chromium says so in one line.
# Chromium missing: a failure in CI (CI set), a one-line notice elsewhere.
set -euo pipefail
bin=${ATTNPROF_BIN:-build/attnprof}
here=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v chromium >/dev/null; then
  if [ -n "${CI:-}" ]; then echo "print: chromium is missing (apt-get install chromium)" >&2; exit 1; fi
  echo "print: chromium not installed here; the print test did not run (CI runs it)"; exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here/tests/fixtures/h200-6var" "$work/a"
ATTNPROF_PDF=0 "$bin" report "$work/a" -q --format png
tables=$(grep -c '^| # | Operation |' "$work/a/report.md")
[ "$tables" -ge 6 ] || { echo "print: report.md has $tables op tables" >&2; exit 1; }
for size in A4 letter; do
  sed "s|</style>|@page { size: $size; }</style>|" "$work/a/report.html" > "$work/$size.html"
  chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer --user-data-dir="$work/profile" \
    --print-to-pdf="$work/$size.pdf" "file://$work/$size.html" >/dev/null 2>&1
  pdfinfo "$work/$size.pdf" | grep -qi "($size)" || { echo "print: $size.pdf is not $size paper" >&2; exit 1; }
  pdftotext -q "$work/$size.pdf" "$work/$size.txt"
  # every word of every op table's header (a cell may wrap: words, not phrases)
  for word in Operation Class Duration Grid Block Regs thread Shared Occupancy "Kineto's" estimate Launched \
              Launch "→" start; do
    n=$(grep -o -w -- "$word" "$work/$size.txt" | wc -l)
    [ "$n" -ge "$tables" ] || { echo "print: $size: \"$word\" printed $n times for $tables op tables" >&2; exit 1; }
  done
  # the summary table's last columns too
  for word in Reference revealed; do
    grep -q -w -- "$word" "$work/$size.txt" || { echo "print: $size: the summary's \"$word\" column is missing" >&2; exit 1; }
  done
  # the last column's head, whole, on the page
  [ "$(tr -d ' \n' < "$work/$size.txt" | grep -o 'Launch→start' | wc -l)" -ge "$tables" ] ||
    { echo "print: $size: \"Launch → start\" is not on the pages for each op table" >&2; exit 1; }
  # every "Launched by" value of the op tables, as often as the tables hold it
  grep -o '| `cu[A-Za-z]*` [(|]' "$work/a/report.md" | tr -d '|`( ' | sort | uniq -c | while read -r want api; do
    got=$(grep -o -- "$api" "$work/$size.txt" | wc -l)
    [ "$got" -ge "$want" ] || { echo "print: $size: $api printed $got times, the op tables hold $want" >&2; exit 1; }
  done
  # nothing beyond the right edge of a page
  # (poppler says "no word list" for a page without text, a figure's: not an error)
  pdftotext -bbox "$work/$size.pdf" - 2> >(grep -vx 'no word list' >&2) | awk -v size="$size" '
    /<page / { match($0, /width="[0-9.]+"/); w = substr($0, RSTART + 7, RLENGTH - 8) + 0 }
    /<word / { match($0, /xMax="[0-9.]+"/); x = substr($0, RSTART + 6, RLENGTH - 7) + 0;
               if (x > w + 0.5) { print "print: " size ": a word beyond the page edge: " $0 > "/dev/stderr"; bad = 1 } }
    END { exit bad }'
done
# report.pdf is opt-in: without --pdf there is none ...
"$bin" report "$work/a" -q --format png
[ ! -e "$work/a/report.pdf" ] || { echo "print: report.pdf written without --pdf" >&2; exit 1; }
# ... with --pdf attnprof writes it itself when Chromium is there, dated with the run's time ...
"$bin" report "$work/a" -q --format png --pdf
[ -s "$work/a/report.pdf" ] && pdfinfo "$work/a/report.pdf" | grep -qi "(A4)" || { echo "print: no A4 report.pdf" >&2; exit 1; }
run_date=$(sed -n 's/^  "date": "\(.*\)",$/\1/p' "$work/a/run.json")
pdf_date=$(pdfinfo -isodates "$work/a/report.pdf" | sed -n 's/^CreationDate: *//p')
[ "$pdf_date" = "$run_date" ] || { echo "print: report.pdf is dated $pdf_date, the run $run_date" >&2; exit 1; }
# ... and two renders of one archive are the same bytes, the PDF included.
cp "$work/a/report.pdf" "$work/first.pdf"
sleep 1
"$bin" report "$work/a" -q --format png --pdf
cmp -s "$work/first.pdf" "$work/a/report.pdf" || { echo "print: two renders gave different report.pdf bytes" >&2; exit 1; }
# ... and says so in one line when it is not, without failing
ATTNPROF_CHROMIUM=/nonexistent "$bin" report "$work/a" --format png --pdf >/dev/null 2>"$work/err"
[ "$(wc -l < "$work/err")" = 1 ] && grep -q "report.pdf not written: Chromium is not installed" "$work/err" \
  || { echo "print: without Chromium: $(cat "$work/err")" >&2; exit 1; }
# a render that does not print keeps the earlier report.pdf (renders keep what you made) ...
cmp -s "$work/first.pdf" "$work/a/report.pdf" || { echo "print: the earlier report.pdf did not stay" >&2; exit 1; }
"$bin" report "$work/a" --no-pdf --format png -q
cmp -s "$work/first.pdf" "$work/a/report.pdf" || { echo "print: --no-pdf removed or rewrote report.pdf" >&2; exit 1; }
# ... until --clean, which removes what this render did not make
"$bin" report "$work/a" --no-pdf --format png -q --clean
[ ! -e "$work/a/report.pdf" ] || { echo "print: --clean left report.pdf" >&2; exit 1; }
"$bin" report "$work/a" --no-pdf --format png -q
[ ! -e "$work/a/report.pdf" ] || { echo "print: --no-pdf wrote report.pdf" >&2; exit 1; }
echo "print: A4 and Letter keep every column of $tables op tables; report.pdf only with --pdf, dated with the run and byte-identical across renders, kept by a render without it until --clean, or one line without Chromium"
