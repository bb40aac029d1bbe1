/* Test helper: reads an archive's trace.json and writes it again with the current
 * writer (trace_write.c). The HTA test runs it on the committed H200 fixtures, which
 * were recorded before the writer became a Kineto drop-in, until a new recording
 * (with cbid, context and OS thread ids from the collector) is committed. */
#include "exit_codes.h"
#include "trace.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: rewrite IN/trace.json OUT/trace.json\n");
        return EXIT_USAGE;
    }
    trace t;
    char err[1024];
    if (trace_read_json(&t, argv[1], err, sizeof err) != 0) {
        fprintf(stderr, "rewrite: %s\n", err);
        return EXIT_BAD_ARCHIVE;
    }
    int rc = trace_write_json(&t, argv[2], err, sizeof err);
    trace_free(&t);
    if (rc != 0) {
        fprintf(stderr, "rewrite: %s\n", err);
        return EXIT_IO;
    }
    return EXIT_OK;
}
