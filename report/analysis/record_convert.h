/* `attnprof record`'s raw file (inject_raw.h) into the trace and run.json of an archive:
 * the steps found (record_steps.h), the provenance "recorded by injection", the program's
 * GPU, driver, clocks and CUPTI's dropped-record counts, and whether the recording is
 * complete. GPU-free: the CLI runs the program, this turns what it left into an archive. */
#ifndef ATTNPROF_RECORD_CONVERT_H
#define ATTNPROF_RECORD_CONVERT_H

#include "inject_raw.h"
#include "record_steps.h"
#include "run_info.h"

typedef struct record_options {
    const char *variant;      /* the variant's name (record_variant_name) */
    const char *program;      /* the program's command line, as run */
    step_options steps;
    int child_signal;         /* the signal that ended the program, 0 if it exited */
    int child_status;         /* its exit status when it exited */
    int processes;            /* processes of the program that recorded CUDA (1 normally) */
} record_options;

/* Reads the raw file, finds the steps and fills t and r (both initialized here; the
 * caller sets tool_version and command_line). The recording is marked incomplete (the
 * variant "failed", its error says why, the steps recorded are kept) when the program
 * died of a signal or the file has no "E complete" line. EXIT_OK; EXIT_NOTHING_RECORDED
 * when the program ran no GPU work; the raw reader's and the step rules' codes. */
int record_convert(const char *raw_path, const record_options *o, trace *t, run_info *r, inject_raw *m,
                   step_result *steps, char *err, size_t errlen);

/* The variant's name from the program's argv: a Python (or other interpreter's) script's
 * base name without its extension, else the program's base name; letters, digits, '_'
 * and '-' only, at most n - 1 bytes; "program" when nothing is left. */
void record_variant_name(char *const *argv, int argc, char *out, size_t n);

#endif
