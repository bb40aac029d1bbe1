/* Every input stays bounded: nested CPU ops, overlapping forwards, long JSON tokens, gzip
 * bombs, devices and FIFOs cost linear memory and time or are refused with one line. Every
 * hostile input here is synthetic, built by the test itself (tests/synthetic_trace.h);
 * none is a recording. The archives that contradict themselves are tests/io/archive_checks.c,
 * the escaping of every writer tests/docs/escape_targets.c. No GPU needed. */
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
#include "synthetic_trace.h"

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

