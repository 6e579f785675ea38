#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hilsim/file_open.h"

#include "bench_report.h"
#include "reload.h"

static void test_verdict_counts_each_budget(void **state)
{
    (void)state;
    struct hs_rt_stats s;
    assert_int_equal(hs_rt_stats_init(&s, 2000000), 0);
    s.period_ns = 1000000;
    /* 10000 ticks of 300 us work, two of 900 us (so p99.99, the 9999th, is one); wake
     * latencies 20 us, one of 250 us. */
    for (int i = 0; i < 10000; i++) {
        hs_hist_record(&s.phase[HS_PHASE_TICK], (i == 5 || i == 6) ? 900000 : 300000);
        hs_hist_record(&s.phase[HS_PHASE_WAKE], i == 7 ? 250000 : 20000);
    }
    s.overruns = 2;
    struct hs_cfg_budgets b = {.max_misses = 2,
                               .tick_p9999_fraction_of_period = 0.6,
                               .tick_max_fraction_of_period = 0.85,
                               .wake_latency_p99_us = 50,
                               .wake_latency_max_us = 500};
    struct hs_bench_verdict v;
    hs__bench_verdict(&b, &s, 0, &v);
    assert_int_equal(v.nchecks, 6);
    assert_true(v.checks[0].pass);  /* 2 misses allowed */
    assert_false(v.checks[1].pass); /* p99.99 = 900 us (within 0.4 %) > 600 us */
    assert_true(v.checks[1].measured > 900.0 * (1 - HS_HIST_REL_ERR));
    assert_false(v.checks[2].pass); /* max 900 us > 850 us */
    assert_true(v.checks[3].pass);  /* p99 21 us */
    assert_true(v.checks[4].pass);  /* max 250 us */
    assert_false(v.pass);
    b.tick_p9999_fraction_of_period = 0.95;
    b.tick_max_fraction_of_period = 1.0;
    hs__bench_verdict(&b, &s, 0, &v);
    assert_true(v.pass);
    s.overruns = 3;
    hs__bench_verdict(&b, &s, 0, &v);
    assert_false(v.pass);
    s.overruns = 2;
    hs__bench_verdict(&b, &s, 1, &v); /* one CAN frame dropped, none allowed */
    assert_false(v.checks[5].pass);
    assert_false(v.pass);
    hs_rt_stats_destroy(&s);
}

static const struct hs_config *load(const char *yaml)
{
    const char *src = getenv("HS_SOURCE_DIR");
    assert_non_null(src);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", src);
    const struct hs_config *c = NULL;
    struct hs_diag d = {0};
    int r = hs_config_load_buffer(yaml, strlen(yaml), "test.yaml", dir, &c, &d);
    if (r < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    return c;
}

#define BASE                                                                                       \
    "bench: {name: t}\n"                                                                           \
    "models:\n  - {name: arm, file: arm2.wrl}\n"

static void test_frozen_diff_names_sections(void **state)
{
    (void)state;
    const struct hs_config *a = load(BASE "budgets: {max_misses: 1}\n");
    const struct hs_config *b = load(BASE "# a comment moves nothing\nbudgets: {max_misses: 5}\n");
    const struct hs_config *c =
        load(BASE "physics: {iterations: 30}\nrt: {priority: 70}\nbudgets: {max_misses: 1}\n");
    char buf[256];
    hs__config_frozen_diff(a, b, buf, sizeof buf);
    assert_string_equal(buf, ""); /* budgets are live */
    hs__config_frozen_diff(a, c, buf, sizeof buf);
    assert_string_equal(buf, "physics, rt");
    hs_config_free(a);
    hs_config_free(b);
    hs_config_free(c);
}

/* hs_open_regular: files open, everything else is refused without blocking (a FIFO with no
 * writer would block a plain open forever, so reaching the asserts is part of the test). */
static void test_open_regular_refuses_what_is_not_a_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/hs-open-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64], file[64];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(file, sizeof file, "%s/file", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    FILE *w = fopen(file, "w");
    assert_non_null(w);
    fputs("x", w);
    fclose(w);
    int fd = -1;
    assert_int_equal(hs_open_regular(file, &fd), 0);
    char c;
    assert_int_equal(read(fd, &c, 1), 1); /* blocking mode restored, data readable */
    close(fd);
    fd = -7;
    assert_int_equal(hs_open_regular(fifo, &fd), -EINVAL);
    assert_int_equal(fd, -7); /* untouched on failure */
    assert_int_equal(hs_open_regular(dir, &fd), -EISDIR);
    assert_int_equal(hs_open_regular("/dev/null", &fd), -EINVAL);
    assert_int_equal(hs_open_regular("/nonexistent/x", &fd), -ENOENT);
    FILE *f = NULL;
    assert_int_equal(hs_fopen_regular(fifo, &f), -EINVAL);
    assert_null(f);
    assert_int_equal(hs_fopen_regular(file, &f), 0);
    assert_int_equal(fgetc(f), 'x');
    fclose(f);
    assert_string_equal(hs_open_regular_strerror(-EINVAL),
                        "not a regular file (a FIFO, device or socket)");
    /* hs_read_regular: bounded, no link followed with HS_OPEN_NOFOLLOW, nothing but files */
    char link[64];
    snprintf(link, sizeof link, "%s/link", dir);
    assert_int_equal(symlink("/dev/zero", link), 0);
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(hs_read_regular(link, HS_OPEN_NOFOLLOW, 1 << 20, &buf, &len), -ELOOP);
    assert_int_equal(hs_read_regular(link, 0, 1 << 20, &buf, &len), -EINVAL); /* a device */
    assert_int_equal(hs_read_regular(fifo, 0, 1 << 20, &buf, &len), -EINVAL);
    assert_int_equal(hs_read_regular(file, 0, 0, &buf, &len), -EFBIG); /* 1 byte, 0 allowed */
    assert_null(buf);
    assert_int_equal(hs_read_regular(file, HS_OPEN_NOFOLLOW, 1, &buf, &len), 0);
    assert_int_equal(len, 1);
    assert_int_equal(buf[0], 'x');
    assert_int_equal(buf[1], 0); /* NUL-terminated */
    free(buf);
    unlink(link);
    unlink(fifo);
    unlink(file);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_counts_each_budget),
        cmocka_unit_test(test_frozen_diff_names_sections),
        cmocka_unit_test(test_open_regular_refuses_what_is_not_a_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
