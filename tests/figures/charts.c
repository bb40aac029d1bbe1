/* Figures from a synthetic recorded run (no GPU): three variants shaped like
 * the series' (naive: 6 ops with a memcpy; flash: one fused kernel; cudnn: one
 * kernel launched with cuLaunchKernelEx), rendered in PNG, SVG and PDF. */
#include <criterion/criterion.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "findings.h"
#include "exit_codes.h"
#include "figures.h"
#include "fig.h"
#include "fixture.h"

#define US 1000LL /* ns */

typedef struct synth {
    trace t;
    run_info run;
    analysis a;
    uint32_t corr;
    int64_t now;
} synth;

static device_props h200(void)
{
    device_props d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "NVIDIA H200");
    d.major = 9;
    d.sm_count = 132;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.regs_per_sm = d.regs_per_block = 65536;
    d.smem_per_sm = 228 * 1024;
    d.smem_per_block = 48 * 1024;
    d.smem_per_block_optin = 227 * 1024;
    d.smem_reserved_per_block = 1024;
    return d;
}

typedef struct op_spec {
    const char *api;       /* launching call */
    api_kind api_kind;
    int64_t api_us10;      /* call duration, 0.1 µs units */
    gpu_op_kind kind;
    const char *name;
    int64_t dur_us;
    int grid, threads, regs, dyn_smem;
} op_spec;

static const op_spec NAIVE[] = {
    {"cudaLaunchKernel", API_RUNTIME, 45, GPU_KERNEL, "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_NTN", 62, 512, 384, 168, 0},
    {"cudaLaunchKernel", API_RUNTIME, 38, GPU_KERNEL, "void attnprof_naive_scale_kernel(__nv_bfloat16*, float, long)", 9, 4096, 256, 16, 0},
    {"cudaLaunchKernel", API_RUNTIME, 36, GPU_KERNEL, "void attnprof_causal_mask_kernel(__nv_bfloat16*, int, int)", 7, 4096, 256, 18, 0},
    {"cudaLaunchKernel", API_RUNTIME, 40, GPU_KERNEL, "void attnprof_softmax_rows_kernel(__nv_bfloat16 const*, __nv_bfloat16*, int)", 24, 16384, 128, 40, 0},
    {"cudaMemcpyAsync", API_RUNTIME, 61, GPU_MEMCPY, "Memcpy DtoD (Device -> Device)", 14, 0, 0, 0, 0},
    {"cudaLaunchKernel", API_RUNTIME, 42, GPU_KERNEL, "nvjet_tst_64x128_64x8_2x1_v_bz_coopB_NNN", 58, 512, 384, 168, 0},
};
static const op_spec FLASH[] = {
    {"cudaLaunchKernel", API_RUNTIME, 52, GPU_KERNEL,
     "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4, false, false, "
     "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 64, 4, cutlass::bfloat16_t> >, false, true, "
     "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
     41, 1024, 128, 255, 49152},
};
static const op_spec CUDNN[] = {
    {"cuLaunchKernelEx", API_DRIVER, 71, GPU_KERNEL,
     "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0", 33,
     264, 384, 168, 134144},
};

static void add_api(synth *fx, const char *name, api_kind kind, int64_t s, int64_t e, uint32_t corr)
{
    api_call c = {.kind = kind, .name = (char *)name, .start_ns = s, .end_ns = e, .correlation = corr,
                  .pid = 4242, .tid = 4242};
    trace_add_api(&fx->t, &c);
}

/* One variant: `n_fwd` forwards of `specs`, each launch followed by its op on
 * the GPU; the GPU runs behind the host as it does for a real forward. */
static void add_variant(synth *fx, const char *name, const op_spec *specs, int n_specs, int n_fwd,
                        variant_status status)
{
    variant_result *vr = &fx->run.variants[fx->run.n_variants++];
    if (n_fwd > fx->run.iters) /* run.json's iters: the forwards recorded per variant */
        fx->run.iters = n_fwd;
    snprintf(vr->name, sizeof vr->name, "%s", name);
    snprintf(vr->title, sizeof vr->title, "%s attention", name);
    vr->status = status;
    vr->expected_ops = n_specs;
    vr->rel_error = NAN;
    host_range outer = {.name = (char *)name, .variant = (char *)name, .iteration = -1,
                        .start_ns = fx->now, .pid = 4242, .tid = 4242};
    fx->now += 20 * US;
    for (int it = 0; it < n_fwd; it++) {
        int64_t start = fx->now, host = start + 2 * US, gpu = start + 9 * US;
        for (int k = 0; k < n_specs; k++) {
            const op_spec *sp = &specs[k];
            uint32_t corr = ++fx->corr;
            int64_t call_end = host + sp->api_us10 * 100;
            add_api(fx, sp->api, sp->api_kind, host, call_end, corr);
            if (k == 0) /* a sub-microsecond call must still show */
                add_api(fx, "cudaGetLastError", API_RUNTIME, call_end + 300, call_end + 500, ++fx->corr);
            gpu_op op = {.kind = sp->kind, .name = (char *)sp->name, .correlation = corr, .stream = 7};
            op.start_ns = gpu > call_end + 3 * US ? gpu : call_end + 3 * US;
            op.end_ns = op.start_ns + sp->dur_us * US;
            op.grid[0] = sp->grid;
            op.grid[1] = op.grid[2] = 1;
            op.block[0] = sp->threads;
            op.block[1] = op.block[2] = 1;
            op.registers = sp->regs;
            op.dynamic_smem = sp->dyn_smem;
            if (sp->kind == GPU_MEMCPY) {
                op.bytes = 8 << 20;
                strcpy(op.copy_kind, "DtoD");
            }
            trace_add_op(&fx->t, &op);
            gpu = op.end_ns + 1 * US;
            host = call_end + 1 * US + (k == 0 ? 1 * US : 0);
        }
        host_range r = {.name = "attn_fwd", .variant = (char *)name, .iteration = it, .start_ns = start,
                        .end_ns = host + 1 * US, .pid = 4242, .tid = 4242};
        trace_add_range(&fx->t, &r);
        /* the runner waits for the GPU between forwards */
        int64_t sync_end = (gpu > r.end_ns ? gpu : r.end_ns) + 4 * US;
        add_api(fx, "cudaStreamSynchronize", API_RUNTIME, r.end_ns + 2 * US, sync_end, ++fx->corr);
        fx->now = sync_end + 30 * US;
    }
    outer.end_ns = fx->now;
    trace_add_range(&fx->t, &outer);
    fx->now += 500 * US;
}

static void synth_begin(synth *fx)
{
    memset(fx, 0, sizeof *fx);
    trace_init(&fx->t);
    fx->t.device = h200();
    fx->t.pid = 4242;
    fx->run.device = fx->t.device;
    fx->run.shape = (attn_shape){.batch = 1, .heads = 16, .seq = 1024, .dim = 64};
    strcpy(fx->run.dtype, "bf16");
    fx->run.causal = 1;
    fx->now = 1000000 * US;
}

static void synth_finish(synth *fx)
{
    trace_sort(&fx->t);
    char err[512] = "";
    cr_assert_eq(analysis_build(&fx->a, &fx->t, &fx->run, err, sizeof err), 0, "%s", err);
    findings_derive(&fx->a);
}

static void synth_series(synth *fx)
{
    synth_begin(fx);
    add_variant(fx, "naive", NAIVE, 6, 7, VARIANT_OK);
    add_variant(fx, "flash", FLASH, 1, 7, VARIANT_OK);
    add_variant(fx, "cudnn", CUDNN, 1, 7, VARIANT_OK);
    synth_finish(fx);
}

static void synth_free(synth *fx)
{
    analysis_free(&fx->a);
    trace_free(&fx->t);
}

static void fresh_dir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "/tmp/attnprof-figtest-%d-%s", (int)getpid(), tag);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    cr_assert_eq(system(cmd), 0);
}

static void remove_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

static const figure_file *find_file(const figure_list *l, const char *figure, const char *kind)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->files[i].figure, figure) && !strcmp(l->files[i].kind, kind))
            return &l->files[i];
    return NULL;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

/* Text of a PDF as pdftotext extracts it (what a reader can search). */
static char *pdf_text(const char *pdf)
{
    char cmd[1200], out[600];
    cr_assert_eq(system("command -v pdftotext >/dev/null 2>&1"), 0,
                 "this test reads the PDFs back with pdftotext: apt-get install poppler-utils");
    snprintf(out, sizeof out, "%s.txt", pdf);
    snprintf(cmd, sizeof cmd, "pdftotext -q -enc UTF-8 '%s' '%s'", pdf, out);
    cr_assert_eq(system(cmd), 0, "pdftotext failed on %s", pdf);
    size_t len;
    char *text = read_all(out, &len);
    cr_assert_not_null(text);
    return text;
}

static void render_ok(const analysis *a, const char *dir, unsigned formats, int log_axis, figure_list *l)
{
    char err[512] = "";
    cr_assert_eq(figures_render(a, dir, formats, log_axis, l, err, sizeof err), 0, "%s", err);
}

/* ---- PNG pixel helpers -------------------------------------------------------- */

typedef struct band {
    int count, y_min, y_max, x_min, x_max;
} band;

typedef struct px_rect {
    int x0, y0, x1, y1; /* pixels, end exclusive */
} px_rect;

static const px_rect WHOLE = {0, 0, 1 << 30, 1 << 30};

static uint32_t pixel(cairo_surface_t *img, int x, int y)
{
    const unsigned char *d = cairo_image_surface_get_data(img);
    return *(const uint32_t *)(d + y * cairo_image_surface_get_stride(img) + 4 * x);
}

/* Pixels within 2/255 of `colour` inside `r`, and where they lie. */
static band find_colour(cairo_surface_t *img, unsigned colour, px_rect r)
{
    band b = {0, 1 << 30, -1, 1 << 30, -1};
    int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
    int cr_ = (colour >> 16) & 255, cg = (colour >> 8) & 255, cb = colour & 255;
    for (int y = r.y0 < 0 ? 0 : r.y0; y < h && y < r.y1; y++)
        for (int x = r.x0 < 0 ? 0 : r.x0; x < w && x < r.x1; x++) {
            uint32_t p = pixel(img, x, y);
            int pr = (p >> 16) & 255, pg = (p >> 8) & 255, pb = p & 255;
            if (abs(pr - cr_) <= 2 && abs(pg - cg) <= 2 && abs(pb - cb) <= 2) {
                b.count++;
                if (y < b.y_min) b.y_min = y;
                if (y > b.y_max) b.y_max = y;
                if (x < b.x_min) b.x_min = x;
                if (x > b.x_max) b.x_max = x;
            }
        }
    return b;
}

/* Page white, lane background and grid lines are light neutral greys. */
static int is_background(uint32_t p)
{
    int r = (p >> 16) & 255, g = (p >> 8) & 255, b = p & 255;
    return r == g && g == b && r >= 220;
}

static int ink_in(cairo_surface_t *img, px_rect r)
{
    int n = 0;
    int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
    for (int y = r.y0; y < h && y < r.y1; y++)
        for (int x = r.x0; x < w && x < r.x1; x++)
            n += !is_background(pixel(img, x, y));
    return n;
}

/* A lane of a timeline in PNG pixels, from its top (pt) to the next lane's top. */
static px_rect lane_px(const fig_timeline_geometry *g, double top, double bottom)
{
    return (px_rect){(int)(g->x0 * FIG_PNG_SCALE), (int)(top * FIG_PNG_SCALE) + 1,
                     (int)(g->x1 * FIG_PNG_SCALE), (int)(bottom * FIG_PNG_SCALE) - 1};
}

static cairo_surface_t *load_png(const char *dir, const figure_file *f)
{
    char path[1024];
    cr_assert_not_null(f);
    snprintf(path, sizeof path, "%s/%s", dir, f->path);
    cairo_surface_t *img = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(img), CAIRO_STATUS_SUCCESS, "%s", path);
    return img;
}

static fig_timeline_geometry timeline_geometry(const analysis *a, int variant)
{
    cairo_t *measure = fig_measure_create();
    fig_job job;
    memset(&job, 0, sizeof job);
    cr_assert_eq(fig_timeline_prepare(&job, measure, a, variant), 0);
    fig_measure_destroy(measure);
    fig_timeline_geometry g;
    cr_assert_eq(fig_timeline_geometry_of(&job, &g), 0);
    return g;
}

enum {
    GEMM_BLUE = 0x332288, FUSED_GREEN = 0x117733, MEMCPY_ROSE = 0xCC6677, SOFTMAX_SAND = 0xDDCC77,
    LAUNCH_GREY = 0x555555, DRIVER_LAUNCH_BROWN = 0x8C6A3F,
};

/* ---- tests ------------------------------------------------------------------------ */

Test(figures, renders_every_figure_in_every_format)
{
    synth fx;
    synth_series(&fx);
    char dir[256];
    fresh_dir(dir, sizeof dir, "all");
    figure_list l;
    render_ok(&fx.a, dir, FIG_PNG | FIG_SVG | FIG_PDF, 0, &l);
    /* 3 timelines + overview + occupancy + time chart, 3 formats each */
    cr_expect_eq(l.n, 6 * 3);
    const char *figs[] = {"timeline-naive", "timeline-flash", "timeline-cudnn", "timeline-overview",
                          "occupancy", "time-per-forward"};
    const char *kinds[] = {"png", "svg", "pdf"};
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 3; k++) {
            const figure_file *f = find_file(&l, figs[i], kinds[k]);
            cr_assert_not_null(f, "%s.%s missing", figs[i], kinds[k]);
            char path[1024], expect[128];
            snprintf(expect, sizeof expect, "figures/%s.%s", figs[i], kinds[k]);
            cr_expect_str_eq(f->path, expect);
            cr_expect(strlen(f->caption) > 20, "%s has no caption", f->path);
            snprintf(path, sizeof path, "%s/%s", dir, f->path);
            struct stat st;
            cr_expect(stat(path, &st) == 0 && st.st_size > 1000, "%s", path);
        }
    /* PNG only */
    figure_list png;
    char dir2[256];
    fresh_dir(dir2, sizeof dir2, "png");
    render_ok(&fx.a, dir2, FIG_PNG, 0, &png);
    cr_expect_eq(png.n, 6);
    for (int i = 0; i < png.n; i++)
        cr_expect_str_eq(png.files[i].kind, "png");
    figure_list_free(&png);
    figure_list_free(&l);
    remove_dir(dir);
    remove_dir(dir2);
    synth_free(&fx);
}

Test(figures, png_size_and_lanes)
{
    synth fx;
    synth_series(&fx);
    char dir[256];
    fresh_dir(dir, sizeof dir, "png-lanes");
    figure_list l;
    render_ok(&fx.a, dir, FIG_PNG, 0, &l);

    cairo_surface_t *img = load_png(dir, find_file(&l, "timeline-naive", "png"));
    /* 960 pt at 2 px per pt */
    cr_expect_eq(cairo_image_surface_get_width(img), 1920);
    int h = cairo_image_surface_get_height(img);
    cr_expect(h > 400 && h < 1400, "height %d", h);
    fig_timeline_geometry g = timeline_geometry(&fx.a, 0);
    cr_assert(g.nvtx_y < g.api_y && g.api_y < g.gpu_y && g.gpu_y < g.end_y);
    cr_expect_lt(g.end_y * FIG_PNG_SCALE, h);
    px_rect nvtx = lane_px(&g, g.nvtx_y, g.api_y), api = lane_px(&g, g.api_y, g.gpu_y);
    px_rect gpu = lane_px(&g, g.gpu_y, g.end_y);
    cr_expect_gt(ink_in(img, nvtx), 200, "NVTX lane is empty");
    cr_expect_gt(ink_in(img, api), 1000, "API lane is empty");
    cr_expect_gt(ink_in(img, gpu), 20000, "GPU lane is empty");
    /* each lane holds its own kind of box */
    cr_expect_gt(find_colour(img, LAUNCH_GREY, api).count, 200);
    cr_expect_eq(find_colour(img, LAUNCH_GREY, gpu).count, 0);
    cr_expect_gt(find_colour(img, GEMM_BLUE, gpu).count, 5000);
    cr_expect_gt(find_colour(img, MEMCPY_ROSE, gpu).count, 500);
    cr_expect_gt(find_colour(img, SOFTMAX_SAND, gpu).count, 500);
    cr_expect_eq(find_colour(img, GEMM_BLUE, api).count, 0);
    /* every 0.2 µs cudaGetLastError in the window is drawn: ink at its x */
    int tiny = 0;
    for (size_t i = 0; i < fx.t.n_apis; i++) {
        const api_call *c = &fx.t.apis[i];
        if (strcmp(c->name, "cudaGetLastError") || c->start_ns < g.t0_ns || c->end_ns > g.t1_ns)
            continue;
        double x = g.x0 + (double)(c->start_ns - g.t0_ns) / (double)(g.t1_ns - g.t0_ns) * (g.x1 - g.x0);
        int px = (int)(x * FIG_PNG_SCALE), py = (int)((g.api_y + 9) * FIG_PNG_SCALE);
        cr_expect(!is_background(pixel(img, px, py)) || !is_background(pixel(img, px + 1, py)),
                  "short call at x=%d not drawn", px);
        tiny++;
    }
    cr_expect_eq(tiny, 2, "two forwards shown");
    cairo_surface_destroy(img);

    img = load_png(dir, find_file(&l, "timeline-flash", "png"));
    g = timeline_geometry(&fx.a, 1);
    gpu = lane_px(&g, g.gpu_y, g.end_y);
    cr_expect_gt(find_colour(img, FUSED_GREEN, gpu).count, 5000);
    cr_expect_eq(find_colour(img, GEMM_BLUE, WHOLE).count, 0, "flash has no GEMM");
    cairo_surface_destroy(img);

    /* cuLaunchKernelEx is a launch too, in the driver launch colour */
    img = load_png(dir, find_file(&l, "timeline-cudnn", "png"));
    g = timeline_geometry(&fx.a, 2);
    cr_expect_gt(find_colour(img, DRIVER_LAUNCH_BROWN, lane_px(&g, g.api_y, g.gpu_y)).count, 100);
    cr_expect_gt(find_colour(img, FUSED_GREEN, lane_px(&g, g.gpu_y, g.end_y)).count, 5000);
    cairo_surface_destroy(img);

    /* overview: three variants stacked, on one time scale */
    img = load_png(dir, find_file(&l, "timeline-overview", "png"));
    cr_expect_eq(cairo_image_surface_get_width(img), 1920);
    px_rect plot = {(int)((FIG_MARGIN + 150) * FIG_PNG_SCALE), 0, 1 << 30, 1 << 30};
    band gemm = find_colour(img, GEMM_BLUE, plot), fused = find_colour(img, FUSED_GREEN, plot);
    cr_expect_gt(gemm.count, 2000);
    cr_expect_gt(fused.count, 2000);
    cr_expect_lt(gemm.y_max, fused.y_min, "naive above flash and cudnn");
    /* flash's and cudnn's one kernel take less width than naive's six ops */
    cr_expect_lt(fused.x_max - fused.x_min, gemm.x_max - gemm.x_min);
    cairo_surface_destroy(img);

    img = load_png(dir, find_file(&l, "occupancy", "png"));
    cr_expect_gt(find_colour(img, 0x4477AA, WHOLE).count, 2000);
    cr_expect_gt(find_colour(img, 0x88CCEE, WHOLE).count, 2000);
    cairo_surface_destroy(img);

    img = load_png(dir, find_file(&l, "time-per-forward", "png"));
    band cuda = find_colour(img, 0x4477AA, WHOLE), cpu = find_colour(img, 0xEE7733, WHOLE);
    cr_expect_gt(cuda.count, 5000);
    cr_expect_gt(cpu.count, 2000);
    cairo_surface_destroy(img);
    figure_list_free(&l);
    remove_dir(dir);
    synth_free(&fx);
}

Test(figures, pdf_text_is_searchable)
{
    synth fx;
    synth_series(&fx);
    char dir[256], path[1024];
    fresh_dir(dir, sizeof dir, "pdf");
    figure_list l;
    render_ok(&fx.a, dir, FIG_PDF, 0, &l);

    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "timeline-naive", "pdf")->path);
    char *text = pdf_text(path);
    const char *naive_expect[] = {
        "Timeline", "naive", "B=1 H=16 S=1024 D=64", "nvjet_tst_128x64", "62.0 \xc2\xb5s", "attn_fwd #3",
        "NVTX", "CPU API", "GPU", "0", "100 \xc2\xb5s", "200 \xc2\xb5s", "400 \xc2\xb5s",
        "GEMM", "softmax", "memcpy", "mask", "elementwise",
        "runtime launch (cudaLaunchKernel)", "copy/set call (cudaMemcpyAsync)",
        "other CUDA call (cudaGetLastError, cudaStreamSynchronize)",
        "median per forward: CUDA 174 \xc2\xb5s, CPU 36.2 \xc2\xb5s (7 forwards)"};
    for (size_t i = 0; i < sizeof naive_expect / sizeof *naive_expect; i++)
        cr_expect(strstr(text, naive_expect[i]) != NULL, "timeline-naive.pdf lacks \"%s\":\n%s",
                  naive_expect[i], text);
    free(text);

    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "timeline-cudnn", "pdf")->path);
    text = pdf_text(path);
    cr_expect(strstr(text, "cudnn_generated_fort_n") != NULL, "%s", text);
    cr_expect(strstr(text, "driver launch (cuLaunchKernelEx)") != NULL, "%s", text);
    free(text);

    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "occupancy", "pdf")->path);
    text = pdf_text(path);
    const char *occ_expect[] = {"limit: registers + shared memory", "18.8%", "limit: registers",
                                "Kineto: 0% (", "NVIDIA H200", "flash_fwd_kernel",
                                "12.5%", "\xc3\x97"};
    for (size_t i = 0; i < sizeof occ_expect / sizeof *occ_expect; i++)
        cr_expect(strstr(text, occ_expect[i]) != NULL, "occupancy.pdf lacks \"%s\":\n%s", occ_expect[i], text);
    free(text);

    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "time-per-forward", "pdf")->path);
    text = pdf_text(path);
    const char *time_expect[] = {"naive", "flash", "cudnn", "CUDA time", "CPU time", "7 forwards", "CPU/CUDA"};
    for (size_t i = 0; i < sizeof time_expect / sizeof *time_expect; i++)
        cr_expect(strstr(text, time_expect[i]) != NULL, "time-per-forward.pdf lacks \"%s\":\n%s",
                  time_expect[i], text);
    free(text);
    figure_list_free(&l);

    /* logarithmic axis: decade ticks */
    remove_dir(dir);
    fresh_dir(dir, sizeof dir, "pdf-log");
    render_ok(&fx.a, dir, FIG_PDF, 1, &l);
    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "time-per-forward", "pdf")->path);
    text = pdf_text(path);
    cr_expect(strstr(text, "logarithmic") && strstr(text, "10 \xc2\xb5s") && strstr(text, "100 \xc2\xb5s"),
              "%s", text);
    free(text);
    figure_list_free(&l);
    remove_dir(dir);
    synth_free(&fx);
}

Test(figures, same_input_same_bytes)
{
    synth fx;
    synth_series(&fx);
    char d1[256], d2[256];
    fresh_dir(d1, sizeof d1, "det1");
    fresh_dir(d2, sizeof d2, "det2");
    figure_list l1, l2;
    render_ok(&fx.a, d1, FIG_PNG | FIG_SVG | FIG_PDF, 0, &l1);
    render_ok(&fx.a, d2, FIG_PNG | FIG_SVG | FIG_PDF, 0, &l2);
    cr_assert_eq(l1.n, l2.n);
    for (int i = 0; i < l1.n; i++) {
        char p1[1024], p2[1024];
        snprintf(p1, sizeof p1, "%s/%s", d1, l1.files[i].path);
        snprintf(p2, sizeof p2, "%s/%s", d2, l2.files[i].path);
        size_t n1 = 0, n2 = 0;
        char *b1 = read_all(p1, &n1), *b2 = read_all(p2, &n2);
        cr_assert(b1 && b2);
        cr_expect(n1 == n2 && memcmp(b1, b2, n1) == 0, "%s differs between renders", l1.files[i].path);
        if (!strcmp(l1.files[i].kind, "pdf"))
            cr_expect(strstr(b1, "CreationDate") == NULL, "%s carries a date", l1.files[i].path);
        free(b1);
        free(b2);
    }
    figure_list_free(&l1);
    figure_list_free(&l2);
    remove_dir(d1);
    remove_dir(d2);
    synth_free(&fx);
}

Test(figures, zero_kernels_and_unavailable_variant)
{
    synth fx;
    synth_begin(&fx);
    add_variant(&fx, "empty", NAIVE, 0, 5, VARIANT_OK);    /* forwards that launched nothing */
    add_variant(&fx, "cudnn", CUDNN, 0, 0, VARIANT_UNAVAILABLE);
    snprintf(fx.run.variants[1].error, sizeof fx.run.variants[1].error,
             "cuDNN 9.19 has no SDPA engine for this GPU");
    synth_finish(&fx);
    char dir[256], path[1024];
    fresh_dir(dir, sizeof dir, "empty");
    figure_list l;
    render_ok(&fx.a, dir, FIG_PNG | FIG_SVG | FIG_PDF, 0, &l);
    cr_expect_eq(l.n, 5 * 3);
    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "timeline-cudnn", "pdf")->path);
    char *text = pdf_text(path);
    cr_expect(strstr(text, "unavailable") && strstr(text, "no SDPA engine"), "%s", text);
    free(text);
    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "occupancy", "pdf")->path);
    text = pdf_text(path);
    cr_expect(strstr(text, "0 distinct kernel launches"), "%s", text);
    free(text);
    figure_list_free(&l);
    remove_dir(dir);
    synth_free(&fx);
}

Test(figures, one_giant_kernel)
{
    synth fx;
    synth_begin(&fx);
    op_spec giant = CUDNN[0];
    giant.dur_us = 5 * 1000 * 1000; /* 5 s */
    add_variant(&fx, "giant", &giant, 1, 3, VARIANT_OK);
    synth_finish(&fx);
    char dir[256], path[1024];
    fresh_dir(dir, sizeof dir, "giant");
    figure_list l;
    render_ok(&fx.a, dir, FIG_PNG | FIG_PDF, 1, &l);
    cr_expect_eq(l.n, 4 * 2);
    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "timeline-giant", "pdf")->path);
    char *text = pdf_text(path);
    /* seconds-long spans are labelled in seconds */
    cr_expect(strstr(text, "5.00 s") && strstr(text, "10 s") && !strstr(text, "000 ms"), "%s", text);
    free(text);
    figure_list_free(&l);
    remove_dir(dir);
    synth_free(&fx);
}

Test(figures, many_distinct_kernels_are_capped)
{
    synth fx;
    synth_begin(&fx);
    op_spec many[30];
    for (int i = 0; i < 30; i++) {
        many[i] = NAIVE[1];
        many[i].grid = 100 + i; /* a distinct launch each */
        many[i].dur_us = 2;
    }
    add_variant(&fx, "many", many, 30, 3, VARIANT_OK);
    synth_finish(&fx);
    char dir[256], path[1024];
    fresh_dir(dir, sizeof dir, "many");
    figure_list l;
    render_ok(&fx.a, dir, FIG_PNG | FIG_PDF, 0, &l);
    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "occupancy", "pdf")->path);
    char *text = pdf_text(path);
    cr_expect(strstr(text, "30 distinct kernel launches") && strstr(text, "6 more distinct launches not shown"),
              "%s", text);
    free(text);
    figure_list_free(&l);
    remove_dir(dir);
    synth_free(&fx);
}

/* One forward of 40000 operations: the timelines draw such a lane at the
 * figure's resolution, so the vector files stay small (they held every box before:
 * 97 MB of SVG and 5 GB of memory for 500k operations), and the PNG still shows ink
 * across the GPU lane. */
Test(figures, dense_forward_stays_small_in_vector_formats)
{
    synth fx;
    synth_begin(&fx);
    enum { N = 40000 };
    op_spec *ops = calloc(N, sizeof *ops);
    cr_assert_not_null(ops);
    for (int i = 0; i < N; i++) {
        ops[i] = NAIVE[i % 4];
        ops[i].dur_us = 1 + i % 3;
        ops[i].api_us10 = 10;
    }
    add_variant(&fx, "dense", ops, N, 1, VARIANT_OK);
    synth_finish(&fx);
    char dir[256], path[1024];
    fresh_dir(dir, sizeof dir, "dense");
    figure_list l;
    render_ok(&fx.a, dir, FIG_PNG | FIG_SVG, 0, &l);
    const char *figs[] = {"timeline-dense", "timeline-overview"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, figs[i], "svg")->path);
        size_t len = 0;
        free(read_all(path, &len));
        cr_assert_lt(len, 2u << 20, "%s: %zu bytes of SVG for 40000 operations", figs[i], len);
    }
    fig_timeline_geometry g = timeline_geometry(&fx.a, 0);
    cairo_surface_t *img = load_png(dir, find_file(&l, "timeline-dense", "png"));
    px_rect gpu = lane_px(&g, g.gpu_y, g.end_y);
    cr_assert(ink_in(img, gpu), "the GPU lane is drawn");
    cairo_surface_destroy(img);
    figure_list_free(&l);
    remove_dir(dir);
    synth_free(&fx);
    free(ops);
}

/* The committed H200 archive: real kernel names, cuBLAS launches through
 * cuLaunchKernelEx, kernels with more than 48 KiB of shared memory. */
Test(figures, h200_archive)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    char dir[256], path[1024];
    fresh_dir(dir, sizeof dir, "h200");
    figure_list l;
    render_ok(&f.a, dir, FIG_PNG | FIG_PDF, 0, &l);
    cr_expect_eq(l.n, (f.a.n + 3) * 2);
    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "timeline-naive", "pdf")->path);
    char *text = pdf_text(path);
    cr_expect(strstr(text, "driver launch (cuLaunchKernelEx)") && strstr(text, "runtime launch (cudaLaunchKernel)"),
              "%s", text);
    free(text);
    snprintf(path, sizeof path, "%s/%s", dir, find_file(&l, "occupancy", "pdf")->path);
    text = pdf_text(path);
    cr_expect(strstr(text, "NVIDIA H200") && strstr(text, "Kineto: 0% ("), "%s", text);
    free(text);
    figure_list_free(&l);
    remove_dir(dir);
    fixture_free(&f);
}

/* The backward timeline: drawn for an archive with backwards (run --backward), one block per
 * variant with its median backward's kernels counted from the analysis, and absent from a
 * forward-only archive (h200_archive's count above holds it to the forward figures). */
Test(figures, backward_timeline_only_with_backwards)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-backward");
    char dir[256], path[1024];
    fresh_dir(dir, sizeof dir, "bwd");
    figure_list l;
    render_ok(&f.a, dir, FIG_PDF, 0, &l);
    const figure_file *ff = find_file(&l, "timeline-backward", "pdf");
    cr_assert(ff, "no timeline-backward in an archive with backwards");
    char want_caption[64];
    snprintf(want_caption, sizeof want_caption, "each of the %d variants with backwards", f.a.n);
    cr_expect(strstr(ff->caption, want_caption), "%s", ff->caption);
    snprintf(path, sizeof path, "%s/%s", dir, ff->path);
    char *text = pdf_text(path);
    int checked = 0;
    for (int i = 0; i < f.a.n; i++) {
        const variant_analysis *va = &f.a.v[i];
        int m = analysis_median_backward(va);
        cr_assert_geq(m, 0, "%s has no backward", va->result->name);
        int kernels = 0;
        for (int k = 0; k < va->backwards[m].n_ops; k++)
            kernels += va->backwards[m].ops[k]->kind == GPU_KERNEL;
        char want[96];
        snprintf(want, sizeof want, "%d kernel%s, %d GPU op%s", kernels, kernels == 1 ? "" : "s",
                 va->backwards[m].n_ops, va->backwards[m].n_ops == 1 ? "" : "s");
        cr_expect(strstr(text, want), "timeline-backward.pdf lacks \"%s\" (%s):\n%s", want, va->result->name, text);
        checked += kernels > 0;
    }
    cr_expect_eq(checked, f.a.n, "every variant's backward launches kernels");
    cr_expect(strstr(text, "One backward of each variant") && strstr(text, "NVTX range (one backward call)") &&
              !strstr(text, "one forward call"), "%s", text);
    free(text);
    figure_list_free(&l);
    remove_dir(dir);
    /* with its counters: the roofline places the backward's kernels too, as diamonds */
    char err[256];
    cr_assert_eq(counters_read_json(&f.r.counters, "tests/fixtures/h200-backward/counters.json", err, sizeof err), 0,
                 "%s", err);
    fresh_dir(dir, sizeof dir, "bwd-roof");
    render_ok(&f.a, dir, FIG_PDF, 0, &l);
    ff = find_file(&l, "roofline", "pdf");
    cr_assert(ff);
    snprintf(path, sizeof path, "%s/%s", dir, ff->path);
    text = pdf_text(path);
    cr_expect(strstr(text, "one forward and one backward") && strstr(text, "diamonds: the backward"), "%s", text);
    free(text);
    figure_list_free(&l);
    remove_dir(dir);
    counters_free(&f.r.counters);
    fixture_free(&f);

    fixture_load(&f, FIXTURE_4VAR);
    fresh_dir(dir, sizeof dir, "fwd-only");
    render_ok(&f.a, dir, FIG_PDF, 0, &l);
    cr_expect_null(find_file(&l, "timeline-backward", "pdf"), "a backward timeline for a forward-only archive");
    figure_list_free(&l);
    remove_dir(dir);
    fixture_free(&f);
}

Test(figures, unwritable_directory_is_an_error)
{
    synth fx;
    synth_series(&fx);
    figure_list l;
    char err[256] = "";
    cr_expect_eq(figures_render(&fx.a, "/proc/attnprof-no-such-dir", FIG_PNG, 0, &l, err, sizeof err), EXIT_IO);
    cr_expect(strlen(err) > 0);
    figure_list_free(&l);
    synth_free(&fx);
}

/* ---- toolkit ------------------------------------------------------------------------- */

Test(figures_toolkit, ticks_are_round)
{
    fig_ticks t;
    fig_nice_ticks(0, 237, 9, &t);
    cr_expect_eq(t.step, 50);
    cr_expect_eq(t.n, 5);
    cr_expect_eq(t.v[4], 200);
    fig_nice_ticks(0, 0.9, 6, &t);
    cr_expect(fabs(t.step - 0.2) < 1e-12);
    fig_nice_ticks(12, 13, 4, &t);
    cr_expect(fabs(t.step - 0.5) < 1e-12);
    cr_expect_eq(t.v[0], 12);

    char s[32];
    fig_time_fmt f = fig_time_fmt_for(200, 50);
    fig_time_label(&f, 150, s, sizeof s);
    cr_expect_str_eq(s, "150 \xc2\xb5s");
    f = fig_time_fmt_for(2500, 500);
    fig_time_label(&f, 1500, s, sizeof s);
    cr_expect_str_eq(s, "1.5 ms");
    f = fig_time_fmt_for(0.8, 0.2);
    fig_time_label(&f, 0.4, s, sizeof s);
    cr_expect_str_eq(s, "400 ns");
    fig_time_label(&f, 0, s, sizeof s);
    cr_expect_str_eq(s, "0");

    fig_format_us(12.34, s, sizeof s);
    cr_expect_str_eq(s, "12.3 \xc2\xb5s");
    fig_format_us(1234, s, sizeof s);
    cr_expect_str_eq(s, "1.23 ms");
    fig_format_us(0.25, s, sizeof s);
    cr_expect_str_eq(s, "250 ns");
    fig_format_us(5e6, s, sizeof s);
    cr_expect_str_eq(s, "5.00 s");
    f = fig_time_fmt_for(15e6, 2e6);
    fig_time_label(&f, 4e6, s, sizeof s);
    cr_expect_str_eq(s, "4 s");
    fig_format_bytes(134144, s, sizeof s);
    cr_expect_str_eq(s, "131 KiB");
    fig_format_bytes(135168 + 512, s, sizeof s);
    cr_expect_str_eq(s, "132.5 KiB");
}

Test(figures_toolkit, fitted_text_never_overflows)
{
    cairo_t *cr = fig_measure_create();
    cr_assert_not_null(cr);
    fig_font(cr, 9, 0);
    const char *name = "attnprof_softmax_rows_kernel_with_a_long_name";
    char out[128];
    cr_expect_eq(fig_fit_text(cr, name, 1000, 3, out, sizeof out), 1);
    cr_expect_str_eq(out, name);
    for (double w = 5; w < 250; w += 7) {
        if (fig_fit_text(cr, name, w, 3, out, sizeof out)) {
            cr_expect_leq(fig_text_width(cr, out), w, "\"%s\" wider than %.0f", out, w);
            cr_expect(!strcmp(out, name) || strstr(out, "\xe2\x80\xa6") != NULL,
                      "cut text carries an ellipsis");
        } else {
            cr_expect_str_eq(out, "");
        }
    }
    /* never cuts inside a UTF-8 sequence */
    cr_expect_eq(fig_fit_text(cr, "\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5", 22, 1, out, sizeof out), 1);
    for (size_t i = 0; out[i]; i++)
        cr_expect(((unsigned char)out[i] & 0xC0) != 0x80 || i > 0);
    cr_expect(strncmp(out, "\xc2\xb5", 2) == 0);
    fig_measure_destroy(cr);
}

Test(figures_toolkit, text_colour_contrasts)
{
    rgb on_indigo = fig_text_on(fig_hex(0x332288)), on_sand = fig_text_on(fig_hex(0xDDCC77));
    cr_expect(on_indigo.r == 1 && on_indigo.g == 1, "white on indigo");
    cr_expect(on_sand.r == 0 && on_sand.g == 0, "black on sand");
}
