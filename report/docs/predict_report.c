/* The report's "Predict, then verify" section in Markdown: the counter pass's status and
 * the ceilings, then per variant its checks (prediction | measured | verdict) with the
 * missed ones first, and the counters of each kernel. Words only; the numbers come from
 * predict.c. */
#include "units.h"
#include "predict_report.h"

#include "escape.h"
#include "findings.h"
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Archive strings (labels, reasons, metric names) as Markdown text. */
static void plain(FILE *f, const char *s) { esc_md_text(f, s); }

static const char *mark(pv_verdict v)
{
    switch (v) {
    case PV_OK:
        return "✔";
    case PV_MISS:
        return "✘";
    case PV_NA:
        return "n/a";
    case PV_INCONSISTENT:
        return "⚠ inconsistent";
    case PV_L2_SERVED:
        return "✔ L2";
    case PV_WITHIN_FLOOR:
        return "– (a kernel's own traffic)";
    case PV_REPLAY_WRITES:
        return "✔ replay";
    case PV_LIBRARY_MEMSET:
        return "✔ + library Memset";
    case PV_INFO:
        break;
    }
    return "–";
}

static const char *flops_text(double x, char *b, size_t n)
{
    if (!isfinite(x))
        snprintf(b, n, "not measured");
    else if (x >= 1e12)
        snprintf(b, n, "%.3g TFLOP", x / 1e12);
    else if (x >= 1e9)
        snprintf(b, n, "%.3g GFLOP", x / 1e9);
    else
        snprintf(b, n, "%.3g MFLOP", x / 1e6);
    return b;
}

static const char *bytes_text(double x, char *b, size_t n)
{
    if (!isfinite(x))
        snprintf(b, n, "not measured");
    else
        human_bytes(x, b, n);
    return b;
}

static void gap(FILE *f, const pv_check *c)
{
    if (isfinite(c->measured) && c->predicted > 0 && c->kind != PV_PIPE && c->kind != PV_REGIME &&
        c->kind != PV_COUNT && c->kind != PV_OPS)
        fprintf(f, " (%+.1f%%)", 100 * (c->measured / c->predicted - 1));
}

static void check_row(FILE *f, const pv_check *c)
{
    char p[64], m[64];
    const int bold = c->verdict == PV_MISS || c->verdict == PV_INCONSISTENT;
    fputs(bold ? "| **" : "| ", f);
    if (strcmp(c->cls, "forward")) {
        plain(f, c->cls);
        fputs(": ", f);
    }
    const char *end = bold ? "**" : "";
    switch (c->kind) {
    case PV_OPS:
        fprintf(f, "GPU operations per forward%s | %.0f | %.0f (trace)", end, c->predicted, c->measured);
        break;
    case PV_COUNT:
        fprintf(f, "kernels%s | %.0f | ", end, c->predicted);
        if (isfinite(c->measured))
            fprintf(f, "%.0f", c->measured);
        else
            fputs("not measured", f);
        break;
    case PV_DRAM:
        fprintf(f, "DRAM bytes (read + write)%s | %s | %s", end, bytes_text(c->predicted, p, sizeof p),
                bytes_text(c->measured, m, sizeof m));
        if (c->verdict == PV_REPLAY_WRITES) {
            gap(f, c);
            fprintf(f, "; %s (%+.1f%%) with the writes capped at the whole forward's %s", bytes_text(c->aux, m, sizeof m),
                    100 * (c->aux / c->predicted - 1), bytes_text(c->aux2, p, sizeof p));
            fprintf(f, " | %s |\n", mark(c->verdict));
            return;
        }
        break;
    case PV_L2:
        fprintf(f, "L2 ↔ SM bytes%s | %s | %s", end, bytes_text(c->predicted, p, sizeof p),
                bytes_text(c->measured, m, sizeof m));
        break;
    case PV_FLOPS:
        fprintf(f, "FLOPs%s | %s | %s", end, flops_text(c->predicted, p, sizeof p), flops_text(c->measured, m, sizeof m));
        break;
    case PV_PIPE:
        fprintf(f, "pipe%s | %s | ", end,
                c->predicted == PIPE_TENSOR ? "tensor cores" : "FP32 FMA pipes, no tensor-core math");
        if (!isfinite(c->measured))
            fputs("not measured", f);
        else if (c->predicted == PIPE_TENSOR)
            fprintf(f, "%.4g tensor instructions (%.4g HGMMA), %s on FP32 pipes", c->measured, c->aux2,
                    flops_text(c->aux, m, sizeof m));
        else
            fprintf(f, "%s of tensor-core math (bf16), %s on FP32 pipes; %.4g tensor-pipe instructions",
                    flops_text(c->measured, p, sizeof p), flops_text(c->aux, m, sizeof m), c->aux2);
        break;
    case PV_REGIME:
        fprintf(f, "regime%s | %s-bound (%.0f FLOP/B %s ridge %.0f FLOP/B) | ", end, c->predicted ? "compute" : "memory",
                c->aux, c->predicted ? ">" : "≤", c->aux2);
        if (c->verdict == PV_INCONSISTENT) {
            /* Never a verdict: say which share passes its roof and by how much. */
            fprintf(f, "**measurement inconsistent**: %.0f%% of the compute roof, %.0f%% of the copy roof "
                       "(kernels' FLOPs and DRAM bytes over kernels' time)",
                    100 * c->frac_compute, 100 * c->frac_dram);
            if (c->frac_dram > 1 + PV_TOL_ROOF)
                fprintf(f, "; the kernels moved %.2f TB/s, above the %.2f TB/s copy roof measured in this run",
                        c->scope_dram / c->scope_seconds / 1e12, c->roof_tbps);
            if (c->frac_compute > 1 + PV_TOL_ROOF)
                fprintf(f, "; the kernels ran %.1f TFLOP/s, above the %.1f TFLOP/s compute roof measured in this run",
                        c->scope_flops / c->scope_seconds / 1e12, c->roof_tflops);
            fputs(": a roof that is passed is no upper bound, so the ceiling pass or the counter pass misread "
                  "this forward (no tolerance above 100%)", f);
        } else if (isfinite(c->measured))
            fprintf(f, "%s-bound: %.0f%% of the compute roof, %.0f%% of the copy roof (kernels' FLOPs and DRAM "
                       "bytes over kernels' time)",
                    c->measured ? "compute" : "memory", 100 * c->frac_compute, 100 * c->frac_dram);
        else
            fputs("not measured", f);
        break;
    }
    gap(f, c);
    fprintf(f, " | %s |\n", mark(c->verdict));
}

static void kernel_table(FILE *f, const counters_set *cs, const char *variant)
{
    int any = 0;
    char r[32], w[32], l2[32], fl[32];
    for (int i = 0; i < cs->n; i++) {
        const counter_range *k = &cs->r[i];
        if (strcmp(k->variant, variant))
            continue;
        if (!any++)
            fputs("| Range | Duration | DRAM read | DRAM written | L2 ↔ SM | FLOPs (tensor + FP32) | Tensor inst. | "
                  "Achieved occupancy | SM % of peak | DRAM % of peak |\n|---|---|---|---|---|---|---|---|---|---|\n",
                  f);
        fputs("| ", f);
        char shortname[256];
        short_kernel_name(k->name, shortname, sizeof shortname);
        if (strcmp(k->kind, "forward"))
            esc_md_code(f, shortname[0] ? shortname : k->name, 1);
        else
            fputs("whole forward", f);
        double fl_all = counters_flops(k);
        fprintf(f, " | %.1f µs | %s | %s | %s | %s | %.4g | %.1f%% | %.1f%% | %.1f%% |\n", k->v[M_DURATION_NS] / 1e3,
                bytes_text(k->v[M_DRAM_READ], r, sizeof r), bytes_text(k->v[M_DRAM_WRITE], w, sizeof w),
                bytes_text(counters_l2_bytes(k), l2, sizeof l2), flops_text(fl_all, fl, sizeof fl),
                k->v[M_TENSOR_INST], k->v[M_WARPS_ACTIVE_PCT], k->v[M_SM_THROUGHPUT_PCT],
                k->v[M_DRAM_THROUGHPUT_PCT]);
    }
    if (any)
        fputs("\n", f);
}

/* The two DRAM verdicts that are neither ✔ nor ✘, said once, where a table below holds one. */
static void verdict_legend(FILE *f, const analysis *a)
{
    int served = 0, small = 0, replay = 0, memset = 0;
    for (int i = 0; i < a->n; i++) {
        pv_variant pv;
        predict_variant(a, i, &pv);
        for (int k = 0; k < pv.n; k++) {
            served += pv.c[k].verdict == PV_L2_SERVED;
            small += pv.c[k].verdict == PV_WITHIN_FLOOR;
            replay += pv.c[k].verdict == PV_REPLAY_WRITES;
            memset += pv.c[k].verdict == PV_LIBRARY_MEMSET;
        }
    }
    char l2[32];
    if (served)
        fprintf(f, "✔ L2: a class moved fewer DRAM bytes than its minimum, and that minimum fits in this GPU's "
                   "%s L2: the forward's earlier kernels left its operands there, so the DRAM minimum does not "
                   "bind (a miss only above the minimum by more than %.0f%%). ",
                human_bytes(a->run->device.l2_bytes, l2, sizeof l2), 100 * PV_TOL_DRAM);
    if (small)
        fprintf(f, "– (a kernel's own traffic): DRAM bytes within %.0f KiB of the prediction per kernel of the class "
                   "are shown, not judged: that much a kernel moves of its own (its code, parameters and constants) "
                   "or is counted for the L2's write-backs of earlier kernels' data. ",
                PV_DRAM_FLOOR_PER_KERNEL / 1024);
    if (replay)
        fputs("✔ replay: under kernel replay a class's kernels were counted writing more DRAM bytes than the whole "
              "forward wrote (measured once, under user replay): kernel replay restores device memory before each "
              "pass, and the restored lines are written back from the L2 while the kernel runs. Judged with the "
              "class's writes capped at the whole forward's, the class is within its minimum. ",
              f);
    if (memset)
        fputs("✔ + library Memset: the forward ran the expected operations plus as many Memsets, which a library "
              "issued for its own workspace at this shape (the findings name the library and the launch after "
              "each); they are the library's choice of algorithm, not the variant's. ",
              f);
    if (served || small || replay || memset)
        fputs("\n\n", f);
}

/* The ceilings the checks are judged against, or why there are none. */
static void ceilings_paragraph(FILE *f, const ceilings *c)
{
    if (c->measured) {
        if (c->source[0]) {
            fputs("Ceilings measured on the same GPU (the same UUID) in the archive ", f);
            esc_md_code(f, c->source, 0);
            fputs(", not again in this run", f);
        } else
            fputs("Ceilings measured in this run", f);
        fprintf(f, ": %.0f TFLOP/s bf16 tensor-core GEMM, %.1f TFLOP/s FP32 FMA "
                   "(SGEMM), %.2f TB/s device-to-device copy; ridge point %.0f FLOP per DRAM byte",
                c->tensor_bf16_tflops, c->fp32_fma_tflops, c->copy_tbps, ceilings_ridge(c));
        if (c->method[0]) {
            fputs(" (", f);
            plain(f, c->method);
            fputs(")", f);
        }
        fputs(".\n\n", f);
    } else if (c->error[0]) {
        fputs("Ceilings not measured: ", f);
        plain(f, c->error);
        fputs(".\n\n", f);
    }
}

void predict_write_markdown(FILE *f, const analysis *a)
{
    const counters_meta *m = &a->run->counters.meta;
    const ceilings *c = &a->run->ceilings;
    int unmeasured = 0; /* variants with a "counters" fact: skipped (--counters-max-gib) or failed */
    for (int i = 0; i < a->run->n_variants; i++)
        for (int k = 0; k < a->run->variants[i].facts.n; k++)
            unmeasured += !strcmp(a->run->variants[i].facts.item[k].key, "counters");
    fputs("## Predict, then verify\n\n", f);
    fprintf(f, "Each variant states before it runs what one forward should cost at this shape (FLOPs, minimum DRAM "
               "bytes per class of kernels, the pipe of each GEMM, operations per forward, the regime); the counter "
               "pass measures one forward of each variant%s, per kernel, after the timed pass.\n\n",
            unmeasured ? " but those named below" : "");
    switch (m->status) {
    case CTR_OK:
        fputs("Counters", f);
        if (m->chip[0]) {
            fputs(" (chip ", f);
            plain(f, m->chip);
            fputs(")", f);
        }
        fprintf(f, ": %d replay pass%s per kernel, %.1f s for the whole pass", m->passes, m->passes == 1 ? "" : "es",
                m->pass_seconds);
        if (m->method[0]) {
            fputs("; ", f);
            plain(f, m->method);
        }
        fputs(". ", f);
        for (int i = 0; i < a->run->n_variants; i++) /* a variant the pass skipped or failed says why */
            for (int k = 0; k < a->run->variants[i].facts.n; k++) {
                const attn_fact *fa = &a->run->variants[i].facts.item[k];
                if (strcmp(fa->key, "counters"))
                    continue;
                esc_md_code(f, a->run->variants[i].name, 0);
                fputs(": ", f);
                plain(f, fa->value);
                fputs(". ", f);
            }
        {
            int n = 0;
            for (int i = 0; i < M_COUNT; i++)
                if (!m->available[i])
                    fprintf(f, "%s`%s`", n++ ? ", " : "Not available on this chip: ", counters_metric_names[i]); /* ours */
            fputs(n ? ".\n\n" : "\n\n", f);
        }
        break;
    case CTR_FORBIDDEN:
        fputs("**No hardware counters: the GPU refused them** (", f);
        plain(f, m->reason);
        fputs("). Predictions are listed without measurements.\n\n", f);
        break;
    case CTR_FAILED:
        fputs("**The counter pass failed** (", f);
        plain(f, m->reason);
        fputs("). Predictions are listed without measurements.\n\n", f);
        break;
    case CTR_NOT_RUN:
        fputs("No counter pass in this run (`--no-counters`, or an archive from before it).\n\n", f);
        break;
    }
    ceilings_paragraph(f, c);
    verdict_legend(f, a);
    for (int i = 0; i < a->n; i++) {
        pv_variant pv;
        predict_variant(a, i, &pv);
        if (!pv.n)
            continue;
        fputs("### ", f);
        esc_md_code(f, pv.result->name, 0);
        fputs("\n\n| Prediction | Predicted | Measured | |\n|---|---|---|---|\n", f);
        /* Missed predictions first: the interesting lines. */
        for (int pass = 0; pass < 2; pass++)
            for (int k = 0; k < pv.n; k++)
                if ((pv.c[k].verdict == PV_MISS || pv.c[k].verdict == PV_INCONSISTENT) == (pass == 0))
                    check_row(f, &pv.c[k]);
        fputs("\n", f);
        kernel_table(f, &a->run->counters, pv.result->name);
    }
}
