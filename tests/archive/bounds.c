/* The range checks of report/archive/bounds.h on their own: event times against the trace's
 * base, saturating conversions. The archives that carry such numbers are rendered in
 * tests/docs/hostile_archives.c. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "bounds.h"

Test(bounds, event_times)
{
    int64_t s, e;
    cr_assert_null(bounds_event_ns(1000, 1.5, 2.0, &s, &e));
    cr_assert_eq(s, 2500);
    cr_assert_eq(e, 4500);
    cr_assert_null(bounds_event_ns(0, -1.0, 0.0, &s, &e), "negative ts relative to the base is fine");
    cr_assert_not_null(bounds_event_ns(BOUNDS_MAX_NS, 1.0, 0.0, &s, &e));
    cr_assert_not_null(bounds_event_ns(0, 1e300, 0.0, &s, &e));
    cr_assert_not_null(bounds_event_ns(0, 0.0, -1.0, &s, &e));
    cr_assert_not_null(bounds_event_ns(0, 0.0, 1.0 / 0.0, &s, &e));
    cr_assert_not_null(bounds_event_ns(0, 0.0 / 0.0, 0.0, &s, &e));
    cr_assert_not_null(bounds_base_ns(INT64_MAX));
    cr_assert_not_null(bounds_base_ns(-1));
    cr_assert_eq(bounds_int_sat((int64_t)1 << 40), 2147483647);
    cr_assert_eq(bounds_sub_sat(2147483647, -2147483647 - 1), 2147483647);
}
