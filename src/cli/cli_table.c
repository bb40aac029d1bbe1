/* The command line's tables: options (long name, short name, argument, which commands take
 * it, its help), commands (name, synopsis, summary) and exit codes (which commands end with
 * each); the help printed from them (attnprof --help, attnprof help CMD) and the "did you
 * mean" over their names. cli.c parses with them. */
#include "cli.h"
#include "cli_ids.h"

#include "exit_codes.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

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
    {"kv-heads", 0, required_argument, OPT_KV_HEADS, R | W, "N",
     "key/value heads (grouped-query attention; divides --heads; 1: MQA; default: as many as --heads)"},
    {"q-seq", 0, required_argument, OPT_Q_SEQ, R | W, "N",
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
    {"backward", 0, no_argument, OPT_BACKWARD, R | W, NULL,
     "after each variant's forwards, its backward on a fixed random dO (attn_bwd ranges, dQ/dK/dV checked against "
     "FP64)"},
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
     "{batch} {heads} {seq} {dim} {kv_heads} {q_seq} {variants} {iters} {warmup} {run_flags}"},
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
    {"kv-heads", W, "key/value head counts, a LIST as --seq takes (each divides --heads); every shape at each"},
    {"q-seq", W, "query counts, a LIST (1: decode; --seq is then the KV length); every shape at each; with --q-seq 1 "
                 "the sweep draws decode curves"},
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

