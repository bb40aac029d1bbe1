/* The command line: one table of commands (cli_command_table) and one of options
 * (cli_option_table: long name, short name, argument, which commands take it), from which
 * getopt_long's options and the "--X is not an option of Y; Y takes: ..." check are both
 * derived; apply_option reads each option's value with its bounds, and the per-command checks
 * of operands and option combinations follow. Every refusal is one line in err and EXIT_USAGE. */
#include "cli.h"
#include "cli_ids.h"
#include "compare.h"

#include "err.h"
#include "exit_codes.h"
#include "figures.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits only: strtol alone would take " 5", "+5" and "-0". */
static int all_digits(const char *s) { return *s && strspn(s, "0123456789") == strlen(s); }

/* Decimal digits with at most one '.', and a digit somewhere: strtod alone would take
 * "0x10" (16), "1e1", "inf", " 5" and "+5". */
static int plain_decimal(const char *s)
{
    size_t digits = strspn(s, "0123456789");
    const char *rest = s + digits;
    if (*rest == '.') {
        size_t frac = strspn(rest + 1, "0123456789");
        digits += frac;
        rest += 1 + frac;
    }
    return digits > 0 && !*rest;
}

/* --partition and --time go into #SBATCH lines of DIR/sweep.sbatch, which sbatch reads
 * without any quoting: only the characters Slurm's own names and times use pass. */
static int slurm_word(const char *opt, const char *s, const char *allowed, const char *what, char *err, size_t n)
{
    if (!*s || strlen(s) > 128 || strspn(s, allowed) != strlen(s)) {
        char safe[64];
        size_t j = 0;
        for (const char *c = s; *c && j + 1 < sizeof safe; c++)
            safe[j++] = (*c >= 0x20 && *c < 0x7f) ? *c : '?';
        safe[j] = '\0';
        return err_set(err, n, EXIT_USAGE, "--%s %s: expected %s", opt, safe, what);
    }
    return EXIT_OK;
}

static int positive_int(const char *opt, const char *s, int max, int *out, char *err, size_t n)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!all_digits(s) || errno || end == s || *end || v <= 0 || v > max) {
        char lim[64];
        snprintf(lim, sizeof lim, "a whole number from 1 to %d", max);
        return err_set(err, n, EXIT_USAGE, "--%s %s: expected %s", opt, s, lim);
    }
    *out = (int)v;
    return EXIT_OK;
}

/* record --skip/--steps: a whole number from min to 1000000. */
static int count_option(const char *opt, const char *s, int min, int *out, char *err, size_t n)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!all_digits(s) || errno || *end || v < min || v > 1000000)
        return err_set(err, n, EXIT_USAGE, "--%s %s: expected a whole number from %d to 1000000", opt, s, min);
    *out = (int)v;
    return EXIT_OK;
}

static int parse_formats(const char *s, unsigned *out, char *err, size_t n)
{
    *out = 0;
    char *buf = strdup(s); /* any length: nothing is cut off */
    if (!buf)
        return err_set(err, n, EXIT_USAGE, "out of memory");
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "png"))
            *out |= FIG_PNG;
        else if (!strcmp(tok, "svg"))
            *out |= FIG_SVG;
        else if (!strcmp(tok, "pdf"))
            *out |= FIG_PDF;
        else {
            int r = err_set(err, n, EXIT_USAGE, "--format: unknown format '%.100s'; use a list of png, svg, pdf", tok);
            free(buf);
            return r;
        }
    }
    free(buf);
    if (!*out)
        return err_set(err, n, EXIT_USAGE, "--format: empty list; use e.g. --format png,svg,pdf");
    return EXIT_OK;
}

/* Names are checked against the registry by the recorder; here only the list's form. */
static int parse_variants(const char *s, run_config *rc, char *err, size_t n)
{
    if (!s[strspn(s, ",")])
        return err_set(err, n, EXIT_USAGE, "--variants: empty list; name at least one variant");
    rc->variant_list = s;
    return EXIT_OK;
}


/* import --shape BxHxSxD[,dtype][,causal]: the shape the traces were recorded at. */
static int parse_shape(const char *s, cli_options *o, char *err, size_t n)
{
    char buf[96], *save;
    snprintf(buf, sizeof buf, "%s", s);
    char *dims = strtok_r(buf, ",", &save);
    int b, h, q, d, used = 0;
    /* Four runs of digits joined by 'x': sscanf's %d alone would take " 8", "+8" and "-0". */
    int strict = dims != NULL;
    for (const char *c = dims; strict && *c; c++)
        strict = (*c >= '0' && *c <= '9') || (*c == 'x' && c > dims && c[-1] != 'x' && c[1]);
    if (!strict || sscanf(dims, "%dx%dx%dx%d%n", &b, &h, &q, &d, &used) != 4 || dims[used] || b <= 0 || h <= 0 ||
        q <= 0 || d <= 0 || b > (1 << 16) || h > (1 << 12) || q > (1 << 20) || d > 1024) {
        return err_set(err, n, EXIT_USAGE, "--shape %s: expected BxHxSxD[,dtype][,causal], e.g. 8x16x1024x64,bf16,causal", s);
    }
    o->import_shape = (attn_shape){.batch = b, .heads = h, .seq = q, .dim = d};
    o->import_has_shape = 1;
    for (char *tok = strtok_r(NULL, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "causal"))
            o->import_causal = 1;
        else if (!strcmp(tok, "bf16") || !strcmp(tok, "fp16") || !strcmp(tok, "fp32"))
            snprintf(o->import_dtype, sizeof o->import_dtype, "%s", tok);
        else {
            return err_set(err, n, EXIT_USAGE, "--shape %s: '%s' is neither a dtype (bf16, fp16, fp32) nor causal", s, tok);
        }
    }
    return EXIT_OK;
}

static int whole_number(const char *opt, const char *s, unsigned long long max, unsigned long long *out, char *err,
                        size_t n)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!all_digits(s) || errno || end == s || *end || v > max) {
        return err_set(err, n, EXIT_USAGE, "--%s %s: expected a whole number from 0 to %llu", opt, s, max);
    }
    *out = v;
    return EXIT_OK;
}

enum { OPTION_NOT_HERE = -1 }; /* an apply_*_option group does not take this option */

/* What the batch runs and measures: run's options, which a sweep passes to every shape. */
static int apply_run_option(int c, const char *arg, cli_options *o, char *err, size_t n)
{
    run_config *rc = &o->run;
    unsigned long long v;
    int r;
    switch (c) {
    case OPT_VARIANTS: return parse_variants(arg, rc, err, n);
    case OPT_BATCH: o->sweep.batch_given = 1; return positive_int("batch", arg, 1 << 16, &rc->shape.batch, err, n);
    case OPT_HEADS: o->sweep.heads_given = 1; return positive_int("heads", arg, 1 << 12, &rc->shape.heads, err, n);
    case OPT_SEQ:
        o->sweep.seq = arg;
        return o->command == CMD_SWEEP ? EXIT_OK : positive_int("seq", arg, 1 << 20, &rc->shape.seq, err, n);
    case OPT_KV_HEADS:
        o->sweep.kv_heads = arg;
        return o->command == CMD_SWEEP ? EXIT_OK : positive_int("kv-heads", arg, 1 << 12, &rc->shape.kv_heads, err, n);
    case OPT_Q_SEQ:
        o->sweep.q_seq = arg;
        return o->command == CMD_SWEEP ? EXIT_OK : positive_int("q-seq", arg, 1 << 20, &rc->shape.q_seq, err, n);
    case OPT_DIM:
        o->sweep.dim = arg;
        return o->command == CMD_SWEEP ? EXIT_OK : positive_int("dim", arg, 1024, &rc->shape.dim, err, n);
    case OPT_ITERS:
        o->sweep.iters_given = 1;
        if (!strcmp(arg, "auto")) {
            rc->iters = 0; /* the stop rule decides (run_config.h) */
            return EXIT_OK;
        }
        if (positive_int("iters", arg, 100000, &rc->iters, err, n) != EXIT_OK)
            return err_set(err, n, EXIT_USAGE, "--iters %s: expected auto (until the median is stable) or a whole "
                           "number from 1 to 100000", arg);
        return EXIT_OK;
    case OPT_WARMUP:
        o->sweep.warmup_given = 1;
        if ((r = whole_number("warmup", arg, 100000, &v, err, n)) == EXIT_OK)
            rc->warmup = (int)v;
        return r;
    case OPT_REPLICATE:
        return positive_int("replicate", arg, RUN_MAX_REPLICATES, &rc->replicates, err, n);
    case OPT_L2:
        if (strcmp(arg, "cold") && strcmp(arg, "warm"))
            return err_set(err, n, EXIT_USAGE, "--l2: expected cold or warm, not '%s'", arg);
        rc->l2_cold = !strcmp(arg, "cold");
        return EXIT_OK;
    case OPT_LOCK_CLOCKS: rc->lock_clocks = 1; return EXIT_OK;
    case OPT_CEILINGS_FROM:
        if (!*arg || strlen(arg) >= 4000)
            return err_set(err, n, EXIT_USAGE, "--ceilings-from: expected the path of an archive's run.json (1 to 3999 bytes)");
        rc->ceilings_from = arg;
        return EXIT_OK;
    case OPT_SEED:
        if ((r = whole_number("seed", arg, ULLONG_MAX, &v, err, n)) == EXIT_OK)
            rc->seed = v;
        return r;
    case OPT_COUNTERS_MAX_GIB:
        if ((r = whole_number("counters-max-gib", arg, 1 << 16, &v, err, n)) == EXIT_OK)
            rc->counters_max_gib = (int)v;
        return r;
    case OPT_CHECK_ROWS:
        if ((r = whole_number("check-rows", arg, 1 << 20, &v, err, n)) == EXIT_OK)
            rc->rows_to_check = (int)v;
        return r;
    case OPT_REPLAN: rc->options.cudnn_replan = 1; return EXIT_OK;
    case OPT_BACKWARD: rc->options.backward = 1; return EXIT_OK;
    case OPT_COUNTERS: rc->counters = 1; return EXIT_OK;
    case OPT_NO_COUNTERS: rc->counters = 0; return EXIT_OK;
    case OPT_CALIBRATE: rc->calibrate = 1; return EXIT_OK;
    case OPT_NO_CALIBRATE: rc->calibrate = 0; return EXIT_OK;
    }
    return OPTION_NOT_HERE;
}

/* How a sweep plans and places its shapes (one host, Slurm). */
static int apply_sweep_option(int c, const char *arg, cli_options *o, char *err, size_t n)
{
    unsigned long long v;
    int r;
    switch (c) {
    case OPT_TOKENS:
        if ((r = whole_number("tokens", arg, 1ULL << 30, &v, err, n)) == EXIT_OK && v == 0)
            return err_set(err, n, EXIT_USAGE, "--tokens %s: expected a whole number from 1 to 1073741824", arg);
        o->sweep.tokens = (long)v;
        return r;
    case OPT_GPUS: o->sweep.gpus = arg; return EXIT_OK;
    case OPT_CHECK_GPUS: o->sweep.replicate = 1; return EXIT_OK;
    case OPT_RESUME: o->sweep.resume = 1; return EXIT_OK;
    case OPT_TASK_COMMAND: o->sweep.task_command = arg; return EXIT_OK;
    case OPT_SLURM: o->sweep.slurm = 1; return EXIT_OK;
    case OPT_NO_GRES: o->sweep.no_gres = 1; return EXIT_OK;
    case OPT_SUBMIT: o->sweep.submit = 1; return EXIT_OK;
    case OPT_PARTITION:
        o->sweep.partition = arg;
        return slurm_word("partition", arg,
                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,",
                          "a Slurm partition name (letters, digits, '_', '-', '.'; several comma-separated)", err, n);
    case OPT_TIME:
        o->sweep.time_limit = arg;
        return slurm_word("time", arg, "0123456789:-",
                          "a Slurm time limit: minutes, MM:SS, HH:MM:SS, D-HH or D-HH:MM:SS", err, n);
    case OPT_COLLECT: o->sweep.collect = arg; return EXIT_OK;
    case OPT_TASK:
        if ((r = whole_number("task", arg, SWEEP_TASK_MAX, &v, err, n)) == EXIT_OK)
            o->sweep.task = (int)v;
        return r;
    }
    return OPTION_NOT_HERE;
}

/* Where the outputs go and how they look; compare's and import's own options. */
static int apply_output_option(int c, const char *arg, cli_options *o, char *err, size_t n)
{
    run_config *rc = &o->run;
    unsigned long long v;
    int r;
    switch (c) {
    case 'o':
        if (!*arg || strlen(arg) >= 4000)
            return err_set(err, n, EXIT_USAGE, "-o: expected a directory path of 1 to 3999 bytes");
        o->out_dir = arg;
        return EXIT_OK;
    case OPT_FORCE: o->force = 1; return EXIT_OK;
    case OPT_CLEAN: o->clean = 1; return EXIT_OK;
    case 'q': rc->quiet = 1; return EXIT_OK;
    case OPT_FORMAT: return parse_formats(arg, &o->formats, err, n);
    case OPT_LOG: o->log_axis = 1; return EXIT_OK;
    case OPT_NO_PDF: o->pdf = 0; return EXIT_OK;
    case OPT_PDF: o->pdf = 1; return EXIT_OK;
    case OPT_FIGURE_SIZE:
        if (!strcmp(arg, "screen"))
            o->figure_size = FIG_SIZE_SCREEN;
        else if (!strcmp(arg, "column"))
            o->figure_size = FIG_SIZE_COLUMN;
        else if (!strcmp(arg, "text"))
            o->figure_size = FIG_SIZE_TEXT;
        else
            return err_set(err, n, EXIT_USAGE, "--figure-size %s: expected screen, column (3.5 in) or text (7 in)", arg);
        return EXIT_OK;
    case OPT_REFERENCE:
        if (!*arg)
            return err_set(err, n, EXIT_USAGE, "--reference: expected an archive directory");
        o->reference = arg;
        return EXIT_OK;
    case OPT_SKIP: return count_option("skip", arg, 0, &o->record_skip, err, n);
    case OPT_STEPS: return count_option("steps", arg, 1, &o->record_steps, err, n);
    case OPT_RAW:
        if (!*arg)
            return err_set(err, n, EXIT_USAGE, "--raw needs a raw file (kept with ATTNPROF_RECORD_KEEP_RAW=1)");
        o->record_raw = arg;
        return EXIT_OK;
    case OPT_VARIANT:
        if (!*arg)
            return err_set(err, n, EXIT_USAGE, "--variant needs a name");
        o->import_variant = arg;
        return EXIT_OK;
    case OPT_RANGE:
        if (!*arg)
            return err_set(err, n, EXIT_USAGE, "--range needs a range name");
        o->import_range = arg;
        return EXIT_OK;
    case OPT_DEVICE:
        if ((r = whole_number("device", arg, 1023, &v, err, n)) == EXIT_OK)
            o->import_device = (int)v;
        return r;
    case OPT_SHAPE: return parse_shape(arg, o, err, n);
    case OPT_BASELINE: o->baseline = arg; return EXIT_OK;
    case OPT_ALLOW_SHAPE: o->allow_shape_mismatch = 1; return EXIT_OK;
    case OPT_ALLOW_L2: o->allow_l2_mismatch = 1; return EXIT_OK;
    case OPT_FAIL_ON: return compare_fail_on_parse(arg, &o->fail_on, err, n);
    case OPT_PAIR: {
        compare_options check = {0};
        o->pairs = arg;
        return compare_pairs_parse(arg, &check, err, n);
    }
    case OPT_MIN_EFFECT: {
        char *end;
        errno = 0;
        double pct = strtod(arg, &end);
        if (!plain_decimal(arg) || errno || end == arg || *end || !(pct >= 0 && pct <= 100)) {
            return err_set(err, n, EXIT_USAGE, "--min-effect %s: expected a percentage from 0 to 100", arg);
        }
        o->min_effect = pct / 100;
        return EXIT_OK;
    }
    }
    return OPTION_NOT_HERE;
}

/* One option into o: each group above takes its own (OPTION_NOT_HERE when not). */
static int apply_option(int c, const char *arg, cli_options *o, char *err, size_t n)
{
    int r = apply_run_option(c, arg, o, err, n);
    if (r == OPTION_NOT_HERE)
        r = apply_sweep_option(c, arg, o, err, n);
    if (r == OPTION_NOT_HERE)
        r = apply_output_option(c, arg, o, err, n);
    return r == OPTION_NOT_HERE ? EXIT_USAGE : r;
}

/* "unknown command 'X'[; did you mean Y?]; the commands: run, report, ..." */
static int unknown_command(const char *cmd, char *err, size_t n)
{
    char list[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < cli_command_count; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", cli_command_table[i].name);
    const char *near = cli_suggest_command(cmd);
    char hint[64] = "";
    if (near)
        snprintf(hint, sizeof hint, "did you mean %s? ", near);
    return err_set(err, n, EXIT_USAGE, "unknown command '%.100s'; %sthe commands: %s (attnprof --help)", cmd, hint,
                   list);
}

/* Which sweep mode, and options that do not go together. */
static int check_sweep(cli_options *o, int argc, char **argv, int operands, char *err, size_t n)
{
    sweep_options *w = &o->sweep;
    if (w->task >= 0) {
        if (operands != 1)
            return err_set(err, n, EXIT_USAGE, "sweep --task I takes the sweep directory: attnprof sweep --task I DIR");
        w->task_dir = argv[optind];
        return EXIT_OK;
    }
    if (operands > 0)
        return err_set(err, n, EXIT_USAGE, "unexpected argument '%s' after sweep; the directory goes after -o (or --collect)",
                           argv[optind]);
    if (w->collect) {
        if (o->out_dir || w->slurm || w->resume)
            return err_set(err, n, EXIT_USAGE, "sweep --collect DIR only reads DIR; drop -o, --slurm and --resume");
        return EXIT_OK;
    }
    if (!o->out_dir)
        return err_set(err, n, EXIT_USAGE, "sweep needs -o DIR: the shapes' archives and the sweep report go there");
    if (w->tokens && w->batch_given)
        return err_set(err, n, EXIT_USAGE, "--tokens and --batch do not go together: --tokens sets B = N / S for each shape");
    if (w->resume && (w->seq || w->dim || w->kv_heads || w->q_seq || w->tokens || w->batch_given || w->heads_given ||
                      o->force))
        return err_set(err, n, EXIT_USAGE, "--resume continues the plan in DIR/sweep.json; drop --seq, --dim, "
                       "--kv-heads, --q-seq, --tokens, --batch, --heads and --force");
    if (!w->slurm && (w->no_gres || w->submit || w->partition || w->time_limit))
        return err_set(err, n, EXIT_USAGE, "--partition, --time, --no-gres and --submit go with --slurm");
    if (w->slurm && (w->gpus || w->replicate))
        return err_set(err, n, EXIT_USAGE, "--gpus and --check-gpus are for one host; under --slurm each task gets a GPU from "
                           "Slurm");
    if (w->task_command && !w->task_command[strspn(w->task_command, " \t")])
        return err_set(err, n, EXIT_USAGE, "--task-command: empty command");
    (void)argc;
    return EXIT_OK;
}

/* The defaults of every command's options. */
static void set_defaults(cli_options *o)
{
    memset(o, 0, sizeof *o);
    run_config *rc = &o->run;
    rc->shape = (attn_shape){.batch = 8, .heads = 16, .seq = 1024, .dim = 64};
    rc->iters = 0; /* --iters auto */
    rc->replicates = 1;
    rc->warmup = 5;
    rc->rel_error_threshold = 2e-2;
    rc->heads_to_check = 3;
    rc->rows_to_check = -1;
    rc->counters_max_gib = RUN_COUNTERS_MAX_GIB_DEFAULT;
    rc->counters = 1;
    rc->calibrate = 1;
    o->formats = FIG_PNG | FIG_SVG;
    o->min_effect = 0.02;
    o->sweep.task = -1;
    o->import_device = -1;
}

/* getopt_long's options, from cli_option_table, with --help and --version. */
static const struct option *long_options(void)
{
    static struct option longopts[CLI_OPTION_ROWS_MAX + 3];
    if (!longopts[0].name) {
        size_t i = 0;
        for (; i < cli_option_count; i++)
            longopts[i] = (struct option){cli_option_table[i].name, cli_option_table[i].has_arg, 0,
                                          cli_option_table[i].id};
        longopts[i++] = (struct option){"help", no_argument, 0, 'h'};
        longopts[i++] = (struct option){"version", no_argument, 0, 'V'};
        longopts[i] = (struct option){0, 0, 0, 0};
    }
    return longopts;
}

/* Notes row `row` as given (once, in the order first given). */
static void note_given(cli_options *o, int row)
{
    for (int i = 0; i < o->n_given; i++)
        if (o->given[i] == row)
            return;
    if (o->n_given < CLI_OPTION_ROWS_MAX)
        o->given[o->n_given++] = row;
}

/* The row of a short option ('o', 'q'); -1 if none. */
static int short_option_row(int c)
{
    for (size_t i = 0; i < cli_option_count; i++)
        if (cli_option_table[i].short_name == c)
            return (int)i;
    return -1;
}

/* The first option given that the command does not take, named with every option it does
 * take, all from cli_option_table. */
static int check_options_taken(const cli_options *o, const cli_command_spec *cmd, char *err, size_t n)
{
    for (int g = 0; g < o->n_given; g++) {
        const cli_option_spec *bad = &cli_option_table[o->given[g]];
        if (bad->commands & cmd->bit)
            continue;
        int takes_any = 0;
        for (size_t i = 0; i < cli_option_count; i++)
            takes_any |= (cli_option_table[i].commands & cmd->bit) != 0;
        if (!takes_any)
            return err_set(err, n, EXIT_USAGE, "--%s is not an option of %s; %s takes no options", bad->name, cmd->name,
                           cmd->name);
        int len = snprintf(err, n, "--%s is not an option of %s; %s takes:", bad->name, cmd->name, cmd->name);
        const char *sep = " ";
        for (size_t i = 0; i < cli_option_count && len >= 0 && (size_t)len < n; i++) {
            if (!(cli_option_table[i].commands & cmd->bit))
                continue;
            len += snprintf(err + len, n - (size_t)len, "%s--%s", sep, cli_option_table[i].name);
            sep = ", ";
        }
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* record: CMD is the operands, what follows "--" (getopt stops there, so CMD's own options are
 * CMD's); --raw takes none. */
static int check_record(cli_options *o, int argc, char **argv, char *err, size_t n)
{
    o->inputs = argv + optind;
    o->n_inputs = argc - optind;
    if (o->record_raw && o->n_inputs > 0)
        return err_set(err, n, EXIT_USAGE, "record --raw FILE converts a kept raw file: give no CMD with it");
    if (o->record_raw && !o->out_dir)
        return err_set(err, n, EXIT_USAGE, "record --raw FILE needs -o DIR, the archive to write");
    if (!o->record_raw && (o->n_inputs < 1 || !o->inputs[0][0]))
        return err_set(err, n, EXIT_USAGE, "record needs a program: attnprof record [-o DIR] -- CMD ARGS...");
    return EXIT_OK;
}

/* The command's operands: how many it takes, and what else it needs. */
static int check_operands(cli_options *o, const char *cmd, int argc, char **argv, char *err, size_t n)
{
    int operands = argc - optind;
    switch (o->command) {
    case CMD_IMPORT:
        if (operands < 1)
            return err_set(err, n, EXIT_USAGE, "import needs at least one trace: attnprof import TRACE... -o DIR");
        if (!o->out_dir)
            return err_set(err, n, EXIT_USAGE, "import needs -o DIR, the archive to write");
        o->inputs = argv + optind;
        o->n_inputs = operands;
        return EXIT_OK;
    case CMD_REPORT:
        if (operands != 1)
            return err_set(err, n, EXIT_USAGE, "report takes one archive directory: attnprof report DIR");
        if (!argv[optind][0])
            return err_set(err, n, EXIT_USAGE, "report: the archive directory is an empty string");
        o->archive = argv[optind];
        if (o->force && !o->out_dir)
            return err_set(err, n, EXIT_USAGE, "report --force replaces -o OUT; without -o the archive is re-rendered in place");
        if (o->clean && o->out_dir)
            return err_set(err, n, EXIT_USAGE, "report --clean: -o OUT is written whole, so there is nothing to clean; leave "
                               "one of them out");
        return EXIT_OK;
    case CMD_COMPARE:
        if (operands < 2)
            return err_set(err, n, EXIT_USAGE, "compare takes two or more archive directories: attnprof compare A B -o DIR");
        if (operands > 8)
            return err_set(err, n, EXIT_USAGE, "compare takes at most 8 archives");
        if (!o->out_dir)
            return err_set(err, n, EXIT_USAGE, "compare needs -o DIR for compare.md, compare.html and figures");
        o->inputs = argv + optind;
        o->n_inputs = operands;
        return EXIT_OK;
    case CMD_SWEEP: return check_sweep(o, argc, argv, operands, err, n);
    case CMD_HELP:
        if (operands > 1)
            return err_set(err, n, EXIT_USAGE, "help takes one command: attnprof help CMD");
        if (operands == 1 && !(o->help_on = cli_command_named(argv[optind])))
            return unknown_command(argv[optind], err, n);
        if (o->help_on && o->help_on->command == CMD_HELP)
            o->help_on = NULL;
        return EXIT_OK;
    case CMD_RECORD: return check_record(o, argc, argv, err, n);
    default:
        if (operands > 0)
            return err_set(err, n, EXIT_USAGE, "unexpected argument '%s' after %s; see attnprof --help", argv[optind], cmd);
        return EXIT_OK;
    }
}

int cli_parse(int argc, char **argv, cli_options *o, char *err, size_t errlen)
{
    set_defaults(o);
    /* The command decides how --seq and --dim read (one number, or a LIST for sweep):
     * find it before parsing the options. */
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            if (!strcmp(argv[i], "--"))
                break;
            continue;
        }
        if (!strcmp(argv[i], "sweep"))
            o->command = CMD_SWEEP;
        break;
    }

    /* GNU getopt permutes: options may come before or after the command. */
    optind = 0;
    opterr = 0;
    int c, help = 0, version = 0, row = -1;
    while ((c = getopt_long(argc, argv, ":o:qhV", long_options(), &row)) != -1) {
        if (c == 'h' || c == 'V') {
            help |= c == 'h';
            version |= c == 'V';
            row = -1;
            continue;
        }
        if (c == ':')
            return err_set(err, errlen, EXIT_USAGE, "%s needs a value; see attnprof --help", argv[optind - 1]);
        if (c == '?') {
            const char *typed = argv[optind - 1];
            const char *near = typed[0] == '-' && typed[1] == '-' ? cli_suggest_option(typed) : NULL;
            if (near)
                return err_set(err, errlen, EXIT_USAGE, "unknown option '%.100s'; did you mean --%s? (attnprof help CMD "
                               "lists a command's options)", typed, near);
            return err_set(err, errlen, EXIT_USAGE, "unknown option '%.100s'; attnprof help CMD lists a command's options",
                           typed);
        }
        note_given(o, row >= 0 ? row : short_option_row(c));
        row = -1;
        int r = apply_option(c, optarg, o, err, errlen);
        if (r != EXIT_OK)
            return r;
    }
    if (help || version) {
        /* attnprof CMD --help: that command's help; --help alone: the list of commands */
        const cli_command_spec *on = optind < argc ? cli_command_named(argv[optind]) : NULL;
        if (help && optind < argc && !on)
            return unknown_command(argv[optind], err, errlen);
        o->command = help ? CMD_HELP : CMD_VERSION;
        o->help_on = on && on->command != CMD_HELP ? on : NULL;
        return EXIT_OK;
    }
    if (optind >= argc)
        return err_set(err, errlen, EXIT_USAGE, "no command: use `attnprof run`, `attnprof report DIR` or `attnprof list` "
                       "(attnprof --help lists them all)");
    const char *cmd = argv[optind++];
    const cli_command_spec *spec = cli_command_named(cmd);
    if (!spec)
        return unknown_command(cmd, err, errlen);
    o->command = spec->command;
    int r = check_options_taken(o, spec, err, errlen);
    return r != EXIT_OK ? r : check_operands(o, cmd, argc, argv, err, errlen);
}
