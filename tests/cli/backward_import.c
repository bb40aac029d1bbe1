/* An import of a PyTorch training trace (tests/fixtures/models-h200/llama-gqa-sdpa-train: a Llama
 * step with SDPA on cuDNN, forward, backward and optimizer) maps its backward phase to report.md's
 * Backward section; an inference trace gets no such section. No GPU needed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "exit_codes.h"
#include "run_cli.h"
#include "slurp.h"

static char *imported_report(const char *trace, const char *tag)
{
    char dir[256], args[1024], path[512];
    snprintf(dir, sizeof dir, "/tmp/attnprof-bwd-import-%s-%d", tag, (int)getpid());
    remove_tree(dir);
    snprintf(args, sizeof args, "import tests/fixtures/models-h200/%s.json.gz -o %s -q --format svg", trace, dir);
    cr_assert_eq(attnprof(args), EXIT_OK, "%s", err_text);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = slurp(path);
    cr_assert(md, "no %s", path);
    remove_tree(dir);
    return md;
}

Test(backward_import, training_step_backward_phase_in_the_backward_section)
{
    char *md = imported_report("llama-gqa-sdpa-train", "train");
    const char *s = strstr(md, "## Backward\n");
    cr_assert(s, "no Backward section");
    const char *row = strstr(s, "| `llama-gqa-sdpa-train` | 2 | ");
    cr_assert(row && row < strstr(s + 1, "\n## "), "no row for the trace in the Backward section");
    cr_assert(strstr(row, "cuDNN"), "attention's backward implementation: %.200s", row);
    free(md);
}

Test(backward_import, inference_trace_has_no_backward_section)
{
    char *md = imported_report("llama-gqa-sdpa-infer", "infer");
    cr_assert_null(strstr(md, "## Backward\n"));
    free(md);
}
