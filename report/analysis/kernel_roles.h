/* Roles and the attention backend of GPU operations from their kernel names and their
 * launching call alone: the lens for a trace with no ATen op chain (`attnprof record` of
 * any program). The roles are the model analysis' (model_roles.h, roles.csv's names);
 * each op's role comes with the rule that gave it, so the report can say it. What a name
 * cannot say (eager attention's QKᵀ among the GEMMs, forward or backward, the layers) is
 * said as such, never guessed. */
#ifndef ATTNPROF_KERNEL_ROLES_H
#define ATTNPROF_KERNEL_ROLES_H

#include "analysis.h"
#include "model_roles.h"

typedef struct kernel_role {
    model_role role;
    const char *backend; /* the attention implementation or library ("cuDNN SDPA", "FlashAttention 2", "cuBLAS"), or NULL */
    const char *rule;    /* the rule, as a short phrase ("name contains fmha_cutlass") */
} kernel_role;

/* The role of one op by the first rule of the table (kernel_roles.c) its name matches;
 * launcher (may be NULL) tells a driver-API launch from a runtime one. Never fails:
 * MROLE_OTHER with rule "no rule matched the name". */
kernel_role kernel_role_of(const gpu_op *op, const api_call *launcher);

#define KERNEL_ROLES_MAX_RULES 48

/* A variant's steps by role: medians over its forwards (steps) of ops and µs per step. */
typedef struct kernel_roles_view {
    int n_steps;
    double step_us;                    /* median CUDA time per step */
    double ops[MROLE_COUNT], us[MROLE_COUNT], share[MROLE_COUNT];
    double attn_us, attn_share;        /* the attention roles together */
    const char *backend;               /* of the longest attention kernel of the median step; NULL: none */
    const gpu_op *attn_kernel;
    int driver_launches, runtime_launches; /* of the median step's ops */
    int n_rules;
    const char *rules[KERNEL_ROLES_MAX_RULES]; /* the rules that gave the median step's roles, first use first */
    model_role rule_role[KERNEL_ROLES_MAX_RULES];
} kernel_roles_view;

/* EXIT_OK, or EXIT_BAD_ARCHIVE (with the line in err) when the variant has no step. */
int kernel_roles_build(const variant_analysis *va, kernel_roles_view *v, char *err, size_t errlen);

#endif
