/* analysis/compare_traces: compare names what differs between model traces, and refuses
 * verdicts across different attention shapes without --allow-shape-mismatch (traces of
 * tests/fixtures/models-roles-h200, imported by the binary). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "run_cli.h"

#define FIXTURES "tests/fixtures/models-roles-h200/"

static char dir[64];

static void import_all(void)
{
    snprintf(dir, sizeof dir, "/tmp/attnprof-ctraces-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    const char *names[] = {"llama-eager-gqa", "llama-compiled-gqa", "mistral-gqa-window-fp16"};
    char args[1024];
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "import " FIXTURES "%s.json.gz -o %s/%s -q", names[i], dir, names[i]);
        cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    }
}

static void remove_all(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

static void compare_md(const char *a, const char *b, const char *extra, int want_rc, char *text, size_t n)
{
    char args[1024], path[256];
    snprintf(args, sizeof args, "compare %s/%s %s/%s -o %s/%s-vs-%s%s -q %s", dir, a, dir, b, dir, a, b, extra[0] ? "-x" : "",
             extra);
    cr_assert_eq(attnprof(args), want_rc, "%s: %s", args, err_text);
    snprintf(path, sizeof path, "%s/%s-vs-%s%s/compare.md", dir, a, b, extra[0] ? "-x" : "");
    read_into(path, text, n);
}

Test(compare_traces, different_attention_shapes_are_refused_naming_the_fields, .timeout = 120, .init = import_all,
     .fini = remove_all)
{
    static char text[1 << 20];
    compare_md("llama-eager-gqa", "mistral-gqa-window-fp16", "", EXIT_USAGE, text, sizeof text);
    cr_assert(strstr(err_text, "Hkv 4 vs 8") && strstr(err_text, "D 64 vs 128") && strstr(err_text, "dtype bf16 vs fp16") &&
                  strstr(err_text, "--allow-shape-mismatch"),
              "%s", err_text);
    compare_md("llama-eager-gqa", "mistral-gqa-window-fp16", "--allow-shape-mismatch", EXIT_OK, text, sizeof text);
    cr_assert(strstr(text, "Attention inputs differ") && strstr(text, "mask bool"), "the sentence names the inputs");
    cr_assert_null(strstr(text, "Nothing recorded differs"));
}

Test(compare_traces, compiled_against_eager_names_the_compilation_and_mask, .timeout = 120, .init = import_all,
     .fini = remove_all)
{
    static char text[1 << 20];
    /* the same model: the compiled trace's backend sees the keys after Inductor's fused expand, so
     * its KV heads are unknown, not a difference; its explicit mask is named, not refused */
    compare_md("llama-eager-gqa", "llama-compiled-gqa", "", EXIT_OK, text, sizeof text);
    cr_assert(strstr(text, "Attention backend differs (cuDNN, not compiled vs cuDNN, compiled"), "backend and compilation");
    cr_assert(strstr(text, "Attention inputs differ") && strstr(text, "after any repeat"), "the inputs as recorded");
    cr_assert_null(strstr(text, "Producer differs"), "both PyTorch's profiler");
}
