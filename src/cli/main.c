/* attnprof's executable: installs the crash and stop handlers, parses the command line
 * (cli.c) and dispatches to the command (commands.h); nothing else. The commands run over
 * the report library (report/); `run` and `list` load the CUDA recorder
 * (libattnprof_recorder.so, recorder.h) only when they are called. */
#include "alloc.h"
#include "cleanup.h"
#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "exit_codes.h"
#include "record.h"
#include "sweep_run.h"

#include <execinfo.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ATTNPROF_VERSION
#define ATTNPROF_VERSION "unknown"
#endif

/* The command line as run.json records it, before getopt permutes argv. */
static void command_line(int argc, char **argv, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && len + 1 < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? " " : "", argv[i]);
    esc_utf8_trim(out);
}

/* A crash inside a vendor library (CUPTI, cuDNN) or our own code says where it
 * happened: the signal, then the call stack (function names come from the
 * recorder's exported symbols), on stderr. Async-signal-safe calls only. */
static void on_crash(int sig)
{
    if (cleanup_claim_ending() == CLEANUP_ENDING_AGAIN) {
        signal(sig, SIG_DFL); /* crashed while ending: no second report */
        raise(sig);
    }
    static const char head[] = "attnprof: crashed (signal ";
    char num[8];
    int n = 0, v = sig;
    do
        num[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 7);
    (void)!write(STDERR_FILENO, head, sizeof head - 1);
    while (n)
        (void)!write(STDERR_FILENO, &num[--n], 1);
    (void)!write(STDERR_FILENO, "); call stack:\n", 15);
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
    cleanup_now(); /* the command's temporaries and Chromium go too */
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    void *warm[1];
    backtrace(warm, 1); /* loads libgcc's unwinder now, not inside the handler */
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGILL, on_crash);
    /* Stopped by SIGINT/SIGTERM/SIGHUP: the command's temporaries go, exit 130 (cleanup.h);
     * jansson's allocations, as ours, end in one line and exit 9 when memory runs out. */
    cleanup_install();
    json_set_alloc_funcs(attn_malloc, free);
    cli_options o;
    char err[1024], cmdline[1024];
    /* Before getopt permutes argv. */
    command_line(argc, argv, cmdline, sizeof cmdline);
    int rc = cli_parse(argc, argv, &o, err, sizeof err);
    if (rc != EXIT_OK)
        return cli_fail(rc, "%s", err);
    switch (o.command) {
    case CMD_HELP:
        if (o.help_on)
            cli_command_usage(stdout, o.help_on);
        else
            cli_usage(stdout);
        return EXIT_OK;
    case CMD_VERSION:
        printf("attnprof %s\n", ATTNPROF_VERSION);
        return EXIT_OK;
    case CMD_LIST:
        return cmd_list();
    case CMD_RUN:
        return cmd_run(&o, cmdline);
    case CMD_REPORT:
        return cmd_report(&o);
    case CMD_COMPARE:
        return cmd_compare(&o);
    case CMD_IMPORT:
        return cmd_import(&o, cmdline);
    case CMD_SWEEP:
        return sweep_run(&o);
    case CMD_RECORD:
        return record_main(&o, cmdline, ATTNPROF_VERSION);
    default:
        cli_usage(stderr);
        return EXIT_USAGE;
    }
}
