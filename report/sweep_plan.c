/* The sweep's plan and its per-shape outcomes as files: the LIST syntax and the
 * tokens rule that turn --seq/--dim/--batch/--tokens into shapes, DIR/sweep.json
 * (what was asked, written before anything runs, so `--collect` and `--resume`
 * know which shapes to expect) and DIR/status/<shape>.json (exit code and error
 * line of the child that ran a shape, the GPU it had, its Slurm job and log).
 * Pure data: the orchestration that runs the children lives in src/sweep.c. */
#include "sweep.h"

#include "archive.h"
#include "escape.h"
#include "report.h"

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

static int number(const char *s, const char **end, long *v)
{
    char *e;
    errno = 0;
    *v = strtol(s, &e, 10);
    *end = e;
    return errno || e == s || *s == '-' || *s == '+' ? -1 : 0;
}

int sweep_parse_list(const char *opt, const char *s, int max, int *out, char *err, size_t errlen)
{
    int n = 0;
    const char *p = s, *e;
    long a, b, step;
    if (strchr(s, ':')) {
        int geometric = 0;
        if (number(p, &e, &a) || *e != ':' || number(e + 1, &e, &b) || *e != ':' ||
            (e[1] != 'x' && e[1] != '+') || number(e + 2, &e, &step) || *e)
            goto bad;
        geometric = strchr(s, 'x') != NULL;
        if (a < 1 || b < a || b > max || (geometric ? step < 2 : step < 1))
            goto bad;
        for (long v = a; v <= b; v = geometric ? v * step : v + step) {
            if (n == SWEEP_MAX_LIST) {
                snprintf(err, errlen, "--%s %s: more than %d values; use a coarser step", opt, s, SWEEP_MAX_LIST);
                return -1;
            }
            out[n++] = (int)v;
        }
        return n;
    }
    for (;;) {
        if (number(p, &e, &a) || a < 1 || a > max || (*e && *e != ','))
            goto bad;
        if (n == SWEEP_MAX_LIST) {
            snprintf(err, errlen, "--%s %s: more than %d values", opt, s, SWEEP_MAX_LIST);
            return -1;
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
    return u;
bad:
    snprintf(err, errlen,
             "--%s %s: expected whole numbers from 1 to %d, comma-separated (256,512) or a range FROM:TO:xFACTOR "
             "(256:16384:x2) or FROM:TO:+STEP",
             opt, s, max);
    return -1;
}

int sweep_plan_shapes(sweep_plan *p, const int *seq, int n_seq, const int *dim, int n_dim, int batch, long tokens,
                      int heads, char *err, size_t errlen)
{
    p->n_shapes = 0;
    if ((long)n_seq * n_dim > SWEEP_MAX_SHAPES) {
        snprintf(err, errlen, "%d sequence lengths x %d head dims is more than %d shapes; split the sweep", n_seq,
                 n_dim, SWEEP_MAX_SHAPES);
        return -1;
    }
    for (int d = 0; d < n_dim; d++)
        for (int i = 0; i < n_seq; i++) {
            int b = batch;
            if (tokens > 0) {
                if (tokens % seq[i] || tokens / seq[i] < 1) {
                    snprintf(err, errlen,
                             "--tokens %ld: S = %d does not divide it (B = tokens / S must be whole and at least 1); "
                             "pick S from the divisors or give --batch",
                             tokens, seq[i]);
                    return -1;
                }
                if (tokens / seq[i] > (1 << 16)) {
                    snprintf(err, errlen, "--tokens %ld: S = %d gives B = %ld, above 65536", tokens, seq[i],
                             tokens / seq[i]);
                    return -1;
                }
                b = (int)(tokens / seq[i]);
            }
            p->shapes[p->n_shapes++] = (attn_shape){b, heads, seq[i], dim[d]};
        }
    return p->n_shapes;
}

void sweep_shape_name(const attn_shape *s, char *out, size_t n)
{
    snprintf(out, n, "%dx%dx%dx%d", s->batch, s->heads, s->seq, s->dim);
}

int sweep_shape_parse(const char *name, attn_shape *s)
{
    int b, h, q, d, used = 0;
    if (sscanf(name, "%dx%dx%dx%d%n", &b, &h, &q, &d, &used) != 4 || name[used] || b < 1 || h < 1 || q < 1 || d < 1)
        return -1;
    *s = (attn_shape){b, h, q, d};
    char back[64];
    sweep_shape_name(s, back, sizeof back);
    return strcmp(back, name) ? -1 : 0;
}

double sweep_flops(const attn_shape *s, int causal)
{
    double full = 4.0 * s->batch * s->heads * (double)s->seq * s->seq * s->dim;
    return causal ? full / 2 : full;
}

static json_t *shape_json(const attn_shape *s)
{
    char name[64];
    sweep_shape_name(s, name, sizeof name);
    return json_pack("{s:s,s:i,s:i,s:i,s:i}", "name", name, "batch", s->batch, "heads", s->heads, "seq", s->seq,
                     "dim", s->dim);
}

static int write_json(json_t *root, const char *dir, const char *name, char *err, size_t errlen)
{
    char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(root);
    if (!text) {
        snprintf(err, errlen, "%s/%s: could not build the JSON document", dir, name);
        return -1;
    }
    size_t len = strlen(text);
    char *nl = malloc(len + 2);
    if (!nl) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(nl, text, len);
    nl[len] = '\n';
    nl[len + 1] = '\0';
    free(text);
    int rc = report_write_file(dir, name, nl, err, errlen);
    free(nl);
    return rc;
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

static int jshape(json_t *o, attn_shape *s)
{
    json_t *b = json_object_get(o, "batch"), *h = json_object_get(o, "heads"), *q = json_object_get(o, "seq"),
           *d = json_object_get(o, "dim");
    if (!json_is_integer(b) || !json_is_integer(h) || !json_is_integer(q) || !json_is_integer(d))
        return -1;
    json_int_t v[4] = {json_integer_value(b), json_integer_value(h), json_integer_value(q), json_integer_value(d)};
    for (int i = 0; i < 4; i++)
        if (v[i] < 1 || v[i] > (1 << 20))
            return -1;
    *s = (attn_shape){(int)v[0], (int)v[1], (int)v[2], (int)v[3]};
    return 0;
}

int sweep_plan_read(sweep_plan *p, const char *dir, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char path[1200];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    if (!path_exists(path))
        return 1;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, errlen, "%s: not valid JSON (line %d: %s)", path, je.line, je.text);
        return -1;
    }
    json_t *shapes = json_object_get(root, "shapes");
    if (!json_is_array(shapes) || json_array_size(shapes) > SWEEP_MAX_SHAPES) {
        snprintf(err, errlen, "%s: no shapes list of at most %d shapes: not an attnprof sweep.json", path,
                 SWEEP_MAX_SHAPES);
        json_decref(root);
        return -1;
    }
    size_t i;
    json_t *v;
    json_array_foreach(shapes, i, v)
    {
        if (jshape(v, &p->shapes[p->n_shapes++]) != 0) {
            snprintf(err, errlen, "%s: shapes[%zu] is not a shape of whole numbers", path, i);
            json_decref(root);
            return -1;
        }
    }
    esc_copy_utf8(p->variants, sizeof p->variants, jstr(root, "variants"));
    esc_copy_utf8(p->task_command, sizeof p->task_command, jstr(root, "task_command"));
    esc_copy_utf8(p->slurm_job_id, sizeof p->slurm_job_id, jstr(root, "slurm_job_id"));
    esc_copy_utf8(p->run_flags, sizeof p->run_flags, jstr(root, "run_flags"));
    p->iters = (int)json_integer_value(json_object_get(root, "iters"));
    p->warmup = (int)json_integer_value(json_object_get(root, "warmup"));
    json_array_foreach(json_object_get(root, "gpus"), i, v)
    {
        if (p->n_gpus < SWEEP_MAX_GPUS)
            snprintf(p->gpus[p->n_gpus++], sizeof p->gpus[0], "%s", json_string_value(v) ? json_string_value(v) : "");
    }
    json_t *rep = json_object_get(root, "replicate");
    if (json_is_object(rep)) {
        if (jshape(rep, &p->reference) != 0) {
            snprintf(err, errlen, "%s: replicate is not a shape of whole numbers", path);
            json_decref(root);
            return -1;
        }
        p->replicate = 1;
    }
    json_decref(root);
    return 0;
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
        return 0;
    }
    return -1;
}

int sweep_status_write(const char *dir, const char *name, const sweep_status *s, char *err, size_t errlen)
{
    char sdir[1200], file[128];
    snprintf(sdir, sizeof sdir, "%s/status", dir);
    if (mkdir(sdir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create: %s", sdir, strerror(errno));
        return -1;
    }
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

int sweep_status_read(const char *dir, const char *name, sweep_status *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->slurm_task = -1;
    char path[1400];
    snprintf(path, sizeof path, "%s/status/%s.json", dir, name);
    if (!path_exists(path))
        return 1;
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root || !json_is_integer(json_object_get(root, "exit_code"))) {
        snprintf(err, errlen, "%s: not a sweep status file (%s)", path, root ? "no exit_code" : je.text);
        json_decref(root);
        return -1;
    }
    s->exit_code = (int)json_integer_value(json_object_get(root, "exit_code"));
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
    return 0;
}
