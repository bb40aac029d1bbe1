/* The sweep's plan and its per-shape outcomes as files: the LIST syntax and the
 * tokens rule that turn --seq/--dim/--batch/--tokens into shapes, DIR/sweep.json
 * (what was asked, written before anything runs, so `--collect` and `--resume`
 * know which shapes to expect) and DIR/status/<shape>.json (exit code and error
 * line of the child that ran a shape, the GPU it had, its Slurm job and log).
 * Pure data: the orchestration that runs the children lives in src/cli/sweep_run.c. */
#include "sweep_plan.h"

#include "archive.h"
#include "err.h"
#include "escape.h"
#include "input.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* 1 when s starts with a run of decimal digits (its value in *v, its end in *end): strtol
 * alone would take " 5", "+5" and "0x10" as 0. */
static int is_number(const char *s, const char **end, long *v)
{
    if (*s < '0' || *s > '9') {
        *end = s;
        return 0;
    }
    char *e;
    errno = 0;
    *v = strtol(s, &e, 10);
    *end = e;
    return !(errno || e == s);
}

int sweep_parse_list(const char *opt, const char *s, int max, int *out, int *count, char *err, size_t errlen)
{
    int n = 0;
    *count = 0;
    const char *p = s, *e;
    long a, b, step;
    if (strchr(s, ':')) {
        int geometric = 0;
        if (!is_number(p, &e, &a) || *e != ':' || !is_number(e + 1, &e, &b) || *e != ':' ||
            (e[1] != 'x' && e[1] != '+') || !is_number(e + 2, &e, &step) || *e)
            goto bad;
        geometric = strchr(s, 'x') != NULL;
        if (a < 1 || b < a || b > max || (geometric ? step < 2 : step < 1))
            goto bad;
        for (long v = a; v <= b; v = geometric ? v * step : v + step) {
            if (n == SWEEP_MAX_LIST) {
                return err_set(err, errlen, EXIT_USAGE, "--%s %s: more than %d values; use a coarser step", opt, s,
                               SWEEP_MAX_LIST);
            }
            out[n++] = (int)v;
        }
        *count = n;
        return EXIT_OK;
    }
    for (;;) {
        if (!is_number(p, &e, &a) || a < 1 || a > max || (*e && *e != ','))
            goto bad;
        if (n == SWEEP_MAX_LIST) {
            return err_set(err, errlen, EXIT_USAGE, "--%s %s: more than %d values", opt, s, SWEEP_MAX_LIST);
        }
        out[n++] = (int)a;
        if (!*e)
            break;
        p = e + 1;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_int);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (!u || out[u - 1] != out[i])
            out[u++] = out[i];
    *count = u;
    return EXIT_OK;
bad:
    return err_set(err, errlen, EXIT_USAGE,
             "--%s %s: expected whole numbers from 1 to %d, comma-separated (256,512) or a range FROM:TO:xFACTOR "
             "(256:16384:x2) or FROM:TO:+STEP",
             opt, s, max);
}

int sweep_plan_shapes(sweep_plan *p, const int *seq, int n_seq, const int *dim, int n_dim, int batch, long tokens,
                      int heads, char *err, size_t errlen)
{
    p->n_shapes = 0;
    if ((long)n_seq * n_dim > SWEEP_MAX_SHAPES) {
        return err_set(err, errlen, EXIT_USAGE, "%d sequence lengths x %d head dims is more than %d shapes; split the "
                       "sweep", n_seq, n_dim, SWEEP_MAX_SHAPES);
    }
    for (int d = 0; d < n_dim; d++)
        for (int i = 0; i < n_seq; i++) {
            int b = batch;
            if (tokens > 0) {
                if (tokens % seq[i] || tokens / seq[i] < 1) {
                    return err_set(err, errlen, EXIT_USAGE,
                                   "--tokens %ld: S = %d does not divide it (B = tokens / S must be whole and at least "
                                   "1); pick S from the divisors or give --batch",
                                   tokens, seq[i]);
                }
                if (tokens / seq[i] > (1 << 16)) {
                    return err_set(err, errlen, EXIT_USAGE, "--tokens %ld: S = %d gives B = %ld, above 65536", tokens,
                                   seq[i], tokens / seq[i]);
                }
                b = (int)(tokens / seq[i]);
            }
            p->shapes[p->n_shapes++] = (attn_shape){.batch = b, .heads = heads, .seq = seq[i], .dim = dim[d]};
        }
    return EXIT_OK;
}

static int cmp_planned(const void *a, const void *b)
{
    const attn_shape *x = a, *y = b;
    const int kx[] = {x->dim, x->kv_heads, x->q_seq, x->seq, x->batch}, ky[] = {y->dim, y->kv_heads, y->q_seq, y->seq,
                                                                               y->batch};
    for (int i = 0; i < 5; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

int sweep_plan_cross(sweep_plan *p, const int *kv_heads, int n_kv, const int *q_seq, int n_q, char *err,
                     size_t errlen)
{
    static const int none = 0;
    const int *kv = n_kv ? kv_heads : &none, *qs = n_q ? q_seq : &none;
    int nk = n_kv ? n_kv : 1, nq = n_q ? n_q : 1;
    if ((long)p->n_shapes * nk * nq > SWEEP_MAX_SHAPES)
        return err_set(err, errlen, EXIT_USAGE, "%d shapes x %d key/value head counts x %d query counts is more than %d "
                       "shapes; split the sweep", p->n_shapes, nk, nq, SWEEP_MAX_SHAPES);
    attn_shape out[SWEEP_MAX_SHAPES];
    int n = 0;
    for (int i = 0; i < p->n_shapes; i++)
        for (int k = 0; k < nk; k++)
            for (int q = 0; q < nq; q++) {
                attn_shape s = p->shapes[i];
                if (kv[k] && s.heads % kv[k])
                    return err_set(err, errlen, EXIT_USAGE, "--kv-heads %d does not divide --heads %d; give key/value "
                                   "head counts that divide the query heads", kv[k], s.heads);
                if (qs[q] > s.seq)
                    return err_set(err, errlen, EXIT_USAGE, "--q-seq %d is more than S = %d (the keys); give query "
                                   "counts at most the smallest --seq", qs[q], s.seq);
                s.kv_heads = kv[k] == s.heads ? 0 : kv[k];
                s.q_seq = qs[q] == s.seq ? 0 : qs[q];
                int dup = 0;
                for (int j = 0; j < n && !dup; j++)
                    dup = !cmp_planned(&out[j], &s);
                if (!dup)
                    out[n++] = s;
            }
    qsort(out, (size_t)n, sizeof *out, cmp_planned);
    memcpy(p->shapes, out, (size_t)n * sizeof *out);
    p->n_shapes = n;
    return EXIT_OK;
}

void sweep_shape_name(const attn_shape *s, char *out, size_t n)
{
    char kv[16] = "", q[16] = "";
    if (s->kv_heads > 0)
        snprintf(kv, sizeof kv, "-kv%d", s->kv_heads);
    if (s->q_seq > 0)
        snprintf(q, sizeof q, "-q%d", s->q_seq);
    snprintf(out, n, "%dx%dx%dx%d%s%s", s->batch, s->heads, s->seq, s->dim, kv, q);
}

int sweep_shape_parse(const char *name, attn_shape *s)
{
    int b, h, q, d, used = 0, kv = 0, qs = 0, more = 0;
    if (sscanf(name, "%dx%dx%dx%d%n", &b, &h, &q, &d, &used) != 4 || b < 1 || h < 1 || q < 1 || d < 1)
        return EXIT_BAD_ARCHIVE;
    if (!strncmp(name + used, "-kv", 3) && sscanf(name + used, "-kv%d%n", &kv, &more) == 1 && kv >= 1)
        used += more;
    if (!strncmp(name + used, "-q", 2) && sscanf(name + used, "-q%d%n", &qs, &more) == 1 && qs >= 1)
        used += more;
    if (name[used])
        return EXIT_BAD_ARCHIVE;
    *s = (attn_shape){.batch = b, .heads = h, .seq = q, .dim = d, .kv_heads = kv, .q_seq = qs};
    char back[64];
    sweep_shape_name(s, back, sizeof back);
    return strcmp(back, name) ? EXIT_BAD_ARCHIVE : EXIT_OK;
}

double sweep_flops(const attn_shape *s, int causal)
{
    int sq = attn_q_seq(s);
    double full = 4.0 * s->batch * s->heads * (double)sq * s->seq * s->dim;
    if (!causal)
        return full;
    if (sq == s->seq)
        return full / 2;
    /* bottom-right: query i sees keys 0 .. i + S - q_seq, so sum over i of (S - q_seq + i + 1) keys */
    double keys = (double)sq * (s->seq - sq) + (double)sq * (sq + 1) / 2;
    return 4.0 * s->batch * s->heads * keys * s->dim;
}

static json_t *shape_json(const attn_shape *s)
{
    char name[64];
    sweep_shape_name(s, name, sizeof name);
    json_t *o = json_pack("{s:s,s:i,s:i,s:i,s:i}", "name", name, "batch", s->batch, "heads", s->heads, "seq", s->seq,
                          "dim", s->dim);
    if (o && s->kv_heads > 0)
        json_object_set_new(o, "kv_heads", json_integer(s->kv_heads));
    if (o && s->q_seq > 0)
        json_object_set_new(o, "q_seq", json_integer(s->q_seq));
    return o;
}

static int write_json(json_t *root, const char *dir, const char *name, char *err, size_t errlen)
{
    char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(root);
    if (!text)
        return err_set(err, errlen, EXIT_NO_MEMORY, "%s/%s: could not build the JSON document (out of memory)", dir,
                       name);
    size_t len = strlen(text);
    char *nl = malloc(len + 2);
    if (!nl) {
        free(text);
        return err_set(err, errlen, EXIT_NO_MEMORY, "out of memory");
    }
    memcpy(nl, text, len);
    nl[len] = '\n';
    nl[len + 1] = '\0';
    free(text);
    int rc = archive_write_file(dir, name, nl, err, errlen);
    free(nl);
    return rc == 0 ? EXIT_OK : rc > 0 ? rc : EXIT_IO;
}

int sweep_plan_write(const sweep_plan *p, const char *dir, char *err, size_t errlen)
{
    json_t *shapes = json_array(), *gpus = json_array();
    for (int i = 0; i < p->n_shapes; i++)
        json_array_append_new(shapes, shape_json(&p->shapes[i]));
    for (int i = 0; i < p->n_gpus; i++)
        json_array_append_new(gpus, json_string(p->gpus[i]));
    json_t *root = json_pack("{s:i,s:o,s:s,s:i,s:i,s:s,s:o,s:s}", "sweep_version", 1, "shapes", shapes, "variants",
                             p->variants, "iters", p->iters, "warmup", p->warmup, "task_command", p->task_command,
                             "gpus", gpus, "slurm_job_id", p->slurm_job_id);
    if (root && p->run_flags[0])
        json_object_set_new(root, "run_flags", json_string(p->run_flags));
    if (root && p->replicate)
        json_object_set_new(root, "replicate", shape_json(&p->reference));
    return write_json(root, dir, "sweep.json", err, errlen);
}

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* 1 when o is a shape within the limits `attnprof sweep` itself takes on the command line
 * (cli.c, sweep_plan_shapes), read into s. */
static int jshape(json_t *o, attn_shape *s)
{
    json_t *b = json_object_get(o, "batch"), *h = json_object_get(o, "heads"), *q = json_object_get(o, "seq"),
           *d = json_object_get(o, "dim");
    if (!json_is_object(o) || !json_is_integer(b) || !json_is_integer(h) || !json_is_integer(q) || !json_is_integer(d))
        return 0;
    json_int_t v[4] = {json_integer_value(b), json_integer_value(h), json_integer_value(q), json_integer_value(d)};
    static const json_int_t max[4] = {1 << 16, 1 << 12, 1 << 20, 1024};
    for (int i = 0; i < 4; i++)
        if (v[i] < 1 || v[i] > max[i])
            return 0;
    *s = (attn_shape){.batch = (int)v[0], .heads = (int)v[1], .seq = (int)v[2], .dim = (int)v[3]};
    /* kv_heads and q_seq: absent in sweeps without --kv-heads/--q-seq; when present, a head
     * count dividing H and fewer queries than keys, as sweep_plan_cross writes them */
    json_t *kv = json_object_get(o, "kv_heads"), *qs = json_object_get(o, "q_seq");
    if (kv) {
        if (!json_is_integer(kv) || json_integer_value(kv) < 1 || json_integer_value(kv) >= s->heads ||
            s->heads % json_integer_value(kv))
            return 0;
        s->kv_heads = (int)json_integer_value(kv);
    }
    if (qs) {
        if (!json_is_integer(qs) || json_integer_value(qs) < 1 || json_integer_value(qs) >= s->seq)
            return 0;
        s->q_seq = (int)json_integer_value(qs);
    }
    json_t *name = json_object_get(o, "name");
    char want[64];
    sweep_shape_name(s, want, sizeof want);
    return !(name && (!json_is_string(name) || strcmp(json_string_value(name), want)));
}

/* A string field: absent is "", anything but a string shorter than n bytes whose
 * characters are all in `allowed` (NULL: any but control characters) is an error. */
static int jfield(json_t *root, const char *k, const char *allowed, char *out, size_t n, const char *path, char *err,
                  size_t errlen)
{
    out[0] = '\0';
    json_t *v = json_object_get(root, k);
    if (!v)
        return EXIT_OK;
    const char *s = json_string_value(v);
    size_t len = s ? strlen(s) : 0;
    int ok = s && len < n && len == json_string_length(v);
    for (size_t i = 0; ok && i < len; i++)
        ok = allowed ? strchr(allowed, s[i]) != NULL
                     : ((unsigned char)s[i] >= 0x20 && s[i] != 0x7f) || s[i] == '\n' || s[i] == '\t';
    if (!ok)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %s is not a string of at most %zu bytes%s; not a sweep.json "
                       "attnprof wrote", path, k, n - 1,
                       allowed ? " of the characters attnprof writes there"
                               : " without control characters but newline and tab");
    memcpy(out, s, len + 1);
    return EXIT_OK;
}

/* An integer field in [lo, hi]; absent is 0. */
static int jint(json_t *root, const char *k, json_int_t lo, json_int_t hi, int *out, const char *path, char *err,
                size_t errlen)
{
    *out = 0;
    json_t *v = json_object_get(root, k);
    if (!v)
        return EXIT_OK;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: %s is not a whole number from %lld to %lld; not a "
                       "sweep.json attnprof wrote", path, k, (long long)lo, (long long)hi);
    *out = (int)json_integer_value(v);
    return EXIT_OK;
}

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."

int sweep_run_flags_valid(const char *flags, char *bad, size_t n)
{
    char buf[sizeof ((sweep_plan *)0)->run_flags];
    if (strlen(flags) >= sizeof buf) {
        snprintf(bad, n, "%.40s...", flags);
        return EXIT_BAD_ARCHIVE;
    }
    snprintf(buf, sizeof buf, "%s", flags);
    int want_seed = 0;
    for (char *save, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (want_seed) {
            want_seed = 0;
            if (strspn(tok, "0123456789") == strlen(tok) && strlen(tok) <= 20)
                continue;
        } else if (!strcmp(tok, "--seed") || !strcmp(tok, "--counters-max-gib")) {
            want_seed = 1; /* both take a whole number */
            continue;
        } else if (!strcmp(tok, "--no-counters") || !strcmp(tok, "--no-calibrate") || !strcmp(tok, "--cudnn-replan") ||
                   !strcmp(tok, "--backward") ||
                   !strcmp(tok, "--no-pdf") || !strcmp(tok, "--pdf")) { /* --no-pdf: sweeps from before --pdf */
            continue;
        }
        snprintf(bad, n, "%.60s", tok);
        return EXIT_BAD_ARCHIVE;
    }
    if (want_seed) {
        snprintf(bad, n, "--seed or --counters-max-gib without a number");
        return EXIT_BAD_ARCHIVE;
    }
    return EXIT_OK;
}

int sweep_variant_list_valid(const char *list)
{
    if (!*list)
        return EXIT_OK;
    if (strspn(list, NAME_CHARS ",") != strlen(list) || list[0] == ',' || list[strlen(list) - 1] == ',' ||
        strstr(list, ",,") || list[0] == '-')
        return EXIT_BAD_ARCHIVE;
    for (const char *c = strchr(list, ','); c; c = strchr(c + 1, ','))
        if (c[1] == '-')
            return EXIT_BAD_ARCHIVE; /* a name that reads as an option */
    return EXIT_OK;
}

/* DIR's file `path` as JSON (input_read_json: no link followed, never blocking, a regular
 * file of at most max_bytes): EXIT_OK with *found 0 (and *root NULL) when nothing has that
 * name, or with the document in *root (json_decref when done); EXIT_BAD_ARCHIVE when it is
 * a link, a FIFO, a device, too large or not JSON. */
static int load_json(const char *path, const char *what, int64_t max_bytes, json_t **root, int *found, char *err,
                     size_t errlen)
{
    *root = NULL;
    struct stat st;
    *found = lstat(path, &st) == 0; /* a link of this name is found, and refused below */
    if (!*found)
        return EXIT_OK;
    char why[ATTN_ERR_LEN];
    if (input_read_json(path, max_bytes, root, why, sizeof why) != EXIT_OK)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s; not a %s attnprof wrote", why, what);
    return EXIT_OK;
}

/* sweep.json's shapes list and its reference shape (replicate). */
static int read_shapes(json_t *root, sweep_plan *p, const char *path, char *err, size_t errlen)
{
    json_t *shapes = json_object_get(root, "shapes"), *version = json_object_get(root, "sweep_version");
    if (!json_is_object(root) || (version && (!json_is_integer(version) || json_integer_value(version) != 1)))
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: not an attnprof sweep.json of sweep_version 1", path);
    if (!json_is_array(shapes) || json_array_size(shapes) == 0 || json_array_size(shapes) > SWEEP_MAX_SHAPES)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: no shapes list of 1 to %d shapes: not an attnprof sweep.json",
                       path, SWEEP_MAX_SHAPES);
    size_t i;
    json_t *v;
    json_array_foreach(shapes, i, v)
    {
        if (!jshape(v, &p->shapes[p->n_shapes++]))
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: shapes[%zu] is not a shape of whole numbers within "
                           "run's limits (B <= 65536, H <= 4096, S <= 1048576, D <= 1024) named BxHxSxD", path, i);
    }
    json_t *rep = json_object_get(root, "replicate");
    if (rep) {
        if (!jshape(rep, &p->reference))
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: replicate is not a shape of whole numbers within run's "
                           "limits", path);
        p->replicate = 1;
    }
    return EXIT_OK;
}

/* Every field a later `--resume` or `--task` could act on: the variant names and run's
 * options go onto `attnprof run`'s command line, and the task command is compared with the
 * one the command line gives, never run on its own. */
static int read_fields(json_t *root, sweep_plan *p, const char *path, char *err, size_t errlen)
{
    int rc;
    if ((rc = jfield(root, "variants", NAME_CHARS ",", p->variants, sizeof p->variants, path, err, errlen)) ||
        (rc = jfield(root, "task_command", NULL, p->task_command, sizeof p->task_command, path, err, errlen)) ||
        (rc = jfield(root, "slurm_job_id", "0123456789", p->slurm_job_id, sizeof p->slurm_job_id, path, err,
                     errlen)) ||
        (rc = jfield(root, "run_flags", NAME_CHARS " ", p->run_flags, sizeof p->run_flags, path, err, errlen)) ||
        (rc = jint(root, "iters", 0, 100000, &p->iters, path, err, errlen)) ||
        (rc = jint(root, "warmup", 0, 100000, &p->warmup, path, err, errlen)))
        return rc;
    char bad[80];
    if (sweep_variant_list_valid(p->variants) != EXIT_OK)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: variants is not a comma-separated list of variant names",
                       path);
    if (sweep_run_flags_valid(p->run_flags, bad, sizeof bad) != EXIT_OK)
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: run_flags: '%s' is not one of the run options a sweep "
                       "passes on (--no-counters, --no-calibrate, --cudnn-replan, --pdf, --no-pdf, --seed N, "
                       "--counters-max-gib N)", path, bad);
    json_t *gpus = json_object_get(root, "gpus"), *v;
    if (gpus && (!json_is_array(gpus) || json_array_size(gpus) > SWEEP_MAX_GPUS))
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: gpus is not a list of at most %d GPU indices", path,
                       SWEEP_MAX_GPUS);
    size_t i;
    json_array_foreach(gpus, i, v)
    {
        const char *g = json_string_value(v);
        /* CUDA_VISIBLE_DEVICES entries: indices, GPU-<uuid>, MIG-<uuid> or MIG-GPU-<uuid>/g/c */
        if (!g || strlen(g) >= sizeof p->gpus[0] || strspn(g, NAME_CHARS "/:") != strlen(g))
            return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: gpus[%zu] is not a GPU index or UUID", path, i);
        snprintf(p->gpus[p->n_gpus++], sizeof p->gpus[0], "%s", g);
    }
    return EXIT_OK;
}

int sweep_plan_read(sweep_plan *p, const char *dir, int *found, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char path[1200];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    json_t *root;
    int rc = load_json(path, "sweep.json", SWEEP_PLAN_MAX_BYTES, &root, found, err, errlen);
    if (rc == EXIT_OK && root && (rc = read_shapes(root, p, path, err, errlen)) == EXIT_OK)
        rc = read_fields(root, p, path, err, errlen);
    json_decref(root);
    return rc;
}

int sweep_refused_variant(const char *error_line, char *variant, size_t n, double *bytes)
{
    char name[64];
    double gib;
    *bytes = NAN;
    for (const char *v = strstr(error_line, "variant "); v; v = strstr(v + 1, "variant ")) {
        if (sscanf(v, "variant %63s needs %lf GiB", name, &gib) == 2) {
            *bytes = gib * 1073741824.0;
        } else if (sscanf(v, "variant %63s cannot take", name) != 1) {
            continue;
        }
        snprintf(variant, n, "%s", name);
        return EXIT_OK;
    }
    return EXIT_BAD_ARCHIVE;
}

int sweep_status_write(const char *dir, const char *name, const sweep_status *s, char *err, size_t errlen)
{
    char sdir[1200], file[128];
    snprintf(sdir, sizeof sdir, "%s/status", dir);
    if (mkdir(sdir, 0755) != 0 && errno != EEXIST)
        return err_set(err, errlen, EXIT_IO, "%s: cannot create: %s", sdir, strerror(errno));
    snprintf(file, sizeof file, "%s.json", name);
    json_t *root = json_pack("{s:i,s:s,s:s,s:f,s:s,s:i,s:s}", "exit_code", s->exit_code, "error", s->error, "gpu",
                             s->gpu, "seconds", isfinite(s->seconds) ? s->seconds : 0.0, "slurm_job_id",
                             s->slurm_job_id, "slurm_task", s->slurm_task, "log", s->log);
    if (root && s->n_skipped) {
        json_t *sk = json_array();
        for (int i = 0; i < s->n_skipped; i++) {
            json_t *o = json_pack("{s:s,s:s}", "variant", s->skipped[i].variant, "reason", s->skipped[i].reason);
            if (isfinite(s->skipped[i].device_bytes))
                json_object_set_new(o, "device_bytes", json_integer((json_int_t)s->skipped[i].device_bytes));
            json_array_append_new(sk, o);
        }
        json_object_set_new(root, "skipped", sk);
    }
    return write_json(root, sdir, file, err, errlen);
}

int sweep_status_read(const char *dir, const char *name, sweep_status *s, int *found, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->slurm_task = -1;
    char path[1400];
    snprintf(path, sizeof path, "%s/status/%s.json", dir, name);
    json_t *root;
    int rc = load_json(path, "status file", SWEEP_STATUS_MAX_BYTES, &root, found, err, errlen);
    if (rc != EXIT_OK || !root)
        return rc;
    if (!json_is_integer(json_object_get(root, "exit_code"))) {
        json_decref(root);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: not a sweep status file (no exit_code)", path);
    }
    /* From whoever wrote the directory: an exit code is 0..255, a task index that of a
     * Slurm array (or -1), a log a relative path inside DIR. */
    json_int_t code = json_integer_value(json_object_get(root, "exit_code"));
    json_t *task = json_object_get(root, "slurm_task");
    const char *logp = jstr(root, "log");
    if (code < 0 || code > 255 || (task && (!json_is_integer(task) || json_integer_value(task) < -1 ||
                                            json_integer_value(task) > 1000000)) ||
        logp[0] == '/' || strstr(logp, "..")) {
        json_decref(root);
        return err_set(err, errlen, EXIT_BAD_ARCHIVE, "%s: exit_code, slurm_task or log out of range (0-255, -1 or a "
                       "task index, a path inside the sweep): not a status file attnprof wrote", path);
    }
    s->exit_code = (int)code;
    esc_copy_utf8(s->error, sizeof s->error, jstr(root, "error"));
    esc_copy_utf8(s->gpu, sizeof s->gpu, jstr(root, "gpu"));
    esc_copy_utf8(s->slurm_job_id, sizeof s->slurm_job_id, jstr(root, "slurm_job_id"));
    esc_copy_utf8(s->log, sizeof s->log, jstr(root, "log"));
    s->seconds = json_number_value(json_object_get(root, "seconds"));
    json_t *t = json_object_get(root, "slurm_task");
    s->slurm_task = json_is_integer(t) ? (int)json_integer_value(t) : -1;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(root, "skipped"), i, v)
    {
        if (s->n_skipped == RUN_MAX_VARIANTS || !*jstr(v, "variant"))
            continue;
        struct sweep_skip *k = &s->skipped[s->n_skipped++];
        esc_copy_utf8(k->variant, sizeof k->variant, jstr(v, "variant"));
        esc_copy_utf8(k->reason, sizeof k->reason, jstr(v, "reason"));
        json_t *b = json_object_get(v, "device_bytes");
        k->device_bytes = json_is_number(b) ? json_number_value(b) : NAN;
    }
    json_decref(root);
    return EXIT_OK;
}
