/* The report's "Recorded program" section (record_section.h): an archive of `attnprof
 * record` seen through the series' lens without an ATen op chain, each variant's steps by
 * role from kernel names (kernel_roles.h), the rules that named them, and what a name
 * cannot say. */
#include "record_section.h"

#include "err.h"
#include "escape.h"
#include "kernel_roles.h"
#include "units.h"

static void section_variant(FILE *f, const variant_analysis *va)
{
    kernel_roles_view v;
    char err[256], num[32];
    if (kernel_roles_build(va, &v, err, sizeof err) != EXIT_OK)
        return;
    fputs("### ", f);
    esc_md_text(f, va->result->name);
    units_us_column(v.step_us, num, sizeof num);
    char steps[32];
    fprintf(f, "\n\n%s; CUDA time per step %s (median). ", units_count_noun(v.n_steps, "step", steps, sizeof steps), num);
    if (v.attn_kernel) {
        units_us_column(v.attn_us, num, sizeof num);
        fprintf(f, "Attention: %.1f%% of the step (%s), ", 100.0 * v.attn_share, num);
        esc_md_text(f, v.backend ? v.backend : "fused kernel");
        fputs(" (longest attention kernel of the median step: ", f);
        esc_md_code(f, v.attn_kernel->name, 0);
        fputs(").", f);
    } else
        fputs("No kernel of the steps is named as an attention kernel (an eager attention is GEMMs and a softmax).",
              f);
    fprintf(f, " Launches in the median step: %d through the runtime API, %d through the driver API (cuBLAS, cuDNN, "
               "Triton and XLA launch through the driver).\n\n| Role | Ops / step | Time / step | Share |\n"
               "|---|---:|---:|---:|\n", v.runtime_launches, v.driver_launches);
    for (int r = 0; r < MROLE_COUNT; r++) {
        if (v.ops[r] <= 0)
            continue;
        units_us_column(v.us[r], num, sizeof num);
        fprintf(f, "| %s | %g | %s | %.1f%% |\n", model_role_name((model_role)r), v.ops[r], num, 100.0 * v.share[r]);
    }
    fputs("\nRules that gave the median step's roles (first match in kernel_roles.c's table): ", f);
    for (int i = 0; i < v.n_rules; i++) {
        fprintf(f, "%s%s → ", i ? "; " : "", v.rules[i]);
        fputs(model_role_name(v.rule_role[i]), f);
    }
    fputs(".\n\n", f);
}

void record_section_md(FILE *f, const analysis *a)
{
    if (a->run->producer != PRODUCER_INJECTION)
        return;
    fputs("## Recorded program\n\n", f);
    fputs("Recorded by CUPTI injected into the program (`attnprof record`); steps: ", f);
    esc_md_text(f, a->run->marker_source[0] ? a->run->marker_source : "not recorded");
    fputs(". Roles come from kernel names alone: the trace has no ATen op chain.\n\n", f);
    for (int i = 0; i < a->n; i++)
        section_variant(f, &a->v[i]);
    fputs("What a kernel name cannot say: which GEMMs are an eager attention's QKᵀ and PV (they count as gemm, its "
          "softmax as softmax), whether an op ran in the forward or the backward (every role but "
          "attention_backward is counted as it ran), and the model's layers. `attnprof import` of a PyTorch profiler "
          "trace of the same program has the op chains that say them.\n\n",
          f);
}
