/* libFuzzer target (make fuzz): one input is an archive, run.json and trace.json
 * separated by a line "\n#--trace.json--\n", then optionally counters.json after
 * "\n#--counters.json--\n" and a sweep.json after "\n#--sweep.json--\n" (seeds.py
 * writes the fixtures that way; the sweep plan reader runs on its own); last, after
 * "\n#--manifest--\n", the text of a staging folder's manifest, which the document
 * pipeline's reader of a killed commit parses against the report's output names, and the
 * reader of the record of outputs (.attnprof-outputs) parses as well. Before the manifest, after
 * "\n#--model-trace--\n", a PyTorch profiler trace is imported twice and compared with itself
 * (compare's model-trace path: steps paired, roles, the bootstrap). The archive goes through
 * everything `attnprof report` does with an archive, samples.csv and kernels.csv included, in
 * memory where the code allows: the readers, the analysis, the findings, the
 * Markdown, HTML and CSV writers, and the figures (SVG, into a scratch folder).
 * Any crash, leak or sanitizer report stops the run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_json.h"
#include "counters_json.h"
#include "analysis.h"
#include "archive.h"
#include "compare.h"
#include "counters.h"
#include "doc_bundle.h"
#include "doc_record.h"
#include "exit_codes.h"
#include "figures.h"
#include "kineto_import.h"
#include "report_csv.h"
#include "findings.h"
#include "report.h"
#include "run_info.h"
#include "sweep_doc.h"
#include "trace.h"

static const char SEP[] = "\n#--trace.json--\n", SEP_COUNTERS[] = "\n#--counters.json--\n",
                  SEP_SWEEP[] = "\n#--sweep.json--\n", SEP_MANIFEST[] = "\n#--manifest--\n",
                  SEP_MODEL[] = "\n#--model-trace--\n";
static char dir[64];

static void remove_scratch(void) { remove_tree(dir); }

static int write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/attnprof-fuzz-%d", (int)getpid());
        mkdir(dir, 0755);
        atexit(remove_scratch);
    }
    const uint8_t *mf = memmem(data, size, SEP_MANIFEST, sizeof SEP_MANIFEST - 1);
    if (mf) { /* the manifest reader, on what follows its separator (NUL-terminated) */
        size_t n = size - (size_t)(mf - data) - (sizeof SEP_MANIFEST - 1);
        char *text = malloc(n + 1);
        memcpy(text, mf + sizeof SEP_MANIFEST - 1, n);
        text[n] = '\0';
        static const char *const names[] = {"figures", "samples.csv", "report.md", "report.html", "report.pdf"};
        int listed[5], clean;
        unsigned long long ino[5];
        char *copy = strdup(text);
        doc_manifest_parse(text, names, 5, listed, ino, &clean);
        doc_record r = {0}; /* the record of outputs, read the same way */
        doc_record_parse(&r, copy);
        doc_record_free(&r);
        free(copy);
        free(text);
        size = (size_t)(mf - data);
    }
    const uint8_t *mt = memmem(data, size, SEP_MODEL, sizeof SEP_MODEL - 1);
    if (mt) { /* a model trace, imported twice and compared with itself */
        char path[128], merr[1024];
        snprintf(path, sizeof path, "%s/model.json", dir);
        const uint8_t *from = mt + sizeof SEP_MODEL - 1;
        if (write_file(path, from, (size_t)(data + size - from)))
            abort();
        static compare_archive ar[2];
        compare_archive *in[2] = {&ar[0], &ar[1]};
        const char *paths[1] = {path};
        const import_options io = {.device = -1};
        int ok = 0;
        for (int j = 0; j < 2; j++) {
            memset(&ar[j], 0, sizeof ar[j]);
            snprintf(ar[j].dir, sizeof ar[j].dir, "%s/m%d", dir, j);
            if (kineto_import(paths, 1, &io, &ar[j].t, &ar[j].r, merr, sizeof merr) != EXIT_OK)
                break;
            if (compare_analyse(&ar[j], merr, sizeof merr) != EXIT_OK) {
                counters_free(&ar[j].r.counters);
                break;
            }
            ok++;
        }
        if (ok == 2) {
            static compare_data m;
            compare_options o = {.min_effect = COMPARE_DEFAULT_MIN_EFFECT};
            if (compare_build(&m, in, 2, &o, merr, sizeof merr) == EXIT_OK)
                compare_free(&m);
        }
        for (int j = 0; j < ok; j++) {
            compare_archive_free(&ar[j]);
            counters_free(&ar[j].r.counters);
        }
        unlink(path);
        size = (size_t)(mt - data);
    }
    const uint8_t *sep = memmem(data, size, SEP, sizeof SEP - 1);
    if (!sep)
        return 0;
    char run_path[128], trace_path[128], err[1024];
    snprintf(run_path, sizeof run_path, "%s/run.json", dir);
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", dir);
    const uint8_t *tr = sep + sizeof SEP - 1, *end = data + size;
    /* the optional sections, in this order: each ends the one before it */
    const uint8_t *sw = memmem(tr, (size_t)(end - tr), SEP_SWEEP, sizeof SEP_SWEEP - 1);
    const uint8_t *sweep_text = sw ? sw + sizeof SEP_SWEEP - 1 : NULL, *tr_end = sw ? sw : end;
    const uint8_t *ct = memmem(tr, (size_t)(tr_end - tr), SEP_COUNTERS, sizeof SEP_COUNTERS - 1);
    const uint8_t *counters_text = ct ? ct + sizeof SEP_COUNTERS - 1 : NULL;
    char counters_path[128], sweep_path[128];
    snprintf(counters_path, sizeof counters_path, "%s/counters.json", dir);
    snprintf(sweep_path, sizeof sweep_path, "%s/sweep.json", dir);
    if (write_file(run_path, data, (size_t)(sep - data)) ||
        write_file(trace_path, tr, (size_t)((ct ? ct : tr_end) - tr)))
        abort();
    if (sweep_text) {
        if (write_file(sweep_path, sweep_text, (size_t)(end - sweep_text)))
            abort();
        static sweep_plan plan;
        int found;
        sweep_plan_read(&plan, dir, &found, err, sizeof err);
        unlink(sweep_path);
    }
    static run_info r;
    trace t;
    if (run_info_read_json(&r, run_path, err, sizeof err) != 0)
        return 0;
    if (counters_text) {
        counters_set cs;
        if (write_file(counters_path, counters_text, (size_t)(tr_end - counters_text)))
            abort();
        if (counters_read_json(&cs, counters_path, err, sizeof err) != 0)
            return 0;
        r.counters = cs;
    }
    if (trace_read_json(&t, trace_path, err, sizeof err) != 0) {
        counters_free(&r.counters);
        return 0;
    }
    analysis a;
    if (analysis_build(&a, &t, &r, err, sizeof err) == 0) {
        findings_derive(&a);
        figure_list figs = {0};
        char out[160];
        snprintf(out, sizeof out, "%s/out", dir);
        if (size < 16384) /* figures cost ~ms each: only for small inputs */
            figures_render(&a, out, FIG_SVG, 0, &figs, err, sizeof err);
        char *md = report_markdown(&a, &figs, NULL);
        char *html = report_html(md, "fuzz", err, sizeof err);
        char *csv = report_summary_csv(&a);
        char *samples = samples_csv(&a), *kernels = kernels_csv(&a); /* the samples-derived tables */
        free(samples);
        free(kernels);
        free(md);
        free(html);
        free(csv);
        figure_list_free(&figs);
        analysis_free(&a);
    }
    trace_free(&t);
    counters_free(&r.counters);
    return 0;
}
