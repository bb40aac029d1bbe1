/* What every command of the executable shares: the one error-line printer and the check
 * that an output directory cannot destroy an input. */
#include "commands.h"

#include "archive.h"
#include "escape.h"
#include "exit_codes.h"

#include <stdarg.h>
#include <stdio.h>

int cli_fail(int code, const char *fmt, ...)
{
    char line[9000], shown[9000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "attnprof: %s\n", esc_terminal(shown, sizeof shown, line));
    return code;
}

int cli_check_output(const char *cmd, const char *out, int force, char *const *inputs, int n, const char *reference)
{
    for (int i = 0; out && i <= n; i++) {
        const char *in = i < n ? inputs[i] : reference;
        if (!in)
            continue;
        int r = archive_paths_overlap(out, in);
        if (r > 0)
            return cli_fail(EXIT_USAGE, "%s: -o %s is, holds or lies inside the input %s, which writing it would "
                            "replace; choose an -o apart from the inputs", cmd, out, in);
        if (r < 0)
            return cli_fail(EXIT_IO, "%s: cannot resolve -o %s or the input %s to check that one does not hold "
                            "the other", cmd, out, in);
    }
    if (out && path_exists(out) && !force)
        return cli_fail(EXIT_OUTPUT_EXISTS, "%s exists; pass --force to replace it or choose another -o", out);
    return EXIT_OK;
}
