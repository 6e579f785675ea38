/* latency.svg from log-linear histograms: well-formed XML (tags balanced, entities escaped),
 * size bounded whatever the number of samples, percentile markers and legend present. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/report.h"

static char *render(const struct hs_svg_series *s, uint32_t n, size_t *ret_len)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(hs_report_write_svg_histogram(f, "wake <latency> & tick", s, n), 0);
    fclose(f);
    if (ret_len)
        *ret_len = len;
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* A small XML checker: every element closed in order, one root, '&' only as an entity, no '<'
 * inside text or attribute values. Returns the number of elements. */
static int check_xml(const char *s)
{
    char stack[64][16];
    int depth = 0, elements = 0, roots = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '&') {
            assert_true(strncmp(p, "&lt;", 4) == 0 || strncmp(p, "&gt;", 4) == 0 ||
                        strncmp(p, "&amp;", 5) == 0 || strncmp(p, "&quot;", 6) == 0);
            continue;
        }
        if (*p != '<')
            continue;
        const char *end = strchr(p, '>');
        assert_non_null(end);
        for (const char *q = p + 1; q < end; q++)
            assert_true(*q != '<');
        if (p[1] == '/') {
            assert_true(depth > 0);
            size_t n = strlen(stack[depth - 1]);
            assert_true(strncmp(p + 2, stack[depth - 1], n) == 0 && p[2 + n] == '>');
            depth--;
        } else {
            char name[16] = {0};
            size_t n = strcspn(p + 1, " />");
            assert_true(n > 0 && n < sizeof name);
            memcpy(name, p + 1, n);
            elements++;
            if (depth == 0)
                roots++;
            if (end[-1] != '/') {
                assert_true(depth < 64);
                strcpy(stack[depth++], name);
            }
        }
        p = end;
    }
    assert_int_equal(depth, 0);
    assert_int_equal(roots, 1);
    return elements;
}

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* n samples log-uniform over 10 ns .. 20 s (10 s range: some overflow) */
static void fill(struct hs_hist *h, uint64_t n, uint64_t seed)
{
    assert_int_equal(hs_hist_init(h, 0), 0);
    for (uint64_t i = 0; i < n; i++) {
        double u = (double)(xorshift(&seed) >> 11) / 9007199254740992.0;
        hs_hist_record(h, (int64_t)(10.0 * exp2(31.0 * u)));
    }
}

static void test_many_samples_stay_small(void **state)
{
    (void)state;
    struct hs_hist a, b, c, few;
    fill(&a, 3000000, 1);
    fill(&b, 3000000, 2);
    fill(&c, 3000000, 3);
    fill(&few, 1000, 4);
    assert_true(a.overflow > 0);
    struct hs_svg_series s[3] = {
        {"hilsim wake latency", &a, "#d62728", true},
        {"baseline <bare> & co", &b, "#1f77b4", true},
        {"hilsim tick time", &c, "#2ca02c", false},
    };
    size_t len, len_few;
    char *svg = render(s, 3, &len);
    printf("svg of 9e6 samples over 10 ns..20 s: %zu bytes\n", len);
    assert_true(len < 100 * 1024);
    assert_true(check_xml(svg) > 50);
    assert_non_null(strstr(svg, "wake &lt;latency&gt; &amp; tick"));
    assert_non_null(strstr(svg, "baseline &lt;bare&gt; &amp; co"));
    assert_int_equal(count(svg, "<path"), 3);
    /* markers: p50, p99, p99.9, max for the two series that ask for them, each label with its
     * value */
    assert_int_equal(count(svg, ">p50 "), 2);
    assert_int_equal(count(svg, ">p99 "), 2);
    assert_int_equal(count(svg, ">p99.9 "), 2);
    assert_int_equal(count(svg, ">max "), 2);
    assert_int_equal(count(svg, ">over</text>"), 1);
    /* decade labels on the time axis, sub-microsecond ones in ns */
    assert_non_null(strstr(svg, ">10 ns</text>"));
    assert_non_null(strstr(svg, ">1 µs</text>"));
    assert_non_null(strstr(svg, ">10 s</text>"));
    /* the size does not grow with the samples: 1000 of them need as many columns */
    s[0].hist = &few;
    char *small = render(s, 3, &len_few);
    assert_true(check_xml(small) > 50);
    assert_true(len_few < 100 * 1024);
    free(small);
    free(svg);
    hs_hist_destroy(&a);
    hs_hist_destroy(&b);
    hs_hist_destroy(&c);
    hs_hist_destroy(&few);
}

static void test_count_axis_and_no_overflow(void **state)
{
    (void)state;
    struct hs_hist a, e;
    assert_int_equal(hs_hist_init(&a, 20000000), 0);
    assert_int_equal(hs_hist_init(&e, 20000000), 0);
    for (int i = 0; i < 1000000; i++)
        hs_hist_record(&a, 100); /* the first column holds 1e6: log10(1e6 + 1) rounds up to 7 */
    hs_hist_record(&a, 15000);
    struct hs_svg_series s[2] = {{"only", &a, "#000", true}, {"empty", &e, "#888", true}};
    char *svg = render(s, 2, NULL);
    check_xml(svg);
    assert_non_null(strstr(svg, ">1e7</text>"));
    assert_null(strstr(svg, ">1e8</text>"));
    assert_null(strstr(svg, ">over</text>"));
    assert_non_null(strstr(svg, "only: 1000001 samples, p50 100 ns"));
    assert_non_null(strstr(svg, "empty: 0 samples</text>"));
    assert_int_equal(count(svg, ">max "), 1); /* none for the empty series */
    free(svg);
    hs_hist_destroy(&a);
    hs_hist_destroy(&e);
}

/* Budget limits are drawn with their labels, and no two labels overlap: markers and limits
 * at nearly the same time each get a row of their own above the plot. */
static void test_limits_and_labels_apart(void **state)
{
    (void)state;
    struct hs_hist a;
    assert_int_equal(hs_hist_init(&a, 20000000), 0);
    for (int i = 0; i < 1000; i++)
        hs_hist_record(&a, 50000); /* every percentile and the max at 50 µs: one x */
    struct hs_svg_series s[1] = {{"wake", &a, "#d62728", true}};
    struct hs_svg_limit lim[2] = {{"budget wake latency p99 50 µs", 50000, "#800"},
                                  {"budget wake latency max 51 µs", 51000, "#800"}};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(hs_report_write_svg_histogram_limits(f, "t", s, 1, lim, 2), 0);
    fclose(f);
    check_xml(buf);
    assert_int_equal(count(buf, ">budget wake latency p99 50 µs</text>"), 1);
    assert_int_equal(count(buf, ">budget wake latency max 51 µs</text>"), 1);
    assert_int_equal(count(buf, "stroke-width=\"1.5\"/>"), 2); /* the limits: solid lines */
    /* every small label: its box (6 px a character, 10 px high) meets no other's */
    double x[16], y[16], w[16];
    int n = 0;
    for (const char *p = buf; (p = strstr(p, "font-size=\"10\">")) && n < 16; p++) {
        const char *t = p;
        while (t > buf && strncmp(t, "<text ", 6))
            t--;
        assert_int_equal(sscanf(t, "<text x=\"%lf\" y=\"%lf\"", &x[n], &y[n]), 2);
        const char *from = p + strlen("font-size=\"10\">"), *to = strstr(from, "</text>");
        w[n] = 6.0 * (double)(to - from);
        n++;
    }
    assert_int_equal(n, 6); /* p50, p99, p99.9, max and the two limits */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            assert_false(fabs(y[i] - y[j]) < 10 && x[i] < x[j] + w[j] && x[j] < x[i] + w[i]);
    free(buf);
    hs_hist_destroy(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_samples_stay_small),
        cmocka_unit_test(test_count_axis_and_no_overflow),
        cmocka_unit_test(test_limits_and_labels_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
