/* The raw file of `attnprof record` read into the in-memory trace (report/io/inject_raw.c):
 * every record kind, the calls kept, NVTX pairing, how the recording ended, and the
 * refusals of a file that is not one. No GPU. */
#include <criterion/criterion.h>

#include "exit_codes.h"
#include "inject_raw.h"
#include "record_raw.h"

static int read_raw(const char *path, trace *t, inject_raw *m, char *err, size_t n)
{
    return inject_raw_read(path, "prog", t, m, err, n);
}

Test(inject_raw, every_record_kind)
{
    raw_file r;
    raw_open(&r);
    raw_line(&r, "NS\t%lld\t1\t77\tstep", r.t);
    raw_kernel(&r, "void scale_rows(float*, float, int)", 8000);
    raw_line(&r, "R\t%lld\t%lld\t%u\t4242\t77\t41\tcudaMemcpyAsync", r.t, r.t + 2000, r.corr);
    raw_line(&r, "M\t%lld\t%lld\t%u\t0\t7\t1\t4096\tHtoD\t0", r.t + 3000, r.t + 4000, r.corr);
    r.corr++, r.t += 5000;
    raw_line(&r, "A\t%lld\t%lld\t%u\t4242\t77\t200\tcuMemsetD8Async", r.t, r.t + 1000, r.corr);
    raw_line(&r, "S\t%lld\t%lld\t%u\t0\t7\t1\t512\t0", r.t + 2000, r.t + 2500, r.corr);
    r.corr++, r.t += 5000;
    raw_line(&r, "A\t%lld\t%lld\t%u\t4242\t77\t17\tcuCtxGetCurrent", r.t, r.t + 100, r.corr++); /* no work: dropped */
    raw_line(&r, "R\t%lld\t%lld\t%u\t4242\t77\t3\tcudaGetDevice", r.t, r.t + 100, r.corr++);    /* counted only */
    raw_sync(&r, 20000);
    raw_line(&r, "NE\t%lld\t1", r.t);
    raw_line(&r, "NI\t%lld\t2\t77\tcheckpoint", r.t);
    raw_line(&r, "NS\t%lld\t3\t77\tnever closed", r.t);
    raw_line(&r, "X\t7");
    raw_line(&r, "X\t3");
    raw_line(&r, "B\t2\t4");
    raw_line(&r, "C\t9\t1500\t1980\t3201\t3201");
    raw_line(&r, "W\tcuptiActivityEnable(kind 38)\tCUPTI_ERROR_NOT_SUPPORTED");
    raw_close(&r, "E\tcomplete");

    trace t;
    inject_raw m;
    char err[512];
    cr_assert_eq(read_raw(r.path, &t, &m, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect_eq(m.pid, 4242);
    cr_expect_eq(m.end, INJECT_END_COMPLETE);
    cr_expect_eq(m.n_kernels, 1);
    cr_expect_eq(m.n_memcpy, 1);
    cr_expect_eq(m.n_memset, 1);
    cr_expect_eq(t.n_ops, 3);
    cr_expect_eq(m.n_syncs, 1);
    cr_expect_eq(m.n_sync_calls, 1, "cudaStreamSynchronize, counted from the API records (no sync kind needed)");
    cr_expect_float_eq(m.sync_us, 20.0, 1e-9);
    cr_expect_eq(m.dropped, 10, "the X lines summed");
    cr_expect_eq(m.buffers_refused, 2);
    cr_expect_eq(m.clock_samples, 9);
    cr_expect_eq(m.sm_min, 1500);
    cr_expect_eq(m.sm_max, 1980);
    cr_expect_str_eq(m.driver, "580.159.03");
    cr_expect_str_eq(m.gpu_uuid, "GPU-12345678-1234-1234-1234-123456789abc");
    cr_expect_str_eq(t.device.name, "NVIDIA H200");
    cr_expect_eq(t.device.sm_count, 132);
    cr_expect_eq(t.device.major, 9);
    cr_expect_eq(t.device.l2_bytes, 52428800);
    cr_expect_eq(t.cupti_version, 130000);
    cr_expect_eq(t.cuda_driver_version, 13000);
    cr_expect_eq(m.n_nvtx_ranges, 1);
    cr_expect_eq(m.n_nvtx_markers, 1);
    cr_expect_eq(m.n_nvtx_unclosed, 1);
    cr_assert_eq(t.n_ranges, 1);
    cr_expect_str_eq(t.ranges[0].name, "step");
    cr_expect_eq(t.ranges[0].iteration, -1);
    cr_expect(strstr(m.warnings, "kind 38") != NULL, "%s", m.warnings);
    /* kept: the launch, the memcpy call, the driver memset (it launched work) and the sync;
     * cuCtxGetCurrent (no work) and cudaGetDevice (nothing to say) are not */
    cr_expect_eq(t.n_apis, 4);
    cr_expect_eq(m.n_runtime, 4);
    cr_expect_eq(m.n_driver_all, 2);
    cr_expect_eq(m.n_driver_kept, 1);
    for (size_t i = 0; i < t.n_apis; i++) {
        cr_expect_str_neq(t.apis[i].name, "cuCtxGetCurrent");
        cr_expect_str_neq(t.apis[i].name, "cudaGetDevice");
    }
    for (size_t i = 0; i < t.n_ops; i++)
        cr_expect_not_null(trace_launcher(&t, &t.ops[i]), "op %zu has its launch", i);
    const gpu_op *copy = NULL;
    for (size_t i = 0; i < t.n_ops; i++)
        if (t.ops[i].kind == GPU_MEMCPY)
            copy = &t.ops[i];
    cr_assert_not_null(copy);
    cr_expect_str_eq(copy->copy_kind, "HtoD");
    cr_expect_eq(copy->bytes, 4096);
    trace_free(&t);
    unlink(r.path);
}

Test(inject_raw, how_it_ended)
{
    const char *ends[] = {"E\tsignal\t6", NULL};
    inject_end want[] = {INJECT_END_SIGNAL, INJECT_END_NONE};
    for (int k = 0; k < 2; k++) {
        raw_file r;
        raw_open(&r);
        raw_kernel(&r, "k", 1000);
        raw_close(&r, ends[k]);
        trace t;
        inject_raw m;
        char err[512];
        cr_assert_eq(read_raw(r.path, &t, &m, err, sizeof err), EXIT_OK, "%s", err);
        cr_expect_eq(m.end, want[k]);
        cr_expect_eq(m.end_signal, k == 0 ? 6 : 0);
        trace_free(&t);
        unlink(r.path);
    }
}

/* A process killed mid-line leaves a last line without its newline: what came before stands. */
Test(inject_raw, last_line_cut_short)
{
    raw_file r;
    raw_open(&r);
    raw_kernel(&r, "k", 1000);
    fputs("K\t123\t45", r.f);
    raw_close(&r, NULL);
    trace t;
    inject_raw m;
    char err[512];
    cr_assert_eq(read_raw(r.path, &t, &m, err, sizeof err), EXIT_OK, "%s", err);
    cr_expect_eq(t.n_ops, 1);
    cr_expect_eq(m.end, INJECT_END_NONE);
    trace_free(&t);
    unlink(r.path);
}

Test(inject_raw, refusals)
{
    const char *bodies[] = {"not a raw file\n", "attnprof-inject\t2\n", RAW_HEADER "K\t1\t2\tthree\n",
                            RAW_HEADER "Q\tunknown\n", RAW_HEADER "E\tsometime\n", ""};
    for (size_t k = 0; k < sizeof bodies / sizeof *bodies; k++) {
        char path[] = "/tmp/attnprof-raw-XXXXXX";
        int fd = mkstemp(path);
        cr_assert_eq(write(fd, bodies[k], strlen(bodies[k])), (ssize_t)strlen(bodies[k]));
        close(fd);
        trace t;
        inject_raw m;
        char err[512] = "";
        cr_expect_eq(read_raw(path, &t, &m, err, sizeof err), EXIT_BAD_ARCHIVE, "body %zu", k);
        cr_expect(strstr(err, path) != NULL, "names the file: %s", err);
        cr_expect_eq(strchr(err, '\n'), NULL, "one line: %s", err);
        unlink(path);
    }
    trace t;
    inject_raw m;
    char err[512];
    cr_expect_eq(read_raw("/nonexistent/raw.txt", &t, &m, err, sizeof err), EXIT_IO);
}
