/* Compare's metadata (compare.h): each archive's GPU, software stack, shape and
 * measurement plan as one row per field, which fields differ between the runs (a
 * field some run does not record is unknown, not different), and the sentence that
 * says so. */
#include "compare_parts.h"
#include "units.h"

#include <stdio.h>
#include <string.h>

static const char nr_text[] = "not recorded";

static compare_field *field(compare_data *m, const char *name, int in_sentence)
{
    compare_field *f = &m->fields[m->n_fields++];
    memset(f, 0, sizeof *f);
    f->name = name;
    f->in_sentence = in_sentence;
    return f;
}

/* The fields of compare's metadata table, in its row order. */
typedef struct run_fields {
    compare_field *gpu, *uuid, *sms, *mem, *clk, *mclk, *drv, *rt, *cublas, *cudnn, *cupti, *tool, *date, *shape,
        *dtype, *iters, *warmup, *seed, *l2, *rule, *passes;
} run_fields;

static void number_or_unrecorded(char *out, size_t n, int recorded, const char *fmt, double v)
{
    if (recorded)
        snprintf(out, n, fmt, v);
    else
        snprintf(out, n, "%s", nr_text);
}

/* The device and its software stack, for archive i. An imported Kineto trace lacks
 * some of these: say so rather than print 0. */
static void device_values(const run_fields *x, int i, const run_info *r)
{
    const device_props *d = &r->device;
    snprintf(x->gpu->value[i], sizeof x->gpu->value[i], "%s (sm_%d%d)", d->name, d->major, d->minor);
    /* Which physical GPU: recorded since the sweep (run.json "gpu.uuid"). */
    snprintf(x->uuid->value[i], sizeof x->uuid->value[i], "%s", r->gpu_uuid[0] ? r->gpu_uuid : nr_text);
    number_or_unrecorded(x->sms->value[i], sizeof x->sms->value[i], d->sm_count > 0, "%.0f", d->sm_count);
    number_or_unrecorded(x->mem->value[i], sizeof x->mem->value[i], d->total_mem > 0, "%.1f GiB",
                         d->total_mem / 1073741824.0);
    number_or_unrecorded(x->clk->value[i], sizeof x->clk->value[i], d->clock_khz > 0, "%.0f MHz",
                         (double)(d->clock_khz / 1000));
    number_or_unrecorded(x->mclk->value[i], sizeof x->mclk->value[i], d->mem_clock_khz > 0, "%.0f MHz",
                         (double)(d->mem_clock_khz / 1000));
    snprintf(x->drv->value[i], sizeof x->drv->value[i], "%s", r->driver_version[0] ? r->driver_version : nr_text);
    if (r->cuda_runtime_version > 0)
        snprintf(x->rt->value[i], sizeof x->rt->value[i], "%d.%d", r->cuda_runtime_version / 1000,
                 r->cuda_runtime_version % 1000 / 10);
    else
        snprintf(x->rt->value[i], sizeof x->rt->value[i], "%s", nr_text);
    units_version_text(r->cublas_version, nr_text, x->cublas->value[i], sizeof x->cublas->value[i]);
    units_version_text(r->cudnn_version, nr_text, x->cudnn->value[i], sizeof x->cudnn->value[i]);
    snprintf(x->cupti->value[i], sizeof x->cupti->value[i], "%d", r->cupti_version);
    /* An import's version is that of the attnprof that read the trace, not of what recorded it. */
    if (r->imported)
        snprintf(x->tool->value[i], sizeof x->tool->value[i], "%s%s", r->tool_version[0] ? "imported by " : "",
                 r->tool_version[0] ? r->tool_version : "imported (the importer's version not recorded)");
    else
        snprintf(x->tool->value[i], sizeof x->tool->value[i], "%s", r->tool_version[0] ? r->tool_version : nr_text);
    snprintf(x->date->value[i], sizeof x->date->value[i], "%s", r->date);
}

/* The run itself, for archive i: shape, forwards and how they were measured. */
static void run_values(const run_fields *x, int i, const run_info *r)
{
    const char *nr = nr_text;
    /* An import without --shape records neither shape nor dtype. */
    if (run_info_shape_recorded(r))
        snprintf(x->shape->value[i], sizeof x->shape->value[i], "%d×%d×%d×%d", r->shape.batch, r->shape.heads,
                 r->shape.seq, r->shape.dim);
    else
        snprintf(x->shape->value[i], sizeof x->shape->value[i], "%s", nr);
    if (r->dtype[0])
        snprintf(x->dtype->value[i], sizeof x->dtype->value[i], "%s%s", r->dtype, r->causal ? ", causal" : "");
    else
        snprintf(x->dtype->value[i], sizeof x->dtype->value[i], "%s", nr);
    if (!strcmp(r->measurement.iters_rule, "auto")) /* each variant its own count (the stop rule) */
        snprintf(x->iters->value[i], sizeof x->iters->value[i], "up to %d (--iters auto)", r->iters);
    else
        snprintf(x->iters->value[i], sizeof x->iters->value[i], "%d", r->iters);
    /* How the forwards were measured (the measurement plan); archives before it do not say. */
    const measurement_plan *mp = &r->measurement;
    snprintf(x->l2->value[i], sizeof x->l2->value[i], "%s", compare_l2_state(r) ? compare_l2_state(r) : nr);
    if (mp->recorded && !strcmp(mp->iters_rule, "auto"))
        snprintf(x->rule->value[i], sizeof x->rule->value[i], "auto (noise below %.2g%%, %d–%d forwards)",
                 mp->noise_target * 100, mp->min_forwards, mp->max_forwards);
    else if (mp->recorded) {
        char count[48];
        snprintf(x->rule->value[i], sizeof x->rule->value[i], "fixed (%s)",
                 units_count_noun(r->iters, "forward", count, sizeof count));
    } else
        snprintf(x->rule->value[i], sizeof x->rule->value[i], "%s", nr);
    if (mp->recorded)
        snprintf(x->passes->value[i], sizeof x->passes->value[i], "%d", mp->replicates > 0 ? mp->replicates : 1);
    else
        snprintf(x->passes->value[i], sizeof x->passes->value[i], "%s", nr);
    /* A Kineto trace holds neither the inputs' seed nor the forwards run before
     * profiling: for an import both are not recorded, whatever run.json says (older
     * imports wrote 0 for them). */
    if (r->imported) {
        snprintf(x->warmup->value[i], sizeof x->warmup->value[i], "%s", nr);
        snprintf(x->seed->value[i], sizeof x->seed->value[i], "%s", nr);
    } else {
        snprintf(x->warmup->value[i], sizeof x->warmup->value[i], "%d", r->warmup);
        snprintf(x->seed->value[i], sizeof x->seed->value[i], "%llu", r->seed);
    }
}

static void fill_fields(compare_data *m)
{
    m->n_fields = 0;
    /* One at a time, in the table's row order (field() appends). */
    static const struct {
        const char *name;
        int in_sentence;
    } rows[] = {{"GPU", 1}, {"GPU UUID", 1}, {"SMs", 1}, {"Memory", 1}, {"SM clock", 1}, {"Memory clock", 1},
                {"Driver", 1}, {"CUDA runtime", 1}, {"cuBLAS", 1}, {"cuDNN", 1}, {"CUPTI", 1}, {"attnprof", 1},
                {"Date", 0}, {"Shape", 1}, {"Data type", 1}, {"Recorded forwards", 1}, {"Warm-up forwards", 1},
                {"Seed", 1}, {"L2 state", 1}, {"Stop rule", 1}, {"Passes", 1}};
    run_fields x;
    compare_field **slot[] = {&x.gpu,   &x.uuid,  &x.sms,   &x.mem,    &x.clk,   &x.mclk,   &x.drv,
                              &x.rt,    &x.cublas, &x.cudnn, &x.cupti,  &x.tool,  &x.date,   &x.shape,
                              &x.dtype, &x.iters, &x.warmup, &x.seed,  &x.l2,    &x.rule,   &x.passes};
    _Static_assert(sizeof rows / sizeof rows[0] == sizeof slot / sizeof slot[0], "one slot per row");
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
        *slot[k] = field(m, rows[k].name, rows[k].in_sentence);
    /* a training step's runs count steps (compare_unit_word), not forwards */
    if (!strcmp(compare_unit_word(m), "step"))
        x.iters->name = "Recorded steps", x.warmup->name = "Warm-up steps";
    for (int i = 0; i < m->n; i++) {
        device_values(&x, i, &m->in[i]->r);
        run_values(&x, i, &m->in[i]->r);
    }
    /* The tool is a difference of the measurement only between runs attnprof recorded: an
     * import's attnprof read a trace that PyTorch's profiler recorded. */
    for (int i = 0; i < m->n; i++)
        if (m->in[i]->r.imported)
            x.tool->in_sentence = 0;
    /* The measurement plan's fields are named in the sentence only where some run
     * records them: archives before it record none, and listing them would say nothing. */
    compare_field *measured[] = {x.l2, x.rule, x.passes};
    for (size_t k = 0; k < sizeof measured / sizeof measured[0]; k++) {
        compare_field *x = measured[k];
        int any = 0;
        for (int i = 0; i < m->n; i++)
            any |= strcmp(x->value[i], nr_text) != 0;
        x->in_sentence = any;
    }
    /* A field differs when two runs that record it hold different values; "not
     * recorded" against a value is unknown, not a difference. */
    for (int f = 0; f < m->n_fields; f++) {
        compare_field *x = &m->fields[f];
        int first = -1;
        for (int i = 0; i < m->n; i++) {
            if (!strcmp(x->value[i], nr_text)) {
                x->unrecorded = 1;
                continue;
            }
            if (first < 0)
                first = i;
            else if (strcmp(x->value[i], x->value[first]))
                x->differs = 1;
        }
    }
}

/* "cuDNN differs (9.14.0 vs 9.19.0); GPU, driver and shape are equal.", then the
 * fields some run does not record. */
static void differs_sentence(compare_data *m)
{
    char *s = m->differs_sentence;
    size_t cap = sizeof m->differs_sentence, len = 0;
    s[0] = '\0';
#define PUT(...) (len += (size_t)snprintf(s + len, len < cap ? cap - len : 0, __VA_ARGS__))
    int named = 0;
    for (int f = 0; f < m->n_fields; f++) {
        const compare_field *x = &m->fields[f];
        if (!x->differs || !x->in_sentence)
            continue;
        size_t nl = strlen(x->name);
        int plural = nl > 1 && x->name[nl - 1] == 's';
        PUT("%s%s %s (", named++ ? "; " : "", x->name, plural ? "differ" : "differs");
        for (int i = 0; i < m->n; i++)
            PUT("%s%s", i ? " vs " : "", x->value[i]);
        PUT(")");
    }
    const char *anchors[] = {"GPU", "Driver", "Shape"};
    const char *equal[3];
    int n_equal = 0;
    for (int k = 0; k < 3; k++)
        for (int f = 0; f < m->n_fields; f++)
            if (!strcmp(m->fields[f].name, anchors[k]) && !m->fields[f].differs && !m->fields[f].unrecorded)
                equal[n_equal++] = k == 0 ? "GPU" : k == 1 ? "driver" : "shape";
    int date_differs = 0;
    for (int f = 0; f < m->n_fields; f++)
        if (!m->fields[f].in_sentence && m->fields[f].differs)
            date_differs = 1;
    if (!named)
        PUT("Nothing recorded differs%s", date_differs ? " but the date" : "");
    if (n_equal) {
        PUT("%s", named ? "; " : ": ");
        for (int k = 0; k < n_equal; k++)
            PUT("%s%s", k == 0 ? "" : k == n_equal - 1 ? " and " : ", ", equal[k]);
        PUT(" %s equal", n_equal == 1 ? "is" : "are");
    }
    PUT(".");
    /* What some run does not record is neither equal nor different: say which. */
    int n_unrecorded = 0;
    for (int f = 0; f < m->n_fields; f++)
        if (m->fields[f].unrecorded && m->fields[f].in_sentence)
            PUT("%s%s", n_unrecorded++ ? ", " : " Not recorded by every run, so not compared: ", m->fields[f].name);
    if (n_unrecorded)
        PUT(".");
#undef PUT
}


void compare_fields_fill(compare_data *m)
{
    fill_fields(m);
    compare_traces_fields(m); /* the model traces' attention inputs and producer, before the sentence */
    differs_sentence(m);
}
