#include "cli.h"

#include "exit_codes.h"
#include "figures.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_usage(FILE *f)
{
    fputs("usage: attnprof run [options]      run the batch on the GPU, archive it, write the report\n"
          "       attnprof report DIR [--format F] [--log] [--figure-size S] [--reference DIR] [--pdf]\n"
          "                                    re-render an archived run (no GPU needed)\n"
          "       attnprof compare A B [C ...] -o DIR [--baseline A] [--format F] [--log] [--figure-size S]\n"
          "                                    compare archived runs side by side (no GPU needed)\n"
          "       attnprof sweep [options] -o DIR   run every shape of a sweep, one child per shape\n"
          "       attnprof sweep --collect DIR      (re)build DIR's sweep report from the shapes there\n"
          "       attnprof import TRACE... -o DIR [--variant NAME] [--range NAME] [--device N] [--shape S]\n"
          "                                    archive PyTorch profiler (Kineto) traces, .json or .json.gz (no GPU)\n"
          "       attnprof list                list the variants\n"
          "       attnprof --help | --version\n"
          "\n"
          "run options:\n"
          "  --variants a,b,...   variants to run, in series order (default: all; see `attnprof list`)\n"
          "  --batch N            batch size B (default 8)\n"
          "  --heads N            heads H (default 16)\n"
          "  --seq N              sequence length S (default 1024)\n"
          "  --dim N              head dimension D (default 64)\n"
          "  --iters N            recorded forwards per variant (default 20)\n"
          "  --warmup N           warm-up forwards per variant, not recorded (default 5)\n"
          "  --seed N             seed of the random normal inputs (default 0)\n"
          "  --check-rows N       query rows of each sampled head checked against FP64 (0: every row;\n"
          "                       default: every row up to S = 2048, else 640 spread over the head)\n"
          "  --cudnn-replan       cudnn: rebuild the execution plan in every forward\n"
          "  --no-counters        skip the hardware-counter pass (default: --counters, on)\n"
          "  --no-calibrate       skip measuring the GEMM and copy ceilings (default: --calibrate, on)\n"
          "  -o, --output DIR     archive directory (default out/<gpu>-<yyyymmdd-hhmmss>)\n"
          "  --force              replace DIR if it exists\n"
          "  -q, --quiet          no progress line, no summary on stdout\n"
          "compare options:\n"
          "  -o, --output DIR     where compare.md, compare.html, compare.csv and figures/ go (required)\n"
          "  --baseline A         the archive the others are set against (default: the first given)\n"
          "  --allow-shape-mismatch  compare runs of different shapes by throughput (TFLOP/s)\n"
          "  --min-effect PCT     smallest change called faster/slower, in percent (default 2)\n"
          "  --force              replace DIR if it exists\n"
          "sweep options (--variants, --heads, --iters, --warmup, --seed, --no-counters, --no-calibrate,\n"
          "  --cudnn-replan, --pdf go to every shape's run; --force replaces a sweep; -q as for run):\n"
          "  --seq LIST           sequence lengths: 256,512 or 256:16384:x2 (default 256:16384:x2)\n"
          "  --dim LIST           head dims (default 64,128)\n"
          "  --tokens N           B = N / S for every shape (default 32768); or --batch B for all\n"
          "  --gpus 0,1 | all     one worker process per GPU (CUDA_VISIBLE_DEVICES), shapes from one queue\n"
          "  --replicate          every GPU also runs one reference shape; the report flags GPUs that differ\n"
          "  --resume             continue DIR's sweep: shapes with a complete archive are not run again; DIR's\n"
          "                       stored task command is never run: give the same --task-command yourself\n"
          "  --task-command CMD   run CMD (sh -c) per shape instead of `attnprof run`; placeholders {exe}\n"
          "                       {dir} {shape} {batch} {heads} {seq} {dim} {variants} {iters} {warmup} {run_flags}\n"
          "  --slurm              write DIR/sweep.sbatch (a job array, one task per shape) and print the sbatch line\n"
          "    --partition P  --time T  --no-gres (no --gres=gpu:1)  --submit (run sbatch)\n"
          "    --slurm-task-command CMD   the same as --task-command, for the array's tasks\n"
          "  --collect DIR        build DIR's sweep report from the archives there; lists missing and failed shapes\n"
          "import options:\n"
          "  -o, --output DIR     the archive to write (required); --force replaces it\n"
          "  --variant A,B,...    the variants' names, one per trace (default: each file's base name)\n"
          "  --range NAME         user_annotation range of one forward (default attn_fwd; else ProfilerStep#N)\n"
          "  --device N           GPU whose operations are kept (default: the lowest device id in the trace)\n"
          "  --shape BxHxSxD[,dtype][,causal]  the shape the traces were recorded at (Kineto records none;\n"
          "                       compare needs it), e.g. 8x16x1024x64,bf16,causal\n"
          "run, report, compare and import options:\n"
          "  --format LIST        figure formats: png,svg,pdf (default png,svg; png always, for report.html)\n"
          "  --log                logarithmic time axis in the time chart\n"
          "  --figure-size S      screen (default), column (3.5 in) or text (7 in): adds paper-sized figures\n"
          "                       (figures/<size>/, text at least 8 pt at that size) for a LaTeX document\n"
          "run and report options:\n"
          "  --pdf                also report.pdf, printed by headless Chromium (seconds; off by default;\n"
          "                       ATTNPROF_PDF=0 keeps it off); --no-pdf: none (the default)\n"
          "  --reference DIR      an archive of PyTorch's variants on the same GPU: its numbers beside ours\n"
          "\n"
          "exit codes: 0 ok, 1 a variant failed, 2 usage, 3 no CUDA device (or no CUDA in this build), 4 too little device memory,\n"
          "            5 output exists, 6 missing or corrupt archive, 7 I/O or CUDA/CUPTI error, 8 a sweep directory refused\n"
          "            (a stored task command, a link), 9 out of memory, 130 interrupted\n",
          f);
}

static int usage_error(char *err, size_t n, const char *fmt, const char *a, const char *b)
{
    snprintf(err, n, fmt, a, b);
    return EXIT_USAGE;
}

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
        snprintf(err, n, "--%s %s: expected %s", opt, safe, what);
        return EXIT_USAGE;
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
        snprintf(err, n, "--%s %s: expected %s", opt, s, lim);
        return EXIT_USAGE;
    }
    *out = (int)v;
    return EXIT_OK;
}

static int parse_formats(const char *s, unsigned *out, char *err, size_t n)
{
    *out = 0;
    char *buf = strdup(s); /* any length: nothing is cut off */
    if (!buf)
        return usage_error(err, n, "out of memory%s%s", "", "");
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "png"))
            *out |= FIG_PNG;
        else if (!strcmp(tok, "svg"))
            *out |= FIG_SVG;
        else if (!strcmp(tok, "pdf"))
            *out |= FIG_PDF;
        else {
            int r = usage_error(err, n, "--format: unknown format '%.100s'; use a list of png, svg, pdf%s", tok, "");
            free(buf);
            return r;
        }
    }
    free(buf);
    if (!*out)
        return usage_error(err, n, "--format: empty list; use e.g. --format png,svg,pdf%s%s", "", "");
    return EXIT_OK;
}

/* Names are checked against the registry by the recorder; here only the list's form. */
static int parse_variants(const char *s, run_config *rc, char *err, size_t n)
{
    if (!s[strspn(s, ",")])
        return usage_error(err, n, "--variants: empty list; name at least one variant%s%s", "", "");
    rc->variant_list = s;
    return EXIT_OK;
}

enum { OPT_VARIANTS = 256, OPT_BATCH, OPT_HEADS, OPT_SEQ, OPT_DIM, OPT_ITERS, OPT_WARMUP, OPT_SEED, OPT_FORCE,
       OPT_FORMAT, OPT_LOG, OPT_REPLAN, OPT_BASELINE, OPT_ALLOW_SHAPE, OPT_MIN_EFFECT, OPT_COUNTERS,
       OPT_NO_COUNTERS, OPT_CALIBRATE, OPT_NO_CALIBRATE, OPT_VARIANT, OPT_RANGE, OPT_DEVICE, OPT_SHAPE, OPT_NO_PDF,
       OPT_FIGURE_SIZE, OPT_REFERENCE, OPT_TOKENS, OPT_GPUS,
       OPT_REPLICATE, OPT_RESUME, OPT_TASK_COMMAND, OPT_SLURM, OPT_NO_GRES, OPT_SUBMIT, OPT_PARTITION, OPT_TIME,
       OPT_COLLECT, OPT_TASK, OPT_CHECK_ROWS, OPT_PDF };

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
        snprintf(err, n, "--shape %s: expected BxHxSxD[,dtype][,causal], e.g. 8x16x1024x64,bf16,causal", s);
        return EXIT_USAGE;
    }
    o->import_shape = (attn_shape){b, h, q, d};
    o->import_has_shape = 1;
    for (char *tok = strtok_r(NULL, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "causal"))
            o->import_causal = 1;
        else if (!strcmp(tok, "bf16") || !strcmp(tok, "fp16") || !strcmp(tok, "fp32"))
            snprintf(o->import_dtype, sizeof o->import_dtype, "%s", tok);
        else {
            snprintf(err, n, "--shape %s: '%s' is neither a dtype (bf16, fp16, fp32) nor causal", s, tok);
            return EXIT_USAGE;
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
        snprintf(err, n, "--%s %s: expected a whole number from 0 to %llu", opt, s, max);
        return EXIT_USAGE;
    }
    *out = v;
    return EXIT_OK;
}

static int apply_option(int c, const char *arg, cli_options *o, char *err, size_t n)
{
    run_config *rc = &o->run;
    unsigned long long v;
    int r;
    if (c != OPT_FORMAT && c != OPT_LOG && c != 'q' && c != OPT_NO_PDF && c != OPT_PDF && c != OPT_FIGURE_SIZE && c != OPT_REFERENCE &&
        !o->run_only_option)
        o->run_only_option = c;
    if (c != OPT_FORMAT && c != OPT_LOG && c != 'q' && c != 'o' && c != OPT_FORCE && c != OPT_VARIANT &&
        c != OPT_RANGE && c != OPT_DEVICE && c != OPT_SHAPE && !o->not_import_option)
        o->not_import_option = c;
    if (c >= OPT_TOKENS && c <= OPT_TASK && !o->sweep.only_option)
        o->sweep.only_option = c;
    switch (c) {
    case OPT_VARIANTS: return parse_variants(arg, rc, err, n);
    case OPT_BATCH: o->sweep.batch_given = 1; return positive_int("batch", arg, 1 << 16, &rc->shape.batch, err, n);
    case OPT_HEADS: o->sweep.heads_given = 1; return positive_int("heads", arg, 1 << 12, &rc->shape.heads, err, n);
    case OPT_SEQ:
        o->sweep.seq = arg;
        return o->command == CMD_SWEEP ? EXIT_OK : positive_int("seq", arg, 1 << 20, &rc->shape.seq, err, n);
    case OPT_DIM:
        o->sweep.dim = arg;
        return o->command == CMD_SWEEP ? EXIT_OK : positive_int("dim", arg, 1024, &rc->shape.dim, err, n);
    case OPT_ITERS: o->sweep.iters_given = 1; return positive_int("iters", arg, 100000, &rc->iters, err, n);
    case OPT_WARMUP:
        o->sweep.warmup_given = 1;
        if ((r = whole_number("warmup", arg, 100000, &v, err, n)) == EXIT_OK)
            rc->warmup = (int)v;
        return r;
    case OPT_TOKENS:
        if ((r = whole_number("tokens", arg, 1ULL << 30, &v, err, n)) == EXIT_OK && v == 0)
            return usage_error(err, n, "--tokens %s: expected a whole number from 1 to 1073741824%s", arg, "");
        o->sweep.tokens = (long)v;
        return r;
    case OPT_GPUS: o->sweep.gpus = arg; return EXIT_OK;
    case OPT_REPLICATE: o->sweep.replicate = 1; return EXIT_OK;
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
    case OPT_SEED:
        if ((r = whole_number("seed", arg, ULLONG_MAX, &v, err, n)) == EXIT_OK)
            rc->seed = v;
        return r;
    case OPT_CHECK_ROWS:
        if ((r = whole_number("check-rows", arg, 1 << 20, &v, err, n)) == EXIT_OK)
            rc->rows_to_check = (int)v;
        return r;
    case 'o':
        if (!*arg || strlen(arg) >= 4000)
            return usage_error(err, n, "-o: expected a directory path of 1 to 3999 bytes%s%s", "", "");
        o->out_dir = arg;
        return EXIT_OK;
    case OPT_FORCE: o->force = 1; return EXIT_OK;
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
            return usage_error(err, n, "--figure-size %s: expected screen, column (3.5 in) or text (7 in)%s", arg, "");
        return EXIT_OK;
    case OPT_REFERENCE:
        if (!*arg)
            return usage_error(err, n, "--reference: expected an archive directory%s%s", "", "");
        o->reference = arg;
        return EXIT_OK;
    case OPT_REPLAN: rc->options.cudnn_replan = 1; return EXIT_OK;
    case OPT_VARIANT:
        if (!*arg)
            return usage_error(err, n, "--variant needs a name%s%s", "", "");
        o->import_variant = arg;
        return EXIT_OK;
    case OPT_RANGE:
        if (!*arg)
            return usage_error(err, n, "--range needs a range name%s%s", "", "");
        o->import_range = arg;
        return EXIT_OK;
    case OPT_DEVICE:
        if ((r = whole_number("device", arg, 1023, &v, err, n)) == EXIT_OK)
            o->import_device = (int)v;
        return r;
    case OPT_SHAPE: return parse_shape(arg, o, err, n);
    case OPT_BASELINE: o->baseline = arg; return EXIT_OK;
    case OPT_ALLOW_SHAPE: o->allow_shape_mismatch = 1; return EXIT_OK;
    case OPT_MIN_EFFECT: {
        char *end;
        errno = 0;
        double pct = strtod(arg, &end);
        if (!plain_decimal(arg) || errno || end == arg || *end || !(pct >= 0 && pct <= 100)) {
            snprintf(err, n, "--min-effect %s: expected a percentage from 0 to 100", arg);
            return EXIT_USAGE;
        }
        o->min_effect = pct / 100;
        return EXIT_OK;
    }
    case OPT_COUNTERS: rc->counters = 1; return EXIT_OK;
    case OPT_NO_COUNTERS: rc->counters = 0; return EXIT_OK;
    case OPT_CALIBRATE: rc->calibrate = 1; return EXIT_OK;
    case OPT_NO_CALIBRATE: rc->calibrate = 0; return EXIT_OK;
    }
    return EXIT_USAGE;
}

/* Which sweep mode, and options that do not go together. */
static int check_sweep(cli_options *o, int argc, char **argv, int operands, char *err, size_t n)
{
    sweep_options *w = &o->sweep;
    if (w->task >= 0) {
        if (operands != 1)
            return usage_error(err, n, "sweep --task I takes the sweep directory: attnprof sweep --task I DIR%s%s", "",
                               "");
        w->task_dir = argv[optind];
        return EXIT_OK;
    }
    if (operands > 0)
        return usage_error(err, n, "unexpected argument '%s' after sweep; the directory goes after -o (or --collect)%s",
                           argv[optind], "");
    if (w->collect) {
        if (o->out_dir || w->slurm || w->resume)
            return usage_error(err, n, "sweep --collect DIR only reads DIR; drop -o, --slurm and --resume%s%s", "", "");
        return EXIT_OK;
    }
    if (!o->out_dir)
        return usage_error(err, n, "sweep needs -o DIR: the shapes' archives and the sweep report go there%s%s", "", "");
    if (w->tokens && w->batch_given)
        return usage_error(err, n, "--tokens and --batch do not go together: --tokens sets B = N / S for each shape%s%s",
                           "", "");
    if (w->resume && (w->seq || w->dim || w->tokens || w->batch_given || w->heads_given || o->force))
        return usage_error(err, n, "--resume continues the plan in DIR/sweep.json; drop --seq, --dim, --tokens, "
                           "--batch, --heads and --force%s%s", "", "");
    if (!w->slurm && (w->no_gres || w->submit || w->partition || w->time_limit))
        return usage_error(err, n, "--partition, --time, --no-gres and --submit go with --slurm%s%s", "", "");
    if (w->slurm && (w->gpus || w->replicate))
        return usage_error(err, n, "--gpus and --replicate are for one host; under --slurm each task gets a GPU from "
                           "Slurm%s%s", "", "");
    if (w->task_command && !w->task_command[strspn(w->task_command, " \t")])
        return usage_error(err, n, "--task-command: empty command%s%s", "", "");
    (void)argc;
    return EXIT_OK;
}

int cli_parse(int argc, char **argv, cli_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    run_config *rc = &o->run;
    rc->shape = (attn_shape){8, 16, 1024, 64};
    rc->iters = 20;
    rc->warmup = 5;
    rc->rel_error_threshold = 2e-2;
    rc->heads_to_check = 3;
    rc->rows_to_check = -1;
    rc->counters = 1;
    rc->calibrate = 1;
    o->formats = FIG_PNG | FIG_SVG;
    o->min_effect = 0.02;
    o->sweep.task = -1;
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
    o->import_device = -1;

    static const struct option longopts[] = {
        {"variants", required_argument, 0, OPT_VARIANTS}, {"batch", required_argument, 0, OPT_BATCH},
        {"heads", required_argument, 0, OPT_HEADS},       {"seq", required_argument, 0, OPT_SEQ},
        {"dim", required_argument, 0, OPT_DIM},           {"iters", required_argument, 0, OPT_ITERS},
        {"warmup", required_argument, 0, OPT_WARMUP},     {"seed", required_argument, 0, OPT_SEED},
        {"output", required_argument, 0, 'o'},            {"force", no_argument, 0, OPT_FORCE},
        {"quiet", no_argument, 0, 'q'},                   {"format", required_argument, 0, OPT_FORMAT},
        {"log", no_argument, 0, OPT_LOG},                 {"cudnn-replan", no_argument, 0, OPT_REPLAN},
        {"baseline", required_argument, 0, OPT_BASELINE}, {"allow-shape-mismatch", no_argument, 0, OPT_ALLOW_SHAPE},
        {"min-effect", required_argument, 0, OPT_MIN_EFFECT},
        {"tokens", required_argument, 0, OPT_TOKENS},     {"gpus", required_argument, 0, OPT_GPUS},
        {"replicate", no_argument, 0, OPT_REPLICATE},     {"resume", no_argument, 0, OPT_RESUME},
        {"task-command", required_argument, 0, OPT_TASK_COMMAND},
        {"slurm-task-command", required_argument, 0, OPT_TASK_COMMAND},
        {"slurm", no_argument, 0, OPT_SLURM},             {"no-gres", no_argument, 0, OPT_NO_GRES},
        {"submit", no_argument, 0, OPT_SUBMIT},           {"partition", required_argument, 0, OPT_PARTITION},
        {"time", required_argument, 0, OPT_TIME},         {"collect", required_argument, 0, OPT_COLLECT},
        {"task", required_argument, 0, OPT_TASK},         {"check-rows", required_argument, 0, OPT_CHECK_ROWS},
        {"counters", no_argument, 0, OPT_COUNTERS},       {"no-counters", no_argument, 0, OPT_NO_COUNTERS},
        {"calibrate", no_argument, 0, OPT_CALIBRATE},     {"no-calibrate", no_argument, 0, OPT_NO_CALIBRATE},
        {"variant", required_argument, 0, OPT_VARIANT},   {"range", required_argument, 0, OPT_RANGE},
        {"device", required_argument, 0, OPT_DEVICE},     {"shape", required_argument, 0, OPT_SHAPE},
        {"no-pdf", no_argument, 0, OPT_NO_PDF},           {"pdf", no_argument, 0, OPT_PDF},
                  {"figure-size", required_argument, 0, OPT_FIGURE_SIZE},
        {"reference", required_argument, 0, OPT_REFERENCE},
        {"help", no_argument, 0, 'h'},                    {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};

    /* GNU getopt permutes: options may come before or after the command. */
    optind = 0;
    opterr = 0;
    int c, help = 0, version = 0;
    while ((c = getopt_long(argc, argv, ":o:qhV", longopts, NULL)) != -1) {
        if (c == 'h') {
            help = 1;
            continue;
        }
        if (c == 'V') {
            version = 1;
            continue;
        }
        if (c == ':')
            return usage_error(err, errlen, "%s needs a value; see attnprof --help%s", argv[optind - 1], "");
        if (c == '?')
            return usage_error(err, errlen, "unknown option '%s'; see attnprof --help%s", argv[optind - 1], "");
        int r = apply_option(c, optarg, o, err, errlen);
        if (r != EXIT_OK)
            return r;
    }
    if (help) {
        o->command = CMD_HELP;
        return EXIT_OK;
    }
    if (version) {
        o->command = CMD_VERSION;
        return EXIT_OK;
    }
    if (optind >= argc)
        return usage_error(err, errlen, "no command: use `attnprof run`, `attnprof report DIR` or `attnprof list`%s%s",
                           "", "");
    const char *cmd = argv[optind++];
    int operands = argc - optind;
    if (!strcmp(cmd, "run"))
        o->command = CMD_RUN;
    else if (!strcmp(cmd, "report"))
        o->command = CMD_REPORT;
    else if (!strcmp(cmd, "compare"))
        o->command = CMD_COMPARE;
    else if (!strcmp(cmd, "list"))
        o->command = CMD_LIST;
    else if (!strcmp(cmd, "sweep"))
        o->command = CMD_SWEEP;
    else if (!strcmp(cmd, "help"))
        o->command = CMD_HELP;
    else if (!strcmp(cmd, "import"))
        o->command = CMD_IMPORT;
    else
        return usage_error(err, errlen,
                           "unknown command '%s': use run, report, compare, import or list (attnprof --help)%s", cmd,
                           "");
    if (o->command != CMD_IMPORT && (o->import_variant || o->import_range || o->import_device >= 0 ||
                                     o->import_has_shape))
        return usage_error(err, errlen, "--variant, --range, --device and --shape are options of import, not of %s%s",
                           cmd, "");
    if (o->command != CMD_SWEEP && o->command != CMD_HELP && o->sweep.only_option) {
        const char *name = "?";
        for (const struct option *l = longopts; l->name; l++)
            if (l->val == o->sweep.only_option)
                name = l->name;
        return usage_error(err, errlen, "--%s is an option of sweep, not of %s", name, cmd);
    }
    if (o->command == CMD_IMPORT) {
        if (operands < 1)
            return usage_error(err, errlen, "import needs at least one trace: attnprof import TRACE... -o DIR%s%s", "",
                               "");
        if (!o->out_dir)
            return usage_error(err, errlen, "import needs -o DIR, the archive to write%s%s", "", "");
        if (o->not_import_option) {
            const char *name = "?";
            for (const struct option *l = longopts; l->name; l++)
                if (l->val == o->not_import_option)
                    name = l->name;
            return usage_error(err, errlen,
                               "import: --%s is not an import option; import takes -o, --force, --variant, --range, "
                               "--device, --shape, --format, --log and -q%s",
                               name, "");
        }
        o->inputs = argv + optind;
        o->n_inputs = operands;
        return EXIT_OK;
    }

    if (o->command == CMD_REPORT) {
        if (operands != 1)
            return usage_error(err, errlen, "report takes one archive directory: attnprof report DIR%s%s", "", "");
        if (!argv[optind][0])
            return usage_error(err, errlen, "report: the archive directory is an empty string%s%s", "", "");
        if (o->run_only_option) {
            const char *name = "?";
            for (const struct option *l = longopts; l->name; l++)
                if (l->val == o->run_only_option)
                    name = l->name;
            return usage_error(err, errlen,
                               "report: --%s is a run option; report takes only --format, --log, --figure-size, "
                               "--reference, --pdf, --no-pdf and -q%s",
                               name, "");
        }
        o->archive = argv[optind];
        return EXIT_OK;
    }
    if (o->command == CMD_COMPARE) {
        if (operands < 2)
            return usage_error(err, errlen, "compare takes two or more archive directories: attnprof compare A B -o DIR%s%s",
                               "", "");
        if (operands > 8)
            return usage_error(err, errlen, "compare takes at most 8 archives%s%s", "", "");
        if (!o->out_dir)
            return usage_error(err, errlen, "compare needs -o DIR for compare.md, compare.html and figures%s%s", "",
                               "");
        o->inputs = argv + optind;
        o->n_inputs = operands;
        return EXIT_OK;
    }
    if (o->command == CMD_SWEEP)
        return check_sweep(o, argc, argv, operands, err, errlen);
    if (operands > 0)
        return usage_error(err, errlen, "unexpected argument '%s' after %s; see attnprof --help", argv[optind], cmd);
    return EXIT_OK;
}
