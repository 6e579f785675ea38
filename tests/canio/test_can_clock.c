/* The controller's clock frame on CAN (rt.clock.sync.source can), config/arm2-can.yaml over a
 * socketpair bus in simulated time:
 *   lockstep  a SYNC (0x080) releases exactly one tick; the frames sent before it drive that
 *             tick and the ones after it wait for the next; no SYNC, no release (the gate times
 *             out); a tick run anyway takes what is held; SYNC frames are not "unclaimed".
 *   sync      each SYNC's time is one clock event for the discipline; other IDs are not. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "canio/canio_rig.h"

#define SYNC_ID 0x080

static char *config_text(const char *clock)
{
    const char *src = getenv("HS_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/config/arm2-can.yaml", src ? src : ".");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    /* rt.clock goes in under rt: */
    char *rt = strstr(text, "\nrt:\n");
    assert_non_null(rt);
    static char out[70000];
    size_t head = (size_t)(rt - text) + 5;
    snprintf(out, sizeof out, "%.*s  clock: %s\n%s", (int)head, text, clock, text + head);
    return out;
}

static void open_rig(struct canio_rig *r, const char *clock)
{
    const char *src = getenv("HS_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/config", src ? src : ".");
    assert_int_equal(canio_rig_open(r, NULL, config_text(clock), dir, true), 0);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t shoulder_frames(const struct canio_rig *r)
{
    struct hs_bench_can_node_stats s;
    assert_int_equal(hs_bench_can_node_stats(r->can, 0, &s), 0);
    assert_string_equal(s.name, "shoulder");
    return s.node.frames_ok;
}

static const uint8_t MIT_ENTER[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc};
static const uint8_t MIT_CMD[8] = {0x80, 0x00, 0x80, 0x00, 0x00, 0x00, 0x07, 0xff};

static void test_lockstep_sync_releases(void **state)
{
    struct canio_rig r;
    open_rig(&r, "{mode: lockstep, sync: {source: can}}");
    assert_int_equal(hs_bench_release_sources(r.bench), 1);
    /* the host: motor mode and a command for this cycle, its SYNC, then the next command */
    assert_int_equal(canio_send(&r, 0, 1, MIT_ENTER, 8), 1);
    assert_int_equal(canio_send(&r, 0, 1, MIT_CMD, 8), 1);
    assert_int_equal(canio_send(&r, 0, SYNC_ID, NULL, 0), 1);
    assert_int_equal(canio_send(&r, 0, 1, MIT_CMD, 8), 1);
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 2000000000LL), 0);
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(shoulder_frames(&r), 2); /* the third waits behind the SYNC */
    /* no SYNC since: no release */
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 30000000LL), -ETIMEDOUT);
    /* a tick run anyway (on_timeout step) takes what is held */
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(shoulder_frames(&r), 3);
    /* two SYNCs: two releases, one per tick, then none */
    assert_int_equal(canio_send(&r, 0, SYNC_ID, NULL, 0), 1);
    assert_int_equal(canio_send(&r, 0, 1, MIT_CMD, 8), 1);
    assert_int_equal(canio_send(&r, 0, SYNC_ID, NULL, 0), 1);
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 2000000000LL), 0);
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(shoulder_frames(&r), 3); /* the command came after the first SYNC */
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 2000000000LL), 0);
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(shoulder_frames(&r), 4);
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 30000000LL), -ETIMEDOUT);
    struct hs_bench_can_bus_stats bs;
    assert_int_equal(hs_bench_can_bus_stats(r.can, 0, &bs), 0);
    assert_int_equal(bs.unclaimed, 0); /* the SYNCs have an owner: the clock */
    canio_rig_close(&r);
}

static void test_sync_events(void **state)
{
    struct canio_rig r;
    open_rig(&r, "{mode: sync, sync: {source: can}}");
    assert_int_equal(hs_bench_release_sources(r.bench), 0);
    int64_t ev[HS_BENCH_SYNC_EVENTS_MAX];
    assert_int_equal(canio_send(&r, 0, SYNC_ID, NULL, 0), 1);
    assert_int_equal(canio_send(&r, 0, 0x081, NULL, 0), 1); /* another ID: not the clock */
    int64_t at = r.now_ns;
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(hs_bench_sync_take(r.bench, ev, HS_BENCH_SYNC_EVENTS_MAX), 1);
    assert_int_equal(ev[0], at); /* the rig stamps frames with the tick clock */
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(hs_bench_sync_take(r.bench, ev, HS_BENCH_SYNC_EVENTS_MAX), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(canio_send(&r, 0, SYNC_ID, NULL, 0), 1);
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(hs_bench_sync_take(r.bench, ev, HS_BENCH_SYNC_EVENTS_MAX), 3);
    canio_rig_close(&r);
}

/* In wall mode the clock frame is nobody's: counted unclaimed as before, no events. */
static void test_wall_ignores(void **state)
{
    struct canio_rig r;
    open_rig(&r, "{mode: wall, sync: {source: can}}");
    int64_t ev[HS_BENCH_SYNC_EVENTS_MAX];
    assert_int_equal(canio_send(&r, 0, SYNC_ID, NULL, 0), 1);
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(hs_bench_sync_take(r.bench, ev, HS_BENCH_SYNC_EVENTS_MAX), 0);
    canio_rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lockstep_sync_releases),
        cmocka_unit_test(test_sync_events),
        cmocka_unit_test(test_wall_ignores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
