#!/usr/bin/env python3
"""Every summary-table "What the trace revealed" cell of one rendered archive fits the limit, in
report.md, report.html, report.pdf and summary.tex (run by tests/paper/summary_cells.sh).

The rule (report/docs/finding_phrases.h, README "What the output looks like"): a cell holds at
most FINDING_CELL_MAX_WORDS (25) words, "N more" (or LaTeX's "N more in the report") included,
where a word is a run of non-space characters of the text a reader sees: without Markdown link
targets "(#...)" and brackets, HTML tags, LaTeX commands and braces. In the PDF a word that the
printer broke across two lines after a '-' or '_' is one word.

The PDF's cells are found by position (pdftotext -bbox): the words at or right of the left edge
of the header "What the trace revealed", row by row as the first column's variant names start
them, in the page's text order (Chromium writes a table cell by cell). Each PDF cell must hold
exactly the characters of report.html's cell, so what is counted is that cell and nothing else.

usage: summary_cells.py DIR [--pdf]; prints one line per format, exits 1 at the first failure.
"""
import html
import re
import subprocess
import sys

LIMIT = 25


def fail(msg):
    print("summary_cells: " + msg, file=sys.stderr)
    sys.exit(1)


def words(text):
    return text.split()


def md_cells(md):
    """(variant, cell text) of each row of report.md's summary table, in order."""
    start = md.find("## Summary\n\n")
    if start < 0:
        fail("report.md has no Summary")
    lines = md[start:].split("\n")
    head = next(i for i, l in enumerate(lines) if l.startswith("| Variant |"))
    cols = [c.strip() for c in re.split(r"(?<!\\)\|", lines[head])[1:-1]]
    if cols[-1] != "What the trace revealed":
        fail("report.md's summary ends with %r, not the findings cell" % cols[-1])
    rows = []
    for l in lines[head + 2:]:
        if not l.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", l)[1:-1]]
        if len(cells) != len(cols):
            fail("report.md: a row of %d cells under %d columns: %s" % (len(cells), len(cols), l))
        name = cells[0].strip("`").split("`")[0]
        text = re.sub(r"\]\(#[^)]*\)", "", cells[-1]).replace("[", "")
        text = re.sub(r"<[^>]*>", "", text).replace("\\|", "|")
        rows.append((name, text))
    return rows


def html_cells(page):
    start = page.find("<h2>Summary</h2>")
    if start < 0:
        fail("report.html has no Summary")
    table = page[start:page.find("</table>", start)]
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", table[table.find("<tbody>"):], re.S):
        tds = re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)
        plain = [html.unescape(re.sub(r"<[^>]*>", "", td)).strip() for td in tds]
        rows.append((plain[0], plain[-1]))
    return rows


def tex_cells(tex):
    t = tex.find("tab:attnprof-findings")
    if t < 0:
        fail("summary.tex has no findings table")
    body = tex[tex.find("\\midrule\n", t) + 9:tex.find("\\bottomrule", t)]
    rows = []
    for line in body.strip("\n").split("\n"):
        if not line.endswith(" \\\\"):
            fail("summary.tex: a findings row that does not end the row: " + line)
        name, cell = line[:-3].split(" & ", 1)
        rows.append((tex_plain(name), tex_plain(cell)))
    return rows


def tex_plain(s):
    s = s.replace("\\allowbreak{}", "")
    s = re.sub(r"\\(texttt|textit|textbf|emph|mbox)\{", "{", s)
    s = re.sub(r"\\ensuremath\{\\times\}", "×", s)
    s = re.sub(r"\\[a-zA-Z]+\{\}", "x", s)       # \textmu{} and its kind: one printed character
    s = re.sub(r"\\([%_&#$])", r"\1", s)
    s = re.sub(r"\\[a-zA-Z]+", "", s)
    return s.replace("{", "").replace("}", "")


def pdf_cells(pdf, names):
    """The PDF's findings cell of each summary row, by position (see the module's comment)."""
    out = subprocess.run(["pdftotext", "-bbox", pdf, "-"], capture_output=True, text=True, check=True).stdout
    ws = []  # (page, yMin, xMin, yMax, text)
    page = 0
    for line in out.split("\n"):
        if "<page " in line:
            page += 1
        m = re.search(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*)</word>', line)
        if m:
            ws.append((page, float(m[2]), float(m[1]), float(m[4]), html.unescape(m[5])))
    texts = [w[4] for w in ws]
    if "Summary" not in texts:
        fail("report.pdf: no Summary heading")
    s = texts.index("Summary")
    while s < len(ws) and texts[s] != "Variant":
        s += 1
    if s == len(ws):
        fail("report.pdf: no summary table after the heading")
    head = ws[s]
    # the header row: words on its page within a band below its top
    band = [w for w in ws if w[0] == head[0] and head[1] - 2 <= w[1] <= head[1] + 45]
    x_second = min(w[2] for w in band if w[2] > head[2] + 5 and abs(w[1] - head[1]) < 2)
    lasts = [w for w in band if w[4] == "revealed"]
    if not lasts:
        fail("report.pdf: no \"What the trace revealed\" header")
    # the last column's left edge: the right-most "What" of the header ("What we changed" is left)
    x_last = max(w[2] for w in band if w[4] == "What")
    if x_last > lasts[-1][2] + 1:
        fail("report.pdf: the header's last cell is not \"What the trace revealed\"")
    # the first column after the header, grouped into cells by the vertical gap between lines
    first = sorted((w for w in ws if w[2] < x_second - 1 and (w[0], w[1]) > (head[0], head[3])),
                   key=lambda w: (w[0], w[1], w[2]))
    groups = []
    for w in first:
        if groups and groups[-1]["page"] == w[0] and w[1] <= groups[-1]["bottom"] + 3:
            groups[-1]["name"] += w[4]
            groups[-1]["bottom"] = max(groups[-1]["bottom"], w[3])
        else:
            groups.append({"page": w[0], "top": w[1] - 1, "bottom": w[3], "name": w[4]})
    rows = []
    for i, g in enumerate(groups):
        if len(rows) == len(names):
            break
        if g["name"].startswith("Variant"):  # the header repeated on a new page
            continue
        end = (groups[i + 1]["page"], groups[i + 1]["top"]) if i + 1 < len(groups) else (page + 1, 0)
        nxt = groups[i + 1] if i + 1 < len(groups) else None
        cell = [w for w in ws if w[2] >= x_last - 1 and (g["page"], g["top"]) <= (w[0], w[1]) < end]
        if nxt is not None and nxt["name"].startswith("Variant"):  # the row ends at the page's foot
            cell = [w for w in cell if w[0] == g["page"]]
        cell.sort(key=lambda w: (w[0], round(w[1] / 3), w[2]))
        merged = []
        for w in cell:
            if merged and merged[-1][4][-1:] in ("-", "_") and (w[0], w[1]) > (merged[-1][0], merged[-1][3] - 1):
                merged[-1] = merged[-1][:4] + (merged[-1][4] + w[4],)
            else:
                merged.append(w)
        rows.append((g["name"], " ".join(m[4] for m in merged)))
    return rows


def check(fmt, rows, names):
    if len(rows) != len(names):
        fail("%s: %d rows %s, report.md's %d %s" % (fmt, len(rows), [r[0] for r in rows], len(names), names))
    most = 0
    for name, text in rows:
        n = len(words(text))
        most = max(most, n)
        if n > LIMIT:
            fail("%s: %s's cell holds %d words (limit %d): %s" % (fmt, name, n, LIMIT, text))
        if not text.strip():
            fail("%s: %s's cell is empty" % (fmt, name))
    return most


def main():
    d = sys.argv[1]
    want_pdf = "--pdf" in sys.argv[2:]
    md = open(d + "/report.md", encoding="utf-8").read()
    mrows = md_cells(md)
    names = [r[0] for r in mrows]
    hrows = html_cells(open(d + "/report.html", encoding="utf-8").read())
    trows = tex_cells(open(d + "/summary.tex", encoding="utf-8").read())
    report = ["report.md %d" % check("report.md", mrows, names),
              "report.html %d" % check("report.html", hrows, names),
              "summary.tex %d" % check("summary.tex", trows, names)]
    for (n, a), (_, b) in zip(mrows, hrows):
        if words(a) != words(b):
            fail("%s: report.md's cell %r, report.html's %r" % (n, a, b))
    if want_pdf:
        prows = pdf_cells(d + "/report.pdf", names)
        report.append("report.pdf %d" % check("report.pdf", prows, names))
        for (n, a), (_, b) in zip(hrows, prows):
            if "".join(a.split()) != "".join(b.split()):
                fail("report.pdf: %s's cell reads %r, report.html's %r" % (n, b, a))
    print("summary_cells: %s: %d rows; the most words in a cell: %s" % (d, len(names), ", ".join(report)))


main()
