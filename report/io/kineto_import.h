/* `attnprof import`: PyTorch profiler (Kineto) traces into the in-memory trace and
 * run.json of a normal archive, without a GPU. One variant per file; a forward is
 * a user_annotation range (record_function) or, without one, a ProfilerStep#N. */
#ifndef ATTNPROF_KINETO_IMPORT_H
#define ATTNPROF_KINETO_IMPORT_H

#include "run_info.h"
#include "trace.h"

typedef struct import_options {
    const char *variant; /* the variants' names, one per file, comma-separated; NULL: each file's base name */
    const char *range;   /* the forward's range name; NULL: "attn_fwd" */
    int device;          /* GPU whose ops are kept; -1: the lowest device id among the file's GPU ops */
    /* The shape the user declares (Kineto records none); NULL: "not recorded". */
    const attn_shape *shape;
    const char *dtype; /* "" or NULL: not given */
    int causal;
} import_options;

/* Reads the `n` traces into `t` and fills what Kineto records of `r` (devices,
 * versions, variants, sources; tool_version, command_line are the caller's). `t`
 * and `r` are initialized here; on failure `t` is freed. Returns EXIT_OK, EXIT_USAGE
 * (a name that cannot be a variant) or EXIT_BAD_ARCHIVE (an unreadable or unusable
 * trace), with one line in err naming the file and what is wrong. */
int kineto_import(const char *const *paths, int n, const import_options *o, trace *t, run_info *r, char *err,
                  size_t errlen);

/* "dir/kineto_sdpa_flash.json.gz" → "kineto_sdpa_flash" (drops .gz, .json, .pt.trace). */
void kineto_variant_name(const char *path, char *out, size_t n);

#endif
