/* SPSC log ring: order, full/empty, and a producer and a consumer thread racing. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/rt/rt_ring.h"

/* scripts/trace-analyze.py reads a skip from policy_action by this number (LOG_SKIP). */
_Static_assert(HS_RT_LOG_SKIP == 1, "update LOG_SKIP in scripts/trace-analyze.py");

static void test_fifo_full_empty(void **state)
{
    struct hs_rt_ring r;
    struct hs_rt_log_rec rec = {0}, out;
    assert_int_equal(hs_rt_ring_init(&r, 3), 0); /* rounded up to 4 */
    assert_int_equal(r.mask, 3);
    assert_int_equal(hs_rt_ring_pop(&r, &out), -EAGAIN);
    for (int i = 0; i < 4; i++) {
        rec.tick = (uint64_t)i;
        assert_int_equal(hs_rt_ring_push(&r, &rec), 0);
    }
    rec.tick = 99;
    assert_int_equal(hs_rt_ring_push(&r, &rec), -ENOBUFS);
    assert_int_equal(atomic_load(&r.dropped), 1);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(hs_rt_ring_pop(&r, &out), 0);
        assert_int_equal(out.tick, i);
    }
    assert_int_equal(hs_rt_ring_pop(&r, &out), -EAGAIN);
    hs_rt_ring_destroy(&r);
    hs_rt_ring_destroy(NULL);
    assert_int_equal(hs_rt_ring_init(&r, 0), -EINVAL);
}

enum { TOTAL = 200000 };

static void *producer(void *arg)
{
    struct hs_rt_ring *r = arg;
    for (uint64_t i = 0; i < TOTAL; i++) {
        struct hs_rt_log_rec rec = {.tick = i, .a = (int64_t)(i * 3), .b = -(int64_t)i};
        while (hs_rt_ring_push(r, &rec) == -ENOBUFS)
            ; /* the test wants every record; the RT thread would drop instead */
    }
    return NULL;
}

static void test_two_threads(void **state)
{
    struct hs_rt_ring r;
    assert_int_equal(hs_rt_ring_init(&r, 64), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, producer, &r), 0);
    uint64_t next = 0;
    int bad = 0;
    while (next < TOTAL) {
        struct hs_rt_log_rec out;
        if (hs_rt_ring_pop(&r, &out) < 0)
            continue;
        /* In order, none lost, none torn. */
        if (out.tick != next || out.a != (int64_t)(next * 3) || out.b != -(int64_t)next)
            bad++;
        next++;
    }
    pthread_join(t, NULL);
    assert_int_equal(bad, 0);
    struct hs_rt_log_rec out;
    assert_int_equal(hs_rt_ring_pop(&r, &out), -EAGAIN);
    hs_rt_ring_destroy(&r);
}

static void test_format(void **state)
{
    char buf[128];
    struct hs_rt_log_rec rec = {.tick = 7, .a = 3, .b = 11, .kind = HS_RT_LOG_SKIP};
    hs_rt_log_format(&rec, buf, sizeof buf);
    assert_string_equal(buf, "tick 7: skipped 3 period(s), resuming at tick 11");
    /* The stop record names its reason itself: the ring knows nothing of the tick loop. */
    rec = (struct hs_rt_log_rec){
        .tick = 9, .a = 4, .what = "overrun counter threshold", .kind = HS_RT_LOG_STOP};
    hs_rt_log_format(&rec, buf, sizeof buf);
    assert_string_equal(buf, "tick 9: loop stopped: overrun counter threshold (error 0)");
    rec.what = NULL;
    rec.b = -5;
    hs_rt_log_format(&rec, buf, sizeof buf);
    assert_string_equal(buf, "tick 9: loop stopped: reason 4 (error -5)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_full_empty),
        cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
