/* The backward timeline: each variant's backward of median CUDA time (its attn_bwd range from
 * run --backward) on one time scale, aligned at the start of the backward call, the kernels it
 * launched named in the GPU lane. Drawn as the forwards' overview is (tl_overview_layout), only
 * for archives that hold backwards. */
#include "timeline_parts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int fig_backward_wanted(const analysis *a)
{
    for (int i = 0; i < a->n; i++)
        if (a->v[i].n_backwards > 0)
            return 1;
    return 0;
}

static const forward *backwards_of(const variant_analysis *va) { return va->backwards; }

static void backward_labels(const variant_analysis *va, const forward *drawn, char lines[3][96])
{
    if (!drawn) {
        const backward_result *b = va->result ? &va->result->bwd : NULL;
        snprintf(lines[0], 96, "no backward recorded%s%s", b && b->recorded ? ": " : "",
                 b && b->recorded ? variant_status_name(b->status) : "");
        return;
    }
    int kernels = 0;
    for (int k = 0; k < drawn->n_ops; k++)
        kernels += drawn->ops[k]->kind == GPU_KERNEL;
    char t[32];
    fig_format_us(va->bwd_cuda_us.n ? va->bwd_cuda_us.median : NAN, t, sizeof t);
    snprintf(lines[0], 96, "median CUDA %s", t);
    snprintf(lines[1], 96, "%d kernel%s, %d GPU op%s", kernels, kernels == 1 ? "" : "s", drawn->n_ops,
             drawn->n_ops == 1 ? "" : "s");
    snprintf(lines[2], 96, "backward %d of %d", (int)(drawn - va->backwards) + 1, va->n_backwards);
}

static void backward_heading(const analysis *a, char *title, size_t n_title, char *sub, size_t n_sub, char *axis,
                             size_t n_axis)
{
    char shape[96];
    snprintf(title, n_title, "One backward of each variant, same time scale");
    fig_shape_text(a, shape, sizeof shape);
    snprintf(sub, n_sub,
             "%s \xc2\xb7 each variant's backward of median CUDA time, aligned at the start of its backward "
             "call \xc2\xb7 labels: median CUDA over all backwards, the drawn one's kernels",
             shape);
    snprintf(axis, n_axis, "time since the start of each variant's backward call");
}

static const tl_overview_spec BACKWARD_OVERVIEW = {backwards_of, analysis_median_backward, backward_labels,
                                                   backward_heading};

int fig_backward_timeline_prepare(fig_job *job, cairo_t *measure, const analysis *a)
{
    snprintf(job->name, sizeof job->name, "timeline-backward");
    int with = 0;
    for (int i = 0; i < a->n; i++)
        with += a->v[i].n_backwards > 0;
    snprintf(job->caption, sizeof job->caption,
             "One backward (attn_bwd range) of each of the %d variant%s with backwards (its backward of median "
             "CUDA time) on one time scale: host API calls above, the kernels and other GPU operations it "
             "launched below, aligned at the start of the backward call.", with, with == 1 ? "" : "s");
    return tl_overview_layout(job, measure, a, &BACKWARD_OVERVIEW);
}
