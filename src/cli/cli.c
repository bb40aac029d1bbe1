/* The command line: one table of commands (cli_command_table) and one of options
 * (cli_option_table: long name, short name, argument, which commands take it), from which
 * getopt_long's options and the "--X is not an option of Y; Y takes: ..." check are both
 * derived; apply_option reads each option's value with its bounds, and the per-command checks
 * of operands and option combinations follow. Every refusal is one line in err and EXIT_USAGE. */
#include "cli.h"
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

void cli_usage(FILE *f)
{
    fputs("usage: attnprof run [options]      run the batch on the GPU, archive it, write the report\n"
          "       attnprof report DIR [--format F] [--log] [--figure-size S] [--reference DIR] [--pdf]\n"
          "                           [--clean] [-o OUT [--force]]\n"
          "                                    re-render an archived run (no GPU needed); what earlier renders\n"
          "                                    made with other options stays unless --clean; -o OUT renders\n"
          "                                    into OUT instead, DIR only read\n"
          "       attnprof compare A B [C ...] -o DIR [--baseline A] [--format F] [--log] [--figure-size S]\n"
          "                                    compare archived runs side by side (no GPU needed)\n"
          "       attnprof sweep [options] -o DIR   run every shape of a sweep, one child per shape\n"
          "       attnprof sweep --collect DIR      (re)build DIR's sweep report from the shapes there\n"
          "       attnprof import TRACE... -o DIR [--variant NAME] [--range NAME] [--device N] [--shape S]\n"
          "                                    archive PyTorch profiler (Kineto) traces, .json or .json.gz (no GPU)\n"
          "       attnprof record [-o DIR] [--range NAME] [--skip N] [--steps N] [--variant NAME] -- CMD ARGS...\n"
          "                                    run any CUDA program under CUPTI injection and archive it\n"
          "       attnprof list                list the variants\n"
          "       attnprof --help | --version\n"
          "\n"
          "run options:\n"
          "  --variants a,b,...   variants to run, in series order (default: all; see `attnprof list`)\n"
          "  --batch N            batch size B (default 8)\n"
          "  --heads N            heads H (default 16)\n"
          "  --seq N              sequence length S (default 1024)\n"
          "  --dim N              head dimension D (default 64)\n"
          "  --kv-heads N         key/value heads (grouped-query attention; divides --heads; 1: MQA;\n"
          "                       default: as many as --heads)\n"
          "  --q-seq N            new queries per head (decode: --seq is then the keys, and the causal\n"
          "                       mask aligns the queries to the end of the keys; default: --seq)\n"
          "  --iters auto|N       recorded forwards per variant: until the median is stable (auto, the\n"
          "                       default; README states the rule) or exactly N\n"
          "  --l2 warm|cold       warm: forwards back to back (default); cold: the L2 flushed before each\n"
          "  --lock-clocks        lock the SM clock at its maximum through NVML where permitted\n"
          "  --replicate K        K passes of the whole batch, variants interleaved (default 1)\n"
          "  --warmup N           warm-up forwards per variant, not recorded (default 5)\n"
          "  --seed N             seed of the random normal inputs (default 0)\n"
          "  --check-rows N       query rows of each sampled head checked against FP64 (0: every row;\n"
          "                       default: every row up to S = 2048, else 640 spread over the head)\n"
          "  --cudnn-replan       cudnn: rebuild the execution plan in every forward\n"
          "  --no-counters        skip the hardware-counter pass (default: --counters, on)\n"
          "  --counters-max-gib N count a variant only if it needs at most N GiB of device memory\n"
          "                       (kernel replay saves and restores it every pass; default 4)\n"
          "  --no-calibrate       skip measuring the GEMM and copy ceilings (default: --calibrate, on)\n"
          "  --ceilings-from F    take the ceilings from run.json F if it was recorded on this GPU (a sweep\n"
          "                       passes its GPU's first shape to the others); else measure them\n"
          "  -o, --output DIR     archive directory (default out/<gpu>-<yyyymmdd-hhmmss>)\n"
          "  --force              replace DIR if it exists\n"
          "  -q, --quiet          no progress line, no summary on stdout\n"
          "compare options:\n"
          "  -o, --output DIR     where compare.md, compare.html, compare.csv and figures/ go (required)\n"
          "  --baseline A         the archive the others are set against (default: the first given)\n"
          "  --allow-shape-mismatch  compare runs of different shapes by throughput (TFLOP/s)\n"
          "  --min-effect PCT     smallest change called faster/slower, in percent (default 2)\n"
          "  --allow-l2-mismatch  compare runs that measured different L2 states (cold, warm)\n"
          "  --fail-on V[,V]      after writing, exit 11 when a variant's CUDA-time verdict is one of\n"
          "                       slower, ambiguous, faster, same (a CI gate: --fail-on slower,ambiguous);\n"
          "                       exit 14 when nothing it could gate was compared\n"
          "  --pair A=B[,C=D]     set the baseline's model trace A against trace B of another run (their\n"
          "                       names differ); traces of one name pair anyway, as do the one of each run\n"
          "  --force              replace DIR if it exists\n"
          "sweep options (--variants, --heads, --iters, --warmup, --seed, --no-counters, --counters-max-gib,\n"
          "  --no-calibrate, --cudnn-replan, --pdf go to every shape's run; --force replaces a sweep; -q as for run):\n"
          "  --seq LIST           sequence lengths: 256,512 or 256:16384:x2 (default 256:16384:x2)\n"
          "  --dim LIST           head dims (default 64,128)\n"
          "  --tokens N           B = N / S for every shape (default 32768); or --batch B for all\n"
          "  --gpus 0,1 | all     one worker process per GPU (CUDA_VISIBLE_DEVICES), shapes from one queue\n"
          "  --check-gpus         every GPU also runs one reference shape; the report flags GPUs that differ\n"
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
          "record options (attnprof record [options] -- CMD ARGS...):\n"
          "  -o, --output DIR     the archive (default out/record-<name>-<yyyymmdd-hhmmss>); --force replaces it\n"
          "  --range NAME         the NVTX range of one step (default: the range name that repeats the same kernels\n"
          "                       most; else each CUDA graph launch; else the period of the kernel sequence)\n"
          "  --skip N, --steps N  leave the first N steps out; keep at most N\n"
          "  --variant NAME       the program's name in the archive (default: the script's or program's base name)\n"
          "  --raw FILE           convert a raw file kept with ATTNPROF_RECORD_KEEP_RAW=1 again (no CMD)\n"
          "run, report, compare and import options:\n"
          "  --format LIST        figure formats: png,svg,pdf (default png,svg; png always, for report.html)\n"
          "  --log                logarithmic time axis in the time chart\n"
          "run, report and compare options:\n"
          "  --figure-size S      screen (default), column (3.5 in) or text (7 in): adds paper-sized figures\n"
          "                       (figures/<size>/, text at least 8 pt at that size) for a LaTeX document\n"
          "run and report options:\n"
          "  --pdf                also report.pdf, printed by headless Chromium (seconds; off by default;\n"
          "                       ATTNPROF_PDF=0 keeps it off); --no-pdf: none (the default)\n"
          "  --reference DIR      an archive of PyTorch's variants on the same GPU: its numbers beside ours\n"
          "\n"
          "exit codes: 0 ok, 1 a variant failed, 2 usage, 3 no CUDA device (or no CUDA in this build), 4 too little device memory,\n"
          "            5 output exists, 6 missing or corrupt archive, 7 I/O or CUDA/CUPTI error, 8 a sweep directory refused\n"
          "            (a stored task command, a link), 9 out of memory, 10 compare: L2 states differ, 11 compare --fail-on:\n"
          "            a verdict in the list, 12 import --shape contradicts the trace, 13 record: the program ran no CUDA\n"
          "            or no GPU work, 14 compare --fail-on: nothing it could gate was compared,\n"
          "            126/127 record: CMD not executable / not found (else record exits with CMD's status), 130 interrupted\n",
          f);
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

enum { OPT_VARIANTS = 256, OPT_BATCH, OPT_HEADS, OPT_SEQ, OPT_DIM, OPT_ITERS, OPT_WARMUP, OPT_SEED, OPT_FORCE,
       OPT_FORMAT, OPT_LOG, OPT_REPLAN, OPT_BASELINE, OPT_ALLOW_SHAPE, OPT_MIN_EFFECT, OPT_COUNTERS,
       OPT_NO_COUNTERS, OPT_CALIBRATE, OPT_NO_CALIBRATE, OPT_VARIANT, OPT_RANGE, OPT_DEVICE, OPT_SHAPE, OPT_NO_PDF,
       OPT_FIGURE_SIZE, OPT_REFERENCE, OPT_TOKENS, OPT_GPUS,
       OPT_REPLICATE, OPT_RESUME, OPT_TASK_COMMAND, OPT_SLURM, OPT_NO_GRES, OPT_SUBMIT, OPT_PARTITION, OPT_TIME,
       OPT_COLLECT, OPT_TASK, OPT_CHECK_ROWS, OPT_PDF, OPT_COUNTERS_MAX_GIB, OPT_CHECK_GPUS, OPT_L2, OPT_LOCK_CLOCKS,
       OPT_CEILINGS_FROM, OPT_ALLOW_L2, OPT_FAIL_ON, OPT_PAIR, OPT_CLEAN, OPT_KV_HEADS, OPT_Q_SEQ, OPT_SKIP, OPT_STEPS, OPT_RAW };

/* Which commands take an option. `run`, `compare` and `list` take every option but import's and
 * the sweep-only ones (what they do not use they ignore); `help` takes every option but import's;
 * `report` takes only what changes how a report renders; `import` only its own, the output's and
 * the figures' options. */
#define ON_RCL (CLI_ON_RUN | CLI_ON_COMPARE | CLI_ON_LIST | CLI_ON_HELP)
#define ON_ALL_BUT_IMPORT (ON_RCL | CLI_ON_REPORT | CLI_ON_SWEEP)
#define ON_RUN_LIKE (ON_RCL | CLI_ON_SWEEP)
#define ON_SWEEP_ONLY (CLI_ON_SWEEP | CLI_ON_HELP)
#define ON_ALL (ON_ALL_BUT_IMPORT | CLI_ON_IMPORT)

const cli_option_spec cli_option_table[] = {
    {"variants", 0, required_argument, OPT_VARIANTS, ON_RUN_LIKE},
    {"batch", 0, required_argument, OPT_BATCH, ON_RUN_LIKE},
    {"heads", 0, required_argument, OPT_HEADS, ON_RUN_LIKE},
    {"seq", 0, required_argument, OPT_SEQ, ON_RUN_LIKE},
    {"dim", 0, required_argument, OPT_DIM, ON_RUN_LIKE},
    {"kv-heads", 0, required_argument, OPT_KV_HEADS, ON_RCL},
    {"q-seq", 0, required_argument, OPT_Q_SEQ, ON_RCL},
    {"iters", 0, required_argument, OPT_ITERS, ON_RUN_LIKE},
    {"warmup", 0, required_argument, OPT_WARMUP, ON_RUN_LIKE},
    {"seed", 0, required_argument, OPT_SEED, ON_RUN_LIKE},
    {"check-rows", 0, required_argument, OPT_CHECK_ROWS, ON_RUN_LIKE},
    {"cudnn-replan", 0, no_argument, OPT_REPLAN, ON_RUN_LIKE},
    {"counters", 0, no_argument, OPT_COUNTERS, ON_RUN_LIKE},
    {"no-counters", 0, no_argument, OPT_NO_COUNTERS, ON_RUN_LIKE},
    {"counters-max-gib", 0, required_argument, OPT_COUNTERS_MAX_GIB, ON_RUN_LIKE},
    {"calibrate", 0, no_argument, OPT_CALIBRATE, ON_RUN_LIKE},
    {"no-calibrate", 0, no_argument, OPT_NO_CALIBRATE, ON_RUN_LIKE},
    {"output", 'o', required_argument, 'o', ON_RUN_LIKE | CLI_ON_IMPORT | CLI_ON_REPORT | CLI_ON_RECORD},
    {"force", 0, no_argument, OPT_FORCE, ON_RUN_LIKE | CLI_ON_IMPORT | CLI_ON_REPORT | CLI_ON_RECORD},
    {"clean", 0, no_argument, OPT_CLEAN, CLI_ON_REPORT | CLI_ON_HELP},
    {"quiet", 'q', no_argument, 'q', ON_ALL | CLI_ON_RECORD},
    {"format", 0, required_argument, OPT_FORMAT, ON_ALL},
    {"log", 0, no_argument, OPT_LOG, ON_ALL},
    {"figure-size", 0, required_argument, OPT_FIGURE_SIZE, ON_ALL_BUT_IMPORT},
    {"reference", 0, required_argument, OPT_REFERENCE, ON_ALL_BUT_IMPORT},
    {"pdf", 0, no_argument, OPT_PDF, ON_ALL_BUT_IMPORT},
    {"no-pdf", 0, no_argument, OPT_NO_PDF, ON_ALL_BUT_IMPORT},
    {"baseline", 0, required_argument, OPT_BASELINE, ON_RUN_LIKE},
    {"allow-shape-mismatch", 0, no_argument, OPT_ALLOW_SHAPE, ON_RUN_LIKE},
    {"min-effect", 0, required_argument, OPT_MIN_EFFECT, ON_RUN_LIKE},
    {"allow-l2-mismatch", 0, no_argument, OPT_ALLOW_L2, CLI_ON_COMPARE | CLI_ON_HELP},
    {"fail-on", 0, required_argument, OPT_FAIL_ON, CLI_ON_COMPARE | CLI_ON_HELP},
    {"pair", 0, required_argument, OPT_PAIR, CLI_ON_COMPARE | CLI_ON_HELP},
    {"tokens", 0, required_argument, OPT_TOKENS, ON_SWEEP_ONLY},
    {"gpus", 0, required_argument, OPT_GPUS, ON_SWEEP_ONLY},
    {"check-gpus", 0, no_argument, OPT_CHECK_GPUS, ON_SWEEP_ONLY},
    {"replicate", 0, required_argument, OPT_REPLICATE, ON_RCL},
    {"l2", 0, required_argument, OPT_L2, ON_RUN_LIKE},
    {"lock-clocks", 0, no_argument, OPT_LOCK_CLOCKS, ON_RUN_LIKE},
    {"ceilings-from", 0, required_argument, OPT_CEILINGS_FROM, ON_RCL},
    {"resume", 0, no_argument, OPT_RESUME, ON_SWEEP_ONLY},
    {"task-command", 0, required_argument, OPT_TASK_COMMAND, ON_SWEEP_ONLY},
    {"slurm-task-command", 0, required_argument, OPT_TASK_COMMAND, ON_SWEEP_ONLY},
    {"slurm", 0, no_argument, OPT_SLURM, ON_SWEEP_ONLY},
    {"no-gres", 0, no_argument, OPT_NO_GRES, ON_SWEEP_ONLY},
    {"submit", 0, no_argument, OPT_SUBMIT, ON_SWEEP_ONLY},
    {"partition", 0, required_argument, OPT_PARTITION, ON_SWEEP_ONLY},
    {"time", 0, required_argument, OPT_TIME, ON_SWEEP_ONLY},
    {"collect", 0, required_argument, OPT_COLLECT, ON_SWEEP_ONLY},
    {"task", 0, required_argument, OPT_TASK, ON_SWEEP_ONLY},
    {"variant", 0, required_argument, OPT_VARIANT, CLI_ON_IMPORT | CLI_ON_RECORD},
    {"range", 0, required_argument, OPT_RANGE, CLI_ON_IMPORT | CLI_ON_RECORD},
    {"device", 0, required_argument, OPT_DEVICE, CLI_ON_IMPORT},
    {"shape", 0, required_argument, OPT_SHAPE, CLI_ON_IMPORT},
    {"skip", 0, required_argument, OPT_SKIP, CLI_ON_RECORD},
    {"steps", 0, required_argument, OPT_STEPS, CLI_ON_RECORD},
    {"raw", 0, required_argument, OPT_RAW, CLI_ON_RECORD},
};
const size_t cli_option_count = sizeof cli_option_table / sizeof cli_option_table[0];
_Static_assert(sizeof cli_option_table / sizeof cli_option_table[0] <= CLI_OPTION_ROWS_MAX,
               "cli_options.given holds one slot per row");

const cli_command_spec cli_command_table[] = {
    {"run", CMD_RUN, CLI_ON_RUN},           {"report", CMD_REPORT, CLI_ON_REPORT},
    {"compare", CMD_COMPARE, CLI_ON_COMPARE}, {"list", CMD_LIST, CLI_ON_LIST},
    {"sweep", CMD_SWEEP, CLI_ON_SWEEP},     {"help", CMD_HELP, CLI_ON_HELP},
    {"import", CMD_IMPORT, CLI_ON_IMPORT},   {"record", CMD_RECORD, CLI_ON_RECORD},
};
const size_t cli_command_count = sizeof cli_command_table / sizeof cli_command_table[0];

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
    case OPT_KV_HEADS: return positive_int("kv-heads", arg, 1 << 12, &rc->shape.kv_heads, err, n);
    case OPT_Q_SEQ: return positive_int("q-seq", arg, 1 << 20, &rc->shape.q_seq, err, n);
    case OPT_DIM:
        o->sweep.dim = arg;
        return o->command == CMD_SWEEP ? EXIT_OK : positive_int("dim", arg, 1024, &rc->shape.dim, err, n);
    case OPT_ITERS:
        o->sweep.iters_given = 1;
        if (!strcmp(arg, "auto")) {
            rc->iters = 0; /* the stop rule decides (run_config.h) */
            return EXIT_OK;
        }
        return positive_int("iters", arg, 100000, &rc->iters, err, n);
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
    case OPT_FAIL_ON: return compare_fail_on_parse(arg, &o->fail_on, err, n) == 0 ? EXIT_OK : EXIT_USAGE;
    case OPT_PAIR: {
        compare_options check = {0};
        o->pairs = arg;
        return compare_pairs_parse(arg, &check, err, n) == 0 ? EXIT_OK : EXIT_USAGE;
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
    if (w->resume && (w->seq || w->dim || w->tokens || w->batch_given || w->heads_given || o->force))
        return err_set(err, n, EXIT_USAGE, "--resume continues the plan in DIR/sweep.json; drop --seq, --dim, --tokens, "
                           "--batch, --heads and --force");
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
        if (c == '?')
            return err_set(err, errlen, EXIT_USAGE, "unknown option '%s'; see attnprof --help", argv[optind - 1]);
        note_given(o, row >= 0 ? row : short_option_row(c));
        row = -1;
        int r = apply_option(c, optarg, o, err, errlen);
        if (r != EXIT_OK)
            return r;
    }
    if (help || version) {
        o->command = help ? CMD_HELP : CMD_VERSION;
        return EXIT_OK;
    }
    if (optind >= argc)
        return err_set(err, errlen, EXIT_USAGE, "no command: use `attnprof run`, `attnprof report DIR` or `attnprof list`");
    const char *cmd = argv[optind++];
    const cli_command_spec *spec = NULL;
    for (size_t i = 0; i < cli_command_count && !spec; i++)
        if (!strcmp(cmd, cli_command_table[i].name))
            spec = &cli_command_table[i];
    if (!spec)
        return err_set(err, errlen, EXIT_USAGE,
                           "unknown command '%s': use run, report, compare, import or list (attnprof --help)", cmd);
    o->command = spec->command;
    int r = check_options_taken(o, spec, err, errlen);
    return r != EXIT_OK ? r : check_operands(o, cmd, argc, argv, err, errlen);
}
