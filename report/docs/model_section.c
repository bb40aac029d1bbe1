/* roles.csv and the report's "Model" section (model_section.h), written from the model
 * view of each imported trace (model_roles.h) and its recorded attention inputs
 * (model_inputs.h): the role table per trace, the attention that ran, the layers, and
 * for two or more traces in one archive their roles side by side. */
#include "model_section.h"
#include "alloc.h"

#include "escape.h"
#include "findings.h"
#include "model_inputs.h"
#include "model_roles.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


char *model_roles_csv(const analysis *a)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    fputs("variant,phase,role,implementation,ops_per_step,cuda_us_per_step,share,steps\n", f);
    for (int i = 0; i < a->n; i++) {
        model_view *v = malloc(sizeof *v);
        if (!v)
            attn_oom();
        if (model_view_build(&a->v[i], v) == 0)
            for (int k = 0; k < v->n_rows; k++) {
                const model_role_row *r = &v->rows[k];
                esc_csv_field(f, a->v[i].result->name, 0);
                fprintf(f, ",%s,%s,", model_phase_name(r->phase), model_role_name(r->role));
                esc_csv_field(f, r->implementation, 0);
                esc_csv_number(f, r->ops);
                fprintf(f, ",%.3f", r->us);
                esc_csv_number(f, r->share);
                fprintf(f, ",%d\n", v->n_steps);
            }
        free(v);
    }
    fclose(f);
    return buf;
}

static void md_share(FILE *f, double share)
{
    if (isfinite(share))
        fprintf(f, "%.1f%%", 100.0 * share);
    else
        fputs("not computed (no CUDA time)", f);
}

static void shapes_line(FILE *f, const variant_result *r, const model_view *v)
{
    model_attn_inputs m;
    if (!model_inputs_of(r, &m) && v->graph_ops) {
        fputs("- Attention inputs: not recorded (the work was replayed from CUDA graphs: a graph launch carries no "
              "op, so record_shapes has no op to record the shapes of).\n", f);
        return;
    }
    if (!model_inputs_of(r, &m)) {
        fputs("- Attention inputs: not recorded (profile with `record_shapes=True` to read B, H, S and D from the "
              "trace).\n", f);
        return;
    }
    fprintf(f, "- Attention inputs (record_shapes, the trace's first attention): B=%d, Hq=%d, Hkv=%d", m.batch,
            m.heads_q, m.heads_kv_model > 0 ? m.heads_kv_model : m.heads_kv);
    if (m.heads_kv_model > 0) {
        fprintf(f, " (GQA: %d query heads per KV head; the model's %d KV heads are repeated to %d by ",
                m.heads_q / m.heads_kv_model, m.heads_kv_model, m.heads_kv);
        esc_md_code(f, m.expand_op, 0);
        fputs(" before attention, the copies in the role `gqa_expansion`)", f);
    } else if (m.kind == MODEL_ATTN_EAGER)
        fputs(" (the keys as the QKᵀ matmul sees them, after any repeat of KV heads)", f);
    else if (strcmp(m.op, "aten::scaled_dot_product_attention") && m.heads_q == m.heads_kv)
        fputs(" (the keys as the backend op sees them, after any repeat of KV heads)", f);
    else if (m.heads_q != m.heads_kv && m.heads_kv > 0 && m.heads_q % m.heads_kv == 0)
        fprintf(f, " (GQA: %d query heads per KV head%s)", m.heads_q / m.heads_kv,
                m.gqa == 1 ? ", SDPA's enable_gqa" : "");
    fprintf(f, ", S_q=%d, S_kv=%d, D=%d, ", m.seq_q, m.seq_kv, m.dim);
    esc_md_text(f, m.dtype);
    if (m.mask[0]) {
        fputs(", a mask (", f);
        esc_md_text(f, m.mask);
        fputs(m.causal == 1 ? ") and is_causal" : "), not is_causal", f);
    } else
        fputs(m.causal == 1 ? ", causal" : m.causal == 0 ? ", no mask, not causal" : "", f);
    fputs("; read from ", f);
    esc_md_code(f, m.op, 0);
    fputs(".\n", f);
}

/* A compiled trace: how many of the representative step's operations are Inductor's kernels,
 * and which ops the ones feeding attention fused (read off their names). */
static void inductor_line(FILE *f, const variant_analysis *va)
{
    const forward *fw = &va->forwards[analysis_median_forward(va)];
    model_role *role = malloc(((size_t)fw->n_ops + 1) * sizeof *role);
    model_phase *phase = malloc(((size_t)fw->n_ops + 1) * sizeof *phase);
    if (!role || !phase)
        attn_oom();
    int oop, n = 0, feeding = 0;
    model_step_roles(fw, role, phase, &oop);
    char fused[3][320];
    int n_fused = 0;
    for (int k = 0; k < fw->n_ops; k++) {
        char kind[8];
        const char *ops;
        size_t len;
        if (!model_inductor_kernel(fw->ops[k], kind, &ops, &len))
            continue;
        n++;
        if (role[k] != MROLE_ATTN_INPUTS)
            continue;
        feeding++;
        char one[320];
        snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), ops);
        int seen = 0;
        for (int j = 0; j < n_fused; j++)
            seen |= !strcmp(fused[j], one);
        if (!seen && n_fused < 3)
            snprintf(fused[n_fused++], sizeof fused[0], "%s", one);
    }
    free(role), free(phase);
    if (!n)
        return;
    fprintf(f, "- Compiled (torch.compile): %d of the representative step's %d operations are Triton kernels Inductor "
               "generated (implementation `Triton (Inductor)`)", n, fw->n_ops);
    if (feeding) {
        fprintf(f, "; %d of them compute attention's inputs (role `attention_inputs`, not attention), fusing ", feeding);
        for (int j = 0; j < n_fused; j++) {
            fputs(j ? "; " : "", f);
            esc_md_code(f, fused[j], 0);
        }
    }
    fputs(".\n", f);
}

static void variant_model(FILE *f, const analysis *a, const variant_analysis *va, const model_view *v)
{
    fputs("### ", f);
    esc_md_code(f, va->result->name, 0);
    fputs("\n\n", f);
    if (v->backend && v->attn_kernel) {
        char kn[FINDING_NAME_MAX + 8];
        findings_short_name(v->attn_kernel->name, kn, sizeof kn);
        fputs("- Attention implementation: ", f);
        esc_md_text(f, v->backend);
        fputs(" (its longest kernel ", f);
        esc_md_code(f, kn, 0);
        int sm = model_kernel_sm(v->attn_kernel->name);
        int dev = a->run->device.major * 10 + a->run->device.minor;
        if (sm && dev > 0)
            fprintf(f, ", built for sm_%d on this compute capability %d.%d GPU%s", sm, a->run->device.major,
                    a->run->device.minor, sm == dev ? "" : ": not the GPU's own architecture");
        fputs(").\n", f);
    } else if (v->eager_blocks) {
        fprintf(f, "- Attention implementation: eager, %d block%s per step of QKᵀ GEMM, scale, mask, softmax and PV "
                   "GEMM as separate kernels (the series' naive variant), the mask %s.\n",
                v->eager_blocks, v->eager_blocks == 1 ? "" : "s",
                v->eager_out_of_place_mask ? "with an out-of-place `aten::masked_fill` (a copy of the scores)"
                                           : "without an out-of-place `aten::masked_fill` copy");
    } else
        fputs("- Attention implementation: no attention recognised (no SDPA or FlexAttention op, no fused attention "
              "kernel, no softmax between two matmuls).\n", f);
    shapes_line(f, va->result, v);
    inductor_line(f, va);
    if (v->graph_ops)
        fprintf(f, "- Replayed from CUDA graphs: %d of the representative step's %d operations ran under "
                   "`cudaGraphLaunch`; graph replay hides the op chain that captured them, so their roles come from "
                   "their kernel names alone.\n", v->graph_ops, v->step_ops);
    fprintf(f, "- Attention's share of the step's CUDA time (median over %d step%s of ", v->n_steps,
            v->n_steps == 1 ? "" : "s");
    fprintf(f, "%.1f µs CUDA time): ", v->step_us);
    int phases = v->has_phase[MPHASE_BACKWARD] || v->has_phase[MPHASE_OPTIMIZER];
    md_share(f, v->attn_share_total);
    if (phases) {
        fputs(" (forward ", f);
        md_share(f, v->attn_share[MPHASE_FORWARD]);
        fputs(", backward ", f);
        md_share(f, v->attn_share[MPHASE_BACKWARD]);
        fputs(")", f);
    }
    fputs(".\n\n", f);
    fputs("| Phase | Role | Implementation | Ops / step | CUDA µs / step | Share of step |\n|---|---|---|---|---|---|\n",
          f);
    for (int k = 0; k < v->n_rows; k++) {
        const model_role_row *r = &v->rows[k];
        fprintf(f, "| %s | %s | ", model_phase_name(r->phase), model_role_name(r->role));
        esc_md_text(f, r->implementation[0] ? r->implementation : "–");
        fprintf(f, " | %g | %.1f | ", r->ops, r->us);
        md_share(f, r->share);
        fputs(" |\n", f);
    }
    fputs("\n", f);
    /* the search runs over the forward phase's operations: a training step's own words for them */
    int step = !strcmp(model_unit_word(va), "step");
    const char *searched = step ? "the forward phase's" : "the forward's";
    if (v->n_layers >= 2) {
        char period[48], times[32];
        units_count_noun(v->layer_period, "operation", period, sizeof period);
        units_count_noun(v->n_layers, "time", times, sizeof times);
        fprintf(f, "Repeated blocks (layers): %s operations repeat with a period of %s, %s, from %s operation %d on "
                   "(the representative step%s); attention per block:\n\n",
                searched, period, times, step ? "forward-phase" : "forward", v->layer_first_op + 1,
                step ? "; the backward phase is not searched" : "");
        fputs("| Block | Ops | CUDA µs | Attention µs | Attention share of block | of step |\n|---|---|---|---|---|---|\n",
              f);
        const forward *rf = &va->forwards[analysis_median_forward(va)];
        for (int l = 0; l < v->n_layers; l++) {
            const model_layer *L = &v->layers[l];
            fprintf(f, "| %d | %d | %.1f | %.1f | ", l, L->ops, L->us, L->attn_us);
            md_share(f, L->us > 0 ? L->attn_us / L->us : NAN);
            fputs(" | ", f);
            md_share(f, rf->cuda_us > 0 ? L->attn_us / rf->cuda_us : NAN);
            fputs(" |\n", f);
        }
        fputs("\n", f);
    } else if (v->forward_ops > MODEL_MAX_LAYER_OPS)
        fprintf(f, "Repeated blocks (layers) not searched: the representative step's %s has %d operations, above "
                   "the %d the search takes (it is quadratic in them).\n\n",
                step ? "forward phase" : "forward", v->forward_ops, MODEL_MAX_LAYER_OPS);
    else
        fprintf(f, "No repeated block of operations found in the %s (no layers numbered).\n\n",
                step ? "forward phase" : "forward");
}

static const model_role_row *find_row(const model_view *v, int phase, int role)
{
    for (int k = 0; k < v->n_rows; k++)
        if ((int)v->rows[k].phase == phase && (int)v->rows[k].role == role)
            return &v->rows[k];
    return NULL;
}

/* Two or more traces in one archive: their roles side by side, each against the first. */
static void side_by_side(FILE *f, const analysis *a, model_view *const *views, const int *vi, int n)
{
    fputs("### Role by role\n\nCUDA µs per step (median) and share of the step for each trace; the ratio is each "
          "trace's time against the first's (", f);
    esc_md_code(f, a->v[vi[0]].result->name, 0);
    fputs("); – where a trace has no operation of the role.\n\n| Phase | Role |", f);
    for (int j = 0; j < n; j++) {
        fputc(' ', f);
        esc_md_code(f, a->v[vi[j]].result->name, 1);
        fputs(" |", f);
        if (j)
            fputs(" ratio |", f);
    }
    fputs("\n|---|---|", f);
    for (int j = 0; j < n; j++)
        fputs(j ? "---|---|" : "---|", f);
    fputs("\n", f);
    for (int p = 0; p < MPHASE_COUNT; p++)
        for (int r = 0; r < MROLE_COUNT; r++) {
            int any = 0;
            for (int j = 0; j < n; j++)
                any |= find_row(views[j], p, r) != NULL;
            if (!any)
                continue;
            fprintf(f, "| %s | %s |", model_phase_name((model_phase)p), model_role_name((model_role)r));
            const model_role_row *first = find_row(views[0], p, r);
            for (int j = 0; j < n; j++) {
                const model_role_row *row = find_row(views[j], p, r);
                if (row) {
                    fprintf(f, " %.1f (", row->us);
                    md_share(f, row->share);
                    fputs(") |", f);
                } else
                    fputs(" – |", f);
                if (j) {
                    if (row && first && first->us > 0)
                        fprintf(f, " %.2f× |", row->us / first->us);
                    else
                        fputs(" – |", f);
                }
            }
            fputs("\n", f);
        }
    fputs("| all | attention |", f);
    for (int j = 0; j < n; j++) {
        double us = 0;
        for (int p = 0; p < MPHASE_COUNT; p++)
            us += views[j]->attn_us[p];
        fprintf(f, " %.1f (", us);
        md_share(f, views[j]->attn_share_total);
        fputs(") |", f);
        if (j) {
            double u0 = 0;
            for (int p = 0; p < MPHASE_COUNT; p++)
                u0 += views[0]->attn_us[p];
            if (u0 > 0)
                fprintf(f, " %.2f× |", us / u0);
            else
                fputs(" – |", f);
        }
    }
    fputs("\n| all | step |", f);
    for (int j = 0; j < n; j++) {
        fprintf(f, " %.1f |", views[j]->step_us);
        if (j)
            fprintf(f, views[0]->step_us > 0 ? " %.2f× |" : " – |", views[j]->step_us / views[0]->step_us);
    }
    fputs("\n\n", f);
}

void model_section_md(FILE *f, const analysis *a)
{
    if (!a->run->imported)
        return;
    enum { SIDE_MAX = 4 };
    model_view *views[SIDE_MAX] = {0};
    int vi[SIDE_MAX], n_side = 0;
    model_view *v = malloc(sizeof *v);
    if (!v)
        attn_oom();
    int header = 0;
    for (int i = 0; i < a->n; i++) {
        if (model_view_build(&a->v[i], v) != 0)
            continue;
        if (n_side < SIDE_MAX) {
            views[n_side] = malloc(sizeof *v);
            if (!views[n_side])
                attn_oom();
            *views[n_side] = *v;
            vi[n_side++] = i;
        }
        if (!header) {
            fputs("## Model\n\nWhere each trace's GPU time goes, by role: each operation's role comes from the CPU op "
                  "chain that launched it (Kineto's op nesting and correlation ids: the attention op it ran in, "
                  "matched whole), else, for work replayed from a CUDA graph, its kernel name; a step is one of "
                  "the trace's step ranges (ProfilerStep#N, or the --range named), with its forward, backward and "
                  "optimizer phases where it has them. Shares are fractions of the step's CUDA time, medians over "
                  "steps; the same numbers are in `roles.csv`.\n\n", f);
            header = 1;
        }
        variant_model(f, a, &a->v[i], v);
    }
    if (n_side >= 2) /* the first SIDE_MAX traces: a wider table would not read */
        side_by_side(f, a, views, vi, n_side);
    for (int j = 0; j < n_side; j++)
        free(views[j]);
    free(v);
}
