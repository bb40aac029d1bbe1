/* `attnprof compare A B [C ...] -o DIR`: archives loaded, set against the baseline in
 * compare_data (compare.h), its documents written (compare_doc.h), the verdicts shown on
 * the terminal, and --fail-on's gate turned into the exit code. No GPU. */
#include "commands.h"

#include "compare_doc.h"
#include "escape.h"
#include "exit_codes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --baseline names an input by the path given or by its directory name: its index, or -1. */
static int baseline_index(const cli_options *o)
{
    if (!o->baseline)
        return 0;
    for (int i = 0; i < o->n_inputs; i++)
        if (!strcmp(o->inputs[i], o->baseline))
            return i;
    for (int i = 0; i < o->n_inputs; i++) {
        const char *base = strrchr(o->inputs[i], '/');
        base = base ? base + 1 : o->inputs[i];
        if (!strcmp(base, o->baseline))
            return i;
    }
    return -1;
}

/* The comparison's terminal summary (compare_doc.h: the headline, the ratio convention, the
 * verdicts, the model traces), then where the page is. */
static void print_verdicts(const compare_data *m, const char *out_dir)
{
    compare_terminal_summary(stdout, m);
    printf("compare: %s/compare.html\n", out_dir);
}

/* Builds the comparison's data over the loaded archives, writes it, shows it and applies --fail-on. */
static int compare_loaded(const cli_options *o, compare_archive **in, const compare_options *opt, char *err,
                          size_t errlen)
{
    compare_data m;
    int rc = compare_build(&m, in, o->n_inputs, opt, err, errlen);
    if (rc != EXIT_OK)
        return rc;
    rc = compare_write(&m, o->out_dir, opt, o->force, err, errlen);
    if (rc == EXIT_OK && !o->run.quiet)
        print_verdicts(&m, o->out_dir);
    /* --fail-on: the outputs are written; the exit status gates a CI job */
    char gate[1024], shown[1024];
    if (rc == EXIT_OK && o->fail_on && compare_gate(&m, o->fail_on, gate, sizeof gate) > 0) {
        snprintf(err, errlen, "--fail-on: %s (CUDA time against the baseline %s)",
                 esc_terminal(shown, sizeof shown, gate), m.in[0]->label);
        rc = EXIT_VERDICT_GATE;
    } else if (rc == EXIT_OK && o->fail_on && compare_gate_scope(&m, gate, sizeof gate) == 0) {
        /* a gate that compared nothing passes nothing */
        snprintf(err, errlen, "--fail-on: nothing to gate was compared against the baseline %s: %s",
                 m.in[0]->label, esc_terminal(shown, sizeof shown, gate));
        rc = EXIT_NOTHING_GATED;
    }
    compare_free(&m);
    return rc;
}

int cmd_compare(const cli_options *o)
{
    char err[2048];
    int rc = cli_check_output("compare", o->out_dir, o->force, o->inputs, o->n_inputs, NULL);
    if (rc != EXIT_OK)
        return rc;
    compare_options opt = {.min_effect = o->min_effect, .allow_shape_mismatch = o->allow_shape_mismatch,
                           .formats = o->formats, .log_axis = o->log_axis, .figure_size = o->figure_size,
                           .allow_l2_mismatch = o->allow_l2_mismatch};
    if ((opt.baseline = baseline_index(o)) < 0)
        return cli_fail(EXIT_USAGE, "--baseline %s: not one of the archives given; name one of them as written",
                        o->baseline);
    int prc;
    if (o->pairs && (prc = compare_pairs_parse(o->pairs, &opt, err, sizeof err)) != EXIT_OK)
        return cli_fail(prc, "%s", err);
    compare_archive *ars = calloc((size_t)o->n_inputs, sizeof *ars);
    compare_archive *in[COMPARE_MAX_ARCHIVES];
    if (!ars)
        return cli_fail(EXIT_IO, "out of memory");
    int loaded = 0;
    for (; loaded < o->n_inputs && rc == EXIT_OK; loaded++) {
        in[loaded] = &ars[loaded];
        rc = compare_load(&ars[loaded], o->inputs[loaded], err, sizeof err);
        if (rc != EXIT_OK)
            break;
    }
    if (rc == EXIT_OK)
        rc = compare_loaded(o, in, &opt, err, sizeof err);
    for (int i = 0; i < loaded; i++)
        compare_archive_free(&ars[i]);
    free(ars);
    return rc == EXIT_OK ? EXIT_OK : cli_fail(rc, "%s", err);
}
