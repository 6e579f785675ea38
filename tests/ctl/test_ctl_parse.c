/* The control commands' parser: every command, and the bad input that must never reach the
 * tick (wrong arity, unknown names, NaN and infinities, values past their bounds, control
 * bytes, over-long lines), each with its one error line. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_names_table.h"

static int parse(const char *line, struct hs_ctl_cmd *c, char *err)
{
    memset(c, 0xa5, sizeof *c);
    return hs_ctl_parse(line, strlen(line), &table_names, c, err, 200);
}

static void test_simple(void **state)
{
    (void)state;
    struct hs_ctl_cmd c;
    char err[200];
    assert_int_equal(parse("status\n", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_STATUS);
    assert_int_equal(parse("  clear \r\n", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_CLEAR);
    assert_int_equal(parse("stop", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_STOP);
    assert_int_equal(parse("stop now", &c, err), -EINVAL);
    assert_non_null(strstr(err, "wrong number of arguments"));
}

static void test_push(void **state)
{
    (void)state;
    struct hs_ctl_cmd c;
    char err[200];
    assert_int_equal(parse("push ELBOW 1.5 -2 3e2 0.25\n", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_PUSH);
    assert_int_equal(c.body, 0);
    assert_int_equal(c.link, 2);
    assert_true(c.force_n[0] == 1.5 && c.force_n[1] == -2 && c.force_n[2] == 300);
    assert_true(c.value == 0.25);
    assert_int_equal(parse("push box/BASE 0 0 100000 60", &c, err), 0);
    assert_int_equal(c.body, 1);

    assert_int_equal(parse("push ELBOW 1 2 3", &c, err), -EINVAL);
    assert_non_null(strstr(err, "usage: push LINK FX FY FZ DURATION_S"));
    assert_int_equal(parse("push ELBOW 1 2 3 4 5", &c, err), -EINVAL);
    assert_int_equal(parse("push NOPE 1 2 3 1", &c, err), -EINVAL);
    assert_string_equal(err, "unknown link 'NOPE'");
    assert_int_equal(parse("push BASE 1 2 3 1", &c, err), -EINVAL);
    assert_non_null(strstr(err, "several models"));
    assert_int_equal(parse("push FLOOR 1 2 3 1", &c, err), -EINVAL);
    assert_non_null(strstr(err, "static"));
    assert_int_equal(parse("push ELBOW nan 0 0 1", &c, err), -EINVAL);
    assert_string_equal(err, "FX: 'nan' is not a finite number");
    assert_int_equal(parse("push ELBOW 0 inf 0 1", &c, err), -EINVAL);
    assert_int_equal(parse("push ELBOW 0 0 1e400 1", &c, err), -EINVAL);
    assert_int_equal(parse("push ELBOW 0 0 100001 1", &c, err), -EINVAL);
    assert_non_null(strstr(err, "FZ: 100001 is outside"));
    assert_int_equal(parse("push ELBOW 0 0 1x 1", &c, err), -EINVAL);
    assert_string_equal(err, "FZ: '1x' is not a number");
    assert_int_equal(parse("push ELBOW 0 0 1 0", &c, err), -EINVAL);
    assert_non_null(strstr(err, "DURATION_S"));
    assert_int_equal(parse("push ELBOW 0 0 1 -1", &c, err), -EINVAL);
    assert_int_equal(parse("push ELBOW 0 0 1 61", &c, err), -EINVAL);
    assert_int_equal(parse("push ELBOW 0 0 1 1e-400", &c, err), -EINVAL);
}

static void test_fault(void **state)
{
    (void)state;
    struct hs_ctl_cmd c;
    char err[200];
    assert_int_equal(parse("fault sensor ELBOW stuck", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_SENSOR_STUCK);
    assert_int_equal(c.joint, 1);
    assert_int_equal(parse("fault sensor SHOULDER offset -0.25", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_SENSOR_OFFSET);
    assert_int_equal(c.joint, 0);
    assert_true(c.value == -0.25);
    assert_int_equal(parse("fault actuator ELBOW derate 0.5", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_ACT_DERATE);
    assert_true(c.value == 0.5);
    assert_int_equal(parse("fault actuator ELBOW no-response", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_ACT_NO_RESPONSE);

    assert_int_equal(parse("fault", &c, err), -EINVAL);
    assert_int_equal(parse("fault sensor ELBOW", &c, err), -EINVAL);
    assert_int_equal(parse("fault sensor ELBOW stuck 1", &c, err), -EINVAL);
    assert_int_equal(parse("fault sensor ELBOW offset", &c, err), -EINVAL);
    assert_int_equal(parse("fault sensor ELBOW offset nan", &c, err), -EINVAL);
    assert_int_equal(parse("fault sensor ELBOW offset 1e9", &c, err), -EINVAL);
    assert_int_equal(parse("fault sensor KNEE stuck", &c, err), -EINVAL);
    assert_string_equal(err, "unknown joint 'KNEE'");
    assert_int_equal(parse("fault sensor ELBOW derate 0.5", &c, err), -EINVAL);
    assert_non_null(strstr(err, "unknown sensor fault 'derate'"));
    assert_int_equal(parse("fault actuator ELBOW stuck", &c, err), -EINVAL);
    assert_int_equal(parse("fault actuator ELBOW derate 1.5", &c, err), -EINVAL);
    assert_int_equal(parse("fault actuator ELBOW derate -0.1", &c, err), -EINVAL);
    assert_int_equal(parse("fault actuator ELBOW no-response x", &c, err), -EINVAL);
    assert_int_equal(parse("fault brain ELBOW stuck", &c, err), -EINVAL);
    assert_non_null(strstr(err, "unknown fault target 'brain'"));
}

static void test_garbage(void **state)
{
    (void)state;
    struct hs_ctl_cmd c, before;
    char err[200];
    assert_int_equal(parse("", &c, err), -EINVAL);
    assert_non_null(strstr(err, "empty command"));
    assert_int_equal(parse(" \t\n", &c, err), -EINVAL);
    assert_int_equal(parse("reboot", &c, err), -EINVAL);
    assert_string_equal(err, "unknown command 'reboot' (status, push, fault, clear, stop)");
    assert_int_equal(parse("status\x01", &c, err), -EINVAL);
    assert_non_null(strstr(err, "control character"));
    assert_int_equal(parse("a b c d e f g h i", &c, err), -EINVAL);
    assert_non_null(strstr(err, "too many words"));
    /* a refused command leaves *ret alone: nothing half-filled can be queued */
    memset(&before, 0xa5, sizeof before);
    assert_memory_equal(&c, &before, sizeof c);
    char longline[HS_CTL_LINE_MAX + 20];
    memset(longline, 'x', sizeof longline - 1);
    longline[sizeof longline - 1] = 0;
    assert_int_equal(parse(longline, &c, err), -EINVAL);
    assert_non_null(strstr(err, "longer than"));
    /* size bounds the read: a line cut before its end parses as what fits */
    assert_int_equal(hs_ctl_parse("status garbage", 6, &table_names, &c, err, sizeof err), 0);
    assert_int_equal(c.kind, HS_CTL_STATUS);
    /* a tiny error buffer truncates, never overflows */
    char small[8];
    assert_int_equal(hs_ctl_parse("reboot", 6, &table_names, &c, small, sizeof small), -EINVAL);
    assert_int_equal(strlen(small), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple),
        cmocka_unit_test(test_push),
        cmocka_unit_test(test_fault),
        cmocka_unit_test(test_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
