/* The report's CSVs: summary.csv, one row per variant (the summary table's numbers and its
 * findings as plain text), and the raw samples, so a paper's figure can be drawn with any
 * plotting library from what was recorded and not from attnprof's medians:
 *   samples.csv  one row per recorded forward per variant, throttled ones included
 *                (marked), in the order they were recorded;
 *   kernels.csv  one row per GPU operation of each of those forwards, with its role
 *                (op_role.c: the series' QKᵀ GEMM, mask apply, ...; for a model trace, a
 *                ProfilerStep#N step of a whole model, the model's roles of model_roles.h:
 *                gemm, attention_fused, normalization, ..., since the series' words would
 *                call an lm_head a PV GEMM), launch configuration and occupancy (occupancy.c).
 * Both are derived from trace.json and run.json by `attnprof report`, so older
 * archives get them too; what an archive did not record is an empty field, never 0.
 * Times are the trace's nanoseconds as µs with three decimals (exact); the sample's
 * own reals are printed with the fewest digits that read back to the same double. */
#include "report_csv.h"

#include "alloc.h"
#include "escape.h"
#include "findings.h"
#include "latex.h"
#include "model_roles.h"
#include "occupancy.h"
#include "op_role.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ",x": the shortest of %.15g and %.17g that reads back as x; empty when not finite. */
static void real_field(FILE *f, double x)
{
    if (!isfinite(x)) {
        fputc(',', f);
        return;
    }
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", x);
    if (strtod(buf, NULL) != x)
        snprintf(buf, sizeof buf, "%.17g", x);
    fprintf(f, ",%s", buf);
}

/* ",µs" of a nanosecond count, three decimals, exactly. */
static void ns_field(FILE *f, int64_t ns)
{
    int64_t a = ns < 0 ? -ns : ns;
    fprintf(f, ",%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(a / 1000), (long long)(a % 1000));
}

static int cmp_forward_start(const void *x, const void *y)
{
    const forward *a = *(const forward *const *)x, *b = *(const forward *const *)y;
    if (a->range->start_ns != b->range->start_ns)
        return a->range->start_ns < b->range->start_ns ? -1 : 1;
    return (a->iteration > b->iteration) - (a->iteration < b->iteration);
}

/* Every recorded forward of the variant, kept and throttled, in recording order;
 * *n their count. The caller frees the array. */
static const forward **all_forwards(const variant_analysis *va, int *n)
{
    *n = va->n_forwards + va->n_throttled;
    const forward **all = malloc(sizeof *all * (size_t)(*n ? *n : 1));
    if (!all)
        attn_oom();
    for (int i = 0; i < va->n_forwards; i++)
        all[i] = &va->forwards[i];
    for (int i = 0; i < va->n_throttled; i++)
        all[va->n_forwards + i] = &va->throttled[i];
    qsort(all, (size_t)*n, sizeof *all, cmp_forward_start);
    return all;
}

/* The sample's pass, or an empty field. */
static void pass_field(FILE *f, const forward *fw)
{
    if (fw->range->sample.recorded)
        fprintf(f, ",%d", fw->range->sample.pass);
    else
        fputc(',', f);
}

/* "1"/"0" where the throttle rule was judged, else empty (not recorded, not "no"). */
static void throttled_field(FILE *f, const analysis *a, const forward *fw)
{
    if (a->throttle_judged && fw->range->sample.recorded && fw->range->sample.sm_mhz > 0)
        fprintf(f, ",%d", fw->throttled);
    else
        fputc(',', f);
}

char *samples_csv(const analysis *a)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    fputs("variant,pass,iteration,cuda_us,cpu_us,span_us,event_us,sm_mhz,mem_mhz,power_w,temp_c,throttled\n", f);
    for (int v = 0; v < a->n; v++) {
        const variant_analysis *va = &a->v[v];
        int n;
        const forward **all = all_forwards(va, &n);
        for (int i = 0; i < n; i++) {
            const forward *fw = all[i];
            const struct forward_sample *s = &fw->range->sample;
            esc_csv_field(f, va->result->name, 0);
            pass_field(f, fw);
            fprintf(f, ",%d", fw->iteration);
            int64_t cuda_ns = 0, lo = INT64_MAX, hi = INT64_MIN;
            for (int k = 0; k < fw->n_ops; k++) {
                cuda_ns += fw->ops[k]->end_ns - fw->ops[k]->start_ns;
                lo = fw->ops[k]->start_ns < lo ? fw->ops[k]->start_ns : lo;
                hi = fw->ops[k]->end_ns > hi ? fw->ops[k]->end_ns : hi;
            }
            ns_field(f, cuda_ns);
            ns_field(f, fw->range->end_ns - fw->range->start_ns);
            ns_field(f, fw->n_ops ? hi - lo : 0);
            if (s->recorded) {
                real_field(f, s->event_us);
                fprintf(f, ",%d,%d", s->sm_mhz, s->mem_mhz);
                real_field(f, s->power_w);
                fprintf(f, ",%d", s->temp_c);
            } else
                fputs(",,,,,", f);
            throttled_field(f, a, fw);
            fputc('\n', f);
        }
        free(all);
    }
    fclose(f);
    return buf;
}

static const char *kind_word(gpu_op_kind k)
{
    return k == GPU_KERNEL ? "kernel" : k == GPU_MEMCPY ? "memcpy" : "memset";
}

char *kernels_csv(const analysis *a)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
    fputs("variant,pass,iteration,throttled,index,role,kind,name,start_us,duration_us,grid_x,grid_y,grid_z,block_x,"
          "block_y,block_z,registers_per_thread,static_smem_bytes,dynamic_smem_bytes,theoretical_occupancy_pct,"
          "est_achieved_occupancy_pct,bytes\n",
          f);
    for (int v = 0; v < a->n; v++) {
        const variant_analysis *va = &a->v[v];
        int n;
        const forward **all = all_forwards(va, &n);
        int model = model_is_step_trace(va);
        for (int i = 0; i < n; i++) {
            const forward *fw = all[i];
            size_t cap = (size_t)(fw->n_ops ? fw->n_ops : 1);
            op_role *roles = malloc(sizeof *roles * cap);
            model_role *mroles = model ? malloc(sizeof *mroles * cap) : NULL;
            model_phase *mphases = model ? malloc(sizeof *mphases * cap) : NULL;
            if (!roles || (model && (!mroles || !mphases)))
                attn_oom();
            if (model)
                model_forward_roles(va, fw, mroles, mphases);
            else
                op_roles_of_forward(fw->ops, fw->n_ops, roles);
            int64_t first = fw->n_ops ? fw->ops[0]->start_ns : 0; /* ops are by start time */
            for (int k = 0; k < fw->n_ops; k++) {
                const gpu_op *o = fw->ops[k];
                esc_csv_field(f, va->result->name, 0);
                pass_field(f, fw);
                fprintf(f, ",%d", fw->iteration);
                throttled_field(f, a, fw);
                fprintf(f, ",%d,", k);
                esc_csv_field(f, model ? model_role_name(mroles[k]) : op_role_name(roles[k]), 0);
                fprintf(f, ",%s,", kind_word(o->kind));
                esc_csv_field(f, o->name, 1);
                ns_field(f, o->start_ns - first);
                ns_field(f, o->end_ns - o->start_ns);
                if (o->kind == GPU_KERNEL) {
                    fprintf(f, ",%d,%d,%d,%d,%d,%d,%d,%d,%d", o->grid[0], o->grid[1], o->grid[2], o->block[0],
                            o->block[1], o->block[2], o->registers, o->static_smem, o->dynamic_smem);
                    occupancy occ;
                    char err[128];
                    if (occupancy_of_op(o, &a->trace->device, &occ, err, sizeof err) == 0) {
                        real_field(f, occ.theoretical * 100);
                        real_field(f, o->has_kineto_occupancy ? o->kineto_occupancy : occ.est_achieved * 100);
                    } else
                        fputs(",,", f);
                    fputc(',', f);
                } else
                    fprintf(f, ",,,,,,,,,,,,%lld", (long long)o->bytes);
                fputc('\n', f);
            }
            free(roles);
            free(mroles);
            free(mphases);
        }
        free(all);
    }
    fclose(f);
    return buf;
}

char *report_summary_csv(const analysis *a)
{
    char *buf;
    size_t len;
    FILE *f = attn_memstream(&buf, &len);
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
        char *all;
        size_t all_len;
        FILE *af = attn_memstream(&all, &all_len);
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
