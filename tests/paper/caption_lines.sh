#!/usr/bin/env bash
# Every caption of the LaTeX outputs (summary.tex, compare.tex, sweep.tex) sets in at most two
# lines, as pdflatex breaks it: in the README's two-column paper (a table* spans its 7.25 in
# text width, a table its 3.5 in column) and in a one-column article (LaTeX's default letter
# page). The caption macro is wrapped to set each caption once more in a box of the float's
# width and write \prevgraf, the lines of that paragraph, to the log. Archives: the bundled
# example, imports of PyTorch's variants and of a model trace, the hostile fixture, a compare of
# runs, one of model traces and a sweep. pdflatex missing: a failure in CI, a notice elsewhere.
set -euo pipefail
bin=${ATTNPROF_BIN:-build/attnprof}
here=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v pdflatex >/dev/null; then
  if [ -n "${CI:-}" ]; then echo "captions: pdflatex is missing (apt-get install texlive-latex-base texlive-latex-recommended)" >&2; exit 1; fi
  echo "captions: pdflatex not installed here; caption lines not measured (CI measures them)"; exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ATTNPROF_PDF=0
fx="$here/tests/fixtures"
cp -r "$here/out/example-h200" "$work/example"
"$bin" report "$work/example" -q --format png
"$bin" import "$fx"/torch-h200/kineto_*.json.gz --shape 8x16x1024x64,bf16,causal -o "$work/torch" -q
"$bin" import "$fx/models-h200/llama-gqa-eager-infer-s8a.json.gz" -o "$work/model-a" -q
"$bin" import "$fx/models-h200/llama-gqa-sdpa-infer-s8a.json.gz" -o "$work/model-b" -q
cp -r "$fx/hostile/d2-injection" "$work/hostile"
"$bin" report "$work/hostile" -q --format png
"$bin" compare "$fx/h200-cudnn914" "$fx/h200-cudnn919-a" -o "$work/runs" -q --format png >/dev/null
"$bin" compare "$work/model-a" "$work/model-b" -o "$work/models" -q --format png >/dev/null
cp -r "$fx/sweep-h200" "$work/sweep"
"$bin" sweep --collect "$work/sweep" -q >/dev/null

measure() { # measure CLASS GEOMETRY FILE: the lines of each caption of FILE, one a line
  printf '%s\n' "$1" "$2" '\usepackage[T1]{fontenc}' '\usepackage{lmodern}' '\usepackage{booktabs}' '\makeatletter' \
    '\let\attnprof@makecaption\@makecaption' \
    '\long\def\@makecaption#1#2{\setbox\z@\vbox{\hsize\linewidth\noindent #1: #2\par\xdef\attnprof@lines{\the\prevgraf}}%' \
    '  \immediate\write16{attnprof-caption-lines: \attnprof@lines}\attnprof@makecaption{#1}{#2}}' '\makeatother' \
    '\begin{document}' "\\input{$3}" '\end{document}' > "$work/doc.tex"
  (cd "$work" && pdflatex -interaction=nonstopmode -halt-on-error doc.tex >/dev/null 2>&1) ||
    { echo "captions: $3 does not compile:" >&2; grep -A3 '^!' "$work/doc.log" >&2; exit 1; }
  sed -n 's/^attnprof-caption-lines: \([0-9]*\)$/\1/p' "$work/doc.log"
}
total=0
for f in example/summary.tex torch/summary.tex model-a/summary.tex hostile/summary.tex runs/compare.tex \
         models/compare.tex sweep/sweep.tex; do
  for paper in two one; do
    if [ $paper = two ]; then
      lines=$(measure '\documentclass[twocolumn]{article}' '\usepackage[letterpaper,textwidth=7.25in,columnsep=0.25in]{geometry}' "$work/$f")
    else
      lines=$(measure '\documentclass{article}' '' "$work/$f")
    fi
    [ -n "$lines" ] || { echo "captions: $f has no caption" >&2; exit 1; }
    for n in $lines; do
      [ "$n" -le 2 ] || { echo "captions: a caption of $f sets in $n lines in the $paper-column paper:" >&2
                          grep -o '\\caption{[^}]*' "$work/$f" >&2; exit 1; }
      total=$((total + 1))
    done
  done
done
echo "captions: $total captions of summary.tex (4 archives), compare.tex (runs, model traces) and sweep.tex set in at most 2 lines in a two-column and a one-column paper"
