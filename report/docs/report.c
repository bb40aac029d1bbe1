#include "report.h"
#include "measurement_text.h"
#include "samples_csv.h"
#include "units.h"
#include "alloc.h"
#include "archive.h"

#include "citation.h"
#include "escape.h"
#include "predict.h"
#include "predict_report.h"
#include "findings.h"
#include "kernel_names.h"
#include "findings_json.h"
#include "latex.h"
#include "model_inputs.h"
#include "model_roles.h"
#include "kernel_roles.h"
#include "occupancy.h"
#include "series.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char _binary_templates_report_html_start[], _binary_templates_report_html_end[];
extern const char _binary_templates_style_css_start[], _binary_templates_style_css_end[];

void format_us(double us, char *out, size_t n)
{
    if (!isfinite(us))
        snprintf(out, n, "–");
    else if (us >= 10000)
        snprintf(out, n, "%.1f ms", us / 1000);
    else if (us >= 1000)
        snprintf(out, n, "%.2f ms", us / 1000);
    else if (us >= 100)
        snprintf(out, n, "%.0f µs", us);
    else
        snprintf(out, n, "%.1f µs", us);
}

void format_us_column(double us, char *out, size_t n) { units_us_column(us, out, n); }

/* A table cell of medians and ranges: µs throughout (one unit per column). */
static void time_stats_column(const stats *s, char *out, size_t n)
{
    if (s->n == 0) {
        snprintf(out, n, "–");
        return;
    }
    char med[32], lo[32], hi[32];
    format_us_column(s->median, med, sizeof med);
    format_us_column(s->min, lo, sizeof lo);
    format_us_column(s->max, hi, sizeof hi);
    snprintf(out, n, "%s (%s – %s, n=%d)", med, lo, hi, s->n);
}

void format_time_stats(const stats *s, char *out, size_t n)
{
    if (s->n == 0) {
        snprintf(out, n, "–");
        return;
    }
    char med[32], lo[32], hi[32];
    format_us(s->median, med, sizeof med);
    format_us(s->min, lo, sizeof lo);
    format_us(s->max, hi, sizeof hi);
    snprintf(out, n, "%s (%s – %s, n=%d)", med, lo, hi, s->n);
}

/* Table cells holding Markdown we wrote (findings): a '|' would end the cell, a
 * newline the row. Archive strings go through esc_md_text / esc_md_code. */
static void cell(FILE *f, const char *s)
{
    int backslashes = 0; /* run just before this character: odd means it is escaped */
    for (; *s; s++) {
        if (*s == '|' && backslashes % 2 == 0)
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
        backslashes = *s == '\\' ? backslashes + 1 : 0;
    }
}

static const char *status_word(const variant_result *r)
{
    switch (r->status) {
    case VARIANT_OK:
        return "";
    case VARIANT_FAILED:
        return " **FAILED**";
    case VARIANT_SKIPPED:
        return " *(skipped)*";
    default:
        return " *(unavailable)*";
    }
}

static void version_text(int v, int scale_major, int scale_minor, char *out, size_t n)
{
    if (v <= 0)
        snprintf(out, n, "–");
    else
        snprintf(out, n, "%d.%d.%d", v / scale_major, v % scale_major / scale_minor, v % scale_minor);
}

static const char NOT_RECORDED[] = "not recorded";

/* Characters, not bytes: printf pads by bytes. */
static size_t utf8_columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

void report_terminal_summary(FILE *f, const analysis *a)
{
    fprintf(f, "%-22s %-11s %8s %14s %14s %12s  %s\n", "variant", "status", "ops/fwd", "CUDA µs/fwd", "CPU µs/fwd",
            "rel.err", "findings");
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        char name[64], ops[16] = "–", cuda[32] = "–", cpu[32] = "–", err[32];
        esc_terminal(name, sizeof name, va->result->name);
        if (va->n_forwards) {
            snprintf(ops, sizeof ops, "%d", va->ops_per_forward);
            snprintf(cuda, sizeof cuda, "%.1f", va->cuda_us.median);
            snprintf(cpu, sizeof cpu, "%.1f", va->cpu_us.median);
        }
        if (isfinite(va->result->rel_error))
            snprintf(err, sizeof err, "%.1e", va->result->rel_error);
        else
            snprintf(err, sizeof err, "%s", a->run->imported ? NOT_RECORDED : "–");
        /* "–" is three bytes and one column: pad by columns */
        fprintf(f, "%-22s %-11s %*s %*s %*s %*s  ", name, variant_status_name(va->result->status),
                8 + (int)(strlen(ops) - utf8_columns(ops)), ops, 14 + (int)(strlen(cuda) - utf8_columns(cuda)), cuda,
                14 + (int)(strlen(cpu) - utf8_columns(cpu)), cpu, 12 + (int)(strlen(err) - utf8_columns(err)), err);
        for (int k = 0; k < va->n_findings; k++)
            fprintf(f, "%s%s", k ? ", " : "", va->meta[k].id[0] ? va->meta[k].id : "finding");
        fputc('\n', f);
    }
}

/* The header of an archive made by `attnprof import`: what the Kineto traces hold,
 * and "not recorded" for what they do not (never a made-up value). */
static void header_imported(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    const device_props *d = &r->device;
    /* Every string here comes from the archive (and so from the traces): escaped. */
    fputs("# attnprof — ", f);
    esc_md_text(f, d->name[0] ? d->name : "GPU not recorded");
    fprintf(f, ", %s\n\n| | |\n|---|---|\n", run_producer_phrase(r));
    if (d->name[0]) {
        fputs("| GPU | ", f);
        esc_md_text(f, d->name);
        fprintf(f, " — compute capability %d.%d, %d SMs, %.1f GiB; SM clock, memory clock and bus width %s |\n",
                d->major, d->minor, d->sm_count, d->total_mem / 1073741824.0, NOT_RECORDED);
    } else
        fprintf(f, "| GPU | %s (the trace has no deviceProperties) |\n", NOT_RECORDED);
    char rt[32], drv[32];
    if (r->cuda_runtime_version > 0)
        snprintf(rt, sizeof rt, "%d.%d", r->cuda_runtime_version / 1000, r->cuda_runtime_version % 1000 / 10);
    else
        snprintf(rt, sizeof rt, "%s", NOT_RECORDED);
    if (r->cuda_driver_version > 0)
        snprintf(drv, sizeof drv, "%d.%d", r->cuda_driver_version / 1000, r->cuda_driver_version % 1000 / 10);
    else
        snprintf(drv, sizeof drv, "%s", NOT_RECORDED);
    char cupti[32];
    if (r->cupti_version > 0)
        snprintf(cupti, sizeof cupti, "%d", r->cupti_version);
    else
        snprintf(cupti, sizeof cupti, "%s", NOT_RECORDED);
    fprintf(f, "| Software | CUDA runtime %s (driver API %s), CUPTI %s; driver, cuBLAS and cuDNN versions %s |\n", rt,
            drv, cupti, NOT_RECORDED);
    fputs("| Produced by | ", f);
    esc_md_text(f, r->producer == PRODUCER_PYTORCH     ? "PyTorch's profiler (Kineto)"
                   : r->producer == PRODUCER_INJECTION ? "attnprof record (CUPTI injected into the program)"
                                                       : "a Kineto producer other than PyTorch");
    fputs(" — ", f);
    esc_md_text(f, r->producer_evidence);
    fputs(" |\n", f);
    if (run_info_shape_recorded(r)) {
        fprintf(f, "| Shape | B=%d, H=%d, S=%d, D=%d, ", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
        esc_md_text(f, r->dtype[0] ? r->dtype : "dtype not given");
        fprintf(f, ", %s (declared with ", r->causal ? "causal" : "not causal");
        esc_md_code(f, r->shape_source[0] ? r->shape_source : "?", 1);
        fputs(": the traces carry no shapes) |\n", f);
    } else if (model_inputs_any(r))
        fputs("| Shape | recorded with record_shapes: each trace's attention inputs are in *Model* |\n", f);
    else
        fprintf(f, "| Shape | %s (Kineto traces carry no tensor shapes unless recorded with record_shapes; "
                   "declare it with `import --shape`) |\n", NOT_RECORDED);
    fputs("| Run | recorded ", f);
    esc_md_text(f, r->date[0] ? r->date : NOT_RECORDED);
    fprintf(f, "; up to %d forwards per variant; seed, warm-up forwards, correctness against FP64 and timings with the "
               "profiler off %s |\n",
            r->iters, NOT_RECORDED);
    fputs("| Tool | attnprof ", f);
    esc_md_text(f, r->tool_version);
    fputs(": ", f);
    esc_md_code(f, r->command_line, 1);
    fputs(" |\n", f);
    for (int i = 0; i < r->n_sources; i++) {
        const import_source *s = &r->sources[i];
        fputs("| Source ", f);
        esc_md_code(f, s->variant, 1);
        fputs(" | ", f);
        esc_md_code(f, s->file, 1);
        fprintf(f, ", %lld bytes, sha256 ", (long long)s->size);
        esc_md_code(f, s->sha256, 1);
        fprintf(f, "; Kineto schema %d", s->schema_version);
        if (s->has_distributed) {
            fprintf(f, ", rank %d of %d (", s->rank, s->world_size);
            esc_md_text(f, s->backend);
            fputc(')', f);
        }
        fprintf(f, " |\n");
    }
    fprintf(f, "| Records | %zu GPU operations, %zu API calls, %zu host ranges and CPU ops (forwards from ",
            a->trace->n_ops, a->trace->n_apis, a->trace->n_ranges);
    esc_md_text(f, r->marker_source[0] ? r->marker_source : "–");
    fputs(") |\n\n", f);
    fprintf(f, "CUDA time per forward is the sum of the durations of the GPU operations launched inside the "
               "forward's range (Kineto's CUPTI timestamps, matched by correlation id); CPU time is the duration of "
               "the range on the host%s.%s\n\n",
            r->producer == PRODUCER_PYTORCH ? ", PyTorch's dispatcher and the profiler's own cost included" : "",
            r->producer == PRODUCER_PYTORCH ? " Elementwise kernels are named by the ATen op that launched them." : "");
}

static void header(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    if (r->imported) {
        header_imported(f, a);
        return;
    }
    const device_props *d = &a->trace->device;
    fputs("# attnprof — ", f);
    esc_md_text(f, r->device.name);
    fprintf(f, ", %d×%d×%d×%d ", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
    esc_md_text(f, r->dtype);
    fprintf(f, " %s\n\n", r->causal ? "causal" : "");
    char cublas[32], cudnn[32];
    version_text(r->cublas_version, 10000, 100, cublas, sizeof cublas);
    version_text(r->cudnn_version, 10000, 100, cudnn, sizeof cudnn);
    fprintf(f, "| | |\n|---|---|\n");
    fputs("| GPU | ", f);
    esc_md_text(f, r->device.name);
    fprintf(f, " — compute capability %d.%d, %d SMs, %.1f GiB, maximum SM clock %d MHz, maximum memory clock %d MHz "
               "(device attributes, not the clocks of the run), %d-bit bus |\n",
            r->device.major, r->device.minor, r->device.sm_count,
            r->device.total_mem / 1073741824.0, r->device.clock_khz / 1000, r->device.mem_clock_khz / 1000,
            r->device.mem_bus_width);
    fputs("| Software | driver ", f);
    esc_md_text(f, r->driver_version);
    fprintf(f, ", CUDA runtime %d.%d (driver API %d.%d), cuBLAS %s, cuDNN %s, CUPTI API %d |\n",
            r->cuda_runtime_version / 1000, r->cuda_runtime_version % 1000 / 10,
            r->cuda_driver_version / 1000, r->cuda_driver_version % 1000 / 10, cublas, cudnn, r->cupti_version);
    const run_env *e = &r->env;
    if (e->clock_samples > 0) {
        fprintf(f, "| Measured during the run | SM clock %d", e->sm_clock_mhz_min);
        if (e->sm_clock_mhz_max != e->sm_clock_mhz_min)
            fprintf(f, "–%d", e->sm_clock_mhz_max);
        fprintf(f, " MHz, memory clock %d", e->mem_clock_mhz_min);
        if (e->mem_clock_mhz_max != e->mem_clock_mhz_min)
            fprintf(f, "–%d", e->mem_clock_mhz_max);
        fprintf(f, " MHz (NVML, %d sample%s, one after each variant's recorded forwards)", e->clock_samples,
                e->clock_samples == 1 ? "" : "s");
        if (e->power_limit_w > 0)
            fprintf(f, ", power limit %d W", e->power_limit_w);
        fputs(" |\n", f);
    } else {
        fputs("| Measured during the run | SM and memory clocks, power limit: not recorded (this archive predates "
              "attnprof recording them) |\n", f);
    }
    char plan[1024];
    measurement_plan_text(a, plan, sizeof plan);
    fputs("| Measurement | ", f);
    esc_md_text(f, plan);
    fputs(" |\n", f);
    fputs("| Host | ", f);
    if (e->host_cpu[0] || e->os[0]) {
        esc_md_text(f, e->host_cpu[0] ? e->host_cpu : "CPU not recorded");
        if (e->host_cpus > 0)
            fprintf(f, " (%d logical CPUs)", e->host_cpus);
        fputs("; ", f);
        esc_md_text(f, e->os[0] ? e->os : "OS not recorded");
    } else {
        fputs("host CPU and OS: not recorded", f);
    }
    fputs(" |\n| Build | ", f);
    if (e->nvcc[0] || e->build_flags[0]) {
        fputs("nvcc ", f);
        esc_md_text(f, e->nvcc[0] ? e->nvcc : "(version not recorded)");
        fputs("; ", f);
        esc_md_code(f, e->build_flags, 1);
    } else {
        fputs("nvcc version and build flags: not recorded", f);
    }
    fputs(" |\n", f);
    fprintf(f, "| Shape | B=%d, H=%d, S=%d, D=%d, ", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
    esc_md_text(f, r->dtype);
    fprintf(f, ", %s, scale 1/√D |\n", r->causal ? "causal" : "not causal");
    fputs("| Run | ", f);
    esc_md_text(f, r->date);
    /* issue 25: with a plan, the count is per pass, or the stop rule's (each variant's own) */
    if (r->measurement.recorded && !strcmp(r->measurement.iters_rule, "auto"))
        fprintf(f, "; seed %llu; %d warm-up forwards per variant, then recorded forwards until the stop rule ended "
                   "(Measurement); rel. error threshold %.0e |\n",
                r->seed, r->warmup, r->rel_error_threshold);
    else if (r->measurement.recorded)
        fprintf(f, "; seed %llu; %d warm-up + %d recorded forwards per variant and pass; rel. error threshold %.0e |\n",
                r->seed, r->warmup, r->iters, r->rel_error_threshold);
    else
        fprintf(f, "; seed %llu; %d warm-up + %d recorded forwards per variant; rel. error threshold %.0e |\n",
                r->seed, r->warmup, r->iters, r->rel_error_threshold);
    fputs("| Tool | attnprof ", f);
    esc_md_text(f, r->tool_version);
    fputs(": ", f);
    esc_md_code(f, r->command_line, 1);
    fprintf(f, " |\n");
    fprintf(f, "| Records | %zu GPU operations, %zu API calls, %zu NVTX ranges (from ", a->trace->n_ops,
            a->trace->n_apis, a->trace->n_ranges);
    esc_md_text(f, r->marker_source[0] ? r->marker_source : "–");
    fputs(") |\n\n", f);
    (void)d;
    fprintf(f, "CUDA time per forward is the sum of the durations of the GPU operations launched inside the "
               "forward's `attn_fwd` range (CUPTI timestamps); CPU time is the host wall time of the forward call "
               "itself (no synchronization inside). Relative error: ‖out − ref‖ / ‖ref‖ against an FP64 CPU "
               "reference on sampled heads");
    /* Which rows: recorded since the check samples rows (run.json rows_checked); older archives
     * checked every row and say nothing. */
    const variant_result *checked = NULL;
    for (int i = 0; i < r->n_variants && !checked; i++)
        if (r->variants[i].rows_checked > 0 && r->variants[i].heads_checked > 0)
            checked = &r->variants[i];
    if (checked && checked->rows_checked >= r->shape.seq)
        fprintf(f, " (%d heads, every query row)", checked->heads_checked);
    else if (checked)
        fprintf(f, " (%d heads, %d of %d query rows each: rows at both ends of the causal mask and the rest "
                   "spread over the head at seeded offsets)", checked->heads_checked, checked->rows_checked,
                r->shape.seq);
    fputs(".\n\n", f);
}

static void ops_text(const variant_analysis *va, char *out, size_t n)
{
    if (!va->n_forwards) {
        snprintf(out, n, "–");
        return;
    }
    int other = va->ops_per_forward - va->kernels_per_forward - va->memcpy_per_forward;
    int len = snprintf(out, n, "%d", va->ops_per_forward);
    if (va->memcpy_per_forward || other)
        len += snprintf(out + len, n - (size_t)len, " (%d kernel%s%s", va->kernels_per_forward,
                        va->kernels_per_forward == 1 ? "" : "s", va->memcpy_per_forward ? " + " : "");
    if (va->memcpy_per_forward)
        len += snprintf(out + len, n - (size_t)len, "%d Memcpy", va->memcpy_per_forward);
    if (other)
        len += snprintf(out + len, n - (size_t)len, " + %d Memset", other);
    if (va->memcpy_per_forward || other)
        len += snprintf(out + len, n - (size_t)len, ")");
    if (va->result->expected_ops >= 0 && va->ops_per_forward != va->result->expected_ops)
        snprintf(out + len, n - (size_t)len, "; expected %d", va->result->expected_ops);
}

static void summary_table(FILE *f, const analysis *a, const report_reference *ref)
{
    fprintf(f, "## Summary\n\n");
    int series = series_applies(a); /* the series' column only where it published the variants */
    /* an import changed nothing: its variants are sources, and its CPU times were taken under the
     * producer's profiler */
    fprintf(f, "| Variant | %s | Kernels / forward | CUDA time / forward (median, min – max, n) | "
               "CPU time / forward (%s) | rel. error vs FP64 |",
            a->run->imported ? "Source" : "What we changed",
            a->run->producer == PRODUCER_PYTORCH ? "under PyTorch's profiler"
            : a->run->imported                   ? "under the producer's profiler"
                                                 : "under CUPTI");
    if (series)
        fprintf(f, " Reference: %s |", SERIES_LABEL);
    if (ref) {
        fputs(" Reference: ", f);
        esc_md_text(f, ref->label);
        fputs(", CUDA / CPU time per forward |", f);
    }
    fprintf(f, " What the trace revealed |\n");
    fprintf(f, "|---|---|---|---|---|---|%s%s---|\n", series ? "---|" : "", ref ? "---|" : "");
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        const variant_result *r = va->result;
        char ops[96], cuda[96], cpu[96], err[32];
        ops_text(va, ops, sizeof ops);
        time_stats_column(&va->cuda_us, cuda, sizeof cuda);
        time_stats_column(&va->cpu_us, cpu, sizeof cpu);
        if (isfinite(r->rel_error))
            snprintf(err, sizeof err, "%.1e", r->rel_error);
        else
            snprintf(err, sizeof err, "%s",
                     a->run->imported ? NOT_RECORDED : r->status == VARIANT_OK ? "–" : "NaN or none");
        fputs("| ", f);
        esc_md_code(f, r->name, 1);
        fprintf(f, "%s | ", status_word(r));
        esc_md_text(f, r->what_changed);
        fprintf(f, " | %s | %s | %s | %s | ", ops, cuda, cpu, err);
        if (series) {
            char cellv[256];
            series_cell(r->name, cellv, sizeof cellv);
            fprintf(f, "%s | ", cellv);
        }
        if (ref) {
            /* PyTorch's SDPA variants carry an "sdpa_" prefix in an imported archive */
            const variant_analysis *rv = analysis_find(ref->a, r->name);
            char sdpa[48];
            snprintf(sdpa, sizeof sdpa, "sdpa_%s", r->name);
            if (!rv)
                rv = analysis_find(ref->a, sdpa);
            if (rv && rv->n_forwards) {
                char rc[32], rp[32];
                format_us_column(rv->cuda_us.median, rc, sizeof rc);
                format_us_column(rv->cpu_us.median, rp, sizeof rp);
                fprintf(f, "%s / %s (%d ops, n=%d) | ", rc, rp, rv->ops_per_forward, rv->n_forwards);
            } else {
                fputs("not in the reference | ", f);
            }
        }
        for (int k = 0; k < va->n_findings; k++) {
            if (k)
                fputs("; ", f);
            cell(f, va->findings[k]);
        }
        fprintf(f, " |\n");
    }
    fputc('\n', f);
}

/* Per variant, how the stop rule ended, the clocks its forwards ran at and which were
 * throttled (issue 25); absent for archives without a measurement plan or samples
 * (the header's Measurement row says "not recorded"). */
static void measurement_table(FILE *f, const analysis *a)
{
    if (!measurement_variant_applies(a))
        return;
    fputs("## Measurement\n\n| Variant | Stop rule outcome | Clocks of its forwards (NVML) | Throttled forwards |\n"
          "|---|---|---|---|\n", f);
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        char stop[256], clocks[96], thr[192];
        measurement_stop_text(a, va, stop, sizeof stop);
        measurement_clock_text(va, clocks, sizeof clocks);
        measurement_throttle_text(a, va, thr, sizeof thr);
        fputs("| ", f);
        esc_md_code(f, va->result->name, 1);
        fputs(" | ", f);
        esc_md_text(f, stop);
        fputs(" | ", f);
        esc_md_text(f, clocks);
        fputs(" | ", f);
        esc_md_text(f, thr);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

static void overhead_table(FILE *f, const analysis *a)
{
    int any = 0;
    for (int i = 0; i < a->n; i++)
        any |= isfinite(a->v[i].result->event_us_cupti);
    if (!any)
        return;
    /* Archives since the probe sized its samples hold its sizes as a fact per variant. */
    int sized = 0;
    for (int i = 0; i < a->n; i++)
        for (int k = 0; k < a->v[i].result->facts.n; k++)
            sized |= !strcmp(a->v[i].result->facts.item[k].key, "overhead_probe_samples");
    fprintf(f, "## CUPTI overhead\n\n");
    if (sized)
        fputs("The same forward timed with CUDA events, CUPTI's activity collection off and on: samples of 1 to 8 "
              "forwards queued back to back between two events (enough for 2 ms of GPU time), up to 20 samples "
              "with CUPTI off and 20 with it on (never under 5; fewer where 20 would take more than 1 s of GPU "
              "time: each variant's count is among its facts), interleaved, median per forward. Beside it, the ",
              f);
    else
        fputs("The same forward timed with CUDA events, CUPTI's activity collection off and on: 8 forwards "
              "queued back to back between two events, 20 such samples with CUPTI off and 20 with it on, "
              "interleaved, median per forward. Beside it, the ", f);
    fprintf(f, ""
               "host wall time of one forward call in both cases: CUPTI's API records cost host time, so the CPU "
               "times of the summary, taken under CUPTI, are upper bounds.\n\n"
               "The summary's CPU time and the host time here are two measurements of the same call, taken "
               "differently. The summary's is the median length of the recorded forwards' `attn_fwd` ranges: each "
               "forward starts after the previous one was synchronized, so the host issues into an idle queue, and "
               "the range includes the NVTX push and pop. The host times here are forward calls queued back to back "
               "(%s per sample, no synchronization between them), timed around the call alone. The last column "
               "repeats the summary's number beside them.\n\n"
               "| Variant | GPU, CUPTI off | GPU, CUPTI on | overhead | host, CUPTI off | host, CUPTI on | "
               "summary CPU time (recorded forwards) |\n"
               "|---|---|---|---|---|---|---|\n",
            sized ? "1 to 8" : "8");
    for (int i = 0; i < a->n; i++) {
        const variant_result *r = a->v[i].result;
        if (!isfinite(r->event_us_cupti) || !isfinite(r->event_us_no_cupti))
            continue;
        char off[32], on[32], hoff[32], hon[32], summ[32];
        format_us_column(r->event_us_no_cupti, off, sizeof off);
        format_us_column(r->event_us_cupti, on, sizeof on);
        format_us_column(r->host_us_no_cupti, hoff, sizeof hoff);
        format_us_column(r->host_us_cupti, hon, sizeof hon);
        format_us_column(a->v[i].cpu_us.n ? a->v[i].cpu_us.median : NAN, summ, sizeof summ);
        fputs("| ", f);
        esc_md_code(f, r->name, 1);
        fprintf(f, " | %s | %s | %+.1f%% | %s | %s | %s |\n", off, on,
                100.0 * (r->event_us_cupti / r->event_us_no_cupti - 1.0), hoff, hon, summ);
    }
    fputc('\n', f);
}

static char *base64_file(const char *path, size_t *len_out)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return NULL;
    fseek(in, 0, SEEK_END);
    long n = ftell(in);
    fseek(in, 0, SEEK_SET);
    unsigned char *raw = malloc((size_t)(n > 0 ? n : 1));
    size_t got = raw ? fread(raw, 1, (size_t)n, in) : 0;
    fclose(in);
    if (!raw || got != (size_t)n) {
        free(raw);
        return NULL;
    }
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t out_len = 4 * ((got + 2) / 3);
    char *out = malloc(out_len + 1), *o = out;
    if (!out)
        attn_oom();
    for (size_t i = 0; i < got; i += 3) {
        unsigned v = raw[i] << 16 | (i + 1 < got ? raw[i + 1] << 8 : 0) | (i + 2 < got ? raw[i + 2] : 0);
        *o++ = tbl[v >> 18 & 63];
        *o++ = tbl[v >> 12 & 63];
        *o++ = i + 1 < got ? tbl[v >> 6 & 63] : '=';
        *o++ = i + 2 < got ? tbl[v & 63] : '=';
    }
    *o = '\0';
    free(raw);
    *len_out = out_len;
    return out;
}

/* The vector files of a figure: links beside report.md; in the self-contained page
 * (inline_dir set) only their names in the archive, since a link would point to a
 * file that does not travel with the page. */
static void vector_files(FILE *f, const figure_file *svg, const figure_file *pdf, const char *inline_dir)
{
    if (!svg && !pdf)
        return;
    if (inline_dir) {
        fputs(" — vector files in the archive, beside this page:", f);
        if (svg) {
            fputc(' ', f);
            esc_md_code(f, svg->path, 0);
        }
        if (pdf) {
            fputs(svg ? "," : "", f);
            fputc(' ', f);
            esc_md_code(f, pdf->path, 0);
        }
        return;
    }
    fputs(" — vector:", f);
    if (svg)
        fprintf(f, " [SVG](%s)", svg->path);
    if (pdf)
        fprintf(f, " [PDF](%s)", pdf->path);
}

/* Markdown image for a figure; PNG preferred for the page, with the vector files. */
static void figure(FILE *f, const figure_list *figs, const char *name, const char *inline_dir)
{
    if (!figs)
        return;
    const figure_file *png = NULL, *svg = NULL, *pdf = NULL;
    for (int i = 0; i < figs->n; i++) {
        if (strcmp(figs->files[i].figure, name))
            continue;
        const char *k = figs->files[i].kind;
        if (!strcmp(k, "png"))
            png = &figs->files[i];
        else if (!strcmp(k, "svg"))
            svg = &figs->files[i];
        else if (!strcmp(k, "pdf"))
            pdf = &figs->files[i];
    }
    /* In the self-contained page only a PNG is inlined: cmark-gfm's safe mode
     * blanks a data:image/svg+xml source. */
    const figure_file *show = png ? png : inline_dir ? NULL : svg;
    if (!show && (svg || pdf)) { /* no page image: the vector files */
        const figure_file *any = svg ? svg : pdf;
        fputs("*", f);
        esc_md_text(f, any->caption);
        fputs("*", f);
        vector_files(f, svg, pdf, inline_dir);
        fputs("\n\n", f);
        return;
    }
    if (!show)
        return;
    if (inline_dir) {
        char path[4096];
        size_t len;
        char *b64 = NULL;
        if (snprintf(path, sizeof path, "%s/%s", inline_dir, show->path) < (int)sizeof path)
            b64 = base64_file(path, &len);
        if (b64) {
            fputs("![", f);
            esc_md_text(f, show->caption);
            fprintf(f, "](data:image/%s;base64,%s)\n\n", show == png ? "png" : "svg+xml", b64);
            free(b64);
        }
    } else {
        fputs("![", f);
        esc_md_text(f, show->caption);
        fprintf(f, "](%s)\n\n", show->path);
    }
    fputs("*", f);
    esc_md_text(f, show->caption);
    fputs("*", f);
    vector_files(f, svg, pdf, inline_dir);
    fputs("\n\n", f);
}

/* A forward's operation table stops here: a report stays readable (and linear in
 * size) when a forward has 500k operations. */
enum { REPORT_MAX_OP_ROWS = 1000 };

/* The forward shown in the variant's table: the one with the median CUDA time. */
static const forward *median_forward(const variant_analysis *va)
{
    int i = analysis_median_forward(va);
    return i < 0 ? NULL : &va->forwards[i];
}

/* The variant's heading, its source or change, and its error when it did not run. */
static void variant_heading(FILE *f, const analysis *a, const variant_result *r)
{
    fputs("### ", f);
    esc_md_code(f, r->name, 0);
    fputs(" — ", f);
    esc_md_text(f, r->title);
    fprintf(f, "%s\n\n", status_word(r));
    fputs(a->run->imported ? "*Source:* " : "*What we changed:* ", f);
    esc_md_text(f, r->what_changed);
    fprintf(f, "\n\n");
    if (r->status != VARIANT_OK) {
        fprintf(f, "**%s:** ", variant_status_name(r->status));
        esc_md_text(f, r->error);
        fputs("\n\n", f);
    }
}

/* The variant's findings as a list, then the facts it recorded in one sentence. */
static void variant_findings_and_facts(FILE *f, const variant_analysis *va)
{
    const variant_result *r = va->result;
    for (int k = 0; k < va->n_findings; k++) {
        fputs("- ", f);
        cell(f, va->findings[k]); /* Markdown we wrote, archive strings escaped inside */
        fputc('\n', f);
    }
    if (va->n_findings)
        fputc('\n', f);
    if (r->facts.n) {
        fputs("Facts recorded by the variant: ", f);
        for (int k = 0; k < r->facts.n; k++) {
            fputs(k ? "; " : "", f);
            esc_md_text(f, r->facts.item[k].key);
            fputs(" = ", f);
            esc_md_text(f, r->facts.item[k].value);
        }
        fputs(".\n\n", f);
    }
}

/* A kernel's grid, block, registers, shared memory, occupancy and Kineto's estimate. */
static void kernel_columns(FILE *f, const analysis *a, const gpu_op *o)
{
    occupancy occ;
    char oerr[128], lim[64];
    fprintf(f, "%d×%d×%d | %d×%d×%d | %d | %d B | ", o->grid[0], o->grid[1], o->grid[2], o->block[0],
            o->block[1], o->block[2], o->registers, o->static_smem + o->dynamic_smem);
    if (occupancy_of_op(o, &a->trace->device, &occ, oerr, sizeof oerr) == 0)
        fprintf(f, "%.0f%% / %.0f%%, %s | ", 100 * occ.theoretical, 100 * occ.est_achieved,
                occupancy_limiter_name(occ.limiters, lim, sizeof lim));
    else
        fputs("– | ", f);
    /* Kineto's estimate: its own "est. achieved occupancy %" for imported PyTorch
     * traces, else its formula applied to our record (with its 48 KiB limit). */
    if (a->run->imported && o->has_kineto_occupancy)
        fprintf(f, "%.0f%% (Kineto's own) | ", o->kineto_occupancy);
    else if (occupancy_of_op(o, &a->trace->device, &occ, oerr, sizeof oerr) == 0)
        fprintf(f, "%d%% | ", occ.kineto_pct);
    else
        fputs("– | ", f);
}

/* Row k of the operation table; a shortened name gets the next note number, and
 * its index joins notes[]. */
static void op_table_row(FILE *f, const analysis *a, const forward *fw, int k, int *notes, int *n_notes)
{
    const gpu_op *o = fw->ops[k];
    const api_call *l = fw->launchers[k];
    char name[FINDING_NAME_MAX + 8], full[1024], dur[32], lat[32];
    if (o->kind == GPU_KERNEL) {
        findings_short_name(o->name, name, sizeof name);
        short_kernel_name(o->name, full, sizeof full);
    } else {
        esc_copy_utf8(name, sizeof name, o->name);
        esc_copy_utf8(full, sizeof full, o->name);
    }
    format_us_column((double)(o->end_ns - o->start_ns) / 1000.0, dur, sizeof dur);
    if (l)
        format_us_column((double)(o->start_ns - l->start_ns) / 1000.0, lat, sizeof lat);
    fprintf(f, "| %d | ", k + 1);
    esc_md_code(f, name, 1);
    char aten[96];
    if (op_aten_name(o, aten, sizeof aten)) { /* imported PyTorch traces: the ATen op that launched it */
        fputs(" from ", f);
        esc_md_code(f, aten, 1);
    }
    /* a shortened name: the full one in a note under the table */
    if (strcmp(name, o->name)) {
        notes[(*n_notes)++] = k;
        fprintf(f, " [%d]", *n_notes);
    }
    fprintf(f, " | %s | %s | ", op_class_name(classify_op(o)), dur);
    if (o->kind == GPU_KERNEL)
        kernel_columns(f, a, o);
    else
        fprintf(f, "– | – | – | %lld B moved | – | – | ", (long long)o->bytes);
    if (l) {
        esc_md_code(f, l->name, 1);
        const char *lib;
        const gpu_op *next;
        if (o->kind == GPU_MEMSET && findings_memset_library(a->trace, fw, k, &lib, &next) == 0)
            fprintf(f, " (%s)", lib);
    } else {
        fputs("–", f);
    }
    fprintf(f, " | %s |\n", l ? lat : "–");
}

/* The representative forward's GPU operations in order, at most REPORT_MAX_OP_ROWS,
 * with the full names of the shortened ones under the table. */
static void op_table(FILE *f, const analysis *a, const forward *fw)
{
    char buf[64];
    format_us(fw->cuda_us, buf, sizeof buf);
    fprintf(f, "The representative forward (iteration %d, CUDA time %s: the median one, the forward every view of "
               "this report shows), GPU operations in order:\n\n", fw->iteration, buf);
    fprintf(f, "| # | Operation | Class | Duration | Grid | Block | Regs / thread | Shared mem / block | "
               "Occupancy (theor. / est., limiter) | Kineto's estimate | Launched by | Launch → start |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int notes[REPORT_MAX_OP_ROWS]; /* every shortened name of the table, however many */
    int n_notes = 0;
    int shown = fw->n_ops < REPORT_MAX_OP_ROWS ? fw->n_ops : REPORT_MAX_OP_ROWS;
    for (int k = 0; k < shown; k++)
        op_table_row(f, a, fw, k, notes, &n_notes);
    fputc('\n', f);
    if (shown < fw->n_ops)
        fprintf(f, "The first %d of the forward's %d operations are listed; trace.json holds them all.\n\n", shown,
                fw->n_ops);
    /* Full names of the shortened ones (a name is never cut silently). */
    for (int j = 0; j < n_notes; j++) {
        fprintf(f, "%s[%d] op %d: ", j ? "\\\n" : "", j + 1, notes[j] + 1);
        esc_md_code(f, fw->ops[notes[j]]->name, 0);
        fputc('\n', f);
    }
    if (n_notes)
        fputc('\n', f);
}

static void variant_section(FILE *f, const analysis *a, const variant_analysis *va, const figure_list *figs,
                            const char *inline_dir)
{
    const variant_result *r = va->result;
    variant_heading(f, a, r);
    variant_findings_and_facts(f, va);
    const forward *fw = median_forward(va);
    if (!fw)
        return;
    op_table(f, a, fw);
    char fig[96];
    snprintf(fig, sizeof fig, "timeline-%s", r->name);
    figure(f, figs, fig, inline_dir);
}

char *report_markdown(const analysis *a, const figure_list *figs, const char *inline_from_dir)
{
    return report_markdown_ref(a, figs, inline_from_dir, NULL);
}

char *report_markdown_ref(const analysis *a, const figure_list *figs, const char *inline_from_dir,
                          const report_reference *ref)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    header(f, a);
    series_abstract(f, a);
    summary_table(f, a, ref);
    model_section_md(f, a);
    kernel_roles_section_md(f, a); /* archives of attnprof record only */
    if (ref)
        series_reference_note(f, a, ref->a, ref->label);
    if (series_applies(a))
        series_section(f, a);
    figure(f, figs, "timeline-overview", inline_from_dir);
    figure(f, figs, "time-per-forward", inline_from_dir);
    measurement_table(f, a);
    overhead_table(f, a);
    if (predict_available(a)) {
        predict_write_markdown(f, a);
        figure(f, figs, "roofline", inline_from_dir);
    }
    fprintf(f, "## Occupancy\n\n");
    fprintf(f, "Theoretical occupancy from each kernel's registers, shared memory and block size against the "
               "device limits; the estimate also accounts for the grid (blocks ÷ SMs), as Kineto's does, and is "
               "computed for every kernel, whatever API launched it.\n\n");
    if (a->run->device_limits_note[0]) { /* an import: which device limits are not the traces' own */
        fputs("Device limits: ", f);
        esc_md_text(f, a->run->device_limits_note);
        fputs(".\n\n", f);
    }
    series_kineto_paragraph(f, a);
    figure(f, figs, "occupancy", inline_from_dir);
    int paper = 0;
    for (int i = 0; figs && i < figs->n; i++)
        paper |= !strncmp(figs->files[i].figure, "timeline-compact-", 17);
    if (paper) {
        fprintf(f, "## Figures for a paper\n\nDrawn at their printed size (--figure-size), every text at least 8 pt: "
                   "include the PDF at 100%% (README, \"Figures and tables in a LaTeX paper\").\n\n");
        for (int i = 0; i < figs->n; i++)
            if (!strcmp(figs->files[i].kind, figs->files[0].kind) &&
                (!strncmp(figs->files[i].figure, "timeline-compact-", 17) ||
                 !strncmp(figs->files[i].figure, "occupancy-table-", 16)))
                figure(f, figs, figs->files[i].figure, inline_from_dir);
    }
    fprintf(f, "## Variants\n\n");
    for (int i = 0; i < a->n; i++)
        variant_section(f, a, &a->v[i], figs, inline_from_dir);
    kernel_names_appendix(f, a);
    series_citation(f, a);
    fclose(f);
    return buf;
}

static void append_template_part(FILE *out, const char *start, const char *end, const char *title,
                                 const char *body, const char *version)
{
    const char *p = start;
    while (p < end) {
        const char *open = memmem(p, (size_t)(end - p), "{{", 2);
        if (!open) {
            fwrite(p, 1, (size_t)(end - p), out);
            break;
        }
        fwrite(p, 1, (size_t)(open - p), out);
        const char *close = memmem(open, (size_t)(end - open), "}}", 2);
        if (!close)
            break;
        size_t klen = (size_t)(close - open - 2);
        if (klen == 5 && !memcmp(open + 2, "title", 5))
            fputs(title, out);
        else if (klen == 4 && !memcmp(open + 2, "body", 4))
            fputs(body, out);
        else if (klen == 7 && !memcmp(open + 2, "version", 7))
            fputs(version, out);
        else if (klen == 5 && !memcmp(open + 2, "style", 5))
            fwrite(_binary_templates_style_css_start, 1,
                   (size_t)(_binary_templates_style_css_end - _binary_templates_style_css_start), out);
        p = close + 2;
    }
}

/* Inside <code> elements, a <wbr> after each '_' (and each ':' of "::"): a long
 * identifier may break there, and only there, on a narrow screen or a printed page.
 * Copying the name still gives the name. The tag is ours, never archive text. */
static char *code_break_points(const char *html)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    int in_code = 0;
    for (const char *p = html; *p; p++) {
        if (*p == '<') {
            if (!strncmp(p, "<code>", 6) || !strncmp(p, "<code ", 6))
                in_code = 1;
            else if (!strncmp(p, "</code>", 7))
                in_code = 0;
        }
        fputc(*p, f);
        if (in_code && (*p == '_' || (*p == ':' && p[1] != ':' && p > html && p[-1] == ':')) && p[1] != '<')
            fputs("<wbr>", f);
    }
    fclose(f);
    return buf;
}

char *report_html(const char *markdown, const char *title, char *err, size_t errlen)
{
    cmark_gfm_core_extensions_ensure_registered();
    cmark_syntax_extension *table = cmark_find_syntax_extension("table");
    if (!table) {
        snprintf(err, errlen, "cmark-gfm has no table extension: install libcmark-gfm-extensions");
        return NULL;
    }
    /* cmark's own allocator aborts when memory runs out: ours says so in one line (alloc.h). */
    static cmark_mem mem = {attn_calloc, attn_realloc, free};
    cmark_parser *p = cmark_parser_new_with_mem(CMARK_OPT_DEFAULT, &mem);
    cmark_parser_attach_syntax_extension(p, table);
    cmark_parser_feed(p, markdown, strlen(markdown));
    cmark_node *doc = cmark_parser_finish(p);
    char *body = cmark_render_html(doc, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(p));
    cmark_node_free(doc);
    cmark_parser_free(p);
    if (!body) {
        snprintf(err, errlen, "cmark-gfm could not render the report");
        return NULL;
    }
    /* Self-contained: every resource the page loads is a data: URI. Archive strings
     * are escaped before this; this is the last line of defence. */
    for (const char *src = strstr(body, "src=\""); src; src = strstr(src + 5, "src=\""))
        if (strncmp(src + 5, "data:", 5) != 0) {
            snprintf(err, errlen, "the report would load a remote resource; refusing to write it");
            free(body);
            return NULL;
        }
    char *broken = code_break_points(body);
    free(body);
    body = broken;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    char *esc_title = esc_html_dup(title); /* it holds the GPU name and dtype from run.json */
    append_template_part(f, _binary_templates_report_html_start, _binary_templates_report_html_end, esc_title, body,
                         ATTNPROF_VERSION);
    fclose(f);
    free(esc_title);
    free(body);
    return buf;
}

char *report_summary_csv(const analysis *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        attn_oom();
    fputs("variant,status,title,what_changed,ops_per_forward,expected_ops,kernels_per_forward,memcpy_per_forward,"
          "memset_per_forward,"
          "cuda_us_median,cuda_us_min,cuda_us_max,forwards,cpu_us_median,cpu_us_min,cpu_us_max,rel_error,"
          "event_us_cupti_off,event_us_cupti_on,findings\n",
          f);
    for (int i = 0; i < a->n; i++) {
        const variant_analysis *va = &a->v[i];
        const variant_result *r = va->result;
        esc_csv_field(f, r->name, 0);
        fprintf(f, ",%s,", variant_status_name(r->status));
        esc_csv_field(f, r->title, 1);
        fputc(',', f);
        esc_csv_field(f, r->what_changed, 1);
        /* counts of a variant with no forward, and an expectation nobody stated: empty */
        if (va->n_forwards)
            fprintf(f, ",%d", va->ops_per_forward);
        else
            fputc(',', f);
        if (r->expected_ops >= 0)
            fprintf(f, ",%d", r->expected_ops);
        else
            fputc(',', f);
        if (va->n_forwards)
            fprintf(f, ",%d,%d,%d", va->kernels_per_forward, va->memcpy_per_forward, va->memset_per_forward);
        else
            fputs(",,,", f);
        esc_csv_number(f, va->cuda_us.median);
        esc_csv_number(f, va->cuda_us.min);
        esc_csv_number(f, va->cuda_us.max);
        fprintf(f, ",%d", va->n_forwards);
        esc_csv_number(f, va->cpu_us.median);
        esc_csv_number(f, va->cpu_us.min);
        esc_csv_number(f, va->cpu_us.max);
        esc_csv_number(f, r->rel_error);
        esc_csv_number(f, r->event_us_no_cupti);
        esc_csv_number(f, r->event_us_cupti);
        fputc(',', f);
        /* plain text: the findings' Markdown (backticks, escapes) read back */
        char *all = NULL;
        size_t all_len = 0;
        FILE *af = open_memstream(&all, &all_len);
        if (!af)
            attn_oom();
        for (int k = 0; k < va->n_findings; k++) {
            char plain[640];
            if (va->meta[k].text[0]) /* from the data, not from the Markdown */
                findings_plain(va->meta[k].text, plain, sizeof plain);
            else {
                char *p = md_to_plain(va->findings[k]);
                esc_copy_utf8(plain, sizeof plain, p);
                free(p);
            }
            fprintf(af, "%s%s", k ? "; " : "", plain);
        }
        fclose(af);
        esc_csv_field(f, all, 1);
        free(all);
        fputc('\n', f);
    }
    fclose(f);
    return buf;
}

/* ---- shared with the other documents (compare) -------------------------- */

void report_md_figure(FILE *f, const figure_list *figs, const char *name, const char *inline_dir)
{
    figure(f, figs, name, inline_dir);
}

