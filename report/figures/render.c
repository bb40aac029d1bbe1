/* figures_render: every figure in every requested format under <dir>/figures. */
#include "figures.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "exit_codes.h"
#include "fig.h"
#include "compare.h"
#include "sweep.h"

static int make_dir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        snprintf(err, errlen, "%s exists and is not a directory", path);
        return EXIT_IO;
    }
    snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
    return EXIT_IO;
}

/* Variant names become file names: keep them to [A-Za-z0-9_.-]. */
static void safe_name(const char *in, char *out, size_t n)
{
    size_t j = 0;
    for (; *in && j + 1 < n; in++)
        out[j++] = (*in >= 'a' && *in <= 'z') || (*in >= 'A' && *in <= 'Z') ||
                           (*in >= '0' && *in <= '9') || *in == '-' || *in == '_' || *in == '.'
                       ? *in
                       : '_';
    out[j] = '\0';
}

static int list_add(figure_list *l, const fig_job *job, const char *kind, const char *rel)
{
    figure_file *grown = realloc(l->files, (size_t)(l->n + 1) * sizeof *grown);
    if (!grown)
        return EXIT_IO;
    l->files = grown;
    figure_file *f = &l->files[l->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", rel);
    esc_copy_utf8(f->caption, sizeof f->caption, job->caption);
    snprintf(f->kind, sizeof f->kind, "%s", kind);
    snprintf(f->figure, sizeof f->figure, "%s", job->name);
    return 0;
}

/* One file to draw: a figure in one format. */
typedef struct render_task {
    const fig_job *job;
    unsigned kind;
    const char *ext;
    char rel[256];
    int rc;
    char err[512];
} render_task;

typedef struct render_pool {
    render_task *tasks;
    int *order; /* biggest first, so no big PNG is left for the end */
    int n;
    int next;
    pthread_mutex_t lock;
    const char *dir;
} render_pool;

static void run_task(render_task *t, const char *dir, fig_buffer *pixels)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, t->rel) < 0) {
        snprintf(t->err, sizeof t->err, "out of memory");
        t->rc = EXIT_IO;
        return;
    }
    fig_canvas c;
    t->rc = fig_canvas_open(&c, (int)t->kind, path, t->job->w, t->job->h, t->job->caption, pixels,
                            t->err, sizeof t->err);
    if (t->rc == 0)
        fig_use_paper_font(c.cr, t->job->size != FIG_SIZE_SCREEN);
    if (t->rc == 0 && t->job->draw(c.cr, t->job) != 0) {
        fig_canvas_close(&c, NULL, 0);
        snprintf(t->err, sizeof t->err, "%.400s: out of memory while drawing", path);
        t->rc = EXIT_IO;
    } else if (t->rc == 0) {
        t->rc = fig_canvas_close(&c, t->err, sizeof t->err);
    }
    free(path);
}

static void *worker(void *arg)
{
    render_pool *pool = arg;
    fig_buffer pixels = {0}; /* this thread's PNG pixels, reused from figure to figure */
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        int i = pool->next < pool->n ? pool->next++ : -1;
        pthread_mutex_unlock(&pool->lock);
        if (i < 0)
            break;
        run_task(&pool->tasks[pool->order[i]], pool->dir, &pixels);
    }
    free(pixels.data);
    return NULL;
}

/* PNG encoding (zlib) is most of the time; files are independent, so they
 * are drawn on up to 4 threads. Each file's bytes do not depend on which
 * thread drew it. */
/* PNGs cost by their area; vector files are cheap. */
static double task_cost(const render_task *t)
{
    return t->job->w * t->job->h * (t->kind == FIG_PNG ? 10 : 1);
}

static int by_cost(const void *pa, const void *pb, void *tasks)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    const render_task *t = tasks;
    double ca = task_cost(&t[a]), cb = task_cost(&t[b]);
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return a - b;
}

static int run_tasks(render_task *tasks, int n, const char *dir)
{
    int *order = malloc(sizeof *order * (size_t)(n ? n : 1));
    if (!order)
        return EXIT_IO;
    for (int i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, by_cost, tasks);
    render_pool pool = {.tasks = tasks, .order = order, .n = n, .dir = dir};
    pthread_mutex_init(&pool.lock, NULL);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n_threads = cores > 4 ? 4 : cores < 1 ? 1 : (int)cores;
    if (n_threads > n)
        n_threads = n;
    pthread_t threads[4];
    int started = 0;
    for (int i = 1; i < n_threads; i++)
        if (pthread_create(&threads[started], NULL, worker, &pool) == 0)
            started++;
    worker(&pool); /* this thread works too; with no extra thread it does everything */
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&pool.lock);
    free(order);
    return 0;
}

/* ---- the figure tables ------------------------------------------------------------
 * A document's figures are a table, one row each, in the order they are drawn and listed:
 * how many files of it the document gets (0: it does not apply, n: one per series, per
 * pair of model traces, ...) and how the i-th is laid out (prepare names the file, e.g.
 * "timeline-<variant>"). A new figure is one file under figures/ and one row in its
 * document's table; render_table is the one loop over all three. */
typedef struct figure_input {
    const analysis *a;          /* an archive's figures */
    const compare_data *cmp;   /* a comparison's */
    const sweep_data *sweep;   /* a sweep's */
    int log_axis;
} figure_input;

typedef struct figure_row {
    const char *figure;
    int (*count)(const figure_input *in);
    int (*prepare)(fig_job *job, cairo_t *measure, const figure_input *in, int index);
} figure_row;

static int one(const figure_input *in) { return 1; }

/* Lays out every file of every row, then draws them all in every requested format. */
static int render_table(const figure_row *rows, int n_rows, const figure_input *in, const char *noun,
                        const char *dir, unsigned formats, figure_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int n_jobs = 0;
    int *counts = calloc((size_t)n_rows + 1, sizeof *counts);
    for (int f = 0; counts && f < n_rows; f++)
        n_jobs += counts[f] = rows[f].count(in);
    fig_job *jobs = calloc((size_t)(n_jobs ? n_jobs : 1), sizeof *jobs);
    cairo_t *measure = fig_measure_create();
    int rc = counts && jobs && measure ? EXIT_OK : EXIT_IO;
    for (int f = 0, j = 0; f < n_rows && rc == 0; f++)
        for (int i = 0; i < counts[f] && rc == 0; i++)
            rc = rows[f].prepare(&jobs[j++], measure, in, i);
    fig_measure_destroy(measure);
    free(counts);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory while laying out the %s", noun);
        free(jobs);
        return EXIT_IO;
    }
    rc = fig_render_jobs(jobs, n_jobs, dir, formats, out, err, errlen);
    free(jobs);
    return rc;
}

/* ---- an archive's figures ---- */

static int one_per_series(const figure_input *in) { return in->a->n; }
static int with_counters(const figure_input *in) { return fig_roofline_wanted(in->a) ? 1 : 0; }
static int with_backwards(const figure_input *in) { return fig_backward_wanted(in->a) ? 1 : 0; }

static int timeline_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_timeline_prepare(job, measure, in->a, index);
}
static int overview_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_overview_prepare(job, measure, in->a);
}
static int backward_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_backward_timeline_prepare(job, measure, in->a);
}
static int occupancy_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_occupancy_prepare(job, measure, in->a);
}
static int time_chart_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_time_chart_prepare(job, measure, in->a, in->log_axis);
}
static int roofline_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_roofline_prepare(job, measure, in->a);
}

static const figure_row archive_figures[] = {
    {"timeline of each series", one_per_series, timeline_row},
    {"timeline overview", one, overview_row},
    {"backward timeline (archives with backwards)", with_backwards, backward_row},
    {"occupancy", one, occupancy_row},
    {"time per forward", one, time_chart_row},
    {"roofline (archives with counters)", with_counters, roofline_row},
};

int figures_render(const analysis *a, const char *dir, unsigned formats, int log_axis,
                   figure_list *out, char *err, size_t errlen)
{
    char scratch[8];
    if (!err) {
        err = scratch;
        errlen = sizeof scratch;
    }
    err[0] = '\0';
    const figure_input in = {.a = a, .log_axis = log_axis};
    return render_table(archive_figures, (int)(sizeof archive_figures / sizeof archive_figures[0]), &in, "figures",
                        dir, formats, out, err, errlen);
}

/* ---- a comparison's figures ---- */

static int compare_time_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_compare_time_prepare(job, measure, in->cmp, in->log_axis);
}
static int compare_speedup_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_compare_speedup_prepare(job, measure, in->cmp);
}
static int compare_timeline_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_compare_timeline_prepare(job, measure, in->cmp);
}

static int one_per_model_pair(const figure_input *in) { return in->cmp->traces.n_pairs; }
static int model_roles_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_compare_model_roles_prepare(job, measure, in->cmp, index);
}

static const figure_row compare_figures[] = {
    {"time per forward, run by run", one, compare_time_row},
    {"speed-up over the baseline", one, compare_speedup_row},
    {"timeline of each variant, run by run", one, compare_timeline_row},
    {"role by role, each pair of model traces", one_per_model_pair, model_roles_row},
};

int compare_figures_render(const compare_data *m, const char *dir, unsigned formats, int log_axis,
                           figure_list *out, char *err, size_t errlen)
{
    const figure_input in = {.cmp = m, .log_axis = log_axis};
    return render_table(compare_figures, (int)(sizeof compare_figures / sizeof compare_figures[0]), &in, "figures",
                        dir, formats, out, err, errlen);
}

/* ---- a sweep's figures ---- */

static int sweep_time_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_sweep_time_prepare(job, measure, in->sweep);
}
static int sweep_tflops_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_sweep_tflops_prepare(job, measure, in->sweep);
}
static int sweep_memory_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_sweep_memory_prepare(job, measure, in->sweep);
}
static int sweep_kernels_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_sweep_kernels_prepare(job, measure, in->sweep);
}

static int one_if_decode(const figure_input *in) { return sweep_has_decode(in->sweep); }
static int sweep_decode_row(fig_job *job, cairo_t *measure, const figure_input *in, int index)
{
    return fig_sweep_decode_prepare(job, measure, in->sweep);
}

static const figure_row sweep_figures[] = {
    {"time per forward against S", one, sweep_time_row},
    {"throughput against S", one, sweep_tflops_row},
    {"device memory against S", one, sweep_memory_row},
    {"GPU operations per forward against S", one, sweep_kernels_row},
    {"decode curves: time and K+V GB/s against the KV length", one_if_decode, sweep_decode_row},
};

int sweep_figures_render(const sweep_data *m, const char *dir, unsigned formats, figure_list *out, char *err,
                         size_t errlen)
{
    const figure_input in = {.sweep = m};
    return render_table(sweep_figures, (int)(sizeof sweep_figures / sizeof sweep_figures[0]), &in, "sweep figures",
                        dir, formats, out, err, errlen);
}

int fig_render_jobs(const fig_job *jobs, int n_jobs, const char *dir, unsigned formats, figure_list *out,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *figdir = NULL;
    if (asprintf(&figdir, "%s/figures", dir) < 0) {
        snprintf(err, errlen, "out of memory");
        return EXIT_IO;
    }
    int made = make_dir(dir, err, errlen) || make_dir(figdir, err, errlen);
    free(figdir);
    if (made)
        return EXIT_IO;
    render_task *tasks = calloc((size_t)n_jobs * 3 + 1, sizeof *tasks);
    if (!tasks) {
        snprintf(err, errlen, "out of memory");
        return EXIT_IO;
    }
    static const struct { unsigned bit; const char *ext; } kinds[] = {
        {FIG_PNG, "png"}, {FIG_SVG, "svg"}, {FIG_PDF, "pdf"}};
    int n_tasks = 0, rc = 0;
    char (*files)[80] = calloc((size_t)n_jobs + 1, sizeof *files);
    if (!files) {
        snprintf(err, errlen, "out of memory");
        free(tasks);
        return EXIT_IO;
    }
    for (int i = 0; i < n_jobs; i++) {
        char *file = files[i], base[64];
        safe_name(jobs[i].name, base, sizeof base);
        snprintf(file, 80, "%s", base);
        /* "a/b" and "a_b" both become "a_b": the later one gets "-2" (or the next free number). */
        for (int j = 0, k = 2; j < i; j++)
            if (!strcmp(files[j], file)) {
                snprintf(file, 80, "%s-%d", base, k++);
                j = -1;
            }
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            if (!(formats & kinds[k].bit))
                continue;
            render_task *t = &tasks[n_tasks++];
            t->job = &jobs[i];
            t->kind = kinds[k].bit;
            t->ext = kinds[k].ext;
            snprintf(t->rel, sizeof t->rel, "figures/%s.%s", file, kinds[k].ext);
        }
    }
    free(files);
    if (run_tasks(tasks, n_tasks, dir)) {
        snprintf(err, errlen, "out of memory");
        free(tasks);
        return EXIT_IO;
    }
    for (int i = 0; i < n_tasks && rc == 0; i++) {
        if (tasks[i].rc != 0) {
            snprintf(err, errlen, "%s", tasks[i].err);
            rc = tasks[i].rc == EXIT_BAD_ARCHIVE ? EXIT_BAD_ARCHIVE : EXIT_IO;
        } else if (list_add(out, tasks[i].job, tasks[i].ext, tasks[i].rel)) {
            snprintf(err, errlen, "out of memory");
            rc = EXIT_IO;
        }
    }
    free(tasks);
    return rc;
}

/* Renders extra jobs (the paper-sized figures) and appends their files to `out`. */
static int render_more(const fig_job *jobs, int n, const char *dir, unsigned formats, figure_list *out, char *err,
                       size_t errlen)
{
    figure_list more = {0};
    int rc = fig_render_jobs(jobs, n, dir, formats, &more, err, errlen);
    for (int i = 0; i < more.n && rc == 0; i++) {
        figure_file *grown = realloc(out->files, (size_t)(out->n + 1) * sizeof *grown);
        if (!grown) {
            snprintf(err, errlen, "out of memory");
            rc = EXIT_IO;
            break;
        }
        out->files = grown;
        out->files[out->n++] = more.files[i];
    }
    figure_list_free(&more);
    return rc;
}

int figures_render_paper(const analysis *a, const char *dir, unsigned formats, int size, figure_list *out,
                         char *err, size_t errlen)
{
    char scratch[8];
    if (!err) {
        err = scratch;
        errlen = sizeof scratch;
    }
    if (size != FIG_SIZE_COLUMN && size != FIG_SIZE_TEXT)
        return 0;
    fig_job jobs[2];
    cairo_t *measure = fig_measure_create();
    if (!measure || fig_paper_prepare(jobs, measure, a, size) != 0) {
        fig_measure_destroy(measure);
        snprintf(err, errlen, "out of memory while laying out the figures");
        return EXIT_IO;
    }
    fig_measure_destroy(measure);
    return render_more(jobs, 2, dir, formats, out, err, errlen);
}

int compare_figures_render_paper(const compare_data *m, const char *dir, unsigned formats, int size,
                                 figure_list *out, char *err, size_t errlen)
{
    if (size != FIG_SIZE_COLUMN && size != FIG_SIZE_TEXT)
        return 0;
    fig_job job;
    cairo_t *measure = fig_measure_create();
    if (!measure) {
        snprintf(err, errlen, "out of memory while laying out the figures");
        return EXIT_IO;
    }
    fig_paper_compare_prepare(&job, measure, m, size);
    fig_measure_destroy(measure);
    return render_more(&job, 1, dir, formats, out, err, errlen);
}

void figure_list_free(figure_list *l)
{
    free(l->files);
    l->files = NULL;
    l->n = 0;
}
