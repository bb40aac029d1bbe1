/* The report's header: the title line, the table of what the run was (GPU, software, clocks
 * measured, measurement plan, host, build, shape, run, tool, records) and the paragraph saying
 * how CUDA time, CPU time and the error were measured. A recorded run and an import have a
 * header each: an import says "not recorded" for what Kineto traces do not hold. */
#include "report_md.h"

#include "escape.h"
#include "units.h"
#include "measurement_text.h"
#include "model_inputs.h"
#include "model_roles.h"

#include <stdio.h>
#include <string.h>

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
                d->major, d->minor, d->sm_count, d->total_mem / 1073741824.0, REPORT_NOT_RECORDED);
    } else
        fprintf(f, "| GPU | %s (the trace has no deviceProperties) |\n", REPORT_NOT_RECORDED);
    char rt[32], drv[32];
    if (r->cuda_runtime_version > 0)
        snprintf(rt, sizeof rt, "%d.%d", r->cuda_runtime_version / 1000, r->cuda_runtime_version % 1000 / 10);
    else
        snprintf(rt, sizeof rt, "%s", REPORT_NOT_RECORDED);
    if (r->cuda_driver_version > 0)
        snprintf(drv, sizeof drv, "%d.%d", r->cuda_driver_version / 1000, r->cuda_driver_version % 1000 / 10);
    else
        snprintf(drv, sizeof drv, "%s", REPORT_NOT_RECORDED);
    char cupti[32];
    if (r->cupti_version > 0)
        snprintf(cupti, sizeof cupti, "%d", r->cupti_version);
    else
        snprintf(cupti, sizeof cupti, "%s", REPORT_NOT_RECORDED);
    fprintf(f, "| Software | CUDA runtime %s (driver API %s), CUPTI %s; driver, cuBLAS and cuDNN versions %s |\n", rt,
            drv, cupti, REPORT_NOT_RECORDED);
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
                   "declare it with `import --shape`) |\n", REPORT_NOT_RECORDED);
    /* a training step (backward work in the range) is a step, not a forward */
    const char *unit = model_unit_word_of_run(a);
    char upto[64];
    fputs("| Run | recorded ", f);
    esc_md_text(f, r->date[0] ? r->date : REPORT_NOT_RECORDED);
    fprintf(f, "; up to %s per variant; seed, warm-up %ss, correctness against FP64 and timings with the "
               "profiler off %s |\n",
            units_count_noun(r->iters, unit, upto, sizeof upto), unit, REPORT_NOT_RECORDED);
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
    char ops[64], apis[64], ranges[64];
    fprintf(f, "| Records | %s, %s, %s and CPU ops (%ss from ",
            units_count_noun((double)a->trace->n_ops, "GPU operation", ops, sizeof ops),
            units_count_noun((double)a->trace->n_apis, "API call", apis, sizeof apis),
            units_count_noun((double)a->trace->n_ranges, "host range", ranges, sizeof ranges), unit);
    esc_md_text(f, r->marker_source[0] ? r->marker_source : "–");
    fputs(") |\n\n", f);
    fprintf(f, "CUDA time per %s is the sum of the durations of the GPU operations launched inside the "
               "%s's range (Kineto's CUPTI timestamps, matched by correlation id); CPU time is the duration of "
               "the range on the host%s.%s\n\n",
            unit, unit, r->producer == PRODUCER_PYTORCH ? ", PyTorch's dispatcher and the profiler's own cost included" : "",
            r->producer == PRODUCER_PYTORCH ? " Elementwise kernels are named by the ATen op that launched them." : "");
}

/* The title line, then the GPU and Software rows. */
static void header_device(FILE *f, const run_info *r)
{
    fputs("# attnprof — ", f);
    esc_md_text(f, r->device.name);
    fprintf(f, ", %d×%d×%d×%d ", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
    esc_md_text(f, r->dtype);
    fprintf(f, " %s\n\n", r->causal ? "causal" : "");
    char cublas[32], cudnn[32];
    units_version_text(r->cublas_version, "–", cublas, sizeof cublas);
    units_version_text(r->cudnn_version, "–", cudnn, sizeof cudnn);
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
}

/* The architectures the recorder's kernels were compiled for, as its objects said
 * (run.json build.arches). Archives from before that field hold only the Makefile's flag
 * string, whose sm_90a part was written whether or not the object was built with it; for them
 * the trace is the evidence: a Hopper flash kernel that ran was compiled in. */
static void build_arches_text(FILE *f, const analysis *a)
{
    const run_env *e = &a->run->env;
    if (e->build_arches[0]) {
        int sm90a = strstr(e->build_arches, "sm_90a") != NULL;
        fputs("kernels compiled for ", f);
        esc_md_text(f, e->build_arches);
        fputs(sm90a ? " (sm_90a: the Hopper flash kernels are in)" : " (no sm_90a: the Hopper flash kernels are not in)",
              f);
        return;
    }
    for (size_t i = 0; i < a->trace->n_ops; i++)
        if (a->trace->ops[i].name && !strncmp(a->trace->ops[i].name, "attnprof_flash_fwd_sm90a_", 25)) {
            fputs("sm_90a Hopper flash kernels compiled in (one ran: ", f);
            esc_md_code(f, a->trace->ops[i].name, 0);
            fputs(")", f);
            return;
        }
    fputs("whether the sm_90a Hopper flash kernels were compiled in: not recorded", f);
}

/* The flag string without its part for kernels/flash_fwd_sm90a.cu, which archives from before
 * build.arches carry from the Makefile whether or not that object was compiled with it. */
static void build_flags_compiled(const run_env *e, char *out, size_t n)
{
    snprintf(out, n, "%s", e->build_flags);
    char *part = strstr(out, "; kernels/flash_fwd_sm90a.cu:");
    if (!part)
        return;
    const char *rest = strstr(part + 2, "; ");
    memmove(part, rest ? rest : "", strlen(rest ? rest : "") + 1);
}

/* The rows of what was measured alongside: clocks, the measurement plan, host and build. */
static void header_environment(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
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
        build_arches_text(f, a);
        fputs("; ", f);
        char flags[sizeof e->build_flags];
        build_flags_compiled(e, flags, sizeof flags);
        esc_md_code(f, flags, 1);
    } else {
        fputs("nvcc version and build flags: not recorded", f);
    }
    fputs(" |\n", f);
}

/* The Shape, Run, Tool and Records rows. */
static void header_run(FILE *f, const analysis *a)
{
    const run_info *r = a->run;
    fprintf(f, "| Shape | B=%d, H=%d, S=%d, D=%d, ", r->shape.batch, r->shape.heads, r->shape.seq, r->shape.dim);
    esc_md_text(f, r->dtype);
    fprintf(f, ", %s, scale 1/√D |\n", r->causal ? "causal" : "not causal");
    fputs("| Run | ", f);
    esc_md_text(f, r->date);
    /* with a measurement plan the count is per pass, or the stop rule's (each variant's own) */
    if (r->measurement.recorded && !strcmp(r->measurement.iters_rule, "auto")) {
        char warm[48];
        fprintf(f, "; seed %llu; %s per variant, then recorded forwards until the stop rule ended "
                   "(Measurement); rel. error threshold %.0e |\n",
                r->seed, units_count_noun(r->warmup, "warm-up forward", warm, sizeof warm), r->rel_error_threshold);
    } else if (r->measurement.recorded)
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
    char ops[64], apis[64], ranges[64];
    fprintf(f, "| Records | %s, %s, %s (from ", units_count_noun((double)a->trace->n_ops, "GPU operation", ops, sizeof ops),
            units_count_noun((double)a->trace->n_apis, "API call", apis, sizeof apis),
            units_count_noun((double)a->trace->n_ranges, "NVTX range", ranges, sizeof ranges));
    esc_md_text(f, r->marker_source[0] ? r->marker_source : "–");
    fputs(") |\n\n", f);
}

/* How the numbers were measured, and which query rows the error check read. */
static void header_method(FILE *f, const run_info *r)
{
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
    char heads[32];
    if (checked)
        units_count_noun(checked->heads_checked, "head", heads, sizeof heads);
    if (checked && checked->rows_checked >= r->shape.seq)
        fprintf(f, " (%s, every query row)", heads);
    else if (checked)
        fprintf(f, " (%s, %d of %d query rows each: rows at both ends of the causal mask and the rest "
                   "spread over the head at seeded offsets)", heads, checked->rows_checked, r->shape.seq);
    fputs(".\n\n", f);
}

void report_header_md(FILE *f, const analysis *a)
{
    if (a->run->imported) {
        header_imported(f, a);
        return;
    }
    header_device(f, a->run);
    header_environment(f, a);
    header_run(f, a);
    header_method(f, a->run);
}
