/* Numbers as text shared by the documents and the figures (units.h), so that a
 * figure's label and the table beside it cannot round one number two ways. */
#include "units.h"

#include <math.h>
#include <string.h>
#include <stdio.h>

void units_us_column(double us, char *out, size_t n)
{
    if (!isfinite(us))
        snprintf(out, n, "–");
    else if (us >= 100)
        snprintf(out, n, "%.0f µs", us);
    else
        snprintf(out, n, "%.1f µs", us);
}

int units_ratio_decimals(double lo, double hi)
{
    int d = 2;
    for (; d < 4 && lo != hi; d++) {
        char a[48], b[48];
        snprintf(a, sizeof a, "%.*f", d, lo);
        snprintf(b, sizeof b, "%.*f", d, hi);
        if (strcmp(a, b) != 0)
            break;
    }
    return d;
}
