/* The command table of src/cli/cli.c, checked through cli_parse itself: for every command, each
 * option the table lists for it is taken (not refused as "not an option"), and each option it
 * does not list is refused with exit 2 and the one line "--X is not an option of Y; Y takes: ...",
 * whose list is exactly the table's. No GPU, no binary: cli.o is linked in. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "exit_codes.h"

/* A valid value for each option that takes one; a new option without one fails the test. */
static const char *sample_value(const char *name)
{
    static const char *samples[][2] = {
        {"variants", "flash"}, {"batch", "2"},      {"heads", "4"},        {"seq", "128"},
        {"dim", "64"},         {"iters", "3"},      {"warmup", "1"},       {"seed", "7"},
        {"check-rows", "16"}, {"counters-max-gib", "8"}, {"replicate", "3"}, {"ceilings-from", "tests/fixtures/h200-6var/run.json"}, {"l2", "cold"}, {"output", "/tmp/attnprof-never"},          {"format", "png"},
        {"figure-size", "column"}, {"reference", "/tmp/attnprof-ref"},     {"baseline", "a"},
        {"min-effect", "5"},   {"fail-on", "slower"}, {"pair", "a=b"},   {"tokens", "4096"},  {"gpus", "all"},       {"task-command", "true"},
        {"slurm-task-command", "true"},             {"partition", "gpu"},  {"time", "10"},
        {"collect", "/tmp/attnprof-never"},         {"task", "0"},         {"variant", "flash"},
        {"range", "attn_fwd"}, {"device", "0"},     {"shape", "8x16x1024x64"}, {"kv-heads", "4"}, {"q-seq", "1"},
        {"skip", "1"},         {"steps", "2"},      {"raw", "raw-1.txt"}};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        if (!strcmp(samples[i][0], name))
            return samples[i][1];
    return NULL;
}

/* The operands (and -o) each command needs so that only the option under test can be refused. */
static int command_line(const char *cmd, const cli_option_spec *opt, char **argv, char *value)
{
    int n = 0;
    argv[n++] = "attnprof";
    argv[n++] = (char *)cmd;
    if (!strcmp(cmd, "report"))
        argv[n++] = "tests/fixtures/h200-cudnn919-a";
    if (!strcmp(cmd, "compare")) {
        argv[n++] = "a";
        argv[n++] = "b";
    }
    if (!strcmp(cmd, "import"))
        argv[n++] = "trace.json";
    if ((!strcmp(cmd, "compare") || !strcmp(cmd, "import") || !strcmp(cmd, "sweep")) && strcmp(opt->name, "output")) {
        argv[n++] = "-o";
        argv[n++] = "/tmp/attnprof-never";
    }
    static char flag[64];
    snprintf(flag, sizeof flag, "--%s", opt->name);
    argv[n++] = flag;
    if (opt->has_arg) {
        const char *v = sample_value(opt->name);
        cr_assert(v, "the test has no sample value for --%s", opt->name);
        snprintf(value, 256, "%s", v);
        argv[n++] = value;
    }
    argv[n] = NULL;
    return n;
}

Test(cli_table, every_command_takes_its_options_and_refuses_the_others)
{
    cr_assert_gt(cli_option_count, 30);
    for (size_t c = 0; c < cli_command_count; c++) {
        const cli_command_spec *cmd = &cli_command_table[c];
        /* The list the refusal must give: every option the table lists for this command. */
        char takes[4096] = "";
        size_t len = 0;
        for (size_t i = 0; i < cli_option_count; i++)
            if (cli_option_table[i].commands & cmd->bit)
                len += (size_t)snprintf(takes + len, sizeof takes - len, "%s--%s", len ? ", " : " ",
                                        cli_option_table[i].name);
        for (size_t i = 0; i < cli_option_count; i++) {
            const cli_option_spec *opt = &cli_option_table[i];
            char *argv[16], value[256], err[4096] = "";
            int argc = command_line(cmd->name, opt, argv, value);
            cli_options o;
            int r = cli_parse(argc, argv, &o, err, sizeof err);
            if (opt->commands & cmd->bit) {
                cr_assert_null(strstr(err, "is not an option of"), "%s --%s: %s", cmd->name, opt->name, err);
                cr_assert_eq(o.command, cmd->command, "%s --%s", cmd->name, opt->name);
                continue;
            }
            char expect[4200];
            if (*takes)
                snprintf(expect, sizeof expect, "--%s is not an option of %s; %s takes:%s", opt->name, cmd->name,
                         cmd->name, takes);
            else
                snprintf(expect, sizeof expect, "--%s is not an option of %s; %s takes no options", opt->name,
                         cmd->name, cmd->name);
            cr_assert_eq(r, EXIT_USAGE, "%s --%s accepted", cmd->name, opt->name);
            cr_assert_str_eq(err, expect, "%s --%s", cmd->name, opt->name);
            cr_assert_null(strchr(err, '\n'), "one line");
        }
    }
}

/* The table drives getopt: -o and -q are the short spellings of --output and --quiet (every
 * command takes both: report -o OUT renders elsewhere). */
Test(cli_table, short_options_are_checked_as_their_long_names)
{
    char *argv[] = {"attnprof", "report", "tests/fixtures/h200-cudnn919-a", "-o", "/tmp/x", NULL};
    cli_options o;
    char err[4096] = "";
    cr_assert_eq(cli_parse(5, argv, &o, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(o.out_dir && !strcmp(o.out_dir, "/tmp/x"));
    char *argv2[] = {"attnprof", "import", "t.json", "-o", "/tmp/x", "-q", NULL};
    cr_assert_eq(cli_parse(6, argv2, &o, err, sizeof err), EXIT_OK, "%s", err);
    cr_assert(o.run.quiet && !strcmp(o.out_dir, "/tmp/x"));
    /* The alias names itself, not the spelling it shares an id with. */
    char *argv3[] = {"attnprof", "run", "--slurm-task-command", "true", NULL};
    cr_assert_eq(cli_parse(4, argv3, &o, err, sizeof err), EXIT_USAGE);
    cr_assert_eq(strncmp(err, "--slurm-task-command is not an option of run;", 45), 0, "%s", err);
}
