/* The control commands' parser: every command, and the bad input that must never reach the
 * tick (wrong arity, unknown names, NaN and infinities, values past their bounds, control
 * bytes, over-long lines), each with its one error line. inject and scenario start hand their
 * text (a step mapping, absolute paths) on as places in the line; the peer check decides on
 * made-up credentials (the real socket path is exercised by test_ctl_e2e). */
#include <errno.h>
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
    assert_int_equal(parse("state", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_STATE);
    assert_true(c.value == 0);
    assert_int_equal(parse("state --json\n", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_STATE);
    assert_true(c.value == 1);
    assert_int_equal(parse("state --xml", &c, err), -EINVAL);
    assert_string_equal(err, "wrong number of arguments: usage: state [--json]");
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
    assert_string_equal(err, "unknown link 'NOPE': valid: arm/BASE, ELBOW, box/BASE");
    assert_int_equal(parse("push ELBW 1 2 3 1", &c, err), -EINVAL);
    assert_string_equal(
        err, "unknown link 'ELBW': did you mean 'ELBOW'? valid: arm/BASE, ELBOW, box/BASE");
    /* a list that does not fit ends visibly, never mid-name without a mark */
    char small[40];
    assert_int_equal(hs_ctl_parse("push NOPE 1 2 3 1", 17, &table_names, &c, small, sizeof small),
                     -EINVAL);
    assert_string_equal(small, "unknown link 'NOPE': valid: arm/BAS ...");
    /* without a name list (a caller that has none) the error is the bare one */
    struct hs_ctl_names bare = table_names;
    bare.name = NULL;
    assert_int_equal(hs_ctl_parse("push NOPE 1 2 3 1", 17, &bare, &c, err, 200), -EINVAL);
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
    assert_string_equal(err, "unknown joint 'KNEE': valid: SHOULDER, ELBOW");
    assert_int_equal(parse("fault sensor ELBOE stuck", &c, err), -EINVAL);
    assert_string_equal(err, "unknown joint 'ELBOE': did you mean 'ELBOW'? valid: SHOULDER, ELBOW");
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
    assert_string_equal(
        err,
        "unknown command 'reboot' (status, state, push, fault, inject, scenario, clear, stop)");
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

static void text_is(const char *line, struct hs_ctl_arg a, const char *want)
{
    assert_int_equal(a.len, strlen(want));
    assert_memory_equal(line + a.off, want, a.len);
}

static void test_inject(void **state)
{
    (void)state;
    struct hs_ctl_cmd c;
    char err[200];
    const char *l =
        "inject {sensor_fault: {kind: noise, joint: ELBOW, value: 0.01}, duration_s: 1}\n";
    assert_int_equal(parse(l, &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_INJECT);
    text_is(l, c.text, "{sensor_fault: {kind: noise, joint: ELBOW, value: 0.01}, duration_s: 1}");
    /* blanks around the step go, blanks and tabs inside stay (YAML decides) */
    l = "  inject \t {gravity: {vector_m_s2: [0,\t0, -1]}}  \r\n";
    assert_int_equal(parse(l, &c, err), 0);
    text_is(l, c.text, "{gravity: {vector_m_s2: [0,\t0, -1]}}");
    /* more than the word limit: the step is one argument, however many words it has */
    l = "inject {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9}";
    assert_int_equal(parse(l, &c, err), 0);
    assert_int_equal(parse("inject", &c, err), -EINVAL);
    assert_non_null(strstr(err, "usage: inject"));
    assert_int_equal(parse("inject   \n", &c, err), -EINVAL);
    assert_int_equal(parse("inject {a: \x1b}", &c, err), -EINVAL);
    assert_non_null(strstr(err, "control character"));
    /* injected is another word */
    assert_int_equal(parse("injected {a: 1}", &c, err), -EINVAL);
    assert_non_null(strstr(err, "unknown command 'injected'"));
}

static void test_scenario(void **state)
{
    (void)state;
    struct hs_ctl_cmd c;
    char err[200];
    const char *l = "scenario start /s/a.yaml --junit /o/j.xml --result-json /o/r.json\n";
    assert_int_equal(parse(l, &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_SCENARIO_START);
    text_is(l, c.file, "/s/a.yaml");
    text_is(l, c.junit, "/o/j.xml");
    text_is(l, c.json, "/o/r.json");
    l = "scenario start /s/a.yaml";
    assert_int_equal(parse(l, &c, err), 0);
    text_is(l, c.file, "/s/a.yaml");
    assert_int_equal(c.junit.len, 0);
    assert_int_equal(c.json.len, 0);
    assert_int_equal(parse("scenario stop", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_SCENARIO_STOP);
    assert_int_equal(parse("scenario status", &c, err), 0);
    assert_int_equal(c.kind, HS_CTL_SCENARIO_STATUS);

    assert_int_equal(parse("scenario start a.yaml", &c, err), -EINVAL);
    assert_non_null(strstr(err, "not an absolute path"));
    assert_int_equal(parse("scenario start /a.yaml --junit j.xml", &c, err), -EINVAL);
    assert_non_null(strstr(err, "--junit: 'j.xml' is not an absolute path"));
    assert_int_equal(parse("scenario start /a.yaml --junit", &c, err), -EINVAL);
    assert_non_null(strstr(err, "usage: scenario start FILE"));
    assert_int_equal(parse("scenario start /a.yaml --junit /j --junit /k", &c, err), -EINVAL);
    assert_non_null(strstr(err, "--junit given twice"));
    assert_int_equal(parse("scenario start /a.yaml --xml /j", &c, err), -EINVAL);
    assert_non_null(strstr(err, "unknown option '--xml'"));
    assert_int_equal(parse("scenario", &c, err), -EINVAL);
    assert_int_equal(parse("scenario stop now", &c, err), -EINVAL);
    assert_int_equal(parse("scenario pause", &c, err), -EINVAL);
}

static void test_peer(void **state)
{
    (void)state;
    char err[200];
    const uint32_t groups[] = {20, 24, 1500};
    /* the bench runs as uid 990; its socket's group is 1500 */
    struct hs_ctl_peer root = {.pid = 1, .uid = 0, .gid = 0};
    struct hs_ctl_peer same = {.pid = 2, .uid = 990, .gid = 990};
    struct hs_ctl_peer primary = {.pid = 3, .uid = 1000, .gid = 1500};
    struct hs_ctl_peer member = {
        .pid = 4, .uid = 1001, .gid = 1001, .groups = groups, .ngroups = 3};
    struct hs_ctl_peer other = {.pid = 5, .uid = 1002, .gid = 1002, .groups = groups, .ngroups = 2};
    struct hs_ctl_peer nobody = {.pid = 6, .uid = 65534, .gid = 65534};
    assert_int_equal(hs_ctl_peer_allowed(&root, 990, 1500, err, sizeof err), 0);
    assert_int_equal(hs_ctl_peer_allowed(&same, 990, 1500, err, sizeof err), 0);
    assert_int_equal(hs_ctl_peer_allowed(&primary, 990, 1500, err, sizeof err), 0);
    assert_int_equal(hs_ctl_peer_allowed(&member, 990, 1500, err, sizeof err), 0);
    assert_int_equal(hs_ctl_peer_allowed(&other, 990, 1500, err, sizeof err), -EACCES);
    assert_string_equal(err, "not authorised: uid 1002 (pid 5) is not root, not the bench's user "
                             "(uid 990) and not in the control socket's group (gid 1500)");
    assert_int_equal(hs_ctl_peer_allowed(&nobody, 990, 1500, err, sizeof err), -EACCES);
    /* the same peer is let in once the bench runs as its user, or the socket is its group's */
    assert_int_equal(hs_ctl_peer_allowed(&nobody, 65534, 1500, err, sizeof err), 0);
    assert_int_equal(hs_ctl_peer_allowed(&other, 990, 24, err, sizeof err), 0);
}

/* Feeds n bytes of 'x' then a newline into a fresh buffer; returns what the framing says. */
static int frame_line_of(size_t n, size_t *ret_len)
{
    static struct hs_ctl_inbuf b;
    memset(&b, 0, sizeof b);
    char *at;
    size_t room = hs_ctl_inbuf_room(&b, &at);
    assert_true(room >= n + 1);
    memset(at, 'x', n);
    at[n] = '\n';
    hs_ctl_inbuf_added(&b, n + 1);
    /* a guard byte past the line: the line handed out ends with its NUL inside the buffer */
    char line[HS_CTL_LINE_MAX + 2];
    line[HS_CTL_LINE_MAX + 1] = 'G';
    int r = hs_ctl_inbuf_line(&b, line, ret_len);
    assert_int_equal(line[HS_CTL_LINE_MAX + 1], 'G');
    return r;
}

static void test_frame_limit(void **state)
{
    (void)state;
    size_t len = 0;
    /* exactly the limit, newline included: a line */
    assert_int_equal(frame_line_of(HS_CTL_LINE_MAX - 1, &len), 1);
    assert_int_equal(len, HS_CTL_LINE_MAX);
    /* one byte more, the newline in the buffer's spare byte: too long (it was handed out as a
     * line of HS_CTL_LINE_MAX + 1 bytes, its NUL one past the caller's buffer) */
    assert_int_equal(frame_line_of(HS_CTL_LINE_MAX, &len), -E2BIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple), cmocka_unit_test(test_push),
        cmocka_unit_test(test_fault),  cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_inject), cmocka_unit_test(test_scenario),
        cmocka_unit_test(test_peer),   cmocka_unit_test(test_frame_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
