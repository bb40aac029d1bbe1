/* docs/model_words: what the report writes of model traces: kernels.csv's role
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
    /* the header's rows, the representative step, the layers and the appendix say step */
    cr_assert(strstr(text, "; up to 6 steps per variant; seed, warm-up steps,"), "the Run row");
    cr_assert(strstr(text, "host ranges and CPU ops (steps from Kineto ProfilerStep"), "the Records row");
    cr_assert(strstr(text, "The representative step (iteration "), "the op table");
    cr_assert(strstr(text, "Repeated blocks (layers): the forward phase's operations repeat with a period of 46 "
                           "operations, 2 times, from forward-phase operation 23 on (the representative step; the "
                           "backward phase is not searched)"), "the layers");
    cr_assert(strstr(text, "representative step that runs it (\"–\": in another step only)"), "the appendix");
    cr_assert_null(strstr(text, "representative forward"));
    cr_assert_null(strstr(text, "forwards per variant"));
    read_out("train", "summary.tex", text, sizeof text);
    cr_assert(strstr(text, "CUDA and CPU time per step") && strstr(text, "Ops / step"), "summary.tex");
    cr_assert(strstr(text, "Median of 6 recorded steps per variant, min--max in parentheses; CUDA time is the sum of "
                           "the GPU operations of a step, CPU time the duration of the step's range"), "its note");
    cr_assert_null(strstr(text, "recorded forwards"));
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
    cr_assert(strstr(text, "; up to 6 forwards per variant;"), "the Run row");
    cr_assert(strstr(text, "The representative forward (iteration "), "the op table");
    cr_assert(strstr(text, "Repeated blocks (layers): the forward's operations repeat with a period of "), "layers");
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

/* A count agrees with its noun everywhere (units_count_noun): "1 GEMMs" was written for the one
 * FP32 bmm of the training step. Any "1 <noun>s" of the nouns the documents count is false. */
static void no_singular_plural(const char *text, const char *what)
{
    static const char *const nouns[] = {"GEMMs", "kernels", "operations", "ops", "forwards", "steps", "copies",
                                        "Memsets", "Memcpys", "blocks", "layers", "variants", "traces", "records",
                                        "extra kernels", "FP32 CUDA-core GEMMs", "fused kernels", "host–device copies",
                                        "host syncs", "heads", "shapes", "recorded forwards", "recorded steps",
                                        "warm-up forwards", "API calls", "GPU operations", "host ranges",
                                        "NVTX ranges", "distinct GPU operations"};
    for (size_t k = 0; k < sizeof nouns / sizeof *nouns; k++) {
        char bad[64];
        snprintf(bad, sizeof bad, " 1 %s", nouns[k]);
        for (const char *p = strstr(text, bad); p; p = strstr(p + 1, bad)) {
            char after = p[strlen(bad)];
            cr_assert(after != ' ' && after != ',' && after != ')' && after != ':' && after != '.' && after != ';'
                          && after != '|' && after != '\n',
                      "%s: \"%.60s\"", what, p);
        }
    }
}

Test(model_words, counts_agree_with_their_nouns, .timeout = 120, .init = make_dir, .fini = remove_dir)
{
    static char text[1 << 22];
    import("train", FIXTURES "llama-train-sync-bf16.json.gz");
    read_out("train", "report.md", text, sizeof text);
    cr_assert(strstr(text, "1 GEMM in FP32 on CUDA cores"), "the finding's sentence");
    cr_assert(strstr(text, "[1 FP32 CUDA-core GEMM]"), "the summary cell's short phrase");
    cr_assert(strstr(text, "[1 host–device copy, 1 host sync]"), "the summary cell's short phrase");
    no_singular_plural(text, "report.md");
    read_out("train", "summary.tex", text, sizeof text);
    no_singular_plural(text, "summary.tex");
    read_out("train", "findings.json", text, sizeof text);
    no_singular_plural(text, "findings.json");
}

/* A training step's findings say "step" where they said "forward" (every forward, per forward). */
Test(model_words, a_training_steps_findings_say_step, .timeout = 120, .init = make_dir, .fini = remove_dir)
{
    static char text[1 << 22];
    import("train", FIXTURES "llama-train-sync-bf16.json.gz");
    read_out("train", "report.md", text, sizeof text);
    cr_assert(strstr(text, "Memcpy DtoH inside every step"), "hidden_memcpy");
    cr_assert(strstr(text, "kernels per step by launch API"), "launch_api");
    cr_assert_null(strstr(text, "inside every forward"));
    cr_assert_null(strstr(text, "µs per forward"));
}

/* compare.tex's caption and compare.md's headings name the compared runs' unit: a training
 * step is a step, an inference step stays a forward (one caption, the unit stated once). */
Test(model_words, compare_of_training_steps_is_per_step, .timeout = 180, .init = make_dir, .fini = remove_dir)
{
    static char text[1 << 22];
    import("ta", "tests/fixtures/models-h200/llama-gqa-sdpa-train-s8a.json.gz");
    import("tb", "tests/fixtures/models-h200/llama-gqa-sdpa-train-s8b.json.gz");
    char args[512];
    snprintf(args, sizeof args, "compare %s/ta %s/tb -o %s/cmp", dir, dir, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    read_out("cmp", "compare.tex", text, sizeof text);
    cr_assert(strstr(text, "\\caption{CUDA time per step (\\textmu{}s) of each run"), "the caption");
    cr_assert(strstr(text, "recorded steps;"), "the note");
    cr_assert_null(strstr(text, "per forward"));
    cr_assert_null(strstr(text, "Warm-up forwards"), "the differs sentence names the steps' fields");
    read_out("cmp", "compare.md", text, sizeof text);
    cr_assert(strstr(text, "## CUDA time per step\n") && strstr(text, "## CPU time per step\n") &&
              strstr(text, "## GPU operations per step\n"), "the headings");
    cr_assert(strstr(text, "| Recorded steps | 8 | 8 |") && strstr(text, "| Warm-up steps |"), "the runs' fields");
    cr_assert(strstr(text, "*CUDA time per step of every variant in each run"), "the time figure's caption");
    cr_assert(strstr(text, "*One step (the median one) of every variant from every run"), "the timeline's caption");
    cr_assert(strstr(text, "resamples of the per-step samples") && strstr(text, "the spread of one run's steps only"),
              "the metric's rule");
    cr_assert(strstr(text, "CPU time is the host wall time of the step's range"), "the CPU rule");
    cr_assert_null(strstr(text, "per forward"));
    cr_assert_null(strstr(text, "One forward"));
    cr_assert_null(strstr(text, "forward call"));
    import("ea", "tests/fixtures/models-h200/llama-gqa-sdpa-infer-s8a.json.gz");
    import("eb", "tests/fixtures/models-h200/llama-gqa-sdpa-infer-s8b.json.gz");
    snprintf(args, sizeof args, "compare %s/ea %s/eb -o %s/cmpe", dir, dir, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    read_out("cmpe", "compare.tex", text, sizeof text);
    cr_assert(strstr(text, "\\caption{CUDA time per forward (\\textmu{}s) of each run"), "inference: forwards");
}

/* Verdicts across different attention inputs carry the difference beside them: each ratio
 * cell of the pair in compare.md (so compare.html), compare.tex and the terminal. */
Test(model_words, compare_verdicts_carry_the_differing_inputs, .timeout = 180, .init = make_dir, .fini = remove_dir)
{
    static char text[1 << 22];
    import("llama", FIXTURES "llama-eager-gqa.json.gz");
    import("mistral", FIXTURES "mistral-gqa-window-fp16.json.gz");
    char args[512];
    snprintf(args, sizeof args, "compare %s/llama %s/mistral -o %s/cmp --allow-shape-mismatch", dir, dir, dir);
    cr_assert_eq(attnprof_out(args, text, sizeof text), EXIT_OK, "%s", err_text);
    const char *diff = "across Hkv 4 vs 8, D 64 vs 128, dtype bf16 vs fp16, mask none vs bool";
    cr_assert(strstr(text, "step 2.452x slower (6 and 6 steps; across Hkv 4 vs 8"), "terminal: %s", text);
    read_out("cmp", "compare.md", text, sizeof text);
    cr_assert(strstr(text, "**slower** (across Hkv 4 vs 8, D 64 vs 128, dtype bf16 vs fp16, mask none vs bool "
                           "\\[2,1,1024,1024\\], causal vs not causal) |"), "the step's verdict cell");
    int cells = 0;
    for (const char *p = strstr(text, "**slower** (across Hkv"); p; p = strstr(p + 1, "**slower** (across Hkv"))
        cells++;
    int verdicts = 0;
    for (const char *p = strstr(text, "**slower**"); p; p = strstr(p + 1, "**slower**"))
        verdicts++;
    cr_assert_eq(cells, verdicts, "every verdict of the pair carries the difference (%d of %d)", cells, verdicts);
    read_out("cmp", "compare.html", text, sizeof text);
    cr_assert(strstr(text, diff), "compare.html");
    read_out("cmp", "compare.tex", text, sizeof text);
    cr_assert(strstr(text, "& slower (across Hkv 4 vs 8, D 64 vs 128"), "compare.tex's verdict cells");
}

/* compare.md's kernels section names a model trace's operations by the model's roles, as
 * kernels.csv does (phase after the role when not the forward), never by the series' (the
 * lm_head a "PV GEMM", a residual add "mask apply"); its tables count per step. */
Test(model_words, compare_kernels_of_model_traces_have_model_roles, .timeout = 180, .init = make_dir,
     .fini = remove_dir)
{
    static char text[1 << 22];
    char args[512];
    snprintf(args, sizeof args, "import tests/fixtures/models-h200/llama-gqa-sdpa-train-s8a.json.gz --variant llama "
                                "-o %s/ta -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "import tests/fixtures/models-h200/llama-gqa-sdpa-train-s8b.json.gz --variant llama "
                                "-o %s/tb -q", dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(args, sizeof args, "compare %s/ta %s/tb -o %s/cmp", dir, dir, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    read_out("cmp", "compare.md", text, sizeof text);
    const char *kernels = strstr(text, "## Kernels, variant by variant");
    cr_assert(kernels, "the kernels section");
    cr_assert(strstr(kernels, "within their *role* in the model's step"), "the section says which roles");
    cr_assert(strstr(kernels, "Time per step by role"), "the role table counts per step");
    cr_assert(strstr(kernels, "| gemm (backward) | 39 ops,"), "the backward's GEMMs, their own row");
    cr_assert(strstr(kernels, "| attention | 4 ops,"), "the forward's attention");
    cr_assert(strstr(kernels, "| Per step |"), "the kernel table's count column");
    static const char *const series[] = {"| QKᵀ GEMM |", "| PV GEMM |", "| mask apply |", "| scale |", "| cast |",
                                         "| softmax NaN guard |", "| fused attention |"};
    for (size_t k = 0; k < sizeof series / sizeof *series; k++)
        cr_assert_null(strstr(kernels, series[k]), "series role %s on a model trace", series[k]);
    cr_assert_null(strstr(kernels, "per forward"));
}

/* One step a side: every count of 1 agrees with its noun (units_count_noun) in report.md,
 * summary.tex, findings.json, compare.md, compare.tex and the terminal's table, which wrote
 * "up to 1 forwards", "no verdict (1 forwards)" and "no verdict (1 steps)". */
Test(model_words, one_step_a_side_counts_agree, .timeout = 180, .init = make_dir, .fini = remove_dir)
{
    static char text[1 << 22];
    char args[512];
    for (int s = 3; s <= 4; s++) {
        snprintf(args, sizeof args, "import " FIXTURES "llama-train-sync-bf16.json.gz --range ProfilerStep#%d "
                                    "--variant llama -o %s/one%d -q", s, dir, s);
        cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    }
    read_out("one3", "report.md", text, sizeof text);
    cr_assert(strstr(text, "; up to 1 step per variant;"), "the Run row");
    no_singular_plural(text, "report.md");
    read_out("one3", "summary.tex", text, sizeof text);
    cr_assert(strstr(text, "Median of 1 recorded step per variant"), "summary.tex's note");
    no_singular_plural(text, "summary.tex");
    read_out("one3", "findings.json", text, sizeof text);
    no_singular_plural(text, "findings.json");
    snprintf(args, sizeof args, "compare %s/one3 %s/one4 -o %s/cmp", dir, dir, dir);
    cr_assert_eq(attnprof_out(args, text, sizeof text), EXIT_OK, "%s", err_text);
    cr_assert(strstr(text, "no verdict (1 step)\n"), "terminal: %s", text);
    read_out("cmp", "compare.md", text, sizeof text);
    cr_assert(strstr(text, "no verdict (1 step)"), "compare.md's cells");
    no_singular_plural(text, "compare.md");
    cr_assert_null(strstr(text, "(1 forward"));
    read_out("cmp", "compare.tex", text, sizeof text);
    cr_assert(strstr(text, "\\mbox{no verdict (1 step)}"), "compare.tex's cells");
    no_singular_plural(text, "compare.tex");
}
