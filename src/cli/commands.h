/* The commands of the attnprof executable, one function each, called by main.c's dispatch
 * with the parsed command line (cli.h). Each returns the process's exit code (EXIT_*), its
 * one error line already printed with cli_fail. */
#ifndef ATTNPROF_COMMANDS_H
#define ATTNPROF_COMMANDS_H

#include "cli.h"

/* The CLI's one error-line printer: "attnprof: <line>" on stderr, control characters
 * (an archive's strings, a path) dropped from the line; returns code. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* -o DIR, checked before anything is read: not an input, not inside one, not holding one
 * (inputs and, when set, reference), and absent unless --force. EXIT_OK, or the exit code
 * with its line printed. */
int cli_check_output(const char *cmd, const char *out, int force, char *const *inputs, int n, const char *reference);

int cmd_list(void);                                   /* cmd_archive.c */
int cmd_run(const cli_options *o, const char *cmdline);
int cmd_import(const cli_options *o, const char *cmdline);
int cmd_report(const cli_options *o);
int cmd_compare(const cli_options *o);                /* cmd_compare.c */

#endif
