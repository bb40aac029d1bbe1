/* Command line: getopt_long parsing into a cli_options, with every usage error
 * turned into one line that says what to do. Pure C without CUDA, so every build
 * has it and it is unit-tested. */
#ifndef ATTNPROF_CLI_H
#define ATTNPROF_CLI_H

#include "run_config.h"

#include <stdio.h>

typedef enum cli_command {
    CMD_NONE = 0, CMD_RUN, CMD_REPORT, CMD_COMPARE, CMD_LIST, CMD_HELP, CMD_VERSION, CMD_IMPORT, CMD_SWEEP, CMD_RECORD
} cli_command;

/* attnprof sweep: what the command line asked; src/cli/sweep_run.c turns it into a plan. */
#define SWEEP_TASK_MAX 4095
#define CLI_OPTION_ROWS_MAX 64

typedef struct sweep_options {
    const char *seq, *dim;       /* LIST, or NULL for the default sweep */
    const char *kv_heads, *q_seq; /* LIST, or NULL: as many as --heads / --seq */
    long tokens;                 /* --tokens N (0: not given) */
    int batch_given, heads_given, iters_given, warmup_given;
    const char *gpus;            /* --gpus 0,1 | all; NULL: one worker, environment as is */
    int replicate, resume;
    const char *task_command;    /* --task-command / --slurm-task-command template */
    int slurm, no_gres, submit;
    const char *partition, *time_limit;
    const char *collect;         /* --collect DIR */
    int task;                    /* --task I DIR (the Slurm array task); -1 otherwise */
    const char *task_dir;
} sweep_options;

typedef struct cli_options {
    cli_command command;
    run_config run;
    const char *out_dir; /* -o; NULL: out/<gpu>-<yyyymmdd-hhmmss> */
    const char *archive; /* report DIR */
    char **inputs;       /* compare A B [C ...]; import TRACE... */
    int n_inputs;
    const char *baseline; /* compare --baseline: a path or directory name among the inputs */
    int allow_shape_mismatch;
    double min_effect;   /* compare --min-effect, as a fraction */
    int allow_l2_mismatch;  /* compare --allow-l2-mismatch */
    unsigned fail_on;       /* compare --fail-on: 1u << VERDICT_* bits; 0: never fail on a verdict */
    const char *pairs;      /* compare --pair A=B[,C=D]: model traces set against each other (checked when parsed) */
    int force;
    int clean;           /* report --clean: remove what earlier renders made that this one does not */
    unsigned formats; /* FIG_* bits */
    int log_axis;
    int pdf;             /* --pdf: also report.pdf (run, report; import does not take it); --no-pdf, the default: none */
    int figure_size;     /* --figure-size: FIG_SIZE_* (run, report, compare) */
    const char *reference; /* --reference DIR: an archive of PyTorch's variants beside ours (run, report) */
    /* import TRACE... -o DIR (the traces are `inputs`) */
    const char *import_variant; /* --variant */
    const char *import_range;   /* --range */
    int import_device;          /* --device; -1 when not given */
    int import_has_shape;       /* --shape BxHxSxD[,dtype][,causal]: declared, Kineto has none */
    attn_shape import_shape;
    char import_dtype[8];
    int import_causal;
    /* record [options] -- CMD ARGS...: CMD is `inputs`; --range and --variant are import_range and import_variant */
    int record_skip, record_steps; /* --skip N, --steps N (0: every step) */
    const char *record_raw;        /* --raw FILE: convert a kept raw file, run nothing */
    sweep_options sweep;
    /* The rows of cli_option_table given, each once, in the order first given: the command,
     * known only after the options are read, is checked against them. */
    int given[CLI_OPTION_ROWS_MAX];
    int n_given;
    const struct cli_command_spec *help_on; /* CMD_HELP: the command whose help is asked; NULL: all */
} cli_options;

/* The command table: each command's name and its bit in cli_option_spec.commands. */
enum {
    CLI_ON_RUN = 1 << 0, CLI_ON_REPORT = 1 << 1, CLI_ON_COMPARE = 1 << 2, CLI_ON_IMPORT = 1 << 3,
    CLI_ON_SWEEP = 1 << 4, CLI_ON_LIST = 1 << 5, CLI_ON_HELP = 1 << 6, CLI_ON_RECORD = 1 << 7
};
typedef struct cli_command_spec {
    const char *name;
    cli_command command;
    unsigned bit;
    const char *synopsis; /* "attnprof compare A B [C ...] -o DIR [options]" */
    const char *summary;  /* what it does, one sentence */
} cli_command_spec;
extern const cli_command_spec cli_command_table[];
extern const size_t cli_command_count;

/* The option table, the one place that says which command takes which option: the getopt
 * long options and the check "--X is not an option of Y; Y takes: ..." both come from it. */
typedef struct cli_option_spec {
    const char *name;     /* the long name, without "--" */
    char short_name;      /* 'o', 'q', or 0 */
    int has_arg;          /* getopt's no_argument / required_argument */
    int id;               /* what apply_option switches on (two spellings may share one) */
    unsigned commands;    /* CLI_ON_* bits of the commands that take it: exactly those that use it */
    const char *arg;      /* the value's placeholder in help ("N", "DIR"); NULL when it takes none */
    const char *help;     /* what it does; a command may say it its own way (cli_option_help) */
} cli_option_spec;
extern const cli_option_spec cli_option_table[];
extern const size_t cli_option_count;

/* The exit codes help lists, each with the commands that can end with it. */
typedef struct cli_exit_spec {
    int code;
    unsigned commands;
    const char *meaning;
} cli_exit_spec;
extern const cli_exit_spec cli_exit_table[];
extern const size_t cli_exit_count;

/* The command of that name, or NULL. */
const cli_command_spec *cli_command_named(const char *name);
/* The help of `opt` as `cmd` uses it. */
const char *cli_option_help(const cli_option_spec *opt, const cli_command_spec *cmd);

/* Returns EXIT_OK, or EXIT_USAGE with a one-line message in `err`. Variant names
 * and whether they take the shape are checked by the recorder (runner_plan), which
 * owns the registry. */
int cli_parse(int argc, char **argv, cli_options *o, char *err, size_t errlen);
/* The option name (without "--") or the command nearest to what was typed, for "did you mean";
 * NULL when none is near. */
const char *cli_suggest_option(const char *typed);
const char *cli_suggest_command(const char *typed);

/* attnprof --help: every command, one line each. */
void cli_usage(FILE *f);
/* attnprof help CMD, attnprof CMD --help: its usage, its options (from cli_option_table) and its
 * exit codes (cli_exit_table). */
void cli_command_usage(FILE *f, const cli_command_spec *cmd);

#endif
