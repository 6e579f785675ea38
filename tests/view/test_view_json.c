/* The view's messages to the page, built with jansson (src/view/view_json.c): a frame keeps the
 * members, order, lengths, types and values the hand-written frame had (a NaN or infinite value
 * is null); text that is not UTF-8 gets '?' for every byte past ASCII (a browser refuses a text
 * frame that is not UTF-8); a message larger than the buffer grows it; and when memory runs out
 * at any allocation the message fails whole (-ENOMEM, nothing to send), never half-built. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/client.h"
#include "hilsim/view.h"
#include "json_same.h"
#include "view_internal.h"

/* jansson's allocations fail from the (n+1)th on while fail_after is n >= 0. */
static int fail_after = -1;
static void *failing_malloc(size_t n)
{
    if (fail_after == 0)
        return NULL;
    if (fail_after > 0)
        fail_after--;
    return malloc(n);
}

static struct hs_shm_joint_state joints[400];
static const double values[3] = {0.123456789, -INFINITY, 7.0};

static struct hs_client_state frame_state(void)
{
    memset(joints, 0, sizeof joints);
    joints[0].q = NAN, joints[0].dq = 0.1, joints[0].tau = -0.0, joints[0].current_a = 1e-7;
    joints[1].q = 1.0 / 3, joints[1].dq = INFINITY, joints[1].tau = 123456789.0;
    joints[1].current_a = -2.5;
    return (struct hs_client_state){.tick = 42,
                                    .sim_time_s = 1234.5678901234,
                                    .mono_ns = 9876543210123,
                                    .bench_flags = 1,
                                    .stale_joints = 2,
                                    .joints = joints};
}

/* What the hand-written frame (hs_view_buf_printf, %.6f and %.6g) sent for frame_state(). */
static const char *const OLD_FRAME =
    "{\"type\":\"frame\",\"tick\":42,\"t\":1234.567890,\"mono\":9876543210123,\"flags\":1,"
    "\"stale\":2,\"q\":[null,0.333333],\"dq\":[0.1,null],\"tau\":[-0,1.23457e+08],"
    "\"cur\":[1e-07,-2.5],\"r\":[0.123457,null,7],\"stopped\":false}";

static void test_frame(void **state)
{
    (void)state;
    struct hs_client_state st = frame_state();
    struct hs_view_buf out = {0};
    assert_int_equal(hs__view_live_frame(&st, 2, values, 3, false, &out), 0);
    const char *text = hs_view_buf_text(&out);
    assert_int_equal(out.len, strlen(text));
    assert_json_same(text, OLD_FRAME);
    /* counts stay integers, flags a boolean, a NaN null */
    json_t *m = json_loads(text, 0, NULL);
    assert_non_null(m);
    static const char *const ints[] = {"tick", "mono", "flags", "stale"};
    for (int i = 0; i < 4; i++)
        if (!json_is_integer(json_object_get(m, ints[i])))
            fail_msg("\"%s\" is not an integer: %s", ints[i], text);
    assert_true(json_is_false(json_object_get(m, "stopped")));
    assert_true(json_is_null(json_array_get(json_object_get(m, "q"), 0)));
    json_t *tau0 = json_array_get(json_object_get(m, "tau"), 0); /* -0 as the page had it */
    assert_true(json_is_real(tau0) && json_real_value(tau0) == 0 && signbit(json_real_value(tau0)));
    json_decref(m);
    /* larger than the buffer's first 4 KiB: grown, whole */
    assert_int_equal(hs__view_live_frame(&st, 400, values, 3, true, &out), 0);
    assert_true(out.len > 4096);
    m = json_loads(hs_view_buf_text(&out), 0, NULL);
    assert_non_null(m);
    assert_int_equal(json_array_size(json_object_get(m, "cur")), 400);
    assert_true(json_is_true(json_object_get(m, "stopped")));
    json_decref(m);
    hs_view_buf_free(&out);
}

/* A string of the message, parsed (the bytes must be UTF-8 JSON). */
static void expect_text(struct hs_view_buf *b, const char *key, const char *want)
{
    json_error_t e;
    json_t *m = json_loads(hs_view_buf_text(b), 0, &e);
    if (!m)
        fail_msg("not JSON (%s): %s", e.text, hs_view_buf_text(b));
    assert_string_equal(json_string_value(json_object_get(m, key)), want);
    json_decref(m);
}

static void test_text_not_utf8(void **state)
{
    (void)state;
    struct hs_view_buf out = {0};
    /* a control answer naming a scenario row cut inside a character, and stray bytes */
    assert_int_equal(hs__view_reply_msg("answer", "ok scenario 'caf\xc3", &out), 0);
    expect_text(&out, "text", "ok scenario 'caf?");
    assert_int_equal(hs__view_reply_msg("error", "\xff\xfe bad \"q\"\n", &out), 0);
    expect_text(&out, "text", "?? bad \"q\"\n");
    /* UTF-8 passes as it is */
    assert_int_equal(hs__view_reply_msg("answer", "ok 5 \xc2\xb5s", &out), 0);
    expect_text(&out, "text", "ok 5 \xc2\xb5s");
    struct hs_view_counts c = {.clients = 1, .bytes = 5000000000ull};
    assert_int_equal(hs__view_status_msg("bench \xe2\x82 running", &c, &out), 0);
    expect_text(&out, "line", "bench ?? running");
    assert_json_same(hs_view_buf_text(&out),
                     "{\"type\":\"status\",\"line\":\"bench ?? running\",\"view\":{\"clients\":1,"
                     "\"bytes\":5000000000,\"frames\":0,\"refused\":0,\"sessions_refused\":0,"
                     "\"control\":false,\"source_gone\":false}}");
    hs_view_buf_free(&out);
}

/* Every allocation jansson makes for the message fails in turn: each time the message is
 * refused whole, and once enough succeed it is the complete one. */
static void test_out_of_memory(void **state)
{
    (void)state;
    struct hs_client_state st = frame_state();
    struct hs_view_buf out = {0}, ref = {0};
    assert_int_equal(hs__view_live_frame(&st, 2, values, 3, false, &ref), 0);
    json_set_alloc_funcs(failing_malloc, free);
    int k = 0, r;
    for (;; k++) {
        assert_int_equal(hs_view_buf_set(&out, "stale"), 0);
        fail_after = k;
        r = hs__view_live_frame(&st, 2, values, 3, false, &out);
        fail_after = -1;
        if (r == 0)
            break;
        assert_int_equal(r, -ENOMEM);
        assert_int_equal(out.len, 0);
        assert_string_equal(hs_view_buf_text(&out), "");
    }
    assert_true(k > 20); /* the members, the arrays and their numbers each failed once */
    assert_string_equal(hs_view_buf_text(&out), hs_view_buf_text(&ref));
    /* the pose message into its fixed buffer (the answer's own parse may be what fails) */
    const char *answer = "{\"tick\":7,\"time_s\":0.007,\"links\":[{\"name\":\"WAIST\","
                         "\"position_m\":[0,0,0.7],\"quaternion_wxyz\":[1,0,0,0]}],"
                         "\"solver\":{\"penetration_m\":0.0001}}";
    char pose[512], want[512], err[160];
    assert_int_equal(hs_view_pose_parse(answer, strlen(answer), want, sizeof want, err, sizeof err),
                     1);
    for (k = 0;; k++) {
        fail_after = k;
        r = hs_view_pose_parse(answer, strlen(answer), pose, sizeof pose, err, sizeof err);
        fail_after = -1;
        if (r == 1)
            break;
        assert_true(r == -ENOMEM || r == -EINVAL);
        assert_string_equal(pose, "");
    }
    assert_string_equal(pose, want);
    json_set_alloc_funcs(malloc, free);
    hs_view_buf_free(&out);
    hs_view_buf_free(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame),
        cmocka_unit_test(test_text_not_utf8),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
