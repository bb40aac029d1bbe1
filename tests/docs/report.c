/* The report from a run recorded on the H200: table rows, counts, findings, HTML. */
#include <criterion/criterion.h>
#include <math.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "fixture.h"
#include "print.h"
#include "report.h"
#include "units.h"

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

Test(report, summary_table_rows_and_counts)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    char *md = report_markdown(&f.a, NULL, NULL);
    cr_assert(strstr(md, "| Variant | What we changed | Kernels / forward | CUDA time / forward"));
    cr_assert(strstr(md, "| `naive` | matmul → scale → out-of-place masked_fill"));
    cr_assert(strstr(md, "| 6 (5 kernels + 1 Memcpy) |"), "naive's count");
    cr_assert(strstr(md, "| `naive_inplace` | masked_fill_ in place"));
    cr_assert(strstr(md, "| 5 |"), "naive_inplace's count");
    cr_assert(strstr(md, "| 19 |"), "math's count");
    cr_assert(strstr(md, "n=4)"), "four forwards per variant");
    cr_assert(strstr(md, "NVIDIA H200"));
    cr_assert(strstr(md, "B=2, H=4, S=256, D=64"));
    cr_assert(strstr(md, "no Memcpy; 1 fewer operation than naive"));
    /* one per-variant section each, with its op table */
    cr_assert_eq(count(md, "### `"), 4);
    cr_assert_eq(count(md, "| # | Operation | Class | Duration |"), 4);
    cr_assert(strstr(md, "`cuLaunchKernelEx`"));
    free(md);
    fixture_free(&f);
}

Test(report, html_has_a_real_table)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    char *md = report_markdown(&f.a, NULL, NULL), err[256];
    char *html = report_html(md, "t", err, sizeof err);
    cr_assert_not_null(html, "%s", err);
    cr_assert(strstr(html, "<!DOCTYPE html>"));
    cr_assert(strstr(html, "<table>"));
    cr_assert(strstr(html, "<th>Variant</th>"));
    cr_assert(strstr(html, "<td><code>naive_<wbr>inplace</code></td>"), "a long name may break after its underscores");
    cr_assert(strstr(html, "masked_fill_ in place"), "text outside code is untouched");
    cr_assert(strstr(html, "<style>") && strstr(html, "border-collapse"), "stylesheet inlined");
    cr_assert_eq(count(html, "<table>"), 1 + 1 + 1 + 1 + 4 + 1,
                 "header, summary, beside the series, overhead, 4 op tables, full kernel names");
    free(md);
    free(html);
    fixture_free(&f);
}

Test(report, summary_csv_is_the_table_as_data)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    char *csv = report_summary_csv(&f.a);
    cr_assert_eq(count(csv, "\n"), 5, "header + 4 variants");
    cr_assert(strstr(csv, "variant,status,title,what_changed,ops_per_forward,expected_ops"));
    cr_assert(strstr(csv, "\nnaive,ok,"));
    cr_assert(strstr(csv, "\nmath,ok,"));
    free(csv);
    fixture_free(&f);
}

Test(report, time_formatting)
{
    char b[32];
    format_us(93.44, b, sizeof b);
    cr_assert_str_eq(b, "93.4 µs");
    format_us(649.1, b, sizeof b);
    cr_assert_str_eq(b, "649 µs");
    format_us(3035.5, b, sizeof b);
    cr_assert_str_eq(b, "3.04 ms");
    stats s = {.n = 0};
    format_time_stats(&s, b, sizeof b);
    cr_assert_str_eq(b, "–");
}

Test(archive, gpu_slug)
{
    char b[64];
    gpu_slug("NVIDIA H200", b, sizeof b);
    cr_assert_str_eq(b, "h200");
    gpu_slug("NVIDIA A100-SXM4-80GB", b, sizeof b);
    cr_assert_str_eq(b, "a100-sxm4-80gb");
    gpu_slug("", b, sizeof b);
    cr_assert_str_eq(b, "gpu");
}

/* A variant of the default list that cannot take the shape is
 * "skipped" with its reason; the status survives run.json and shows in the summary,
 * the variant's section and summary.csv. */
Test(report, skipped_variant_round_trips_and_renders)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    variant_result *v = &f.r.variants[3];
    v->status = VARIANT_SKIPPED;
    snprintf(v->error, sizeof v->error, "cannot take 8x16x1024x96: head dim 96 not supported");
    /* A skipped variant did not run: no numbers, no forwards (else inconsistent). */
    v->rel_error = v->event_us_no_cupti = v->event_us_cupti = v->host_us_no_cupti = v->host_us_cupti = NAN;
    for (size_t i = 0; i < f.t.n_ranges; i++)
        if (!strcmp(f.t.ranges[i].variant, v->name))
            f.t.ranges[i].iteration = -1;
    char dir[] = "/tmp/attnprof-skipped-XXXXXX", path[64], err[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.json", dir);
    cr_assert_eq(run_info_write_json(&f.r, path, err, sizeof err), 0, "%s", err);
    static run_info back;
    cr_assert_eq(run_info_read_json(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.variants[3].status, VARIANT_SKIPPED);
    cr_assert_str_eq(back.variants[3].error, v->error);
    cr_assert_str_eq(variant_status_name(VARIANT_SKIPPED), "skipped");
    analysis a;
    cr_assert_eq(analysis_build(&a, &f.t, &back, err, sizeof err), 0, "%s", err);
    findings_derive(&a);
    char *md = report_markdown(&a, NULL, NULL), *csv = report_summary_csv(&a);
    cr_assert(strstr(md, "| `cudnn` *(skipped)* |"), "summary row");
    cr_assert(strstr(md, "**skipped:** cannot take 8x16x1024x96"), "section says why");
    cr_assert(strstr(csv, "\ncudnn,skipped,"), "%s", csv);
    free(md);
    free(csv);
    analysis_free(&a);
    remove_tree(dir);
    fixture_free(&f);
}

/* A fused kernel that ran a head dim on the kernel of the next compiled
 * D up says so in a fact (src/recorder/variant_util.c, attn_fact_head_dim_padding); the fact
 * survives run.json and the report shows it in the variant's summary row and its
 * section. */
Test(report, head_dim_padding_fact_reaches_the_report)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-6var");
    variant_result *flash = NULL;
    for (int i = 0; i < f.r.n_variants; i++)
        if (!strcmp(f.r.variants[i].name, "flash"))
            flash = &f.r.variants[i];
    cr_assert_not_null(flash);
    cr_assert_lt(flash->facts.n, ATTN_MAX_FACTS);
    attn_fact *pad = &flash->facts.item[flash->facts.n++];
    snprintf(pad->key, sizeof pad->key, "head_dim_padding");
    snprintf(pad->value, sizeof pad->value,
             "D=80 runs the D=96 kernel; columns 80-95 zero-filled in shared memory (+20%% tensor-core FLOPs)");
    pad->number = 96;
    char dir[] = "/tmp/attnprof-padding-XXXXXX", path[64], err[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.json", dir);
    cr_assert_eq(run_info_write_json(&f.r, path, err, sizeof err), 0, "%s", err);
    static run_info back;
    cr_assert_eq(run_info_read_json(&back, path, err, sizeof err), 0, "%s", err);
    analysis a;
    cr_assert_eq(analysis_build(&a, &f.t, &back, err, sizeof err), 0, "%s", err);
    findings_derive(&a);
    const variant_analysis *va = analysis_find(&a, "flash");
    cr_assert_geq(finding_with(va, "head dim padded: D=80 runs the D=96 kernel; columns 80-95 zero-filled"), 0);
    cr_assert_lt(finding_with(analysis_find(&a, "efficient"), "head dim padded"), 0, "only where the fact is");
    char *md = report_markdown(&a, NULL, NULL);
    const char *row = strstr(md, "| `flash` |");
    cr_assert_not_null(row, "summary row");
    const char *row_end = strchr(row, '\n');
    /* the summary's short phrase links to the full sentence in the variant's section */
    const char *note = strstr(row, "-head_dim_padding)"); /* the phrase's link to the finding's anchor */
    cr_assert(note && note < row_end, "the padding note is in flash's summary row");
    cr_assert(strstr(row_end, "head dim padded: D=80 runs the D=96 kernel"), "its sentence is in the section");
    cr_assert(strstr(md, "head_dim_padding = D=80 runs the D=96 kernel; columns 80-95 zero-filled"),
              "the fact is listed in the variant's section");
    free(md);
    analysis_free(&a);
    remove_tree(dir);
    fixture_free(&f);
}

/* report.pdf's dates come from the run, in place, so two prints are the same bytes
 * and no offset of the PDF moves. */
Test(report, pdf_dates_are_the_runs_and_keep_the_length)
{
    char pdf[] = "<</Creator (x)\n/CreationDate (D:20261201213445+00'00')\n/ModDate (D:20261201213445+00'00')>>";
    size_t n = strlen(pdf);
    cr_assert_eq(print_pdf_set_dates(pdf, n, "2026-11-30T04:18:30Z"), 2);
    cr_assert_eq(strlen(pdf), n);
    cr_assert_str_eq(pdf, "<</Creator (x)\n/CreationDate (D:20261130041830+00'00')\n/ModDate (D:20261130041830+00'00')>>");
    /* No recorded time (an import without one): the dates go, whitespace keeps the offsets. */
    cr_assert_eq(print_pdf_set_dates(pdf, n, ""), 2);
    cr_assert_eq(strlen(pdf), n);
    cr_assert(!strstr(pdf, "Date") && strstr(pdf, "/Creator (x)") && strstr(pdf, ">>"), "%s", pdf);
    char other[] = "<</CreationDate (2026)>>";
    cr_assert_eq(print_pdf_set_dates(other, strlen(other), "2026-11-30T04:18:30Z"), 0, "not Chromium's form: untouched");
    cr_assert_str_eq(other, "<</CreationDate (2026)>>");
}

/* Chromium's structure ids move by one between prints of one page: renumbered by rank, in
 * place, the order kept and every reference to an id changed with it. */
Test(report, pdf_node_ids_are_renumbered_by_rank)
{
    char a[] = "/ID (node00000017) /K (node00000020) x(node00000017) (node123) (nodeabcdefgh)";
    char b[] = "/ID (node00000016) /K (node00000019) x(node00000016) (node123) (nodeabcdefgh)";
    size_t n = strlen(a);
    cr_assert_eq(print_pdf_renumber_nodes(a, n), 3);
    cr_assert_eq(print_pdf_renumber_nodes(b, strlen(b)), 3);
    cr_assert_str_eq(a, "/ID (node00000000) /K (node00000001) x(node00000000) (node123) (nodeabcdefgh)");
    cr_assert_str_eq(a, b, "two prints whose ids moved by one are now the same bytes");
    cr_assert_eq(strlen(a), n);
    char none[] = "no ids here";
    cr_assert_eq(print_pdf_renumber_nodes(none, strlen(none)), 0);
}

Test(report, a_ratio_interval_prints_its_ends_apart)
{
    cr_assert_eq(units_ratio_decimals(0.92, 0.94), 2);
    cr_assert_eq(units_ratio_decimals(0.978, 0.982), 3, "[0.98–0.98] would hide the 2%% floor's edge");
    cr_assert_eq(units_ratio_decimals(0.99912, 0.99948), 4);
    cr_assert_eq(units_ratio_decimals(0.99991, 0.99996), 4, "at most 4 decimals");
    cr_assert_eq(units_ratio_decimals(1.0, 1.0), 2, "equal ends: nothing to tell apart");
}

/* The overhead probe's third state (CUPTI on, its Memset records off), measured where the
 * forwards issued Memsets: it survives run.json, and the report says what the records cost
 * per Memset from the three medians. An archive without it says nothing of the kind. */
Test(report, memset_records_cost_from_the_third_probe_state)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-cudnn919-a");
    char *md = report_markdown(&f.a, NULL, NULL);
    cr_assert(strstr(md, "## CUPTI overhead"));
    cr_assert_null(strstr(md, "Memset records alone off"), "not measured in this archive");
    free(md);
    int vi = -1;
    for (int i = 0; i < f.r.n_variants; i++)
        if (!strcmp(f.r.variants[i].name, "cudnn"))
            vi = i;
    cr_assert_geq(vi, 0);
    variant_result *v = &f.r.variants[vi];
    v->event_us_no_cupti = 64.0;
    v->event_us_cupti = 65.6;
    v->event_us_cupti_no_memset = 64.4;
    variant_result *nv = &f.r.variants[0]; /* naive: one cuBLAS Memset per forward here */
    cr_assert_str_eq(nv->name, "naive");
    nv->event_us_no_cupti = 630.0;
    nv->event_us_cupti = 632.0;
    nv->event_us_cupti_no_memset = 631.0;
    char dir[] = "/tmp/attnprof-memrec-XXXXXX", path[64], err[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.json", dir);
    cr_assert_eq(run_info_write_json(&f.r, path, err, sizeof err), 0, "%s", err);
    static run_info back;
    cr_assert_eq(run_info_read_json(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(back.variants[vi].event_us_cupti_no_memset, 64.4, 1e-9);
    cr_assert(isnan(back.variants[1].event_us_cupti_no_memset), "absent where not measured");
    analysis a;
    cr_assert_eq(analysis_build(&a, &f.t, &back, err, sizeof err), 0, "%s", err);
    md = report_markdown(&a, NULL, NULL);
    cr_assert(strstr(md, "`cudnn`: 64.4 µs, +0.6% over CUPTI off, against +2.5% with them (1 Memset per forward: "
                         "1.20 µs of GPU time per Memset record)"),
              "%s", strstr(md, "## CUPTI overhead"));
    cr_assert(strstr(md, "`naive`: 631.0 µs, +0.2% over CUPTI off, against +0.3% with them (1 Memset per forward; the "
                         "difference is under 1.0% of the forward, within the probe's jitter)"),
              "a 0.16%% difference is not a per-record cost");
    free(md);
    analysis_free(&a);
    unlink(path);
    rmdir(dir);
    fixture_free(&f);
}
