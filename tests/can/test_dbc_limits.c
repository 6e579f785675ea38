/* The DBC parser's stated limits (can_dbc.h, README): inputs exactly at each limit load, one
 * past it is refused with file:line:column. Time is not asserted here (tests/can/dbc_bench
 * prints it); these inputs only prove the limits hold. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/can_dbc.h"

struct text {
    char *p;
    size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...)
{
    if (t->cap - t->len < 128) {
        t->cap = t->cap ? t->cap * 2 : 1 << 20;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    va_list ap;
    va_start(ap, fmt);
    t->len += (size_t)vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
}

/* messages x signals, one SG_ per line after each BO_ line */
static struct text gen(unsigned messages, unsigned signals)
{
    struct text t = {0};
    put(&t, "BU_: ECU\n");
    for (unsigned m = 0; m < messages; m++) {
        put(&t, "BO_ %u M%u: 8 ECU\n", m, m);
        for (unsigned s = 0; s < signals; s++)
            put(&t, " SG_ S%u : %u|8@1+ (1,0) [0|255] \"\" ECU\n", s, (s % 8) * 8);
    }
    return t;
}

static int load(const struct text *t, struct hs_dbc **ret, struct hs_diag *d)
{
    memset(d, 0, sizeof *d);
    return hs_dbc_load_buffer(t->p, t->len, "limit.dbc", ret, d);
}

static void test_signals_per_message(void **state)
{
    (void)state;
    struct text t = gen(1, HS_DBC_SIGNALS_PER_MESSAGE_MAX);
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    assert_int_equal(load(&t, &dbc, &d), 0);
    assert_int_equal(dbc->messages[0].n_signals, HS_DBC_SIGNALS_PER_MESSAGE_MAX);
    /* the lookup the runtime uses still finds the last one */
    assert_non_null(hs_dbc_signal_by_name(&dbc->messages[0], "S99999"));
    hs_dbc_free(dbc);
    put(&t, " SG_ Extra : 0|8@1+ (1,0) [0|255] \"\" ECU\n");
    assert_int_equal(load(&t, &dbc, &d), -EINVAL);
    assert_int_equal(d.line, HS_DBC_SIGNALS_PER_MESSAGE_MAX + 3);
    assert_int_equal(d.column, 6);
    assert_non_null(strstr(d.msg, "more than 100000 signals"));
    free(t.p);
}

static void test_messages(void **state)
{
    (void)state;
    struct text t = gen(HS_DBC_MESSAGES_MAX, 1);
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    assert_int_equal(load(&t, &dbc, &d), 0);
    assert_int_equal(dbc->n_messages, HS_DBC_MESSAGES_MAX);
    /* IDs above 0x7FF are written unflagged here: taken as extended, one warning each, of
     * which HS_DBC_WARNINGS_MAX are kept */
    assert_non_null(hs_dbc_find(dbc, HS_DBC_MESSAGES_MAX - 1, true));
    assert_non_null(hs_dbc_find(dbc, 0x7FF, false));
    assert_int_equal(dbc->n_warnings, HS_DBC_WARNINGS_MAX);
    assert_int_equal(dbc->n_warnings_dropped, HS_DBC_MESSAGES_MAX - 0x800 - HS_DBC_WARNINGS_MAX);
    hs_dbc_free(dbc);
    put(&t, "BO_ 40000 Extra: 8 ECU\n");
    assert_int_equal(load(&t, &dbc, &d), -EINVAL);
    assert_int_equal(d.line, 2 * HS_DBC_MESSAGES_MAX + 2);
    assert_int_equal(d.column, 5);
    assert_non_null(strstr(d.msg, "more than 16384 messages"));
    free(t.p);
}

static void test_signals_in_all(void **state)
{
    (void)state;
    /* 4 x 65536 = HS_DBC_SIGNALS_MAX exactly */
    struct text t = gen(4, HS_DBC_SIGNALS_MAX / 4);
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    assert_int_equal(load(&t, &dbc, &d), 0);
    unsigned n = 0;
    for (unsigned i = 0; i < dbc->n_messages; i++)
        n += dbc->messages[i].n_signals;
    assert_int_equal(n, HS_DBC_SIGNALS_MAX);
    hs_dbc_free(dbc);
    put(&t, "BO_ 9 Extra: 8 ECU\n SG_ One : 0|8@1+ (1,0) [0|255] \"\" ECU\n");
    assert_int_equal(load(&t, &dbc, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "more than 262144 signals in the file"));
    free(t.p);
}

/* A file one byte over HS_DBC_FILE_MAX is refused from its size, before it is read (sparse). */
static void test_file_size(void **state)
{
    (void)state;
    char path[] = "/tmp/hs-dbc-limit-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)HS_DBC_FILE_MAX + 1), 0);
    close(fd);
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    assert_int_equal(hs_dbc_load_file(path, &dbc, &d), -EFBIG);
    assert_non_null(strstr(d.msg, "larger than 64 MiB"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signals_per_message),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_signals_in_all),
        cmocka_unit_test(test_file_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
