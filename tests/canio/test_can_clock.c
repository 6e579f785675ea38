/* The controller's clock frame on CAN (rt.clock.sync.source can), config/arm2-can.yaml over a
 * socketpair bus in simulated time:
 *   lockstep  a SYNC (0x080) releases exactly one tick; the frames sent before it drive that
 *             tick and the ones after it wait for the next; no SYNC, no release (the gate times
 *             out); a tick run anyway takes what is held; SYNC frames are not "unclaimed".
 *   sync      each SYNC's time is one clock event for the discipline; other IDs are not.
 *   commands  (lockstep_source can_commands) a tick is released once the MIT shoulder and the
 *             ODrive elbow each accepted a command: a controller 20 cycles ahead still drives
 *             one cycle per tick, and the frames carry the clock of the tick they release, so
 *             the MIT timeout runs out after exactly its ticks.
 * In lockstep the MIT command-to-reply figure is counted in ticks (0: the same tick). */
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
#include "hilsim/can_odrive.h"

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

/* In lockstep the frames carry the tick clock, so the MIT command-to-reply figure is in ticks
 * (a wall-clock send time against a simulated stamp once made it a meaningless number of µs):
 * every reply left with the tick that applied its command. */
static void latency_is_same_tick(const struct canio_rig *r, uint64_t min_samples)
{
    double max = -1;
    assert_true(hs_bench_can_latency_in_ticks(r->can));
    assert_true(hs_bench_can_latency_us(r->can, 100, &max) >= min_samples);
    assert_true(max == 0);
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
    latency_is_same_tick(&r, 3);
    canio_rig_close(&r);
}

static uint64_t node_stat(const struct canio_rig *r, uint32_t i, const char *name, bool timeouts)
{
    struct hs_bench_can_node_stats s;
    assert_int_equal(hs_bench_can_node_stats(r->can, i, &s), 0);
    assert_string_equal(s.name, name);
    return timeouts ? s.node.timeouts : s.node.frames_ok;
}

/* One controller cycle: the shoulder's MIT frame and the elbow's ODrive position set point. */
static void send_cycle(struct canio_rig *r, const uint8_t mit[8])
{
    static const uint8_t POS[8] = {0};
    assert_int_equal(canio_send(r, 0, 1, mit, 8), 1);
    assert_int_equal(canio_send(r, 0, hs_odrive_can_id(2, HS_ODRIVE_SET_INPUT_POS), POS, 8), 1);
}

static void test_lockstep_commands_release(void **state)
{
    struct canio_rig r;
    open_rig(&r, "{mode: lockstep, lockstep_source: can_commands}");
    assert_int_equal(hs_bench_release_sources(r.bench), 1);
    assert_int_equal(canio_rig_tick(&r), 0); /* tick 0 runs at once */
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 30000000LL), -ETIMEDOUT);
    /* the shoulder alone does not release, nor does an ODrive getter (not a command) */
    assert_int_equal(canio_send(&r, 0, 1, MIT_ENTER, 8), 1);
    struct hs_can_frame rtr = {.id = hs_odrive_can_id(2, HS_ODRIVE_GET_ENCODER_ESTIMATES),
                               .flags = HS_CAN_FLAG_RTR};
    assert_int_equal(canio_send_frame(&r, 0, &rtr), 1);
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 30000000LL), -ETIMEDOUT);
    /* the elbow's set point completes the cycle; the shoulder's next frame waits behind it */
    static const uint8_t POS[8] = {0};
    assert_int_equal(canio_send(&r, 0, hs_odrive_can_id(2, HS_ODRIVE_SET_INPUT_POS), POS, 8), 1);
    assert_int_equal(canio_send(&r, 0, 1, MIT_CMD, 8), 1);
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 2000000000LL), 0);
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(node_stat(&r, 0, "shoulder", false), 1);
    assert_int_equal(node_stat(&r, 1, "elbow", false), 2); /* the getter and the set point */
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 30000000LL), -ETIMEDOUT);
    assert_int_equal(canio_send(&r, 0, hs_odrive_can_id(2, HS_ODRIVE_SET_INPUT_POS), POS, 8), 1);
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 2000000000LL), 0);
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(node_stat(&r, 0, "shoulder", false), 2);
    /* a controller 20 cycles ahead: each tick takes exactly one cycle */
    for (int k = 0; k < 20; k++)
        send_cycle(&r, MIT_CMD);
    for (uint64_t k = 1; k <= 20; k++) {
        assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 2000000000LL), 0);
        assert_int_equal(canio_rig_tick(&r), 0);
        assert_int_equal(node_stat(&r, 0, "shoulder", false), 2 + k);
        assert_int_equal(node_stat(&r, 1, "elbow", false), 3 + k);
    }
    assert_int_equal(hs_bench_wait_release(r.bench, mono_ns() + 30000000LL), -ETIMEDOUT);
    /* timeouts on the tick clock: the last command was stamped with its tick's clock, so the
     * shoulder's 0.1 s MIT timeout (100 ticks of 1 ms) runs out on the 101st tick after it,
     * however long the waits above took in wall time (ticks run as with on_timeout step) */
    for (int k = 0; k < 100; k++)
        assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(node_stat(&r, 0, "shoulder", true), 0);
    assert_int_equal(canio_rig_tick(&r), 0);
    assert_int_equal(node_stat(&r, 0, "shoulder", true), 1);
    struct hs_bench_can_bus_stats bs;
    assert_int_equal(hs_bench_can_bus_stats(r.can, 0, &bs), 0);
    assert_int_equal(bs.unclaimed, 0);
    latency_is_same_tick(&r, 20);
    canio_rig_close(&r);
}

/* The source must exist: a bench without CAN nodes cannot name can_commands, nor can_frame
 * without a clock frame. */
static void test_lockstep_source_checked(void **state)
{
    const char *src = getenv("HS_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/config", src ? src : ".");
    struct hs_diag d = {0};
    const struct hs_config *cfg = NULL;
    const char *text = config_text("{mode: lockstep, lockstep_source: can_frame}");
    assert_int_equal(hs_config_load_buffer(text, strlen(text), "arm2-can.yaml", dir, &cfg, &d),
                     -EINVAL);
    assert_null(cfg);
    assert_non_null(strstr(d.msg, "rt.clock.lockstep_source"));
    assert_non_null(strstr(d.msg, "can_frame needs rt.clock.sync.source can"));
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
        cmocka_unit_test(test_lockstep_commands_release),
        cmocka_unit_test(test_lockstep_source_checked),
        cmocka_unit_test(test_sync_events),
        cmocka_unit_test(test_wall_ignores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
