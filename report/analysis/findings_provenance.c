/* Where a variant's kernels come from (findings.h): the origin of a kernel from its
 * name, the distinct origins of a variant's representative forward (kept in run.json),
 * and the library that issued a Memset, from the launch that follows it. */
#include "findings.h"
#include "alloc.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

static int has(const char *name, const char *needle) { return strcasestr(name, needle) != NULL; }

/* The representative forward: the median one, which every view shows. */
static const forward *rep_forward(const variant_analysis *va)
{
    int i = analysis_median_forward(va);
    return i < 0 ? NULL : &va->forwards[i];
}

const char *findings_kernel_origin(const gpu_op *o)
{
    const char *n = o->name ? o->name : "";
    if (!strncmp(n, "attnprof_", 9) || strstr(n, " attnprof_"))
        return "ours";
    if (has(n, "cudnn"))
        return "cuDNN";
    /* PyTorch's own kernels: ATen's, its flash and memory-efficient (CUTLASS-built)
     * attention; checked before cuBLAS, whose names share "cutlass" */
    if (has(n, "at::native") || has(n, "pytorch_flash") || !strncmp(n, "fmha_", 5) || has(n, " fmha_") ||
        has(n, "softmax_warp_forward") || has(n, "at::cuda"))
        return "PyTorch";
    if (has(n, "nvjet") || has(n, "cublas") || has(n, "xmma_gemm") || has(n, "sgemm") || has(n, "gemv") ||
        has(n, "cutlass") || has(n, "gemmk1") || has(n, "gemmSN"))
        return "cuBLAS";
    return "unattributed";
}

void findings_origins(const variant_analysis *va, char *out, size_t n)
{
    out[0] = '\0';
    const char *seen[8]; /* static strings of findings_kernel_origin: compared by address */
    int n_seen = 0;
    const forward *f = rep_forward(va);
    for (int k = 0; f && k < f->n_ops; k++) {
        if (f->ops[k]->kind != GPU_KERNEL)
            continue;
        const char *o = findings_kernel_origin(f->ops[k]);
        int j = 0;
        while (j < n_seen && seen[j] != o)
            j++;
        if (j < n_seen || n_seen == 8)
            continue;
        seen[n_seen++] = o;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? ", " : "", o);
    }
}

int findings_record_provenance(run_info *r, const trace *t, char *err, size_t errlen)
{
    analysis *a = calloc(1, sizeof *a);
    if (!a)
        attn_oom();
    int rc = analysis_build(a, t, r, err, errlen);
    if (rc != EXIT_OK) {
        free(a);
        return rc;
    }
    for (int i = 0; i < a->n && i < r->n_variants; i++)
        findings_origins(&a->v[i], r->variants[i].kernel_origin, sizeof r->variants[i].kernel_origin);
    analysis_free(a);
    free(a);
    return 0;
}

const char *findings_variant_origin(const analysis *a, const variant_analysis *va, char *buf, size_t n)
{
    (void)a;
    if (va->result->kernel_origin[0])
        return va->result->kernel_origin;
    findings_origins(va, buf, n);
    return buf;
}

/* The library behind an op, from its kernel name (cuBLAS/cuBLASLt, cuDNN, ours). */
static const char *library_of_kernel(const char *n)
{
    gpu_op o = {.name = (char *)n};
    const char *origin = findings_kernel_origin(&o);
    if (!strcmp(origin, "ours"))
        return "attnprof";
    if (!strcmp(origin, "cuDNN") || !strcmp(origin, "cuBLAS"))
        return origin;
    return NULL;
}

int findings_memset_library(const trace *t, const forward *f, int k, const char **library, const gpu_op **next)
{
    *library = NULL;
    *next = NULL;
    const api_call *l = f->launchers[k];
    if (!l || f->ops[k]->kind != GPU_MEMSET)
        return ATTN_NONE;
    /* The first kernel launched after the Memset's call on the same thread, inside
     * the forward, with no other launch in between: the Memset belongs to its library. */
    const gpu_op *best = NULL;
    const api_call *best_l = NULL;
    for (int j = 0; j < f->n_ops; j++) {
        const api_call *lj = f->launchers[j];
        if (j == k || !lj || lj->tid != l->tid || lj->start_ns < l->end_ns)
            continue;
        if (!best_l || lj->start_ns < best_l->start_ns)
            best = f->ops[j], best_l = lj;
    }
    if (!best || best->kind != GPU_KERNEL)
        return ATTN_NONE;
    (void)t;
    *library = library_of_kernel(best->name);
    *next = best;
    return *library ? 0 : ATTN_NONE;
}
