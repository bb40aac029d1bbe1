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

/* Which commands take an option: exactly those that use it, so that an option a command would
 * ignore is refused with the list of the ones it takes. `help` takes none (attnprof help CMD). */
#define R CLI_ON_RUN
#define P CLI_ON_REPORT
#define C CLI_ON_COMPARE
#define I CLI_ON_IMPORT
#define W CLI_ON_SWEEP
#define K CLI_ON_RECORD

const cli_option_spec cli_option_table[] = {
    {"variants", 0, required_argument, OPT_VARIANTS, R | W, "a,b,...",
     "variants to run, in series order (default: all; see `attnprof list`)"},
    {"batch", 0, required_argument, OPT_BATCH, R | W, "N", "batch size B (default 8)"},
    {"heads", 0, required_argument, OPT_HEADS, R | W, "N", "heads H (default 16)"},
    {"seq", 0, required_argument, OPT_SEQ, R | W, "N", "sequence length S (default 1024)"},
    {"dim", 0, required_argument, OPT_DIM, R | W, "N", "head dimension D (default 64)"},
    {"kv-heads", 0, required_argument, OPT_KV_HEADS, R, "N",
     "key/value heads (grouped-query attention; divides --heads; 1: MQA; default: as many as --heads)"},
    {"q-seq", 0, required_argument, OPT_Q_SEQ, R, "N",
     "new queries per head (decode: --seq is then the keys, and the causal mask aligns the queries to the end "
     "of the keys; default: --seq)"},
    {"iters", 0, required_argument, OPT_ITERS, R | W, "auto|N",
     "recorded forwards per variant: until the median is stable (auto, the default; README states the rule) or "
     "exactly N (1 to 100000)"},
    {"warmup", 0, required_argument, OPT_WARMUP, R | W, "N", "warm-up forwards per variant, not recorded (default 5)"},
    {"seed", 0, required_argument, OPT_SEED, R | W, "N", "seed of the random normal inputs (default 0)"},
    {"check-rows", 0, required_argument, OPT_CHECK_ROWS, R, "N",
     "query rows of each sampled head checked against FP64 (0: every row; default: every row up to S = 2048, "
     "else 640 spread over the head)"},
    {"cudnn-replan", 0, no_argument, OPT_REPLAN, R | W, NULL, "cudnn: rebuild the execution plan in every forward"},
    {"counters", 0, no_argument, OPT_COUNTERS, R | W, NULL, "the hardware-counter pass (the default)"},
    {"no-counters", 0, no_argument, OPT_NO_COUNTERS, R | W, NULL, "skip the hardware-counter pass"},
    {"counters-max-gib", 0, required_argument, OPT_COUNTERS_MAX_GIB, R | W, "N",
     "count a variant only if it needs at most N GiB of device memory (kernel replay saves and restores it "
     "every pass; default 4)"},
    {"calibrate", 0, no_argument, OPT_CALIBRATE, R | W, NULL, "measure the GEMM and copy ceilings (the default)"},
    {"no-calibrate", 0, no_argument, OPT_NO_CALIBRATE, R | W, NULL, "skip measuring the GEMM and copy ceilings"},
    {"output", 'o', required_argument, 'o', R | P | C | I | W | K, "DIR", NULL},
    {"force", 0, no_argument, OPT_FORCE, R | P | C | I | W | K, NULL, "replace -o DIR if it exists"},
    {"clean", 0, no_argument, OPT_CLEAN, P, NULL,
     "remove what earlier renders made that this one does not (default: they stay)"},
    {"quiet", 'q', no_argument, 'q', R | P | C | I | W | K, NULL, "no progress line, no summary on stdout"},
    {"format", 0, required_argument, OPT_FORMAT, R | P | C | I | W, "LIST",
     "figure formats: png,svg,pdf (default png,svg); PNG is drawn whatever the list says, for the HTML page"},
    {"log", 0, no_argument, OPT_LOG, R | P | C | I, NULL, "logarithmic time axis in the time chart"},
    {"figure-size", 0, required_argument, OPT_FIGURE_SIZE, R | P | C, "S",
     "screen (default), column (3.5 in) or text (7 in): adds paper-sized figures for a LaTeX document, "
     "figures/<figure>-<size>.<format> (e.g. figures/timeline-compact-column.pdf), text at least 8 pt at that "
     "size"},
    {"reference", 0, required_argument, OPT_REFERENCE, R | P, "DIR",
     "an archive of PyTorch's variants on the same GPU: its numbers beside ours, matched by variant name"},
    {"pdf", 0, no_argument, OPT_PDF, R | P | W, NULL,
     "also report.pdf, printed by headless Chromium (seconds; ATTNPROF_PDF=0 keeps it off)"},
    {"no-pdf", 0, no_argument, OPT_NO_PDF, R | P | W, NULL, "no report.pdf (the default)"},
    {"baseline", 0, required_argument, OPT_BASELINE, C, "A",
     "the archive the others are set against, as written or by directory name (default: the first given)"},
    {"allow-shape-mismatch", 0, no_argument, OPT_ALLOW_SHAPE, C, NULL,
     "compare runs of different shapes by throughput (TFLOP/s)"},
    {"min-effect", 0, required_argument, OPT_MIN_EFFECT, C, "PCT",
     "smallest change called faster/slower, in percent (default 2)"},
    {"allow-l2-mismatch", 0, no_argument, OPT_ALLOW_L2, C, NULL,
     "compare runs that measured different L2 states (cold, warm); without it such runs exit 10"},
    {"fail-on", 0, required_argument, OPT_FAIL_ON, C, "V[,V]",
     "after writing, exit 11 when a variant's CUDA-time verdict is one of slower, ambiguous, faster, same "
     "(a CI gate: --fail-on slower,ambiguous); exit 14 when nothing it could gate was compared"},
    {"pair", 0, required_argument, OPT_PAIR, C, "A=B[,C=D]",
     "set the baseline's model trace A against trace B of another run (their names differ); a '=', ',' or '\\' "
     "inside a name is written \\=, \\, or \\\\"},
    {"tokens", 0, required_argument, OPT_TOKENS, W, "N", "B = N / S for every shape (default 32768); or --batch B for all"},
    {"gpus", 0, required_argument, OPT_GPUS, W, "0,1|all",
     "one worker process per GPU (CUDA_VISIBLE_DEVICES), shapes from one queue"},
    {"check-gpus", 0, no_argument, OPT_CHECK_GPUS, W, NULL,
     "every GPU also runs one reference shape; the report flags GPUs that differ"},
    {"replicate", 0, required_argument, OPT_REPLICATE, R, "K", "K passes of the whole batch, variants interleaved (default 1)"},
    {"l2", 0, required_argument, OPT_L2, R, "warm|cold",
     "warm: forwards back to back (default); cold: the L2 flushed before each"},
    {"lock-clocks", 0, no_argument, OPT_LOCK_CLOCKS, R, NULL, "lock the SM clock at its maximum through NVML where permitted"},
    {"ceilings-from", 0, required_argument, OPT_CEILINGS_FROM, R, "F",
     "take the ceilings from run.json F if it was recorded on this GPU; else measure them"},
    {"resume", 0, no_argument, OPT_RESUME, W, NULL,
     "continue DIR's sweep: shapes with a complete archive are not run again; DIR's stored task command is never "
     "run: give the same --task-command yourself"},
    {"task-command", 0, required_argument, OPT_TASK_COMMAND, W, "CMD",
     "run CMD (sh -c) per shape instead of `attnprof run` (no GPU needed here); placeholders {exe} {dir} {shape} "
     "{batch} {heads} {seq} {dim} {variants} {iters} {warmup} {run_flags}"},
    {"slurm-task-command", 0, required_argument, OPT_TASK_COMMAND, W, "CMD", "the same as --task-command, for the array's tasks"},
    {"slurm", 0, no_argument, OPT_SLURM, W, NULL,
     "write DIR/sweep.sbatch (a job array, one task per shape) and print the sbatch line (no GPU needed here)"},
    {"no-gres", 0, no_argument, OPT_NO_GRES, W, NULL, "with --slurm: no --gres=gpu:1"},
    {"submit", 0, no_argument, OPT_SUBMIT, W, NULL, "with --slurm: run sbatch"},
    {"partition", 0, required_argument, OPT_PARTITION, W, "P", "with --slurm: the partition"},
    {"time", 0, required_argument, OPT_TIME, W, "T", "with --slurm: the time limit"},
    {"collect", 0, required_argument, OPT_COLLECT, W, "DIR",
     "build DIR's sweep report from the archives there; lists missing and failed shapes"},
    {"task", 0, required_argument, OPT_TASK, W, "I", "run shape I of the sweep in DIR (what a Slurm array task runs)"},
    {"variant", 0, required_argument, OPT_VARIANT, I | K, "NAME", NULL},
    {"range", 0, required_argument, OPT_RANGE, I | K, "NAME", NULL},
    {"device", 0, required_argument, OPT_DEVICE, I, "N",
     "GPU whose operations are kept (default: the lowest device id in the trace)"},
    {"shape", 0, required_argument, OPT_SHAPE, I, "BxHxSxD[,dtype][,causal]",
     "the shape the traces were recorded at (Kineto records none; compare needs it), e.g. 8x16x1024x64,bf16,causal"},
    {"skip", 0, required_argument, OPT_SKIP, K, "N", "leave the first N steps out"},
    {"steps", 0, required_argument, OPT_STEPS, K, "N", "keep at most N steps"},
    {"raw", 0, required_argument, OPT_RAW, K, "FILE", "convert a raw file kept with ATTNPROF_RECORD_KEEP_RAW=1 again (no CMD)"},
};
const size_t cli_option_count = sizeof cli_option_table / sizeof cli_option_table[0];
_Static_assert(sizeof cli_option_table / sizeof cli_option_table[0] <= CLI_OPTION_ROWS_MAX,
               "cli_options.given holds one slot per row");

/* Where one option means something particular to a command: its help there. */
static const struct {
    const char *name;
    unsigned commands;
    const char *help;
} option_help_for[] = {
    {"output", R, "archive directory (default out/<gpu>-<yyyymmdd-hhmmss>)"},
    {"output", P, "render into OUT instead; DIR is only read"},
    {"output", C, "where compare.md, compare.html, compare.csv and figures/ go (required)"},
    {"output", I, "the archive to write (required)"},
    {"output", W, "the sweep directory: shapes/<shape>/ archives, sweep.md, sweep.html (required)"},
    {"output", K, "the archive (default out/record-<name>-<yyyymmdd-hhmmss>)"},
    {"force", W, "replace -o DIR if it holds a sweep"},
    {"force", P, "replace -o OUT if it exists"},
    {"seq", W, "sequence lengths: 256,512 or 256:16384:x2 (default 256:16384:x2)"},
    {"dim", W, "head dims (default 64,128)"},
    {"batch", W, "batch size of every shape (instead of --tokens)"},
    {"variant", I, "the variants' names, one per trace, comma-separated (default: each file's base name)"},
    {"variant", K, "the program's name in the archive (default: the script's or program's base name)"},
    {"range", I, "user_annotation range of one forward (default attn_fwd; else ProfilerStep#N)"},
    {"range", K, "the NVTX range of one step (default: the range name that repeats the same kernels most; else "
                 "each CUDA graph launch; else the period of the kernel sequence)"},
};

const cli_command_spec cli_command_table[] = {
    {"run", CMD_RUN, CLI_ON_RUN, "attnprof run [options]",
     "run the batch on the GPU (attnprof's own C/CUDA variants), archive it, write the report"},
    {"report", CMD_REPORT, CLI_ON_REPORT, "attnprof report DIR [options]",
     "re-render an archived run (no GPU needed); what earlier renders made with other options stays unless "
     "--clean; -o OUT renders into OUT instead, DIR only read"},
    {"compare", CMD_COMPARE, CLI_ON_COMPARE, "attnprof compare A B [C ...] -o DIR [options]",
     "compare archived runs side by side (no GPU needed); compare.html always has PNG figures"},
    {"import", CMD_IMPORT, CLI_ON_IMPORT, "attnprof import TRACE... -o DIR [options]",
     "archive PyTorch profiler (Kineto) traces, .json or .json.gz (no GPU needed)"},
    {"sweep", CMD_SWEEP, CLI_ON_SWEEP, "attnprof sweep [options] -o DIR | attnprof sweep --collect DIR",
     "run every shape of a sweep, one child per shape (needs a GPU unless --task-command or --slurm); "
     "--collect (re)builds DIR's sweep report"},
    {"record", CMD_RECORD, CLI_ON_RECORD, "attnprof record [options] -- CMD ARGS...",
     "run any CUDA program under CUPTI injection and archive it"},
    {"list", CMD_LIST, CLI_ON_LIST, "attnprof list", "list the variants (no GPU needed)"},
    {"help", CMD_HELP, CLI_ON_HELP, "attnprof help [CMD]", "this list, or one command's usage, options and exit codes"},
};
const size_t cli_command_count = sizeof cli_command_table / sizeof cli_command_table[0];

/* The exit codes (exit_codes.h) and the commands that can end with each. */
#define ALL (R | P | C | I | W | K | CLI_ON_LIST | CLI_ON_HELP)
const cli_exit_spec cli_exit_table[] = {
    {EXIT_OK, ALL, "ok"},
    {EXIT_VARIANT_FAILED, R, "a variant failed (error or wrong result; reported, never dropped)"},
    {EXIT_VARIANT_FAILED, W, "a shape failed or is missing (the sweep report lists it)"},
    {EXIT_USAGE, ALL, "usage: a bad command line"},
    {EXIT_NO_DEVICE, R | W | K, "no CUDA device or driver (or no CUDA in this build)"},
    {EXIT_DEVICE_MEMORY, R, "a variant needs more device memory than is free"},
    {EXIT_OUTPUT_EXISTS, R | P | C | I | W | K, "-o DIR exists and --force was not given"},
    {EXIT_BAD_ARCHIVE, P | C | W, "a missing or corrupt archive (trace.json, run.json)"},
    {EXIT_IO, ALL & ~CLI_ON_HELP, "an I/O error, or a CUDA/CUPTI error outside any variant"},
    {EXIT_REFUSED, W, "a sweep directory refused (a stored task command that differs, a symbolic link)"},
    {EXIT_NO_MEMORY, ALL & ~CLI_ON_HELP, "out of host memory"},
    {EXIT_L2_MISMATCH, C, "the runs measured different L2 states and --allow-l2-mismatch was not given"},
    {EXIT_VERDICT_GATE, C, "--fail-on: a variant's CUDA-time verdict is in the list (the outputs were written)"},
    {EXIT_NOTHING_GATED, C, "--fail-on: nothing it could gate was compared (the outputs were written)"},
    {EXIT_SHAPE_CONFLICT, I, "a declared --shape contradicts the shapes the trace recorded"},
    {EXIT_NOTHING_RECORDED, K, "the program ran no CUDA, or no GPU work, before it exited"},
    {126, K, "CMD is not executable"},
    {127, K, "CMD was not found (else record exits with CMD's status)"},
    {EXIT_INTERRUPTED, ALL & ~CLI_ON_HELP, "interrupted (SIGINT, SIGTERM): only complete outputs left"},
};
const size_t cli_exit_count = sizeof cli_exit_table / sizeof cli_exit_table[0];
#undef ALL
#undef R
#undef P
#undef C
#undef I
#undef W
#undef K

const cli_command_spec *cli_command_named(const char *name)
{
    for (size_t i = 0; i < cli_command_count; i++)
        if (!strcmp(name, cli_command_table[i].name))
            return &cli_command_table[i];
    return NULL;
}

const char *cli_option_help(const cli_option_spec *opt, const cli_command_spec *cmd)
{
    for (size_t i = 0; i < sizeof option_help_for / sizeof option_help_for[0]; i++)
        if (!strcmp(option_help_for[i].name, opt->name) && (option_help_for[i].commands & cmd->bit))
            return option_help_for[i].help;
    return opt->help;
}

/* Writes `text` from column `indent` on, wrapped before column 100. */
static void wrapped(FILE *f, const char *text, int col, int indent)
{
    while (*text) {
        size_t room = (size_t)(100 - col), len = strlen(text);
        size_t take = len;
        if (len > room) {
            take = room;
            while (take > 0 && text[take] != ' ')
                take--;
            if (take == 0)
                take = strcspn(text, " ");
        }
        fprintf(f, "%.*s\n", (int)take, text);
        text += take;
        text += strspn(text, " ");
        if (*text)
            fprintf(f, "%*s", indent, "");
        col = indent;
    }
}

void cli_usage(FILE *f)
{
    fputs("attnprof: profile attention on an NVIDIA GPU, archive the trace, render and compare reports\n\n"
          "commands:\n", f);
    for (size_t i = 0; i < cli_command_count; i++) {
        const cli_command_spec *c = &cli_command_table[i];
        fprintf(f, "  %-9s", c->name);
        wrapped(f, c->summary, 11, 11);
    }
    fputs("\n`attnprof help CMD` or `attnprof CMD --help`: that command's usage, options and exit codes.\n"
          "attnprof --version: the version.\n", f);
}

void cli_command_usage(FILE *f, const cli_command_spec *cmd)
{
    fprintf(f, "usage: %s\n  ", cmd->synopsis);
    wrapped(f, cmd->summary, 2, 2);
    int any = 0;
    for (size_t i = 0; i < cli_option_count; i++) {
        const cli_option_spec *o = &cli_option_table[i];
        if (!(o->commands & cmd->bit))
            continue;
        if (!any++)
            fputs("\noptions:\n", f);
        char head[96];
        int len = snprintf(head, sizeof head, "  %s%s--%s%s%s", o->short_name ? "-" : "",
                           o->short_name ? (char[]){o->short_name, ',', ' ', 0} : "", o->name, o->arg ? " " : "",
                           o->arg ? o->arg : "");
        const char *help = cli_option_help(o, cmd);
        if (len >= 26) {
            fprintf(f, "%s\n%26s", head, "");
        } else {
            fprintf(f, "%-26s", head);
        }
        wrapped(f, help ? help : "", 26, 26);
    }
    if (!any)
        fputs("\noptions: none\n", f);
    fputs("\nexit codes:\n", f);
    for (size_t i = 0; i < cli_exit_count; i++)
        if (cli_exit_table[i].commands & cmd->bit) {
            fprintf(f, "  %-4d", cli_exit_table[i].code);
            wrapped(f, cli_exit_table[i].meaning, 6, 6);
        }
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

/* Edit distance with transpositions (optimal string alignment), for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40)
        return 99;
    size_t d[41][41];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* Whether `typed` is a subsequence of `name` starting with its first letter (--figsize in --figure-size). */
static int abbreviates(const char *typed, const char *name)
{
    if (strlen(typed) < 3 || *typed != *name)
        return 0;
    for (; *name && *typed; name++)
        if (*name == *typed)
            typed++;
    return !*typed;
}

/* How close `typed` is to `name`: a distance, or -1 when too far to suggest. */
static int closeness(const char *typed, const char *name)
{
    size_t d = edit_distance(typed, name), len = strlen(typed);
    size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    if (d <= limit)
        return (int)d;
    return abbreviates(typed, name) ? (int)limit + 1 : -1;
}

const char *cli_suggest_option(const char *typed)
{
    char word[64];
    typed += strspn(typed, "-");
    snprintf(word, sizeof word, "%.*s", (int)strcspn(typed, "="), typed);
    const char *best = NULL;
    int best_d = 99;
    for (size_t i = 0; i < cli_option_count; i++) {
        int d = closeness(word, cli_option_table[i].name);
        if (d >= 0 && d < best_d)
            best = cli_option_table[i].name, best_d = d;
    }
    const char *extra[] = {"help", "version"};
    for (size_t i = 0; i < 2; i++) {
        int d = closeness(word, extra[i]);
        if (d >= 0 && d < best_d)
            best = extra[i], best_d = d;
    }
    return best;
}

const char *cli_suggest_command(const char *typed)
{
    const char *best = NULL;
    int best_d = 99;
    for (size_t i = 0; i < cli_command_count; i++) {
        int d = closeness(typed, cli_command_table[i].name);
        if (d >= 0 && d < best_d)
            best = cli_command_table[i].name, best_d = d;
    }
    return best;
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
