/* Per-command help, generated from src/cli/cli.c's tables, and each statement it makes
 * checked against what the binary does: the options it lists are exactly the command's rows,
 * the exit codes exactly its rows (every code of exit_codes.h listed by some command), PNG drawn
 * for the HTML page whatever --format says, the paper-figure path --figure-size names, the
 * options a command does not use refused, and "did you mean" for options and commands. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "archive.h"
#include "cli.h"
#include "exit_codes.h"
#include "run_cli.h"
#include "slurp.h"

static char out_a[65536], out_b[65536];

/* Whether --name heads a line of the option column ("  --name ..." or "  -o, --name ..."). */
static int listed(const char *help, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = help; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *p = line;
        if (strncmp(p, "  ", 2))
            continue;
        p += 2;
        if (p[0] == '-' && p[1] != '-' && p[2] == ',')
            p += 4;
        if (!strncmp(p, "--", 2) && !strncmp(p + 2, name, n) && (p[2 + n] == ' ' || p[2 + n] == '\n'))
            return 1;
    }
    return 0;
}

Test(cli_help, each_command_lists_exactly_its_options_and_exit_codes)
{
    for (size_t c = 0; c < cli_command_count; c++) {
        const cli_command_spec *cmd = &cli_command_table[c];
        char args[128];
        snprintf(args, sizeof args, "help %s", cmd->name);
        cr_assert_eq(attnprof_out(args, out_a, sizeof out_a), 0, "%s: %s", args, err_text);
        snprintf(args, sizeof args, "%s --help", cmd->name);
        cr_assert_eq(attnprof_out(args, out_b, sizeof out_b), 0, "%s: %s", args, err_text);
        if (cmd->command != CMD_HELP)
            cr_assert_str_eq(out_a, out_b, "help %s and %s --help differ", cmd->name, cmd->name);
        else
            continue; /* help --help is the command list */
        cr_assert(strstr(out_a, cmd->synopsis), "%s: no synopsis: %s", cmd->name, out_a);
        for (size_t i = 0; i < cli_option_count; i++) {
            const cli_option_spec *o = &cli_option_table[i];
            int takes = (o->commands & cmd->bit) != 0;
            cr_expect_eq(listed(out_a, o->name), takes, "%s: --%s %s", cmd->name, o->name,
                         takes ? "is taken but not listed" : "is listed but not taken");
            if (takes)
                cr_expect(cli_option_help(o, cmd), "%s --%s has no help", cmd->name, o->name);
        }
        const char *codes = strstr(out_a, "\nexit codes:\n");
        cr_assert(codes, "%s: no exit codes", cmd->name);
        for (size_t i = 0; i < cli_exit_count; i++) {
            char line[32];
            snprintf(line, sizeof line, "\n  %-4d", cli_exit_table[i].code);
            int applies = 0;
            for (size_t j = 0; j < cli_exit_count; j++)
                applies |= cli_exit_table[j].code == cli_exit_table[i].code && (cli_exit_table[j].commands & cmd->bit);
            cr_expect_eq(strstr(codes, line) != NULL, applies, "%s: exit %d", cmd->name, cli_exit_table[i].code);
        }
    }
}

Test(cli_help, every_exit_code_is_listed)
{
    const int known[] = {EXIT_OK, EXIT_VARIANT_FAILED, EXIT_USAGE, EXIT_NO_DEVICE, EXIT_DEVICE_MEMORY,
                         EXIT_OUTPUT_EXISTS, EXIT_BAD_ARCHIVE, EXIT_IO, EXIT_REFUSED, EXIT_NO_MEMORY, EXIT_L2_MISMATCH,
                         EXIT_VERDICT_GATE, EXIT_NOTHING_GATED, EXIT_SHAPE_CONFLICT, EXIT_NOTHING_RECORDED, EXIT_INTERRUPTED};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        int found = 0;
        for (size_t i = 0; i < cli_exit_count; i++)
            found |= cli_exit_table[i].code == known[k] && cli_exit_table[i].commands;
        cr_expect(found, "exit %d is in exit_codes.h but no command's help lists it", known[k]);
    }
    cr_assert_eq(attnprof_out("--help", out_a, sizeof out_a), 0);
    for (size_t c = 0; c < cli_command_count; c++) {
        char line[32];
        snprintf(line, sizeof line, "\n  %s ", cli_command_table[c].name);
        cr_expect(strstr(out_a, line), "--help does not list %s: %s", cli_command_table[c].name, out_a);
    }
}

/* "PNG is drawn whatever the list says, for the HTML page": report, compare, import, sweep. */
static void assert_html_has_png(const char *html_path)
{
    char *html = slurp(html_path);
    cr_assert(html, "no %s", html_path);
    cr_expect(strstr(html, "<img src=\"data:image/png;base64,"), "%s inlines no PNG", html_path);
    free(html);
}

Test(cli_help, png_is_drawn_for_the_html_whatever_format_says)
{
    cr_assert_eq(attnprof_out("help compare", out_a, sizeof out_a), 0);
    cr_assert(strstr(out_a, "PNG is drawn whatever the"), "%s", out_a);
    char base[] = "/tmp/attnprof-help-png-XXXXXX";
    cr_assert_not_null(mkdtemp(base));
    char args[1024], path[512];
    snprintf(args, sizeof args, "report tests/fixtures/h200-cudnn919-a -o %s/r --format pdf -q", base);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/r/report.html", base);
    assert_html_has_png(path);
    snprintf(args, sizeof args,
             "compare tests/fixtures/h200-cudnn919-a tests/fixtures/h200-cudnn919-b -o %s/c --format pdf -q", base);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/c/compare.html", base);
    assert_html_has_png(path);
    snprintf(args, sizeof args, "import tests/fixtures/torch-h200/kineto_naive.json.gz -o %s/i --format pdf -q", base);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/i/report.html", base);
    assert_html_has_png(path);
    snprintf(args, sizeof args, "cp -r tests/fixtures/sweep-h200 %s/s", base);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "sweep --collect %s/s --format pdf -q", base);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/s/sweep.html", base);
    assert_html_has_png(path);
    remove_tree(base);
}

/* --figure-size's help names the files it adds: figures/<figure>-<size>.<format>. */
Test(cli_help, figure_size_names_the_files_it_makes)
{
    cr_assert_eq(attnprof_out("help report", out_a, sizeof out_a), 0);
    cr_assert(strstr(out_a, "figures/<figure>-<size>.<format>") && strstr(out_a, "figures/timeline-compact-column.pdf"),
              "%s", out_a);
    char tmp[] = "/tmp/attnprof-help-size-XXXXXX", dir[64];
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/r", tmp);
    char args[512], path[512];
    snprintf(args, sizeof args, "report tests/fixtures/h200-cudnn919-a -o %s --figure-size column --format pdf -q", dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/figures/timeline-compact-column.pdf", dir);
    cr_expect(path_exists(path), "no %s", path);
    snprintf(path, sizeof path, "%s/figures/column", dir);
    cr_expect(!path_exists(path), "a figures/column/ folder help does not name");
    remove_tree(tmp);
}

static int one_line(void) { return strchr(err_text, '\n') == err_text + strlen(err_text) - 1; }

Test(cli_help, options_a_command_does_not_use_are_refused)
{
    /* NEVER: a path in a folder of this test's own, which no refused command may create */
    const struct {
        const char *args, *bad, *cmd;
    } cases[] = {
        {"compare tests/fixtures/h200-cudnn919-a tests/fixtures/h200-cudnn919-b -o NEVER --variants flash", "--variants",
         "compare"},
        {"compare tests/fixtures/h200-cudnn919-a tests/fixtures/h200-cudnn919-b -o NEVER --seq 4096", "--seq", "compare"},
        {"compare tests/fixtures/h200-cudnn919-a tests/fixtures/h200-cudnn919-b -o NEVER --pdf", "--pdf", "compare"},
        {"run --baseline X", "--baseline", "run"},
        {"run --min-effect 5", "--min-effect", "run"},
        {"list --variants flash", "--variants", "list"},
        {"sweep -o NEVER --l2 cold", "--l2", "sweep"},
    };
    char tmp[] = "/tmp/attnprof-help-never-XXXXXX", never[64];
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(never, sizeof never, "%s/out", tmp);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[512];
        const char *at = strstr(cases[i].args, "NEVER");
        if (at)
            snprintf(args, sizeof args, "%.*s%s%s", (int)(at - cases[i].args), cases[i].args, never, at + 5);
        else
            snprintf(args, sizeof args, "%s", cases[i].args);
        cr_expect_eq(attnprof(args), EXIT_USAGE, "%s: %s", args, err_text);
        char want[128];
        snprintf(want, sizeof want, "%s is not an option of %s; %s takes", cases[i].bad, cases[i].cmd, cases[i].cmd);
        cr_expect(strstr(err_text, want) && one_line(), "%s: %s", cases[i].args, err_text);
        cr_expect(!path_exists(never), "%s wrote its output", args);
    }
    remove_tree(tmp);
}

Test(cli_help, did_you_mean)
{
    cr_expect_eq(attnprof("report tests/fixtures/h200-cudnn919-a --formats png"), EXIT_USAGE);
    cr_expect(strstr(err_text, "did you mean --format?") && one_line(), "%s", err_text);
    cr_expect_eq(attnprof("report tests/fixtures/h200-cudnn919-a --figsize column"), EXIT_USAGE);
    cr_expect(strstr(err_text, "did you mean --figure-size?"), "%s", err_text);
    cr_expect_eq(attnprof("reprot tests/fixtures/h200-cudnn919-a"), EXIT_USAGE);
    cr_expect(strstr(err_text, "did you mean report?") && one_line(), "%s", err_text);
    for (size_t c = 0; c < cli_command_count; c++)
        cr_expect(strstr(err_text, cli_command_table[c].name), "unknown command omits %s: %s", cli_command_table[c].name,
                  err_text);
    cr_expect_eq(attnprof("frobnicate"), EXIT_USAGE);
    cr_expect(!strstr(err_text, "did you mean") && strstr(err_text, "sweep"), "%s", err_text);
    cr_expect_eq(attnprof("run --iters 0"), EXIT_USAGE);
    cr_expect(strstr(err_text, "auto") && one_line(), "%s", err_text);
    cr_expect_eq(attnprof("help reprot"), EXIT_USAGE);
    cr_expect(strstr(err_text, "did you mean report?"), "%s", err_text);
}

/* `report README.md` (a file, not an archive) says what to give instead of "README.md/run.json: missing". */
Test(cli_help, report_of_a_file_says_what_to_give)
{
    cr_expect_eq(attnprof("report README.md"), EXIT_BAD_ARCHIVE, "%s", err_text);
    cr_expect(strstr(err_text, "README.md is a file, not an archive") && !strstr(err_text, "README.md/run.json") &&
                  one_line(),
              "%s", err_text);
}

/* --reference matching none of the archive's variants: one warning line naming both sides; a
 * reference that matches gives none. */
Test(cli_help, reference_matching_nothing_warns_with_both_sides)
{
    char tmp[] = "/tmp/attnprof-help-ref-XXXXXX", dir[64], ref[80];
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/r", tmp);
    snprintf(ref, sizeof ref, "%s/other", tmp);
    char args[512];
    snprintf(args, sizeof args, "report tests/fixtures/h200-cudnn919-a -o %s --reference tests/fixtures/h200-cudnn919-b -q",
             dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    cr_expect(!strstr(err_text, "warning"), "%s", err_text);
    remove_tree(dir);
    snprintf(args, sizeof args, "import tests/fixtures/torch-h200/kineto_naive.json.gz --variant other -o %s -q", ref);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(args, sizeof args, "report tests/fixtures/h200-cudnn919-a -o %s --reference %s -q", dir, ref);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    char want[160];
    snprintf(want, sizeof want, "warning: --reference %s matches none", ref);
    cr_expect(one_line() && strstr(err_text, want) &&
                  strstr(err_text, "the reference holds: other") &&
                  strstr(err_text, "naive, naive_inplace") && strstr(err_text, "the reference holds: "),
              "%s", err_text);
    remove_tree(tmp);
}

/* The README's first screen: PyTorch's variants imported from bench/torch_traces.py's files
 * (kineto_naive, kineto_sdpa_flash, ...) stand beside ours under --reference: every row of the
 * bundled example gets the import's median, and no warning is printed. Before, only "sdpa_<name>"
 * was tried and all six rows read "not in the reference". */
Test(cli_help, a_pytorch_import_stands_beside_the_example_as_the_readme_says)
{
    /* the import's folder name is its archive name in compare.csv */
    char tmp[] = "/tmp/attnprof-help-torchref-XXXXXX", dir[64], ref[96];
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/r", tmp);
    snprintf(ref, sizeof ref, "%s/attnprof-help-torchref-torch", tmp);
    char args[1024];
    snprintf(args, sizeof args, "import tests/fixtures/torch-h200/kineto_*.json.gz --shape 8x16x1024x64,bf16,causal -o %s -q",
             ref);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(args, sizeof args, "report out/example-h200 -o %s --reference %s -q", dir, ref);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    cr_expect(!strstr(err_text, "warning"), "%s", err_text);
    char path[256];
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = slurp(path);
    cr_assert_not_null(md);
    const char *summary = strstr(md, "## Summary");
    cr_assert_not_null(summary);
    const char *names[] = {"naive", "naive_inplace", "math", "efficient", "flash", "cudnn"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n| `%s` |", names[i]);
        const char *r = strstr(summary, row);
        cr_assert_not_null(r, "a summary row for %s", names[i]);
        const char *end = strchr(r + 1, '\n');
        const char *cell = strstr(r, ", n=5) |");
        cr_expect(cell && cell < end, "%s: the reference's median of its 5 forwards beside ours: %.*s", names[i],
                  (int)(end - r), r);
        const char *missing = strstr(r, "not in the reference");
        cr_expect(!missing || missing > end, "%s has its reference", names[i]);
        const char *plural = strstr(r, "(1 ops");
        cr_expect(!plural || plural > end, "%s: \"1 op\", not \"1 ops\"", names[i]);
    }
    free(md);
    remove_tree(dir);
    /* compare pairs them the same way: a row per variant of ours, each with the import's ratio
     * (before: twelve rows, none with a counterpart) */
    snprintf(args, sizeof args, "compare out/example-h200 %s -o %s --allow-l2-mismatch -q", ref, dir);
    cr_assert_eq(attnprof(args), 0, "%s", err_text);
    snprintf(path, sizeof path, "%s/compare.csv", dir);
    char *csv = slurp(path);
    cr_assert_not_null(csv);
    int lines = 0;
    for (const char *c = csv; (c = strchr(c, '\n')); c++)
        lines++;
    cr_expect_eq(lines, 1 + 2 * 6, "a header and two rows (ours, the import's) per variant:\n%s", csv);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char row[96];
        snprintf(row, sizeof row, "\n\"%s\",\"attnprof-help-torchref-torch\",0,ok,\"\",5,", names[i]);
        cr_expect_not_null(strstr(csv, row), "%s: the import's row under our name", names[i]);
    }
    free(csv);
    remove_tree(tmp);
}
