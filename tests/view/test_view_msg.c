/* hilsim view's input checks: browser messages, the token, the loopback rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/view.h"

static int parse(const char *text, struct hs_view_msg *m, char *err)
{
    return hs_view_msg_parse(text, strlen(text), m, err, 256);
}

static void expect_refused(const char *text, const char *needle)
{
    struct hs_view_msg m;
    char err[256] = "";
    assert_int_equal(parse(text, &m, err), -22);
    if (!strstr(err, needle))
        fail_msg("'%s': error '%s' does not mention '%s'", text, err, needle);
}

static void test_messages(void **state)
{
    (void)state;
    struct hs_view_msg m;
    char err[256];
    assert_int_equal(parse("{\"type\":\"ctl\",\"line\":\"push WAIST 0 400 0 0.3\"}", &m, err), 0);
    assert_int_equal(m.kind, HS_VIEW_MSG_CTL);
    assert_string_equal(m.line, "push WAIST 0 400 0 0.3");
    assert_int_equal(parse("{\"type\":\"seek\",\"tick\":1234}", &m, err), 0);
    assert_int_equal(m.kind, HS_VIEW_MSG_SEEK);
    assert_true(m.value == 1234.0);
    assert_int_equal(parse("{\"type\":\"speed\",\"value\":0.25}", &m, err), 0);
    assert_true(m.value == 0.25);
    assert_int_equal(parse("{\"type\":\"play\"}", &m, err), 0);
    assert_int_equal(m.kind, HS_VIEW_MSG_PLAY);

    expect_refused("not json", "not JSON");
    expect_refused("[1,2]", "\"type\"");
    expect_refused("{\"type\":7}", "\"type\"");
    expect_refused("{\"type\":\"rm -rf\"}", "unknown message type");
    expect_refused("{\"type\":\"ctl\"}", "non-empty string");
    expect_refused("{\"type\":\"ctl\",\"line\":\"push A 0 0 0 1\\nstop\"}", "one line");
    /* jansson refuses a NUL inside a string before the one-line check sees it */
    expect_refused("{\"type\":\"ctl\",\"line\":\"push\\u0000stop\"}", "NUL");
    expect_refused("{\"type\":\"seek\",\"tick\":-1}", "tick");
    expect_refused("{\"type\":\"seek\",\"tick\":\"5\"}", "tick");
    expect_refused("{\"type\":\"speed\",\"value\":0}", "speed");
    expect_refused("{\"type\":\"play\",\"type\":\"pause\"}", "not JSON"); /* duplicate key */
    char big[HS_VIEW_MSG_MAX + 2];
    memset(big, ' ', sizeof big);
    assert_int_equal(hs_view_msg_parse(big, sizeof big, &m, err, sizeof err), -22);
    assert_non_null(strstr(err, "longer"));
    /* The size is honoured: no NUL needed, nothing read past it. */
    assert_int_equal(hs_view_msg_parse("{\"type\":\"play\"}garbage", 15, &m, err, sizeof err), 0);
}

static void test_ctl_allowed(void **state)
{
    (void)state;
    assert_true(hs_view_ctl_allowed("push WAIST 0 400 0 0.3"));
    assert_true(hs_view_ctl_allowed("fault sensor KNEE stuck"));
    assert_true(hs_view_ctl_allowed("clear"));
    assert_true(hs_view_ctl_allowed("scenario stop"));
    assert_false(hs_view_ctl_allowed("stop"));
    assert_false(hs_view_ctl_allowed("status"));
    assert_false(hs_view_ctl_allowed("clearall"));
    assert_false(hs_view_ctl_allowed("pushWAIST"));
}

static void test_token_and_loopback(void **state)
{
    (void)state;
    const char *t = "0123456789abcdef";
    assert_true(hs_view_token_ok(NULL, NULL, NULL));
    assert_true(hs_view_token_ok(t, "token=0123456789abcdef", NULL));
    assert_true(hs_view_token_ok(t, "a=1&token=0123456789abcdef", NULL));
    assert_true(hs_view_token_ok(t, NULL, "x=y; hilsim_token=0123456789abcdef"));
    assert_false(hs_view_token_ok(t, NULL, NULL));
    assert_false(hs_view_token_ok(t, "token=0123456789abcde", NULL));
    assert_false(hs_view_token_ok(t, "token=0123456789abcdefX", NULL));
    assert_false(hs_view_token_ok(t, "token=", NULL));
    assert_false(hs_view_token_ok(t, "xtoken=0123456789abcdef", NULL));
    assert_false(hs_view_token_ok(t, NULL, "hilsim_token=nope"));
    assert_true(hs_view_addr_loopback("127.0.0.1"));
    assert_true(hs_view_addr_loopback("127.1.2.3"));
    assert_true(hs_view_addr_loopback("::1"));
    assert_true(hs_view_addr_loopback("localhost"));
    assert_false(hs_view_addr_loopback("0.0.0.0"));
    assert_false(hs_view_addr_loopback("192.168.1.10"));
    assert_false(hs_view_addr_loopback("::"));
    assert_false(hs_view_addr_loopback("eth0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_ctl_allowed),
        cmocka_unit_test(test_token_and_loopback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
