/* trace.json: write → read round trip, the Kineto keys, and bad files. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "trace.h"
#include "fixture.h"

static void sample_trace(trace *t)
{
    trace_init(t);
    t->pid = 4242;
    t->cupti_version = 130001;
    t->cuda_runtime_version = 13000;
    t->cuda_driver_version = 13000;
    snprintf(t->device.name, sizeof t->device.name, "NVIDIA H200");
    t->device.major = 9;
    t->device.sm_count = 132;
    t->device.regs_per_sm = 65536;
    t->device.smem_per_sm = 233472;
    host_range fwd = {.name = "attn_fwd", .variant = "naive", .iteration = 0, .start_ns = 1000000000123,
                      .end_ns = 1000000050456, .pid = 4242, .tid = 7};
    trace_add_range(t, &fwd);
    api_call launch = {.kind = API_RUNTIME, .name = "cudaLaunchKernel", .start_ns = 1000000001000,
                       .end_ns = 1000000004001, .correlation = 77, .pid = 4242, .tid = 7};
    api_call ex = {.kind = API_DRIVER, .name = "cuLaunchKernelEx", .start_ns = 1000000005000,
                   .end_ns = 1000000006000, .correlation = 78, .pid = 4242, .tid = 7};
    trace_add_api(t, &launch);
    trace_add_api(t, &ex);
    gpu_op k = {.kind = GPU_KERNEL, .name = "void attnprof_softmax_rows_bf16<4>(__nv_bfloat16 const*, int)",
                .start_ns = 1000000010007, .end_ns = 1000000020999, .correlation = 77, .device = 0, .stream = 13,
                .grid = {1056, 1, 1}, .block = {256, 1, 1}, .registers = 55, .static_smem = 128, .dynamic_smem = 4096};
    gpu_op m = {.kind = GPU_MEMCPY, .name = "Memcpy DtoD (Device -> Device)", .start_ns = 1000000021000,
                .end_ns = 1000000030000, .correlation = 78, .stream = 13, .bytes = 268435456};
    snprintf(m.copy_kind, sizeof m.copy_kind, "DtoD");
    trace_add_op(t, &k);
    trace_add_op(t, &m);
}

Test(trace, round_trip_keeps_every_field)
{
    trace t, back;
    sample_trace(&t);
    char path[] = "/tmp/attnprof-trace-XXXXXX", err[256];
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(trace_write_json(&t, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(trace_read_json(&back, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.n_ops, 2);
    cr_assert_eq(back.n_apis, 2);
    cr_assert_eq(back.n_ranges, 1);
    const gpu_op *k = &back.ops[0];
    cr_assert_str_eq(k->name, t.ops[0].name);
    cr_assert_eq(k->start_ns, 1000000010007);
    cr_assert_eq(k->end_ns, 1000000020999);
    cr_assert_eq(k->correlation, 77);
    cr_assert_eq(k->grid[0], 1056);
    cr_assert_eq(k->block[0], 256);
    cr_assert_eq(k->registers, 55);
    cr_assert_eq(k->static_smem, 128);
    cr_assert_eq(k->dynamic_smem, 4096);
    cr_assert_eq(back.ops[1].kind, GPU_MEMCPY);
    cr_assert_eq(back.ops[1].bytes, 268435456);
    cr_assert_str_eq(back.ops[1].copy_kind, "DtoD");
    cr_assert_eq(back.apis[1].kind, API_DRIVER);
    cr_assert_str_eq(back.apis[1].name, "cuLaunchKernelEx");
    cr_assert_str_eq(back.ranges[0].variant, "naive");
    cr_assert_eq(back.ranges[0].iteration, 0);
    cr_assert_eq(back.ranges[0].start_ns, 1000000000123);
    cr_assert_eq(back.ranges[0].end_ns, 1000000050456);
    cr_assert_str_eq(back.device.name, "NVIDIA H200");
    cr_assert_eq(back.device.sm_count, 132);
    cr_assert_eq(back.cupti_version, 130001);
    cr_assert_eq(trace_launcher(&back, &back.ops[0]), &back.apis[0]);
    trace_free(&t);
    trace_free(&back);
    unlink(path);
}

Test(trace, writes_the_kineto_schema)
{
    trace t;
    sample_trace(&t);
    char path[] = "/tmp/attnprof-trace-XXXXXX", err[256];
    close(mkstemp(path));
    cr_assert_eq(trace_write_json(&t, path, err, sizeof err), 0);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    cr_assert_not_null(root);
    cr_assert(json_is_array(json_object_get(root, "deviceProperties")));
    cr_assert(json_is_integer(json_object_get(root, "cupti_version")));
    cr_assert(json_is_integer(json_object_get(root, "cuda_runtime_version")));
    cr_assert(json_is_integer(json_object_get(root, "cuda_driver_version")));
    int kernel = 0, flow_s = 0, flow_f = 0, gpu_ann = 0, runtime = 0, driver = 0, memcpy_ev = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(root, "traceEvents"), i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (!cat)
            continue;
        json_t *args = json_object_get(e, "args");
        if (!strcmp(cat, "kernel")) {
            kernel++;
            cr_assert(json_is_integer(json_object_get(args, "registers per thread")));
            cr_assert_eq(json_integer_value(json_object_get(args, "shared memory")), 128 + 4096);
            cr_assert(json_is_array(json_object_get(args, "grid")));
            cr_assert(json_is_array(json_object_get(args, "block")));
            cr_assert(json_is_integer(json_object_get(args, "stream")));
            cr_assert(json_is_integer(json_object_get(args, "device")));
        }
        memcpy_ev += !strcmp(cat, "gpu_memcpy") && json_is_integer(json_object_get(args, "bytes"));
        runtime += !strcmp(cat, "cuda_runtime");
        driver += !strcmp(cat, "cuda_driver");
        gpu_ann += !strcmp(cat, "gpu_user_annotation");
        flow_s += !strcmp(cat, "ac2g") && !strcmp(ph, "s");
        flow_f += !strcmp(cat, "ac2g") && !strcmp(ph, "f");
    }
    cr_assert_eq(kernel, 1);
    cr_assert_eq(memcpy_ev, 1);
    cr_assert_eq(runtime, 1);
    cr_assert_eq(driver, 1);
    cr_assert_eq(gpu_ann, 1, "one forward → one gpu_user_annotation");
    cr_assert_eq(flow_s, 2);
    cr_assert_eq(flow_f, 2);
    json_decref(root);
    trace_free(&t);
    unlink(path);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(trace, truncated_file_is_an_error_with_the_position)
{
    trace t;
    char path[] = "/tmp/attnprof-trace-XXXXXX", err[512];
    close(mkstemp(path));
    write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1.0,");
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, path) && strstr(err, "not valid JSON") && strstr(err, "line 1"), "%s", err);
    unlink(path);
}

Test(trace, corrupt_events_are_named)
{
    trace t;
    char path[] = "/tmp/attnprof-trace-XXXXXX", err[512];
    close(mkstemp(path));
    write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": \"soon\", \"dur\": 1}]}");
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "event 0") && strstr(err, "ts"), "%s", err);
    write_text(path, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1, \"args\": {}}]}");
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "correlation"), "%s", err);
    write_text(path, "[1, 2, 3]");
    cr_assert_eq(trace_read_json(&t, path, err, sizeof err), EXIT_BAD_ARCHIVE);
    cr_assert(strstr(err, "traceEvents"), "%s", err);
    unlink(path);
}

Test(trace, reads_the_h200_fixture)
{
    trace t;
    char err[512];
    cr_assert_eq(trace_read_json(&t, "tests/fixtures/h200-4var/trace.json", err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(t.device.name, "NVIDIA H200");
    cr_assert_eq(t.device.sm_count, 132);
    cr_assert_gt(t.n_ops, 100);
    for (size_t i = 1; i < t.n_ops; i++)
        cr_assert_geq(t.ops[i].start_ns, t.ops[i - 1].start_ns, "ops sorted by start");
    size_t with_launcher = 0;
    for (size_t i = 0; i < t.n_ops; i++)
        with_launcher += trace_launcher(&t, &t.ops[i]) != NULL;
    cr_assert_eq(with_launcher, t.n_ops, "every GPU op is tied to the API call that launched it");
    trace_free(&t);
}

/* The Memsets of a variant's recorded forwards, for the overhead probe's third state: cuBLAS's
 * and cuDNN's one a forward, not the NaN fill of the FP64 check that every variant's records
 * also hold (h200-cudnn919-a: 20 recorded forwards a variant). */
Test(trace, memsets_in_forwards_leave_the_checks_out)
{
    fixture f;
    fixture_load(&f, "tests/fixtures/h200-cudnn919-a");
    cr_assert_eq(trace_memsets_in_forwards(&f.t, 0, 0, "naive"), 20);
    cr_assert_eq(trace_memsets_in_forwards(&f.t, 0, 0, "cudnn"), 20);
    cr_assert_eq(trace_memsets_in_forwards(&f.t, 0, 0, "math"), 0);
    cr_assert_eq(trace_memsets_in_forwards(&f.t, 0, 0, "flash"), 0);
    int all = 0;
    for (size_t i = 0; i < f.t.n_ops; i++)
        all += f.t.ops[i].kind == GPU_MEMSET;
    cr_assert_gt(all, 60, "the checks' Memsets are in the trace: %d", all);
    cr_assert_eq(trace_memsets_in_forwards(&f.t, f.t.n_ops, 0, "naive"), 0, "no ops from there on");
    fixture_free(&f);
}
