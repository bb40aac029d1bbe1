/* The steps of a recorded program (`attnprof record`): which stretches of its trace are
 * one repetition of its work, found by the first rule that applies, in order:
 *   1. NVTX: the program's own ranges named --range NAME; without --range, the range name
 *      whose ranges launch one same kernel sequence (at least STEPS_MIN_REPEATS times) over
 *      the most launches, so that a step's range wins over a layer's inside it, and a
 *      compiler's or autotuner's ranges (XLA's, each launching other kernels) lose;
 *   2. graph: each CUDA graph launch (cudaGraphLaunch / cuGraphLaunch with work) is a step;
 *   3. period: the kernel sequence in launch order (each op named by its kernel name) is
 *      searched for the period P that repeats over the most operations, as the model's
 *      layers are (longest run of op[i] = op[i+P], plus P; ties: the shortest P); the
 *      candidates are the median distances between repeats of each name (the
 *      STEPS_PERIOD_CANDIDATES rarest names that repeat), and the steps start where the
 *      host's gap between launches is longest within a period (the program's own pause
 *      between steps).
 * --skip N steps are left out at the start, and at most --steps N kept. The steps are
 * added to the trace as annotation ranges of the variant with iterations 0, 1, ...: the
 * forwards the analysis measures. */
#ifndef ATTNPROF_RECORD_STEPS_H
#define ATTNPROF_RECORD_STEPS_H

#include "trace.h"

#define STEPS_MIN_REPEATS 2
#define STEPS_PERIOD_CANDIDATES 64

typedef enum step_rule { STEP_RULE_NONE = 0, STEP_RULE_NVTX, STEP_RULE_GRAPH, STEP_RULE_PERIOD } step_rule;

typedef struct step_options {
    const char *range; /* --range NAME; NULL: the repeated outermost NVTX range, if any */
    int skip;          /* --skip N */
    int steps;         /* --steps N; 0: every step */
} step_options;

typedef struct step_result {
    step_rule rule;
    int found;          /* steps the rule found, before --skip and --steps */
    int kept;           /* steps added to the trace */
    int period;         /* the period rule: operations per step */
    char name[64];      /* the ranges' name ("graph launch", "period of N kernels") */
    char rule_text[96];  /* the rule in a phrase (run.json's marker_source: steps from ...) */
} step_result;

/* The rule's word: "nvtx", "graph", "period", "none". */
const char *step_rule_name(step_rule r);

/* Finds the steps of `variant` in t (sorted by trace_sort) and adds them (t is sorted
 * again). EXIT_OK with res->kept >= 1; EXIT_BAD_ARCHIVE when no rule finds a step or
 * --skip leaves none (the line says what was found and what to pass). A --range that
 * names no range falls through to the next rule, said in rule_text. */
int record_steps_find(trace *t, const char *variant, const step_options *o, step_result *res, char *err,
                      size_t errlen);

#endif
