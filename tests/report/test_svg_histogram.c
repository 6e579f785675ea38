#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/report.h"

static char *render(const struct hs_svg_series *s, uint32_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(hs_report_write_svg_histogram(f, "wake latency", 1.0, s, n), 0);
    fclose(f);
    return buf;
}

static void test_two_series_with_overflow_are_drawn(void **state)
{
    (void)state;
    uint64_t a[50] = {0}, b[50] = {0};
    a[3] = 1000000, a[40] = 1;
    b[2] = 999999;
    struct hs_svg_series s[2] = {
        {"hilsim", a, 50, 2, "#d62728"},
        {"baseline", b, 50, 0, "#1f77b4"},
    };
    char *svg = render(s, 2);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "</svg>"));
    assert_non_null(strstr(svg, "hilsim"));
    assert_non_null(strstr(svg, "baseline"));
    assert_non_null(strstr(svg, ">over<"));
    /* log axis: 1e6 counts need 7 decades (log10(1e6 + 1) rounds up to 7) */
    assert_non_null(strstr(svg, ">1e7<"));
    assert_null(strstr(svg, ">1e8<"));
    int paths = 0;
    for (char *p = svg; (p = strstr(p, "<path")); p++)
        paths++;
    assert_int_equal(paths, 2);
    free(svg);
}

static void test_no_overflow_no_overflow_bar(void **state)
{
    (void)state;
    uint64_t a[4] = {1, 2, 3, 4};
    struct hs_svg_series s = {"only", a, 4, 0, "#000"};
    char *svg = render(&s, 1);
    assert_null(strstr(svg, ">over<"));
    free(svg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_series_with_overflow_are_drawn),
        cmocka_unit_test(test_no_overflow_no_overflow_bar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
