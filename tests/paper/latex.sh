#!/usr/bin/env bash
# summary.tex and compare.tex compile with pdflatex: an H200 fixture, the
# hostile fixture whose names hold LaTeX and Markdown syntax, a comparison of runs and two of model traces.
# pdflatex missing: a failure in CI (CI set), a one-line notice elsewhere.
set -euo pipefail
bin=${ATTNPROF_BIN:-build/attnprof}
here=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v pdflatex >/dev/null; then
  if [ -n "${CI:-}" ]; then
    echo "latex: pdflatex is missing (apt-get install texlive-latex-base texlive-latex-recommended)" >&2; exit 1
  fi
  echo "latex: pdflatex not installed here; summary.tex/compare.tex not compiled (CI compiles them)"; exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ATTNPROF_PDF=0
compile() { # compile DIR FILE: FILE \input into a minimal article with booktabs
  printf '%s\n' '\documentclass{article}' '\usepackage[T1]{fontenc}' '\usepackage{lmodern}' '\usepackage{booktabs}' \
    '\begin{document}' "\\input{$1/$2}" '\end{document}' > "$work/doc.tex"
  if ! (cd "$work" && pdflatex -interaction=nonstopmode -halt-on-error doc.tex >/dev/null 2>&1); then
    echo "latex: $1/$2 does not compile:" >&2; grep -A3 '^!' "$work/doc.log" >&2 || tail -20 "$work/doc.log" >&2; exit 1
  fi
  pdftotext -q -layout "$work/doc.pdf" "$work/doc.txt"
  no_type3 "$work/doc.pdf" "$1/$2"
}
# Many venues reject PDFs with Type 3 (bitmap) fonts: pdflatex's T1 text without outline
# fonts (lmodern or cm-super) is drawn in them. pdffonts lists each font and its type.
no_type3() {
  command -v pdffonts >/dev/null || { echo "latex: pdffonts is missing (apt-get install poppler-utils)" >&2; exit 1; }
  local fonts; fonts=$(pdffonts "$1") || { echo "latex: pdffonts cannot read $1" >&2; exit 1; }
  if printf '%s\n' "$fonts" | awk 'NR > 2' | grep -q 'Type 3'; then
    echo "latex: $2 embeds Type 3 (bitmap) fonts:" >&2; printf '%s\n' "$fonts" >&2; exit 1
  fi
}
expect() { grep -qF -- "$1" "$work/doc.txt" || { echo "latex: the compiled $2 lacks \"$1\"" >&2; cat "$work/doc.txt" >&2; exit 1; }; }

cp -r "$here/tests/fixtures/h200-6var" "$work/six"
"$bin" report "$work/six" -q --format png
compile "$work/six" summary.tex
for s in "Attention variants:" "Note: NVIDIA H200" "cuDNN 9.19.0" "B = 2, H = 4, S = 256, D = 64" naive_inplace \
         "What the trace revealed" "hidden 1 MiB Memcpy" "more in the report" "µs"; do
  expect "$s" summary.tex
done

# the report's @misc entry is read by a classic BibTeX style, which knows no @software
sed -n '/^```bibtex$/,/^```$/p' "$work/six/report.md" | sed '1d;$d' > "$work/refs.bib"
printf '%s\n' '\documentclass{article}' '\begin{document}' '\nocite{attnprof-misc}' '\bibliographystyle{plain}' \
  '\bibliography{refs}' '\end{document}' > "$work/cite.tex"
(cd "$work" && pdflatex -interaction=nonstopmode cite.tex >/dev/null 2>&1 && bibtex cite >/dev/null 2>&1) ||
  { echo "latex: the report's BibTeX does not run through bibtex with the plain style:" >&2; cat "$work/cite.blg" >&2; exit 1; }
if grep -q 'Warning--' "$work/cite.blg"; then
  echo "latex: bibtex warns on the report's @misc entry:" >&2; grep 'Warning--' "$work/cite.blg" >&2; exit 1
fi
grep -q 'attnprof: six attention variants' "$work/cite.bbl" || { echo "latex: the @misc entry is not in the bibliography" >&2; exit 1; }

cp -r "$here/tests/fixtures/hostile/d2-injection" "$work/hostile"
"$bin" report "$work/hostile" -q --format png
compile "$work/hostile" summary.tex
expect "GPU # Fake heading |" "hostile summary.tex"

"$bin" compare "$here/tests/fixtures/h200-cudnn914" "$here/tests/fixtures/h200-cudnn919-a" -o "$work/cmp" -q \
  --format png >/dev/null
compile "$work/cmp" compare.tex
for s in h200-cudnn914 h200-cudnn919-a "faster" "95% bootstrap"; do expect "$s" compare.tex; done
# a comparison of two model traces: its table per pair, with the step's verdict, and
# with 2 steps a side the ratio of the medians and no verdict
models="$here/tests/fixtures/models-h200"
for t in eager-infer-s8a sdpa-infer-s8a eager-infer sdpa-infer; do
  "$bin" import "$models/llama-gqa-$t.json.gz" -o "$work/m-$t" -q
done
"$bin" compare "$work/m-eager-infer-s8a" "$work/m-sdpa-infer-s8a" -o "$work/mcmp" -q --format png >/dev/null
compile "$work/mcmp" compare.tex
for s in "Model trace pair 1, step by step" llama-gqa-sdpa-infer-s8a "8 and 8 steps" "CUDA time per step" \
         "Attention, all parts" "faster"; do expect "$s" "model compare.tex"; done
"$bin" compare "$work/m-eager-infer" "$work/m-sdpa-infer" -o "$work/mcmp2" -q --format png >/dev/null
compile "$work/mcmp2" compare.tex
expect "no verdict (2 steps)" "two-step model compare.tex"
# its tables span a two-column paper's text width (the README's geometry) without overflowing
for d in mcmp mcmp2; do
  printf '%s\n' '\documentclass[twocolumn]{article}' '\usepackage[letterpaper,textwidth=7.25in,columnsep=0.25in]{geometry}' \
    '\usepackage[T1]{fontenc}' '\usepackage{lmodern}' '\usepackage{booktabs}' '\begin{document}' \
    "\\input{$work/$d/compare.tex}" '\end{document}' > "$work/wide.tex"
  (cd "$work" && pdflatex -interaction=nonstopmode -halt-on-error wide.tex >/dev/null 2>&1) ||
    { echo "latex: $d/compare.tex does not compile in a two-column paper" >&2; exit 1; }
  if grep -E 'Overfull \\hbox \(([2-9]|[1-9][0-9]+)\.[0-9]*pt' "$work/wide.log" >&2; then
    echo "latex: $d/compare.tex overflows a two-column paper's text width (above)" >&2; exit 1
  fi
done
mkdir -p "$work/readme/out"
cp -r "$here/out/example-h200" "$work/readme/out/"
"$bin" report "$work/readme/out/example-h200" -q --format pdf --figure-size column
# the recipe keeps the report's figures: report.html shows every figure report.md links
html="$work/readme/out/example-h200/report.html"
imgs=$(grep -o '<img src="data:image/png;base64,' "$html" | wc -l)
want=$(grep -c '^!\[' "$work/readme/out/example-h200/report.md" || true)
if [ "$imgs" -lt 1 ] || [ "$imgs" != "$want" ]; then
  echo "latex: the README's recipe leaves report.html with $imgs of $want figures" >&2; exit 1
fi
# the README's excerpt of the example's summary: every row's numbers and each abridged finding
# are what the report writes today
md="$work/readme/out/example-h200/report.md"
rows=$(awk '/^\| Variant \| Kernels \/ forward \|/ { on = 1; next } on && /^$/ { exit } on && /^\| `/' "$here/README.md")
[ "$(printf '%s\n' "$rows" | wc -l)" = 6 ] || { echo "latex: the README's summary excerpt has no 6 rows" >&2; exit 1; }
printf '%s\n' "$rows" | while IFS= read -r row; do
  name=${row%% |*}
  line=$(grep -F -- "$name |" "$md" | head -1)
  printf '%s\n' "$row" | awk -F' [|] ' '{for (i = 2; i <= NF; i++) print $i}' | sed 's/ |$//' | tr -s '\n' |
    while IFS= read -r cell; do
      printf '%s\n' "$cell" | sed 's/; /\n/g' | while IFS= read -r part; do
        case "$line" in *"$part"*) ;; *) echo "latex: README excerpt, $name: \"$part\" is not in the report" >&2; exit 1 ;; esac
      done
    done
done
# then a plain re-render (make run's, a newcomer's next step): it keeps the column PDFs the
# example includes (a render replaces only what it makes)
"$bin" report "$work/readme/out/example-h200" -q
# the README's example, as written, over the bundled archive
"$bin" compare "$here/tests/fixtures/h200-cudnn914" "$here/tests/fixtures/h200-cudnn919-a" -o "$work/readme/out/a-vs-b" \
  -q --format pdf >/dev/null
sed -n '/^```latex$/,/^```$/p' "$here/README.md" | sed '1d;$d' > "$work/readme/paper.tex"
if ! (cd "$work/readme" && pdflatex -interaction=nonstopmode -halt-on-error paper.tex >/dev/null 2>&1); then
  echo "latex: the README's LaTeX example does not compile:" >&2; grep -A3 '^!' "$work/readme/paper.log" >&2; exit 1
fi
no_type3 "$work/readme/paper.pdf" "the README's LaTeX example"
# the column figures fit the 3.5 in column: no box overfull by more than a rounding
if grep -E 'Overfull \\hbox \(([2-9]|[1-9][0-9]+)\.[0-9]*pt' "$work/readme/paper.log" >&2; then
  echo "latex: the README's example overflows its column or text width (above)" >&2; exit 1
fi
echo "latex: summary.tex (2 archives), compare.tex (of runs and of model traces) and the README's example compile with pdflatex, no Type 3 font"
