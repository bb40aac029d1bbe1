/* Issue 29 (the readers' half, tests/test_hardening.c has the other): every input stays bounded, an archive that
 * contradicts itself is called inconsistent, and every archive string reaches a
 * document or the terminal through its target's escaper. Every hostile input here
 * is synthetic, built by the test itself (or derived from an H200 fixture by one
 * stated change); none is a recording. No GPU needed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "archive.h"
#include "counters.h"
#include "escape.h"
#include "exit_codes.h"
#include "fixture.h"
#include "input.h"
#include "kineto_read.h"
#include "sha256.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *temp_dir(void)
{
    char tmpl[] = "/tmp/attnprof-hardening-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    return strdup(tmpl);
}

static char *path_in(const char *dir, const char *name)
{
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    cr_assert_eq(fclose(f), 0);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, got, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* ==== 1. bounded, linear cost ================================================ */

/* N cpu_op ranges nested in each other on one thread, a launch and its kernel inside
 * each: the innermost chain of the deepest op is N long. Every op's cpu_op_path
 * used to hold its whole chain (16 000 levels: 65 s, 2.9 GB). */
Test(bounded, nested_cpu_ops_cost_linear_memory_and_time)
{
    enum { N = 8000 };
    trace t;
    trace_init(&t);
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "aten::level_%d", i);
        host_range r = {.kind = RANGE_CPU_OP, .name = name, .variant = "", .iteration = -1,
                        .start_ns = 10LL * i, .end_ns = 100LL * N - 10LL * i, .pid = 1, .tid = 1};
        trace_add_range(&t, &r);
        api_call a = {.kind = API_RUNTIME, .name = "cudaLaunchKernel", .start_ns = 10LL * i + 2,
                      .end_ns = 10LL * i + 3, .correlation = (uint32_t)i + 1, .pid = 1, .tid = 1};
        trace_add_api(&t, &a);
        gpu_op o = {.kind = GPU_KERNEL, .name = "k", .start_ns = 100LL * N + 10LL * i,
                    .end_ns = 100LL * N + 10LL * i + 5, .correlation = (uint32_t)i + 1, .block = {1, 1, 1}};
        trace_add_op(&t, &o);
    }
    double t0 = now_s();
    trace_sort(&t);
    double took = now_s() - t0;
    size_t bytes = 0;
    for (size_t i = 0; i < t.n_ops; i++) {
        cr_assert_not_null(t.ops[i].cpu_op_path);
        bytes += strlen(t.ops[i].cpu_op_path);
    }
    /* The deepest op: named after its innermost range, its outer ranges left out and said so. */
    const gpu_op *deep = &t.ops[N - 1];
    snprintf(name, sizeof name, "aten::level_%d", N - 1);
    cr_assert_str_eq(deep->cpu_op, name);
    cr_assert(strncmp(deep->cpu_op_path, "\u2026 > ", strlen("\u2026 > ")) == 0, "%.80s", deep->cpu_op_path);
    cr_assert(strstr(deep->cpu_op_path, name), "the innermost is kept");
    cr_assert_leq(bytes, (size_t)N * (TRACE_CPU_PATH_MAX_BYTES + 16), "%zu bytes of chains: quadratic", bytes);
    /* Measured 0.02 s here (was seconds and ~400 MB at this N): a bound with a wide margin. */
    cr_assert_lt(took, 2.0, "trace_sort took %.2f s", took);
    trace_free(&t);
}

/* F forward ranges of one variant that all overlap, one launch in each: every
 * launch lay inside every forward (8000 of them: 98 s, 1.1 GB, and the CUDA time
 * multiplied). Now one n·log n check names the overlap. */
Test(bounded, overlapping_forwards_are_inconsistent_and_cheap)
{
    enum { F = 4000 };
    trace t;
    trace_init(&t);
    for (int i = 0; i < F; i++) {
        host_range r = {.kind = RANGE_ANNOTATION, .name = "attn_fwd", .variant = "v", .iteration = i,
                        .start_ns = 10LL * i, .end_ns = 100LL * F, .pid = 1, .tid = 1};
        trace_add_range(&t, &r);
        api_call a = {.kind = API_RUNTIME, .name = "cudaLaunchKernel", .start_ns = 10LL * i + 2,
                      .end_ns = 10LL * i + 3, .correlation = (uint32_t)i + 1, .pid = 1, .tid = 1};
        trace_add_api(&t, &a);
        gpu_op o = {.kind = GPU_KERNEL, .name = "k", .start_ns = 100LL * F + 10LL * i,
                    .end_ns = 100LL * F + 10LL * i + 5, .correlation = (uint32_t)i + 1, .block = {1, 1, 1}};
        trace_add_op(&t, &o);
    }
    trace_sort(&t);
    static run_info r;
    memset(&r, 0, sizeof r);
    r.n_variants = 1;
    r.iters = F;
    snprintf(r.variants[0].name, sizeof r.variants[0].name, "v");
    r.variants[0].status = VARIANT_OK;
    r.variants[0].rel_error = NAN;
    analysis a;
    char err[512] = "";
    double t0 = now_s();
    cr_assert_neq(analysis_build(&a, &t, &r, err, sizeof err), 0, "overlapping forwards accepted");
    cr_assert_lt(now_s() - t0, 2.0);
    cr_assert(strstr(err, "inconsistent") && strstr(err, "overlap") && strstr(err, "v #0"), "%s", err);
    trace_free(&t);
}

/* The text of a minimal consistent attnprof trace.json: one forward of variant "v",
 * one launch, one kernel; `kernel_args` and `api_args` are spliced in. */
static char *small_trace(const char *api_args, const char *kernel_args, const char *kernel_name)
{
    char *s = NULL;
    cr_assert_geq(asprintf(&s,
                           "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H200\","
                           "\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}],\"traceEvents\":["
                           "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"attn_fwd\",\"ts\":10,\"dur\":100,"
                           "\"pid\":1,\"tid\":1,\"args\":{\"variant\":\"v\",\"iteration\":0}},"
                           "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":20,\"dur\":5,"
                           "\"pid\":1,\"tid\":1,\"args\":{%s}},"
                           "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"ts\":30,\"dur\":10,\"pid\":0,"
                           "\"tid\":7,\"args\":{%s}}],\"baseTimeNanoseconds\":1000}",
                           api_args, kernel_name, kernel_args),
                  0);
    return s;
}

#define API_OK "\"correlation\":7"
#define KERNEL_OK \
    "\"correlation\":7,\"device\":0,\"stream\":7,\"grid\":[1,1,1],\"block\":[128,1,1],\"registers per thread\":32"

static int read_trace_text(const char *text, char *err, size_t errlen)
{
    char *dir = temp_dir(), *p = path_in(dir, "trace.json");
    write_text(p, text);
    trace t;
    int rc = trace_read_json(&t, p, err, errlen);
    if (rc == 0)
        trace_free(&t);
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
    return rc;
}

Test(bounded, small_trace_template_reads)
{
    char err[512] = "";
    char *s = small_trace(API_OK, KERNEL_OK, "k");
    cr_assert_eq(read_trace_text(s, err, sizeof err), 0, "%s", err);
    free(s);
}

/* One JSON string longer than INPUT_MAX_TOKEN_BYTES: refused as such (yajl re-lexes
 * a token split across read chunks from its start: 64 MB took 9.8 s). One just
 * under the limit still reads, quickly. */
Test(bounded, json_token_length_limit)
{
    char err[512] = "";
    size_t big = INPUT_MAX_TOKEN_BYTES + 4096, fits = INPUT_MAX_TOKEN_BYTES - 4096;
    char *name = malloc(big + 1);
    memset(name, 'a', big);
    name[big] = '\0';
    char *s = small_trace(API_OK, KERNEL_OK, name);
    cr_assert_neq(read_trace_text(s, err, sizeof err), 0, "a %zu-byte name was read", big);
    cr_assert(strstr(err, "longer than 1 MiB") && strstr(err, "SECURITY.md"), "%s", err);
    free(s);
    name[fits] = '\0';
    s = small_trace(API_OK, KERNEL_OK, name);
    double t0 = now_s();
    cr_assert_eq(read_trace_text(s, err, sizeof err), 0, "%s", err);
    cr_assert_lt(now_s() - t0, 2.0);
    free(s);
    /* a number is a token too */
    memset(name, '1', big);
    name[big] = '\0';
    char *args = NULL;
    cr_assert_geq(asprintf(&args, KERNEL_OK ",\"queued\":%s", name), 0);
    s = small_trace(API_OK, args, "k");
    cr_assert_neq(read_trace_text(s, err, sizeof err), 0);
    cr_assert(strstr(err, "longer than 1 MiB"), "%s", err);
    free(s);
    free(args);
    free(name);
}

/* Writes `head`, `n` bytes of `fill`, then `tail`, gzip-compressed, to path;
 * returns the compressed size. */
static long gzip_bomb(const char *path, const char *head, char fill, size_t n, const char *tail)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    z_stream z;
    memset(&z, 0, sizeof z);
    cr_assert_eq(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 9, Z_RLE), Z_OK);
    static unsigned char in[1 << 16], out[1 << 16];
    memset(in, fill, sizeof in);
    for (int part = 0; part < 3; part++) {
        size_t left = part == 1 ? n : strlen(part ? tail : head);
        while (left > 0 || part == 2) {
            size_t k = part == 1 ? (left < sizeof in ? left : sizeof in) : left;
            z.next_in = part == 1 ? in : (unsigned char *)(part ? tail : head);
            z.avail_in = (uInt)k;
            left -= k;
            int flush = part == 2 && left == 0 ? Z_FINISH : Z_NO_FLUSH;
            int zr;
            do {
                z.next_out = out;
                z.avail_out = sizeof out;
                zr = deflate(&z, flush);
                fwrite(out, 1, sizeof out - z.avail_out, f);
            } while (z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
            if (part == 2)
                break;
        }
    }
    deflateEnd(&z);
    long size = ftell(f);
    fclose(f);
    return size;
}

/* A small .json.gz that inflates to over INPUT_MAX_INFLATE_RATIO × its size: stopped
 * early (an 8 MB gzip of 8 GiB whitespace took 94 s, a 53 MB one wrote a 4 GB
 * trace.json). And a gzip holding one huge name stops at the token limit, long
 * before the name is inflated (1 MB holding 1 GiB did not finish). */
Test(bounded, gzip_inflation_limit)
{
    char *dir = temp_dir(), *p = path_in(dir, "bomb.json.gz");
    size_t n = (size_t)48 << 20; /* 48 MiB of spaces: about 50 KiB compressed */
    long size = gzip_bomb(p, "{\"traceEvents\":[", ' ', n, "]}");
    cr_assert_lt(INPUT_MAX_INFLATE_RATIO * size + INPUT_INFLATE_SLACK_BYTES, (long)n, "not a bomb by the limit");
    char err[512] = "";
    double t0 = now_s();
    kineto_status st = kineto_read(p, NULL, NULL, NULL, NULL, err, sizeof err);
    double took = now_s() - t0;
    cr_assert_eq(st, KINETO_ERR_LIMIT, "%s", err);
    cr_assert(strstr(err, "decompression bomb") && strstr(err, "SECURITY.md"), "%s", err);
    cr_assert_lt(took, 3.0);
    /* the same text under the limit is a valid, empty trace */
    long small = gzip_bomb(p, "{\"traceEvents\":[", ' ', (size_t)8 << 20, "]}");
    cr_assert_gt(small, 0);
    cr_assert_eq(kineto_read(p, NULL, NULL, NULL, NULL, err, sizeof err), KINETO_OK, "%s", err);
    /* one name of 8 MiB inside */
    gzip_bomb(p, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"", 'a', (size_t)8 << 20, "\"}]}");
    t0 = now_s();
    cr_assert_eq(kineto_read(p, NULL, NULL, NULL, NULL, err, sizeof err), KINETO_ERR_LIMIT, "%s", err);
    cr_assert_lt(now_s() - t0, 3.0);
    cr_assert(strstr(err, "longer than 1 MiB"), "%s", err);
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
}

/* What is not a regular file is refused before a byte is read: `import /dev/zero`
 * ran forever, `import FIFO` hung (or, with a writer, recorded the SHA-256 of an
 * empty file: the digest thread opened the path a second time). */
Test(bounded, only_regular_files_opened_once, .timeout = 20)
{
    char err[512] = "";
    kineto_file_info info;
    cr_assert_eq(kineto_read("/dev/zero", NULL, NULL, NULL, &info, err, sizeof err), KINETO_ERR_IO);
    cr_assert(strstr(err, "character device"), "%s", err);
    char *dir = temp_dir(), *fifo = path_in(dir, "fifo.json"), *file = path_in(dir, "t.json"),
         *link = path_in(dir, "link.json");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(kineto_read(fifo, NULL, NULL, NULL, &info, err, sizeof err), KINETO_ERR_IO);
    cr_assert(strstr(err, "FIFO"), "%s", err);
    run_info r;
    cr_assert_neq(run_info_read_json(&r, fifo, err, sizeof err), 0);
    cr_assert(strstr(err, "FIFO"), "%s", err);
    counters_set cs;
    cr_assert_neq(counters_read_json(&cs, fifo, err, sizeof err), 0);
    cr_assert(strstr(err, "FIFO"), "%s", err);
    /* a symbolic link is not followed */
    write_text(file, "{\"traceEvents\":[]}");
    cr_assert_eq(symlink(file, link), 0);
    cr_assert_eq(kineto_read(link, NULL, NULL, NULL, &info, err, sizeof err), KINETO_ERR_IO);
    cr_assert(strstr(err, "symbolic link"), "%s", err);
    /* the digest is of the bytes read */
    cr_assert_eq(kineto_read(file, NULL, NULL, NULL, &info, err, sizeof err), KINETO_OK, "%s", err);
    sha256_ctx c;
    char hex[65];
    sha256_init(&c);
    sha256_update(&c, "{\"traceEvents\":[]}", 18);
    sha256_final_hex(&c, hex);
    cr_assert_str_eq(info.sha256, hex);
    cr_assert_eq(info.size, 18);
    /* a run.json larger than the DOM limit is refused by its size (a sparse file: nothing read) */
    int fd = open(file, O_WRONLY | O_TRUNC);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, INPUT_MAX_DOM_BYTES + 1), 0);
    close(fd);
    cr_assert_neq(run_info_read_json(&r, file, err, sizeof err), 0);
    cr_assert(strstr(err, "MiB attnprof reads"), "%s", err);
    unlink(link), unlink(file), unlink(fifo), rmdir(dir);
    free(link), free(file), free(fifo), free(dir);
}

/* The CLI: each of these is one line and exit 6, in well under a second. */
Test(bounded, cli_import_refuses_devices_fifos_and_bombs, .timeout = 30)
{
    const char *bin = getenv("ATTNPROF_BIN") ? getenv("ATTNPROF_BIN") : "build/attnprof";
    char *dir = temp_dir(), *fifo = path_in(dir, "f.json"), *bomb = path_in(dir, "b.json.gz");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    gzip_bomb(bomb, "{\"traceEvents\":[", ' ', (size_t)48 << 20, "]}");
    const char *inputs[] = {"/dev/zero", fifo, bomb}, *says[] = {"character device", "FIFO", "decompression bomb"};
    for (int i = 0; i < 3; i++) {
        char *cmd = NULL;
        cr_assert_geq(asprintf(&cmd, "timeout 10 %s import %s -o %s/out%d 2>%s/err", bin, inputs[i], dir, i, dir), 0);
        double t0 = now_s();
        int st = system(cmd);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == EXIT_BAD_ARCHIVE, "%s: status %d", inputs[i], st);
        cr_assert_lt(now_s() - t0, 5.0);
        char *e = path_in(dir, "err"), *text = slurp(e);
        cr_assert(text && strchr(text, '\n') == text + strlen(text) - 1, "one line: %s", text);
        cr_assert(strstr(text, says[i]), "%s", text);
        char *out = NULL;
        cr_assert_geq(asprintf(&out, "%s/out%d", dir, i), 0);
        struct stat sb;
        cr_assert_neq(stat(out, &sb), 0, "nothing written for %s", inputs[i]);
        free(out), free(text), free(e), free(cmd);
    }
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "rm -rf '%s'", dir), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd), free(fifo), free(bomb), free(dir);
}

/* ==== 3. consistency ========================================================= */

/* Each event of a synthetic trace that a real recording cannot hold, one at a time. */
Test(consistency, trace_events_that_contradict)
{
    static const struct {
        const char *api, *kernel, *expect;
    } cases[] = {
        /* a kernel whose correlation matches no call (was: 0.0 µs, "the cost moved to the CPU") */
        {API_OK, "\"correlation\":8,\"device\":0,\"stream\":7", "which no API call has"},
        /* correlation 2^32 + 7, cut to 7 before */
        {API_OK, "\"correlation\":4294967303,\"device\":0,\"stream\":7", "args.correlation: out of range"},
        /* fractional and string-typed kernel fields (were read as 0) */
        {API_OK, KERNEL_OK ",\"shared memory\":12.5", "args.shared memory: expected a whole number, not a fraction"},
        {API_OK, KERNEL_OK ",\"shared memory\":\"12\"", "args.shared memory: expected a whole number"},
        {API_OK, "\"correlation\":\"7\",\"device\":0", "args.correlation: expected a whole number"},
        {"\"correlation\":7.5", KERNEL_OK, "args.correlation: expected a whole number, not a fraction"},
        {API_OK, "\"correlation\":7,\"device\":0,\"stream\":7,\"grid\":[1.5,1,1]", "args.grid"},
        {API_OK, "\"correlation\":7,\"device\":0,\"stream\":7,\"block\":[\"128\",1,1]", "args.block"},
        /* huge numbers: no float->int overflow, an error naming the field */
        {API_OK, KERNEL_OK ",\"bytes\":1e300", "args.bytes: expected a whole number"},
        {API_OK, KERNEL_OK ",\"est. achieved occupancy %\":1e300", "occupancy %: expected a number from 0 to 100"},
        {API_OK, KERNEL_OK ",\"stream\":-1e300", "args.stream"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        char *s = small_trace(cases[i].api, cases[i].kernel, "k");
        cr_assert_neq(read_trace_text(s, err, sizeof err), 0, "case %zu accepted", i);
        cr_assert(strstr(err, cases[i].expect), "case %zu: %s", i, err);
        free(s);
    }
}

static void trace_fails(trace *t, const char *expect)
{
    trace_sort(t);
    char err[512] = "";
    cr_assert_neq(trace_check(t, err, sizeof err), 0, "accepted, expected: %s", expect);
    cr_assert(strstr(err, "inconsistent") && strstr(err, expect), "%s", err);
}

/* On the H200 fixture, one change each. */
Test(consistency, duplicate_and_misplaced_events)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    char err[512];
    cr_assert_eq(trace_check(&f.t, err, sizeof err), 0, "%s", err);
    /* every event with one correlation id (was: "5 GPU operations per forward where 1 were expected") */
    trace t;
    cr_assert_eq(trace_read_json(&t, FIXTURE_4VAR "/trace.json", err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < t.n_ops; i++)
        t.ops[i].correlation = 1;
    for (size_t i = 0; i < t.n_apis; i++)
        t.apis[i].correlation = 1;
    trace_fails(&t, "both have correlation id 1");
    trace_free(&t);
    /* a kernel event listed twice */
    cr_assert_eq(trace_read_json(&t, FIXTURE_4VAR "/trace.json", err, sizeof err), 0, "%s", err);
    size_t k = 0;
    while (t.ops[k].kind != GPU_KERNEL)
        k++;
    gpu_op copy = t.ops[k];
    trace_add_op(&t, &copy);
    trace_fails(&t, "an event listed twice?");
    trace_free(&t);
    /* a kernel that starts before its launch call */
    cr_assert_eq(trace_read_json(&t, FIXTURE_4VAR "/trace.json", err, sizeof err), 0, "%s", err);
    const api_call *l = trace_launcher(&t, &t.ops[k]);
    cr_assert_not_null(l);
    int64_t dur = t.ops[k].end_ns - t.ops[k].start_ns;
    t.ops[k].start_ns = l->start_ns - 1000;
    t.ops[k].end_ns = t.ops[k].start_ns + dur;
    trace_fails(&t, "before its launch call");
    trace_free(&t);
    fixture_free(&f);
}

/* run.json's own contradictions, written by the writer and read back. */
Test(consistency, run_json_contradictions)
{
    char *dir = temp_dir(), *p = path_in(dir, "run.json");
    static const char *const expect[] = {
        "are both named naive", "status \"ok\" with rel_error", "expected a number from 0 to 1e+30",
        "\"skipped\" (it did not run) but has measured numbers", "rel_error: expected a number from 0"};
    for (int c = 0; c < 5; c++) {
        fixture f;
        fixture_load(&f, FIXTURE_4VAR);
        variant_result *v = &f.r.variants[1];
        switch (c) {
        case 0: snprintf(v->name, sizeof v->name, "%s", f.r.variants[0].name); break;
        case 1: v->rel_error = 10 * f.r.rel_error_threshold; break;
        case 2: v->rel_error = 1e308; break;
        case 3: v->status = VARIANT_SKIPPED; break;
        case 4: v->rel_error = -1e-3; break;
        }
        char err[512] = "";
        cr_assert_eq(run_info_write_json(&f.r, p, err, sizeof err), 0, "%s", err);
        run_info back;
        cr_assert_neq(run_info_read_json(&back, p, err, sizeof err), 0, "case %d accepted", c);
        cr_assert(strstr(err, expect[c]), "case %d: %s", c, err);
        fixture_free(&f);
    }
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
}

/* run.json against trace.json. */
Test(consistency, run_json_against_trace)
{
    static const char *const expect[] = {"iters = 0, but trace.json holds 4 forwards",
                                         "\"skipped\" (it did not run), but trace.json holds 4",
                                         "differ in SM count", "differ in name"};
    for (int c = 0; c < 4; c++) {
        fixture f;
        fixture_load(&f, FIXTURE_4VAR);
        analysis_free(&f.a);
        variant_result *v = &f.r.variants[0];
        switch (c) {
        case 0: f.r.iters = 0; break;
        case 1:
            v->status = VARIANT_SKIPPED;
            v->rel_error = v->event_us_cupti = v->event_us_no_cupti = v->host_us_cupti = v->host_us_no_cupti = NAN;
            break;
        case 2: f.r.device.sm_count = 100; break;
        case 3: snprintf(f.r.device.name, sizeof f.r.device.name, "NVIDIA A100"); break;
        }
        char err[512] = "";
        cr_assert_neq(analysis_build(&f.a, &f.t, &f.r, err, sizeof err), 0, "case %d accepted", c);
        cr_assert(strstr(err, "inconsistent") && strstr(err, expect[c]), "case %d: %s", c, err);
        trace_free(&f.t);
    }
}

/* counters.json: ±1e308, strings, negatives and percentages over 100 (were printed
 * as 300-digit numbers and nan%). */
Test(consistency, counters_values_out_of_range)
{
    char *dir = temp_dir(), *p = path_in(dir, "counters.json");
    static const struct {
        const char *metric, *value, *expect;
    } cases[] = {
        {"dram__bytes_read.sum", "1e308", "dram__bytes_read.sum: out of range (0 to 1e+18)"},
        {"dram__bytes_read.sum", "-1e308", "out of range"},
        {"gpu__time_duration.sum", "-5", "out of range"},
        {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "250", "out of range (0 to 105)"},
        {"dram__bytes_read.sum", "\"123456789\"", "metrics: numbers or null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        cr_assert_geq(asprintf(&text,
                               "{\"counters_version\":1,\"meta\":{\"status\":\"ok\",\"metrics\":[\"%s\"]},"
                               "\"ranges\":[{\"variant\":\"naive\",\"kind\":\"kernel\",\"index\":0,\"name\":\"k\","
                               "\"metrics\":{\"%s\":%s}}]}",
                               cases[i].metric, cases[i].metric, cases[i].value),
                      0);
        write_text(p, text);
        counters_set cs;
        char err[512] = "";
        cr_assert_neq(counters_read_json(&cs, p, err, sizeof err), 0, "case %zu accepted", i);
        cr_assert(strstr(err, cases[i].expect), "case %zu: %s", i, err);
        free(text);
    }
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
}

/* A negative pid and device (an import of a hostile Kineto trace) are written
 * without shifting a negative value (undefined; `make sanitize` catches it). */
Test(consistency, negative_pid_and_device_written)
{
    fixture f;
    fixture_load(&f, FIXTURE_4VAR);
    for (size_t i = 0; i < f.t.n_ops; i++)
        f.t.ops[i].device = -3;
    for (size_t i = 0; i < f.t.n_apis; i++)
        f.t.apis[i].pid = -7;
    for (size_t i = 0; i < f.t.n_ranges; i++)
        f.t.ranges[i].pid = -7;
    char *dir = temp_dir(), *p = path_in(dir, "trace.json"), err[512] = "";
    cr_assert_eq(trace_write_json(&f.t, p, err, sizeof err), 0, "%s", err);
    trace back;
    cr_assert_eq(trace_read_json(&back, p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.ops[0].device, -3);
    trace_free(&back);
    unlink(p);
    rmdir(dir);
    free(p);
    free(dir);
    fixture_free(&f);
}

/* ==== 2. escaping by construction ============================================ */

/* Runs `attnprof ARGS` (a shell fragment); returns its exit status and its stdout
 * (malloc'd) in *out. */
static int run_cli(const char *args, char **out)
{
    const char *bin = getenv("ATTNPROF_BIN") ? getenv("ATTNPROF_BIN") : "build/attnprof";
    char outf[] = "/tmp/attnprof-hardening-out-XXXXXX";
    close(mkstemp(outf));
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "ATTNPROF_PDF=0 timeout 120 %s %s >%s 2>&1", bin, args, outf), 0);
    int st = system(cmd);
    free(cmd);
    *out = slurp(outf);
    unlink(outf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *file_of(const char *dir, const char *name)
{
    char *p = path_in(dir, name), *text = slurp(p);
    cr_assert_not_null(text, "%s", p);
    free(p);
    return text;
}

/* Terminal: nothing a terminal acts on (C0 but newline, DEL, C1 as UTF-8 or as a
 * byte, a bidi override). */
static void check_terminal(const char *what, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        cr_assert(*p >= 0x20 || *p == '\n', "%s: control 0x%02x at %zu", what, *p, (size_t)(p - (const unsigned char *)s));
        cr_assert(*p != 0x7f, "%s: DEL", what);
        cr_assert(!(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f), "%s: a C1 control", what);
        cr_assert(!(p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae), "%s: a bidi override", what);
    }
}

/* Cell separators of a GFM table row: '|' not escaped by a backslash and not inside
 * a code span (GFM splits cells before code spans, so an escaped one is all it takes). */
static int cells(const char *line, const char *end)
{
    int n = 0;
    for (const char *p = line; p < end; p++) {
        if (*p == '\\' && p + 1 < end) {
            p++;
            continue;
        }
        n += *p == '|';
    }
    return n;
}

/* Markdown: no heading, list or quote from an archive string; every table row as
 * many cells as its header; no image, link or raw HTML tag from the names. */
static void check_markdown(const char *what, const char *md)
{
    int header = -1;
    for (const char *line = md; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        if (*line == '|') {
            int n = cells(line, end);
            if (header < 0)
                header = n;
            cr_assert_eq(n, header, "%s: a row of %d cells under a header of %d: %.*s", what, n, header,
                          (int)(end - line), line);
        } else {
            header = -1;
        }
        cr_assert(strncmp(line, "# H", 3) && strncmp(line, "- # H", 5) && strncmp(line, "> ", 2),
                  "%s: an archive string started a block: %.*s", what, (int)(end - line), line);
        line = *end ? end + 1 : end;
    }
    cr_assert_null(strstr(md, "![](/x)"), "%s: an image from the dtype", what);
    cr_assert_null(strstr(md, "\x1b"), "%s: ESC", what);
}

static void check_html(const char *what, const char *html)
{
    for (const char *p = strstr(html, "src=\""); p; p = strstr(p + 1, "src=\""))
        cr_assert_eq(strncmp(p + 5, "data:", 5), 0, "%s: loads %.60s", what, p);
    static const char *const never[] = {"<b>", "<i>", "<h1>H", "<h2>H", "<h3>H", "<img src=\"/x\"",
                                        "\x1b"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        cr_assert_null(strstr(html, never[i]), "%s: %s from an archive string", what, never[i]);
}

static void check_latex(const char *what, const char *tex)
{
    /* the names' LaTeX specials, unescaped, would be commands, parameters, comments */
    static const char *const never[] = {"&%$_~^", "{}%$#", "\x1b", "\xc2\x9b", "]0;t\x07"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        cr_assert_null(strstr(tex, never[i]), "%s: raw %s", what, never[i]);
    cr_assert_not_null(strstr(tex, "\\&\\%\\$\\_"), "%s: the name, escaped", what);
}

/* CSV: every record has the header's field count, no field is a formula, no
 * terminal control survives. */
static void check_csv(const char *what, const char *csv)
{
    check_terminal(what, csv[0] ? csv : "");
    int header = -1, records = 0;
    const char *p = csv;
    while (*p) {
        int n = 1, quoted = 0;
        const char *field = p;
        cr_assert(!strchr("=+-@", *field), "%s: a formula in record %d", what, records);
        for (; *p && (quoted || *p != '\n'); p++) {
            if (*p == '"')
                quoted = !quoted;
            else if (*p == ',' && !quoted) {
                n++;
                cr_assert(!strchr("=+-@", p[1]) || p[1] == '-' /* a negative number */, "%s: a formula", what);
            }
        }
        if (*p == '\n')
            p++;
        if (header < 0)
            header = n;
        cr_assert_eq(n, header, "%s: record %d has %d fields, the header %d", what, records, n, header);
        records++;
    }
    cr_assert_gt(records, 1, "%s", what);
}

static char *hostile_copy(const char *name)
{
    char *dir = temp_dir(), *dst = path_in(dir, name), *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "cp -r tests/fixtures/hostile/%s '%s'", name, dst), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    free(dir);
    return dst;
}

static void remove_parent(char *dst)
{
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "rm -rf \"$(dirname '%s')\"", dst), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    free(dst);
}

static void check_documents(const char *dir, const char *md, const char *html, const char *csv, const char *tex)
{
    char *t = file_of(dir, md);
    check_markdown(md, t);
    free(t);
    t = file_of(dir, html);
    check_html(html, t);
    free(t);
    t = file_of(dir, csv);
    check_csv(csv, t);
    free(t);
    t = file_of(dir, tex);
    check_latex(tex, t);
    free(t);
    /* and it compiles, where pdflatex is installed (CI has it: tests/paper/latex.sh) */
    if (system("command -v pdflatex >/dev/null 2>&1") == 0) {
        char *cmd = NULL;
        cr_assert_geq(asprintf(&cmd,
                               "cd '%s' && printf '%%s\\n' '\\documentclass{article}' '\\usepackage[T1]{fontenc}' "
                               "'\\usepackage{booktabs}' '\\begin{document}' '\\input{%s}' '\\end{document}' "
                               "> doc-%s && pdflatex -interaction=nonstopmode -halt-on-error doc-%s >/dev/null 2>&1",
                               dir, tex, tex, tex),
                      0);
        cr_assert_eq(system(cmd), 0, "%s/%s does not compile", dir, tex);
        free(cmd);
    }
}

/* report: every writer (Markdown, HTML, CSV, LaTeX, the terminal) on an archive whose
 * every name is hostile (tests/fixtures/hostile/make.py, w-escape-a). */
Test(escape_targets, report_every_writer)
{
    char *a = hostile_copy("w-escape-a"), *args = NULL, *out = NULL;
    cr_assert_geq(asprintf(&args, "report '%s' --no-pdf", a), 0);
    cr_assert_eq(run_cli(args, &out), 0, "%s", out);
    check_terminal("report's terminal", out);
    check_documents(a, "report.md", "report.html", "summary.csv", "summary.tex");
    free(out), free(args);
    remove_parent(a);
}

/* compare: variant, GPU and driver names went raw to the terminal; run.json's dtype
 * raw into compare.md (an image made compare exit 7); a '|' in a kernel name added
 * cells to the kernel table. */
Test(escape_targets, compare_every_writer)
{
    char *a = hostile_copy("w-escape-a"), *b = hostile_copy("w-escape-b"), *args = NULL, *out = NULL;
    char *c = path_in(a, "../cmp");
    cr_assert_geq(asprintf(&args, "compare '%s' '%s' -o '%s' --no-pdf", a, b, c), 0);
    cr_assert_eq(run_cli(args, &out), 0, "%s", out);
    check_terminal("compare's terminal", out);
    cr_assert_not_null(strstr(out, "Driver differs (550.1"), "%s", out);
    check_documents(c, "compare.md", "compare.html", "compare.csv", "compare.tex");
    char *md = file_of(c, "compare.md");
    cr_assert_not_null(strstr(md, "``k\\|x`{}%$#_&~^\\<int>``"), "the kernel, one cell");
    free(md), free(out), free(args), free(c);
    remove_parent(a);
    remove_parent(b);
}

/* sweep: a variant named "# …" became a heading in sweep.md/html. */
Test(escape_targets, sweep_every_writer)
{
    char *dir = temp_dir(), *s = path_in(dir, "sweep"), *cmd = NULL, *out = NULL;
    cr_assert_geq(asprintf(&cmd, "python3 tests/fixtures/hostile/make.py --sweep '%s'", s), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
    cr_assert_geq(asprintf(&cmd, "sweep --collect '%s'", s), 0);
    cr_assert_eq(run_cli(cmd, &out), 0, "%s", out);
    check_terminal("sweep's terminal", out);
    check_documents(s, "sweep.md", "sweep.html", "sweep.csv", "sweep.tex");
    free(out), free(cmd), free(s);
    remove_parent(path_in(dir, "x"));
    free(dir);
}

/* The escapers themselves, on the strings above. */
Test(escape_targets, escapers)
{
    char buf[256];
    esc_terminal(buf, sizeof buf, "a\x1b[2Jb\xc2\x9b" "31mc\xe2\x80\xae" "d\x9b" "e\n");
    cr_assert_str_eq(buf, "a[2Jb31mcd?e");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    esc_md_text(f, "# H");
    fputc('\n', f);
    esc_md_text(f, "- x");
    fputc('\n', f);
    esc_md_text(f, "1. x");
    fputc('\n', f);
    esc_md_text(f, "13.0");
    fputc('\n', f);
    esc_csv_field(f, "a\x1b[2Jb", 0);
    fclose(f);
    cr_assert_str_eq(text, "\\# H\n\\- x\n1\\. x\n13.0\na[2Jb");
    free(text);
    esc_md_code_cell_buf(buf, sizeof buf, "k|x");
    cr_assert_str_eq(buf, "`k\\|x`");
}

/* import: a kernel whose launch is not in the file is left out and counted (real
 * traces start mid-stream); a contradiction is refused before anything is written. */
Test(consistency, import_drops_orphans_refuses_contradictions)
{
    char *dir = temp_dir(), *p = path_in(dir, "k.json"), *out = NULL, *args = NULL;
    char *s = small_trace(API_OK,
                          KERNEL_OK "}},{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"ts\":50,"
                                    "\"dur\":1,\"pid\":0,\"tid\":7,\"args\":{\"correlation\":8,\"device\":0",
                          "k");
    write_text(p, s);
    free(s);
    cr_assert_geq(asprintf(&args, "import '%s' -o '%s/a' -q", p, dir), 0);
    cr_assert_eq(run_cli(args, &out), 0, "%s", out);
    free(out), free(args);
    char *a = path_in(dir, "a"), *run = file_of(a, "run.json");
    cr_assert_not_null(strstr(run, "whose launch call is not in the trace"), "%s", run);
    free(run);
    /* two runtime calls with one id */
    char *api2 = NULL;
    cr_assert_geq(asprintf(&api2, API_OK "}},{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                                         "\"ts\":26,\"dur\":1,\"pid\":1,\"tid\":1,\"args\":{" API_OK),
                  0);
    s = small_trace(api2, KERNEL_OK, "k");
    write_text(p, s);
    cr_assert_geq(asprintf(&args, "import '%s' -o '%s/b' -q", p, dir), 0);
    cr_assert_eq(run_cli(args, &out), EXIT_BAD_ARCHIVE, "%s", out);
    cr_assert(strstr(out, "inconsistent: API calls cudaLaunchKernel") && strstr(out, "correlation id 7"), "%s", out);
    struct stat sb;
    char *b = path_in(dir, "b");
    cr_assert_neq(stat(b, &sb), 0, "nothing written");
    free(b), free(out), free(args), free(s), free(api2), free(a), free(p);
    char *cmd = NULL;
    cr_assert_geq(asprintf(&cmd, "rm -rf '%s'", dir), 0);
    cr_assert_eq(system(cmd), 0);
    free(cmd), free(dir);
}
