/* hilsim view's input checks: browser messages, the bench's state answers (root poses), the
 * token, the loopback rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/view.h"
#include "json_same.h"

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
    assert_true(hs_view_ctl_allowed("state"));
    assert_true(hs_view_ctl_allowed("state --json"));
    assert_false(hs_view_ctl_allowed("statement"));
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

#define LINK(name, x, z)                                                                           \
    "{\"name\":\"" name "\",\"position_m\":[" #x ",0," #z                                          \
    "],\"quaternion_wxyz\":[1,0,0,0],\"rpy_rad\":[0,0,0]}"

static void test_pose(void **state)
{
    (void)state;
    char out[HS_VIEW_POSE_MAX], err[160];
    /* Two models: each one's first link is its root; the floor too (it is placed as well). */
    const char *two = "{\"tick\":42,\"time_s\":0.042,\"bench\":\"b\",\"links\":[" LINK(
        "biped/WAIST", 0.5, 0.7) "," LINK("biped/R_HIP_Y", 0.5,
                                          0.6) "," LINK("floor/BASE", 0,
                                                        -0.1) "],"
                                                              "\"joints\":[],\"sensors\":[]}";
    assert_int_equal(hs_view_pose_parse(two, strlen(two), out, sizeof out, err, sizeof err), 2);
    assert_json_same(out,
                     "{\"type\":\"pose\",\"tick\":42,\"t\":0.042,\"roots\":["
                     "[\"biped/WAIST\",0.5,0,0.7,1,0,0,0],[\"floor/BASE\",0,0,-0.1,1,0,0,0]]}");
    /* One model: bare link names, the first is the root. */
    const char *one =
        "{\"tick\":1,\"time_s\":0.001,\"links\":[" LINK("WAIST", 1, 2) "," LINK("CHEST", 1, 3) "]}";
    assert_int_equal(hs_view_pose_parse(one, strlen(one), out, sizeof out, err, sizeof err), 1);
    assert_json_same(out, "{\"type\":\"pose\",\"tick\":1,\"t\":0.001,\"roots\":["
                          "[\"WAIST\",1,0,2,1,0,0,0]]}");
    /* Refused, with the reason, and out left empty. */
    const char *bad[] = {
        "error state: the bench did not answer in time",
        "{\"tick\":-1,\"time_s\":0,\"links\":[]}",
        "{\"tick\":1,\"time_s\":0,\"links\":[{\"name\":\"W\",\"position_m\":[0,0],"
        "\"quaternion_wxyz\":[1,0,0,0]}]}",
        "{\"tick\":1,\"time_s\":0,\"links\":[{\"name\":\"a\\\"b\",\"position_m\":[0,0,0],"
        "\"quaternion_wxyz\":[1,0,0,0]}]}",
        "{\"tick\":1,\"time_s\":0,\"links\":[{\"name\":\"W\",\"position_m\":[0,0,\"x\"],"
        "\"quaternion_wxyz\":[1,0,0,0]}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        strcpy(out, "junk");
        assert_int_equal(
            hs_view_pose_parse(bad[i], strlen(bad[i]), out, sizeof out, err, sizeof err), -22);
        assert_string_equal(out, "");
        if (!strstr(err, "state"))
            fail_msg("'%s': error '%s'", bad[i], err);
    }
    /* Too small a buffer: -ENOSPC, never a cut message. */
    assert_int_equal(hs_view_pose_parse(two, strlen(two), out, 40, err, sizeof err), -28);
    assert_string_equal(out, "");
    /* Contacts (position and force of each; names and normals dropped) and the solver's health
     * follow the roots; a non-finite health figure (null in the answer) stays null. */
    const char *touch = "{\"tick\":7,\"time_s\":0.007,\"links\":[" LINK(
        "WAIST", 0,
        0.7) "],\"scenario\":null,"
             "\"contacts\":{\"made\":3,\"dropped\":1,\"points\":[{\"link\":\"R_ANKLE_R\",\"other\":"
             "\"floor/"
             "BASE\",\"position_m\":[0.1,-0.05,-0.0001],\"normal\":[0,0,1],\"force_n\":[0.5,0,"
             "70.25]},{\"link\":\"L_ANKLE_R\",\"other\":\"floor/BASE\",\"position_m\":[0.1,0.05,0],"
             "\"normal\":[0,0,1],\"force_n\":[0,0,80]}]},\"solver\":{\"penetration_m\":0.0001,"
             "\"joint_error_m\":null,\"force_jump_n\":0.5},\"can\":[],\"phases_us\":{\"ticks\":30,"
             "\"percentiles\":[50,99,100],\"wake\":[1.5,20,30.25],\"tick\":[null,null,null]}}";
    assert_int_equal(hs_view_pose_parse(touch, strlen(touch), out, sizeof out, err, sizeof err), 1);
    assert_json_same(out, "{\"type\":\"pose\",\"tick\":7,\"t\":0.007,\"roots\":["
                          "[\"WAIST\",0,0,0.7,1,0,0,0]],\"contacts\":[[0.1,-0.05,-0.0001,0.5,0,"
                          "70.25],[0.1,0.05,0,0,0,80]],\"contacts_dropped\":1,\"solver\":["
                          "0.0001,null,0.5],\"phases\":[[\"wake\",1.5,20,30.25],[\"tick\","
                          "null,null,null]]}");
    const char *bad_touch[] = {
        "{\"tick\":1,\"time_s\":0,\"links\":[],\"contacts\":[]}",
        "{\"tick\":1,\"time_s\":0,\"links\":[],\"contacts\":{\"made\":-1,\"dropped\":0,"
        "\"points\":[]}}",
        "{\"tick\":1,\"time_s\":0,\"links\":[],\"contacts\":{\"made\":1,\"dropped\":0,"
        "\"points\":[{\"position_m\":[0,0,0],\"force_n\":[0,0]}]}}",
        "{\"tick\":1,\"time_s\":0,\"links\":[],\"solver\":{\"penetration_m\":\"deep\"}}",
        "{\"tick\":1,\"time_s\":0,\"links\":[],\"solver\":[1,2,3]}",
        "{\"tick\":1,\"time_s\":0,\"links\":[],\"phases_us\":{\"wake\":[1,2]}}",
        "{\"tick\":1,\"time_s\":0,\"links\":[],\"phases_us\":{\"a b\":[1,2,3]}}",
        "{\"tick\":1,\"time_s\":0,\"links\":[],\"phases_us\":[]}",
    };
    for (size_t i = 0; i < sizeof bad_touch / sizeof bad_touch[0]; i++) {
        err[0] = 0;
        assert_int_equal(hs_view_pose_parse(bad_touch[i], strlen(bad_touch[i]), out, sizeof out,
                                            err, sizeof err),
                         -22);
        assert_string_equal(out, "");
        if (!strstr(err, "state"))
            fail_msg("'%s': error '%s'", bad_touch[i], err);
    }
}

/* The scenario member of a state answer: passed on field by field (what else the bench said is
 * dropped), null as null, absent as nothing, and a field out of its type or range refused. */
static void test_scenario(void **state)
{
    (void)state;
    char out[HS_VIEW_SCEN_MAX], err[200];
    const char *running =
        "{\"tick\":300,\"links\":[],\"scenario\":{\"name\":\"t\",\"state\":\"running\","
        "\"ticks\":290,\"duration_s\":0.5,\"verdict\":null,\"extra\":1,\"steps\":[{\"name\":"
        "\"lift\",\"kind\":\"gravity\",\"onset_tick\":50,\"active_ticks\":20}],"
        "\"expectations\":[{\"name\":\"hi\",\"line\":4,\"status\":\"fail\",\"tick\":200,"
        "\"value\":0.754125,\"opened_tick\":200,\"why\":\"x\"},{\"name\":\"up\",\"line\":5,"
        "\"status\":\"pending\",\"tick\":-1,\"value\":null,\"opened_tick\":-1}]}}";
    int n = hs_view_scen_parse(running, strlen(running), out, sizeof out, err, sizeof err);
    assert_int_equal(n, (int)strlen(out));
    assert_string_equal(
        out, "{\"type\":\"scenario\",\"scenario\":{\"name\":\"t\",\"state\":\"running\","
             "\"ticks\":290,\"duration_s\":0.5,\"verdict\":null,\"steps\":[{\"name\":\"lift\","
             "\"kind\":\"gravity\",\"onset_tick\":50,\"active_ticks\":20}],\"expectations\":"
             "[{\"name\":\"hi\",\"line\":4,\"status\":\"fail\",\"tick\":200,\"value\":0.754125,"
             "\"opened_tick\":200},{\"name\":\"up\",\"line\":5,\"status\":\"pending\",\"tick\":"
             "-1,\"value\":null,\"opened_tick\":-1}]}}");
    const char *none = "{\"tick\":1,\"scenario\":null}";
    assert_true(hs_view_scen_parse(none, strlen(none), out, sizeof out, err, sizeof err) > 0);
    assert_string_equal(out, "{\"type\":\"scenario\",\"scenario\":null}");
    const char *older = "{\"tick\":1,\"links\":[]}";
    assert_int_equal(hs_view_scen_parse(older, strlen(older), out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "");
    const char *bad[] = {
        "{\"scenario\":{\"name\":\"t\",\"state\":\"paused\",\"ticks\":1,\"duration_s\":1,"
        "\"verdict\":null,\"steps\":[],\"expectations\":[]}}",
        "{\"scenario\":{\"name\":\"t\",\"state\":\"ended\",\"ticks\":-1,\"duration_s\":1,"
        "\"verdict\":null,\"steps\":[],\"expectations\":[]}}",
        "{\"scenario\":{\"name\":\"t\",\"state\":\"ended\",\"ticks\":1,\"duration_s\":1,"
        "\"verdict\":\"MAYBE\",\"steps\":[],\"expectations\":[]}}",
        "{\"scenario\":{\"name\":\"t\",\"state\":\"ended\",\"ticks\":1,\"duration_s\":1,"
        "\"verdict\":null,\"steps\":[{\"name\":\"s\"}],\"expectations\":[]}}",
        "{\"scenario\":{\"name\":\"t\",\"state\":\"ended\",\"ticks\":1,\"duration_s\":1,"
        "\"verdict\":null,\"steps\":[],\"expectations\":[{\"name\":\"e\",\"line\":1,\"status\":"
        "\"<b>\",\"tick\":1,\"value\":1,\"opened_tick\":1}]}}",
        "{\"scenario\":[1]}",
        "not json",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        assert_int_equal(
            hs_view_scen_parse(bad[i], strlen(bad[i]), out, sizeof out, err, sizeof err), -22);
        assert_true(err[0] && !out[0]);
    }
    assert_int_equal(hs_view_scen_parse(running, strlen(running), out, 64, err, sizeof err), -28);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_ctl_allowed),
        cmocka_unit_test(test_pose),
        cmocka_unit_test(test_scenario),
        cmocka_unit_test(test_token_and_loopback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
