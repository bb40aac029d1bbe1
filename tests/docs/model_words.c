/* docs/model_words: what the report writes of model traces (issue 35): kernels.csv's role
 * column carries the model's roles, a training step is a "step", and the series' findings
 * (the fastest, ops_vs_previous) are not given between different models side by side.
 * Traces of tests/fixtures/models-roles-h200, imported by the binary. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "run_cli.h"

#define FIXTURES "tests/fixtures/models-roles-h200/"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/attnprof-mwords-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

static void import(const char *out, const char *traces)
{
    char args[1024];
    snprintf(args, sizeof args, "import %s -o %s/%s -q", traces, dir, out);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s: %s", args, err_text);
}

static void read_out(const char *out, const char *file, char *text, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s/%s", dir, out, file);
    read_into(path, text, n);
}

Test(model_words, kernels_csv_roles_are_the_models, .timeout = 120, .init = make_dir, .fini = remove_dir)
{
    static char text[1 << 22];
    import("mistral", FIXTURES "mistral-gqa-window-fp16.json.gz");
    read_out("mistral", "kernels.csv", text, sizeof text);
    /* the series' words (op_role.c) would call the lm_head a PV GEMM and the residual adds mask apply */
    cr_assert_null(strstr(text, ",PV GEMM,"));
    cr_assert_null(strstr(text, ",QKᵀ GEMM,"));
    cr_assert_null(strstr(text, ",mask apply,"));
    /* roles.csv's names: SDPA's mask conversion and repeat_kv's copies are there by their roles */
    cr_assert(strstr(text, ",attention,kernel,"), "the fused attention kernel");
    cr_assert(strstr(text, ",attention_input_conversion,"), "SDPA's bool mask made additive");
    cr_assert(strstr(text, ",gqa_expansion,"), "repeat_kv's copies");
    cr_assert(strstr(text, ",gemm,kernel,"), "the projections");
}

Test(model_words, a_training_step_is_a_step, .timeout = 120, .init = make_dir, .fini = remove_dir)
{
    static char text[1 << 22];
    import("train", FIXTURES "llama-train-sync-bf16.json.gz");
    read_out("train", "report.md", text, sizeof text);
    cr_assert(strstr(text, "CUDA time per step (median of 6)"), "the abstract");
    cr_assert(strstr(text, "| Kernels / step | CUDA time / step"), "the summary table");
    cr_assert(strstr(text, "CUDA time per step is the sum"), "the method");
    cr_assert_null(strstr(text, "CUDA time per forward (median"));
    read_out("train", "summary.tex", text, sizeof text);
    cr_assert(strstr(text, "CUDA and CPU time per step") && strstr(text, "Ops / step"), "summary.tex");
    char args[512];
    snprintf(args, sizeof args, "report %s/train", dir);
    cr_assert_eq(attnprof_out(args, text, sizeof text), EXIT_OK, "%s", err_text);
    cr_assert(strstr(text, "CUDA µs/step") && !strstr(text, "CUDA µs/fwd"), "terminal: %s", text);
}

Test(model_words, an_inference_step_stays_a_forward, .timeout = 120, .init = make_dir, .fini = remove_dir)
{
    static char text[1 << 22];
    import("eager", FIXTURES "llama-eager-gqa.json.gz");
    read_out("eager", "report.md", text, sizeof text);
    cr_assert(strstr(text, "CUDA time per forward (median of 6)"), "a forward-only step is a forward");
    cr_assert_null(strstr(text, "per step (median"));
}

Test(model_words, different_models_side_by_side_get_no_series_findings, .timeout = 120, .init = make_dir,
     .fini = remove_dir)
{
    static char text[1 << 22];
    import("side", FIXTURES "llama-eager-gqa.json.gz " FIXTURES "mistral-gqa-window-fp16.json.gz " FIXTURES
                   "llama-train-sync-bf16.json.gz");
    read_out("side", "findings.json", text, sizeof text);
    cr_assert_null(strstr(text, "\"ops_vs_previous\""), "no operation counts between different models");
    read_out("side", "report.md", text, sizeof text);
    cr_assert_null(strstr(text, "the fastest is"));
    cr_assert(strstr(text, "3 traces side by side: `llama-eager-gqa` at"), "each trace with its own time");
    cr_assert(strstr(text, "`llama-train-sync-bf16` at 17380.1 µs CUDA time per step"), "the training step's unit");
}
