/* Raw files of `attnprof record` written by the tests (the injection library's format,
 * inject_raw.h), so the conversion is tested without a GPU. */
#ifndef ATTNPROF_TEST_RECORD_RAW_H
#define ATTNPROF_TEST_RECORD_RAW_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RAW_HEADER                                                                                            \
    "attnprof-inject\t1\nP\t4242\t1000\nV\tcupti\t130000\nV\tcuda_driver\t13000\nV\tbuffer_mb\t512\n"     \
    "D\t0\t9\t0\t132\t150000000000\t32\t1024\t2048\t32\t65536\t65536\t233472\t49152\t52428800\t1980000\t1\t" \
    "4800000000\tGPU-12345678-1234-1234-1234-123456789abc\tNVIDIA H200\nV\tdriver\t580.159.03\n"

typedef struct raw_file {
    char path[64];
    FILE *f;
    long long t;      /* the clock, ns */
    unsigned corr;    /* the next correlation id */
} raw_file;

static inline void raw_open(raw_file *r)
{
    snprintf(r->path, sizeof r->path, "/tmp/attnprof-raw-XXXXXX");
    int fd = mkstemp(r->path);
    r->f = fdopen(fd, "w");
    r->t = 10000000;
    r->corr = 1;
    fputs(RAW_HEADER, r->f);
}

__attribute__((format(printf, 2, 3))) static inline void raw_line(raw_file *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->f, fmt, ap);
    va_end(ap);
    fputc('\n', r->f);
}

/* A kernel launched with cudaLaunchKernel: the call (3 µs), the kernel 5 µs later (dur_ns). */
static inline void raw_kernel(raw_file *r, const char *name, long long dur_ns)
{
    raw_line(r, "R\t%lld\t%lld\t%u\t4242\t77\t211\tcudaLaunchKernel", r->t, r->t + 3000, r->corr);
    raw_line(r, "K\t%lld\t%lld\t%u\t0\t7\t1\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\t%s", r->t + 5000, r->t + 5000 + dur_ns,
             r->corr, name);
    r->corr++;
    r->t += 10000;
}

static inline void raw_sync(raw_file *r, long long dur_ns)
{
    raw_line(r, "R\t%lld\t%lld\t%u\t4242\t77\t131\tcudaStreamSynchronize", r->t, r->t + dur_ns, r->corr);
    raw_line(r, "Y\t%lld\t%lld\t%u\t1\t7\t3", r->t, r->t + dur_ns, r->corr);
    r->corr++;
    r->t += dur_ns;
}

static inline void raw_close(raw_file *r, const char *end)
{
    if (end)
        raw_line(r, "%s", end);
    fclose(r->f);
}

#endif
