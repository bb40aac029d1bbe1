/* figures_render: every figure in every requested format under <dir>/figures. */
#include "figures.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fig.h"

static int make_dir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        snprintf(err, errlen, "%s exists and is not a directory", path);
        return -1;
    }
    snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
    return -1;
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
        return -1;
    l->files = grown;
    figure_file *f = &l->files[l->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", rel);
    snprintf(f->caption, sizeof f->caption, "%s", job->caption);
    snprintf(f->kind, sizeof f->kind, "%s", kind);
    snprintf(f->figure, sizeof f->figure, "%s", job->name);
    return 0;
}

static int render_job(const fig_job *job, const char *dir, unsigned formats, figure_list *out,
                      char *err, size_t errlen)
{
    static const struct { unsigned bit; const char *ext; } kinds[] = {
        {FIG_PNG, "png"}, {FIG_SVG, "svg"}, {FIG_PDF, "pdf"}};
    char file[64];
    safe_name(job->name, file, sizeof file);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!(formats & kinds[k].bit))
            continue;
        char rel[256], path[1024];
        snprintf(rel, sizeof rel, "figures/%s.%s", file, kinds[k].ext);
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        fig_canvas c;
        if (fig_canvas_open(&c, (int)kinds[k].bit, path, job->w, job->h, job->caption, err, errlen))
            return -1;
        if (job->draw(c.cr, job) != 0) {
            fig_canvas_close(&c, NULL, 0);
            snprintf(err, errlen, "%s: out of memory while drawing", path);
            return -1;
        }
        if (fig_canvas_close(&c, err, errlen))
            return -1;
        if (list_add(out, job, kinds[k].ext, rel)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

int figures_render(const analysis *a, const char *dir, unsigned formats, int log_axis,
                   figure_list *out, char *err, size_t errlen)
{
    char scratch[8];
    if (!err) {
        err = scratch;
        errlen = sizeof scratch;
    }
    err[0] = '\0';
    memset(out, 0, sizeof *out);
    char figdir[1024];
    snprintf(figdir, sizeof figdir, "%s/figures", dir);
    if (make_dir(dir, err, errlen) || make_dir(figdir, err, errlen))
        return -1;
    cairo_t *measure = fig_measure_create();
    if (!measure) {
        snprintf(err, errlen, "cairo: cannot create a drawing context");
        return -1;
    }
    int rc = 0;
    fig_job job;
    for (int i = 0; i < a->n && rc == 0; i++) {
        memset(&job, 0, sizeof job);
        rc = fig_timeline_prepare(&job, measure, a, i) ? -1 : render_job(&job, dir, formats, out, err, errlen);
    }
    if (rc == 0) {
        memset(&job, 0, sizeof job);
        rc = fig_overview_prepare(&job, measure, a) ? -1 : render_job(&job, dir, formats, out, err, errlen);
    }
    if (rc == 0) {
        memset(&job, 0, sizeof job);
        rc = fig_occupancy_prepare(&job, measure, a) ? -1 : render_job(&job, dir, formats, out, err, errlen);
    }
    if (rc == 0) {
        memset(&job, 0, sizeof job);
        rc = fig_time_chart_prepare(&job, measure, a, log_axis) ? -1
                                                                 : render_job(&job, dir, formats, out, err, errlen);
    }
    if (rc != 0 && strcmp(err, "") == 0)
        snprintf(err, errlen, "out of memory while laying out the figures");
    fig_measure_destroy(measure);
    return rc;
}

void figure_list_free(figure_list *l)
{
    free(l->files);
    l->files = NULL;
    l->n = 0;
}
