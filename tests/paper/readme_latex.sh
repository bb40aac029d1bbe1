#!/usr/bin/env bash
# A newcomer's LaTeX example survives any sequence of re-renders: the README's example (its
# ```latex block, as written) compiles after each step of a sequence of renders of the bundled
# example: the README's column-PDF render, --pdf, a plain render, a text-size SVG render,
# -o elsewhere (the archive untouched), a --clean render that makes the column PDFs (the other
# renders' outputs removed), and a plain --clean (the column PDFs removed, as --clean says)
# followed by the README's render command again. pdflatex missing: a failure in CI, a notice
# elsewhere; Chromium missing: the --pdf step is left out (CI has it).
set -euo pipefail
bin=${ATTNPROF_BIN:-build/attnprof}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin") # the README's commands run from the paper's folder
here=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v pdflatex >/dev/null; then
  if [ -n "${CI:-}" ]; then echo "readme_latex: pdflatex is missing (apt-get install texlive-latex-base texlive-latex-recommended)" >&2; exit 1; fi
  echo "readme_latex: pdflatex not installed here; the README's LaTeX example not compiled (CI compiles it)"; exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ATTNPROF_PDF=0
mkdir -p "$work/out"
cp -r "$here/out/example-h200" "$work/out/"
ex="$work/out/example-h200"
"$bin" compare "$here/tests/fixtures/h200-cudnn914" "$here/tests/fixtures/h200-cudnn919-a" -o "$work/out/a-vs-b" \
  -q --format pdf --figure-size column >/dev/null
sed -n '/^```latex$/,/^```$/p' "$here/README.md" | sed '1d;$d' > "$work/paper.tex"
[ -s "$work/paper.tex" ] || { echo "readme_latex: the README has no \`\`\`latex block" >&2; exit 1; }
# the README's own command for the figures the example includes, with this build's binary
recipe=$(grep -m1 -o 'build/attnprof report out/example-h200 --figure-size column --format pdf' "$here/README.md") ||
  { echo "readme_latex: the README no longer gives the column-PDF render of the example" >&2; exit 1; }
readme_render() { (cd "$work" && eval "\"$bin\" ${recipe#build/attnprof } -q"); }
compiles() { # compiles STEP: the README's example compiles now
  rm -f "$work/paper.pdf"
  if ! (cd "$work" && pdflatex -interaction=nonstopmode -halt-on-error paper.tex >/dev/null 2>&1); then
    echo "readme_latex: after $1, the README's LaTeX example does not compile:" >&2
    grep -A3 '^!' "$work/paper.log" >&2 || tail -5 "$work/paper.log" >&2; exit 1
  fi
}
listing() { (cd "$ex" && find . -type f | sort | xargs sha256sum); }

readme_render
compiles "the README's render (--figure-size column --format pdf)"
steps=1
if command -v chromium >/dev/null; then
  ATTNPROF_PDF=1 "$bin" report "$ex" -q --pdf
  [ -s "$ex/report.pdf" ] || { echo "readme_latex: --pdf wrote no report.pdf" >&2; exit 1; }
  compiles "--pdf"
  steps=$((steps + 1))
elif [ -n "${CI:-}" ]; then
  echo "readme_latex: chromium is missing (apt-get install chromium)" >&2; exit 1
fi
"$bin" report "$ex" -q
compiles "a plain render"
"$bin" report "$ex" -q --figure-size text --format svg
compiles "--figure-size text --format svg"
[ -e "$ex/figures/timeline-compact-text.svg" ] || { echo "readme_latex: no text-size SVG" >&2; exit 1; }
before=$(listing)
"$bin" report "$ex" -q -o "$work/elsewhere" --figure-size column --format pdf
[ -e "$work/elsewhere/figures/timeline-compact-column.pdf" ] || { echo "readme_latex: -o wrote no column PDF" >&2; exit 1; }
[ "$(listing)" = "$before" ] || { echo "readme_latex: report -o elsewhere changed the archive it read" >&2; exit 1; }
compiles "-o elsewhere"
"$bin" report "$ex" -q --clean --figure-size column --format pdf
compiles "--clean --figure-size column --format pdf"
for gone in report.pdf figures/timeline-compact-text.svg; do
  [ ! -e "$ex/$gone" ] || { echo "readme_latex: --clean left $gone, which this render does not make" >&2; exit 1; }
done
"$bin" report "$ex" -q --clean
[ ! -e "$ex/figures/timeline-compact-column.pdf" ] ||
  { echo "readme_latex: a plain --clean left the column PDFs, which it does not make" >&2; exit 1; }
readme_render
compiles "a plain --clean, then the README's render again"
echo "readme_latex: the README's LaTeX example compiles after each of $((steps + 5)) renders (column PDFs, --pdf, plain, text SVG, -o elsewhere, --clean with and without the column PDFs)"
