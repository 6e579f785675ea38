/* The control stage on a real ODE world: a live push of F for t (the short command, the step it
 * stands for) changes a floating robot's momentum by F·t (the force acts in every physics
 * substep, for whole ticks), commands wait in
 * the queue and at most HS_CTL_POP_PER_TICK reach the tick per boundary, a full queue refuses,
 * and clear ends a push early. Injected scenario steps: the same push as a step gives the same
 * F·t; gravity, friction and material steps act from the tick that takes them and are undone
 * when they end; a full set of live slots refuses and counts, clear frees them all; a CAN node
 * silenced live (the bench's CAN module on a socketpair bus) is silent for exactly the step's
 * ticks. A scenario file started live plays in the stage and comes back with its verdict, or
 * stopped early. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <linux/can.h>
#include <linux/can/error.h>
#include <ode/ode.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hilsim/io_can.h"
#include "hilsim/can_mit.h"

#include "bench/bench_momentum.h"
#include "bench/can_boards.h"
#include "hilsim/ctl.h"
#include "hilsim/scenario.h"
#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/scenario_live.h"

/* The biped floating in zero gravity, no floor, no controller: only the push changes its
 * momentum. Two substeps per tick, so a force applied once per tick would show as half. */
static const char *floating_biped = "bench: {name: ctl-float}\n"
                                    "models:\n"
                                    "  - {name: biped, file: biped.wrl}\n"
                                    "physics: {substeps: 2, solver: standard, gravity: [0, 0, 0],\n"
                                    "          materials: {R_ANKLE_R: {material: rubber}}}\n"
                                    "rt: {period_ns: 1000000}\n"
                                    "controller: {type: none}\n";

struct rig {
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_ctl_stage *ctl;
    struct hs_ctl_names names;
    uint64_t tick;
    struct hs_bench_can *can; /* open_can's */
};

static void rig_open(struct rig *r)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    struct hs_diag d = {0};
    memset(r, 0, sizeof *r);
    if (hs_config_load_buffer(floating_biped, strlen(floating_biped), "float.yaml", dir, &r->cfg,
                              &d) < 0 ||
        hs_bench_create(r->cfg, &r->bench, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    assert_int_equal(hs_ctl_stage_create(r->bench, &r->ctl), 0);
    assert_int_equal(hs_ctl_stage_attach(r->ctl, r->bench), 0);
    hs_ctl_bench_names(r->bench, &r->names);
    hs_bench_sensors(r->bench, 0, 0);
}

static void rig_close(struct rig *r)
{
    hs_bench_destroy(r->bench);
    hs_config_free(r->cfg);
}

static void ticks(struct rig *r, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        r->tick++;
        assert_int_equal(hs_bench_tick(r->bench, (int64_t)r->tick * 1000000, r->tick), 0);
    }
}

/* A command line as the socket thread handles it: a short command becomes the step it stands
 * for, bound into a live slot, and the slot is queued; the others are queued as they are. */
static int send_line(struct rig *r, const char *line)
{
    struct hs_ctl_cmd c;
    char err[200], step[HS_CTL_LINE_MAX];
    if (hs_ctl_parse(line, strlen(line), &r->names, &c, err, sizeof err) < 0)
        fail_msg("%s: %s", line, err);
    int n = hs_ctl_step_text(&c, r->bench, step, sizeof step);
    if (n >= 0) {
        struct hs_diag d = {0};
        if (hs_scenario_live_prepare(hs_ctl_stage_live(r->ctl), step, (size_t)n, NULL, &c.slot,
                                     &d) < 0)
            fail_msg("%s: %s", step, d.msg);
        c.kind = HS_CTL_INJECT;
    }
    return hs_ctl_stage_push(r->ctl, &c);
}

/* `state` from another thread while this one ticks: the copy is taken at a tick boundary after
 * the request, names every link, joint and sensor, and gives the true pose (the floating biped
 * without gravity keeps the file's: WAIST at z = 0.74 m, upright); with no tick it times out. */
struct state_reader {
    struct hs_ctl_stage *ctl;
    bool json;
    char buf[32768];
    size_t size; /* of buf used; 0: all of it */
    int n;
    size_t need; /* after -ENOSPC: the size that holds the answer */
    atomic_bool done;
};

static void *read_state(void *arg)
{
    struct state_reader *sr = arg;
    sr->n = hs_ctl_stage_state(sr->ctl, 10000, sr->json, sr->buf,
                               sr->size ? sr->size : sizeof sr->buf, &sr->need);
    atomic_store(&sr->done, true);
    return NULL;
}

/* Parsed checks of `state --json` (jansson prints an integral real as 0.0 where the
 * hand-written answer printed 0): the same members, order and values. */
static json_t *json_row(const json_t *arr, const char *name)
{
    size_t i;
    json_t *row;
    json_array_foreach(arr, i, row)
    {
        const char *n = json_string_value(json_object_get(row, "name"));
        if (n && !strcmp(n, name))
            return row;
    }
    return NULL;
}

/* The object's first members are these keys, in this order (NULL-terminated). */
static bool keys_are(json_t *obj, ...)
{
    va_list ap;
    va_start(ap, obj);
    void *it = json_object_iter(obj);
    bool same = obj != NULL;
    for (const char *k; same && (k = va_arg(ap, const char *)); it = json_object_iter_next(obj, it))
        same = it && !strcmp(json_object_iter_key(it), k);
    va_end(ap);
    return same;
}

/* Every number equal, a negative zero included (the old text pinned "-0"). */
static bool nums_are(const json_t *arr, const double *want, size_t n)
{
    if (json_array_size(arr) != n)
        return false;
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get(arr, k);
        if (!json_is_number(v) || json_number_value(v) != want[k] ||
            signbit(json_number_value(v)) != signbit(want[k]))
            return false;
    }
    return true;
}

static void test_state_at_a_tick_boundary(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    ticks(&r, 5);
    char small[64];
    assert_int_equal(hs_ctl_stage_state(r.ctl, 0, false, small, sizeof small, NULL), -ETIMEDOUT);
    for (int json = 0; json < 2; json++) {
        static struct state_reader sr;
        memset(&sr, 0, sizeof sr);
        sr.ctl = r.ctl;
        sr.json = json;
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, read_state, &sr), 0);
        uint64_t first = r.tick;
        while (!atomic_load(&sr.done) && r.tick < first + 100000) {
            ticks(&r, 1);
            struct timespec ms = {0, 100000};
            nanosleep(&ms, NULL);
        }
        pthread_join(t, NULL);
        assert_true(sr.n > 0);
        assert_int_equal((size_t)sr.n, strlen(sr.buf));
        if (json) {
            json_t *doc = json_loads(sr.buf, 0, NULL);
            assert_non_null(doc);
            static const double p[] = {0, 0, 0.74}, q[] = {1, 0, 0, 0}, rpy[] = {0, -0.0, 0};
            json_t *waist = json_row(json_object_get(doc, "links"), "WAIST");
            assert_non_null(waist);
            assert_true(keys_are(waist, "name", "position_m", "quaternion_wxyz", "rpy_rad", NULL));
            assert_true(nums_are(json_object_get(waist, "position_m"), p, 3));
            assert_true(nums_are(json_object_get(waist, "quaternion_wxyz"), q, 4));
            assert_true(nums_are(json_object_get(waist, "rpy_rad"), rpy, 3));
            json_t *knee = json_row(json_object_get(doc, "joints"), "R_KNEE");
            assert_non_null(knee);
            assert_true(keys_are(knee, "name", "q", "dq", NULL));
            assert_true(json_number_value(json_object_get(knee, "q")) == 0);
            assert_true(json_number_value(json_object_get(knee, "dq")) == 0);
            assert_non_null(strstr(sr.buf, "\"kind\":\"accel\",\"unit\":\"m/s2\",\"values\":["));
            json_decref(doc);
        } else {
            assert_non_null(strstr(sr.buf, "bench ctl-float\nlinks: position (m)"));
            assert_non_null(strstr(sr.buf, "\n  WAIST "));
            assert_non_null(strstr(sr.buf, "\n  R_KNEE "));
            assert_non_null(strstr(sr.buf, "\nsensors: as reported\n"));
        }
        unsigned long long tk = 0;
        assert_int_equal(sscanf(sr.buf, json ? "{\"tick\":%llu" : "tick %llu", &tk), 1);
        assert_true(tk > first && tk <= r.tick); /* a boundary after the request */
    }
    /* too small a buffer says so, as text and as JSON (nothing half-written is sent) */
    for (int json = 0; json < 2; json++) {
        static struct state_reader sr;
        memset(&sr, 0, sizeof sr);
        sr.ctl = r.ctl;
        sr.json = json;
        sr.size = 64;
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, read_state, &sr), 0);
        while (!atomic_load(&sr.done)) {
            ticks(&r, 1);
            struct timespec ms = {0, 100000};
            nanosleep(&ms, NULL);
        }
        pthread_join(t, NULL);
        assert_int_equal(sr.n, -ENOSPC);
        assert_string_equal(sr.buf, "");
        /* ... and how much would hold it: the same copy formatted again fits that exactly, one
         * byte less does not (a bench of many robots gets a buffer of its answer's size) */
        assert_true(sr.need > 64 && sr.need <= sizeof sr.buf);
        assert_int_equal(hs_ctl_stage_state_again(r.ctl, json, sr.buf, sr.need - 1), -ENOSPC);
        int n = hs_ctl_stage_state_again(r.ctl, json, sr.buf, sr.need);
        assert_int_equal(n, (int)sr.need - 1);
        assert_int_equal(sr.buf[n - 1], '\n');
        if (json) {
            json_error_t e;
            json_t *o = json_loads(sr.buf, 0, &e);
            assert_non_null(o);
            json_decref(o);
        } else {
            assert_non_null(strstr(sr.buf, "bench ctl-float\nlinks: position (m)"));
        }
    }
    rig_close(&r);
}

static void test_push_changes_momentum_by_f_t(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    double p0[3], p1[3];
    ticks(&r, 50);
    bench_momentum(r.bench, 0, p0);
    assert_int_equal(send_line(&r, "push WAIST 3 50 -2 0.2"), 0);
    ticks(&r, 300);
    bench_momentum(r.bench, 0, p1);
    /* F t = (0.6, 10, -0.4) N·s over exactly 200 ticks; joints only move momentum around */
    double want[3] = {0.6, 10, -0.4};
    for (int k = 0; k < 3; k++) {
        print_message("axis %d: dp = %.6f N·s, F t = %.6f\n", k, p1[k] - p0[k], want[k]);
        assert_true(fabs(p1[k] - p0[k] - want[k]) < 0.005 * 10); /* 0.5 % of |F t| */
    }
    struct hs_ctl_counters c;
    hs_ctl_stage_counters(r.ctl, &c);
    assert_int_equal(c.applied, 1);
    assert_int_equal(c.last_applied_tick, 51);
    assert_int_equal(c.live_steps, 0); /* the push step ended and gave its slot back */
    rig_close(&r);
}

static void test_queue_bounds_and_clear(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    /* a push, then a clear in the same batch: the clear ends it at once */
    assert_int_equal(send_line(&r, "push WAIST 0 100 0 1"), 0);
    ticks(&r, 10);
    double p0[3], p1[3];
    bench_momentum(r.bench, 0, p0);
    assert_int_equal(send_line(&r, "clear"), 0);
    ticks(&r, 10);
    bench_momentum(r.bench, 0, p1);
    /* one tick at most of the push after p0 (the clear lands at the next boundary) */
    assert_true(fabs(p1[1] - p0[1]) < 100 * 0.001 + 1e-6);
    /* a full queue refuses; the tick drains it HS_CTL_POP_PER_TICK at a time */
    struct hs_ctl_counters c0, c1;
    hs_ctl_stage_counters(r.ctl, &c0);
    for (int k = 0; k < HS_CTL_QUEUE_LEN; k++)
        assert_int_equal(send_line(&r, "clear"), 0);
    assert_int_equal(send_line(&r, "status"), -ENOBUFS);
    ticks(&r, 1);
    hs_ctl_stage_counters(r.ctl, &c1);
    assert_int_equal(c1.applied - c0.applied, HS_CTL_POP_PER_TICK);
    assert_int_equal(c1.queue_full, 1);
    ticks(&r, HS_CTL_QUEUE_LEN / HS_CTL_POP_PER_TICK);
    hs_ctl_stage_counters(r.ctl, &c1);
    assert_int_equal(c1.applied - c0.applied, HS_CTL_QUEUE_LEN);
    rig_close(&r);
}

/* Injects a step as the socket thread does: bind into a slot, queue the slot. */
static int inject(struct rig *r, const char *step)
{
    struct hs_diag d = {0};
    uint32_t slot;
    int rc =
        hs_scenario_live_prepare(hs_ctl_stage_live(r->ctl), step, strlen(step), NULL, &slot, &d);
    if (rc < 0)
        return rc;
    struct hs_ctl_cmd c = {.kind = HS_CTL_INJECT, .slot = slot};
    return hs_ctl_stage_push(r->ctl, &c);
}

static uint32_t live_steps(struct rig *r)
{
    struct hs_ctl_counters c;
    hs_ctl_stage_counters(r->ctl, &c);
    return c.live_steps;
}

static void test_injected_push_is_the_scenario_push(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    double p0[3], p1[3];
    ticks(&r, 50);
    bench_momentum(r.bench, 0, p0);
    assert_int_equal(inject(&r, "{push: {link: WAIST, force_n: [3, 50, -2]}, duration_s: 0.2}"), 0);
    ticks(&r, 1);
    assert_int_equal(live_steps(&r), 1);
    ticks(&r, 299);
    bench_momentum(r.bench, 0, p1);
    double want[3] = {0.6, 10, -0.4};
    for (int k = 0; k < 3; k++) {
        print_message("axis %d: dp = %.6f N·s, F t = %.6f\n", k, p1[k] - p0[k], want[k]);
        assert_true(fabs(p1[k] - p0[k] - want[k]) < 0.005 * 10);
    }
    /* it ended and gave its slot back; the socket thread frees it */
    assert_int_equal(live_steps(&r), 0);
    assert_int_equal(hs_scenario_live_reap(hs_ctl_stage_live(r.ctl)), 1);
    assert_int_equal(hs_scenario_live_reap(hs_ctl_stage_live(r.ctl)), 0);
    rig_close(&r);
}

static double gravity_z(struct rig *r)
{
    dVector3 g;
    dWorldGetGravity((dWorldID)hs_world_ode_world(hs_bench_world(r->bench)), g);
    return g[2];
}

static void test_injected_scene_changes_and_their_end(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    struct hs_world *w = hs_bench_world(r.bench);
    int rubber = hs_world_material_find(w, "rubber");
    assert_int_equal(rubber, 1);
    /* R_ANKLE_R's link (the foot), for its material */
    const struct hs_bench_joint *ankle =
        hs_bench_joint(r.bench, (uint32_t)hs_bench_find_joint(r.bench, "R_ANKLE_R"));
    /* until(t): run to the end of bench tick t */
#define until(t) ticks(&r, (t)-r.tick)
    until(5);
    assert_int_equal(inject(&r, "{gravity: {vector_m_s2: [0, 0, -3]}, duration_s: 0.01}"), 0);
    until(6); /* taken at tick 6: on for ticks 6..15 */
    assert_true(gravity_z(&r) == -3);
    assert_int_equal(
        inject(&r, "{friction: {material1: default, material2: rubber, mu: 0.2}, after_s: 0.005, "
                   "duration_s: 0.01}"),
        0);
    until(7); /* taken at 7: on for 12..21 */
    assert_int_equal(
        inject(&r, "{material: {link: R_ANKLE_R, material: default}, duration_s: 0.02}"), 0);
    until(8); /* taken at 8: on for 8..27 */
    assert_int_equal(hs_world_link_material(w, ankle->body, ankle->link), 0);
    assert_true(hs_world_pair_friction(w, 0, 1) == 1);
    assert_int_equal(live_steps(&r), 3);
    until(11);
    assert_true(hs_world_pair_friction(w, 0, 1) == 1);
    until(12);
    assert_true(hs_world_pair_friction(w, 1, 0) == 0.2);
    assert_true(hs_world_pair_friction(w, 1, 1) == 1);
    until(15);
    assert_true(gravity_z(&r) == -3);
    until(16);
    assert_true(gravity_z(&r) == 0);
    until(21);
    assert_true(hs_world_pair_friction(w, 1, 0) == 0.2);
    until(22);
    assert_true(hs_world_pair_friction(w, 1, 0) == 1);
    until(27);
    assert_int_equal(hs_world_link_material(w, ankle->body, ankle->link), 0);
    until(28);
    assert_int_equal(hs_world_link_material(w, ankle->body, ankle->link), rubber);
#undef until
    assert_int_equal(live_steps(&r), 0);
    assert_int_equal(hs_scenario_live_reap(hs_ctl_stage_live(r.ctl)), 3);
    rig_close(&r);
}

static void test_live_slots_refuse_when_full(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    const char *forever = "{gravity: {vector_m_s2: [0, 0, -1]}}";
    for (int k = 0; k < HS_SCENARIO_LIVE_SLOTS; k++)
        assert_int_equal(inject(&r, forever), 0);
    assert_int_equal(inject(&r, forever), -ENOSPC);
    /* bad steps never take a slot: the parser's and the binding's errors */
    struct hs_diag d = {0};
    uint32_t slot;
    struct hs_scenario_live *live = hs_ctl_stage_live(r.ctl);
    ticks(&r, HS_SCENARIO_LIVE_SLOTS); /* one starts per tick */
    assert_int_equal(live_steps(&r), HS_SCENARIO_LIVE_SLOTS);
    assert_true(gravity_z(&r) == -1);
    assert_int_equal(send_line(&r, "clear"), 0);
    ticks(&r, 1);
    assert_int_equal(live_steps(&r), 0);
    /* they undid in the reverse order of their starts: the first one's gravity came back */
    assert_true(gravity_z(&r) == 0);
    assert_int_equal(hs_scenario_live_reap(live), HS_SCENARIO_LIVE_SLOTS);
    static const char *const bad[] = {
        "{push: {link: NOPE}}",
        "{at_s: 1, push: {link: WAIST}}",
        "{push: {link: WAIST}, nonsense: 1}",
        "{expect: {kind: link_above, link: WAIST, value: 0}}",
        "{after: x, after_s: 1, push: {link: WAIST}}",
        "{friction: {material1: default, material2: glass, mu: 0.1}}",
        "{friction: {link: WAIST, material1: default, material2: rubber, mu: 0.1}}",
        "{sensor_fault: {kind: delay, joint: R_KNEE, value: 1000}}",
        "[1, 2",
        "",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        memset(&d, 0, sizeof d);
        assert_int_equal(hs_scenario_live_prepare(live, bad[k], strlen(bad[k]), NULL, &slot, &d),
                         -EINVAL);
        char msg[512];
        hs_diag_format(&d, msg, sizeof msg);
        print_message("%s -> %s\n", bad[k], msg);
        assert_non_null(strstr(msg, "live"));
    }
    for (int k = 0; k < HS_SCENARIO_LIVE_SLOTS; k++)
        assert_int_equal(inject(&r, forever), 0);
    rig_close(&r); /* the bench frees the slots still running */
}

static struct hs_scenario *scenario(struct rig *r, const char *yaml)
{
    struct hs_diag d = {0};
    struct hs_scenario_spec *spec = NULL;
    struct hs_scenario *s = NULL;
    if (hs_scenario_parse(yaml, strlen(yaml), "live.yaml", NULL, &spec, &d) < 0 ||
        hs_scenario_compile(spec, r->bench, &s, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    hs_scenario_spec_free(spec);
    return s;
}

static const char *lift =
    "scenario: {name: lift, duration_s: 0.1}\n"
    "steps:\n"
    "  - {at_s: 0.01, duration_s: 0.02, gravity: {vector_m_s2: [0, 0, 5]}}\n"
    "  - {at_s: 0.02, duration_s: 0.01,\n"
    "     friction: {material1: default, material2: rubber, mu: 0.3}}\n"
    "  - {at_s: 0.05, expect: {kind: link_above, link: WAIST, value: -10}}\n"
    "  - {at_s: 0, duration_s: 0.1,\n"
    "     expect: {kind: link_below, link: WAIST, value: 10, hold: always}}\n";

static void test_scenario_started_live(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    ticks(&r, 3);
    struct hs_scenario *s = scenario(&r, lift);
    assert_int_equal(hs_ctl_stage_start_scenario(r.ctl, s), 0);
    assert_int_equal(hs_ctl_stage_start_scenario(r.ctl, s), -EBUSY);
    assert_int_equal(hs_ctl_stage_scenario_state(r.ctl), HS_CTL_SCEN_STARTING);
    bool stopped;
    assert_null(hs_ctl_stage_take_scenario(r.ctl, false, &stopped));
    ticks(&r, 11); /* its ticks 0..10 (the first bench tick took it): the gravity is on */
    assert_int_equal(hs_ctl_stage_scenario_state(r.ctl), HS_CTL_SCEN_RUNNING);
    assert_true(gravity_z(&r) == 5);
    struct hs_world *w = hs_bench_world(r.bench);
    ticks(&r, 9); /* to its tick 19 */
    assert_true(hs_world_pair_friction(w, 0, 1) == 1);
    ticks(&r, 1); /* its tick 20: the friction step of the file */
    assert_true(hs_world_pair_friction(w, 0, 1) == 0.3);
    ticks(&r, 9);
    assert_true(hs_world_pair_friction(w, 0, 1) == 0.3);
    ticks(&r, 1); /* its tick 30: over */
    assert_true(hs_world_pair_friction(w, 0, 1) == 1);
    ticks(&r, 68);
    assert_int_equal(hs_ctl_stage_scenario_state(r.ctl), HS_CTL_SCEN_RUNNING);
    ticks(&r, 1); /* its 100th tick: played to the end, handed back */
    assert_int_equal(hs_ctl_stage_scenario_state(r.ctl), HS_CTL_SCEN_ENDED);
    assert_true(gravity_z(&r) == 0);
    struct hs_scenario *back = hs_ctl_stage_take_scenario(r.ctl, false, &stopped);
    assert_ptr_equal(back, s);
    assert_false(stopped);
    assert_int_equal(hs_scenario_ticks(back), 100);
    hs_scenario_finish(back);
    assert_true(hs_scenario_passed(back));
    hs_scenario_destroy(back);
    assert_int_equal(hs_ctl_stage_scenario_state(r.ctl), HS_CTL_SCEN_IDLE);

    /* again, stopped while its gravity is on: the gravity comes back, the verdict says so */
    s = scenario(&r, lift);
    assert_int_equal(hs_ctl_stage_start_scenario(r.ctl, s), 0);
    ticks(&r, 15);
    assert_true(gravity_z(&r) == 5);
    struct hs_ctl_cmd stop = {.kind = HS_CTL_SCENARIO_STOP};
    assert_int_equal(hs_ctl_stage_push(r.ctl, &stop), 0);
    ticks(&r, 1);
    assert_true(gravity_z(&r) == 0);
    back = hs_ctl_stage_take_scenario(r.ctl, false, &stopped);
    assert_ptr_equal(back, s);
    assert_true(stopped);
    hs_scenario_finish(back);
    assert_false(hs_scenario_passed(back));
    struct hs_scenario_result res;
    hs_scenario_result(back, 1, &res);
    print_message("%s: %s\n", res.what, res.why);
    assert_int_equal(res.status, HS_SCENARIO_ERROR); /* stopped early: not decided */
    assert_non_null(strstr(res.why, "not decided: stopped early"));
    assert_non_null(hs_scenario_error(back, NULL));
    hs_scenario_destroy(back);

    /* one still running when the bench goes: the bench frees it */
    assert_int_equal(hs_ctl_stage_start_scenario(r.ctl, scenario(&r, lift)), 0);
    ticks(&r, 5);
    rig_close(&r);
}

/* `state --json` while a scenario started live runs: its rows are copied at the same boundary
 * as the plant, so every read is consistent with the scenario tick it shows (an expectation is
 * pending before its tick, decided at it after), and over the run each expectation is seen
 * pending and then decided; once handed back the tick's last copy shows it ended, and the
 * verdict decided on the reader's thread (the "always" window closes there) replaces it. */
static const char *timeline =
    "scenario: {name: timeline, duration_s: 0.5}\n"
    "steps:\n"
    "  - {name: lift, at_s: 0.05, duration_s: 0.02, gravity: {vector_m_s2: [0, 0, 5]}}\n"
    "  - {name: too_high, at_s: 0.2, expect: {kind: link_above, link: WAIST, value: 10}}\n"
    "  - {name: above, at_s: 0.35, expect: {kind: link_above, link: WAIST, value: -10}}\n"
    "  - {name: below, at_s: 0, duration_s: 0.5,\n"
    "     expect: {kind: link_below, link: WAIST, value: 10, hold: always}}\n";

/* One `state --json` from another thread; this one ticks (one tick per millisecond of wall
 * time, so a reader that is slow to ask sees a later tick, never a wrong one) until the copy is
 * made. */
static void read_json(struct rig *r, struct state_reader *sr)
{
    memset(sr, 0, sizeof *sr);
    sr->ctl = r->ctl;
    sr->json = true;
    struct hs_ctl_counters c0, c;
    hs_ctl_stage_counters(r->ctl, &c0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_state, sr), 0);
    for (uint64_t first = r->tick; r->tick < first + 100000;) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        hs_ctl_stage_counters(r->ctl, &c);
        if (c.state_copies != c0.state_copies)
            break;
        ticks(r, 1);
    }
    pthread_join(t, NULL);
    assert_true(sr->n > 0);
}

/* The expectation's status in the JSON and its tick; NULL when it is not there. */
static const char *expect_status(const char *json, const char *name, long long *ret_tick)
{
    char key[128];
    snprintf(key, sizeof key, "{\"name\":\"%s\",\"line\":", name);
    const char *at = strstr(json, key);
    if (!at)
        return NULL;
    const char *st = strstr(at, "\"status\":\"");
    assert_non_null(st);
    st += strlen("\"status\":\"");
    assert_int_equal(sscanf(strstr(at, "\"tick\":"), "\"tick\":%lld", ret_tick), 1);
    return !strncmp(st, "pending", 7) ? "pending"
           : !strncmp(st, "pass", 4)  ? "pass"
           : !strncmp(st, "fail", 4)  ? "fail"
                                      : "error";
}

static void test_state_shows_the_scenario(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    ticks(&r, 3);
    static struct state_reader sr;
    read_json(&r, &sr);
    assert_non_null(strstr(sr.buf, "]}],\"scenario\":null,")); /* none ran yet */
    struct hs_scenario *s = scenario(&r, timeline);
    assert_int_equal(hs_ctl_stage_start_scenario(r.ctl, s), 0);
    /* expectation, its status and tick once decided, the scenario tick that decides it (a
     * "within" window of one tick closes at the next: too_high fails in its tick 201, at 200),
     * and how often it was seen pending and decided */
    struct {
        const char *name, *decided;
        long long at, decided_in;
        int pending, decided_seen;
    } ex[] = {{"too_high", "fail", 200, 201, 0, 0}, {"above", "pass", 350, 350, 0, 0}};
    bool stopped;
    struct hs_scenario *back = NULL;
    int reads = 0;
    while (!(back = hs_ctl_stage_take_scenario(r.ctl, false, &stopped))) {
        read_json(&r, &sr);
        reads++;
        unsigned long long played = 0;
        const char *sc = strstr(sr.buf, ",\"scenario\":{\"name\":\"timeline\",\"state\":\"");
        if (!sc) { /* the first tick has not taken it yet */
            assert_non_null(strstr(sr.buf, ",\"scenario\":null,"));
            continue;
        }
        bool running = !strncmp(sc + strlen(",\"scenario\":{\"name\":\"timeline\",\"state\":\""),
                                "running", 7);
        assert_int_equal(sscanf(strstr(sc, "\"ticks\":"), "\"ticks\":%llu", &played), 1);
        assert_true(running ? played < 500 : played == 500);
        assert_non_null(strstr(sc, "\"duration_s\":0.5,\"verdict\":null,\"steps\":[{\"name\":"
                                   "\"lift\",\"kind\":\"gravity\",\"onset_tick\":"));
        for (size_t k = 0; k < 2; k++) {
            long long tk;
            const char *st = expect_status(sc, ex[k].name, &tk);
            assert_non_null(st);
            /* the copy's scenario tick decides what it may show: nothing from later */
            if ((long long)played <= ex[k].decided_in) {
                assert_string_equal(st, "pending");
                assert_int_equal(tk, -1);
                ex[k].pending++;
            } else {
                assert_string_equal(st, ex[k].decided);
                assert_int_equal(tk, ex[k].at);
                ex[k].decided_seen++;
            }
        }
        long long tk;
        assert_string_equal(expect_status(sc, "below", &tk), "pending"); /* "always": at the end */
        if (!running)
            print_message("handed back at its tick %llu after %d reads\n", played, reads);
    }
    for (size_t k = 0; k < 2; k++) {
        print_message("%s: seen pending %d times, %s %d times\n", ex[k].name, ex[k].pending,
                      ex[k].decided, ex[k].decided_seen);
        assert_true(ex[k].pending > 0 && ex[k].decided_seen > 0);
    }
    /* the reader's thread decides it: from then on the verdict shows, "always" closed */
    hs_scenario_finish(back);
    assert_false(hs_scenario_passed(back));
    hs_ctl_stage_scenario_decided(r.ctl, back, "FAIL");
    hs_scenario_destroy(back); /* the rows are copies: nothing of it is read after this */
    read_json(&r, &sr);
    const char *sc = strstr(sr.buf, ",\"scenario\":{\"name\":\"timeline\",\"state\":\"ended\","
                                    "\"ticks\":500,\"duration_s\":0.5,\"verdict\":\"FAIL\"");
    assert_non_null(sc);
    long long tk;
    assert_string_equal(expect_status(sc, "below", &tk), "pass");
    assert_string_equal(expect_status(sc, "too_high", &tk), "fail");
    const char *row = strstr(sc, "{\"name\":\"too_high\",\"line\":4,\"status\":\"fail\","
                                 "\"tick\":200,\"value\":");
    assert_non_null(row);
    /* the WAIST's height at that tick: 0.74 m, lifted at 5 m/s2 for 20 ms (0.001 m, then
     * 0.1 m/s) and drifting for the 130 ms to tick 200 (0.013 m): 0.754 m, within a tick */
    double z = 0;
    assert_int_equal(sscanf(strstr(row, "\"value\":") + strlen("\"value\":"), "%lf", &z), 1);
    print_message("too_high's value: %.6f m\n", z);
    assert_true(fabs(z - 0.754) < 0.0015);

    /* the text form says the same */
    static struct state_reader tx;
    memset(&tx, 0, sizeof tx);
    tx.ctl = r.ctl;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_state, &tx), 0);
    while (!atomic_load(&tx.done)) {
        ticks(&r, 1);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    pthread_join(t, NULL);
    assert_non_null(strstr(tx.buf, "\nscenario timeline: ended, tick 500 of 0.5000 s, verdict "
                                   "FAIL\n  step   lift "));
    assert_non_null(
        strstr(tx.buf, "\n  expect above                    line 5    pass    tick 350"));
    rig_close(&r);
}

/* The arm with an MIT shoulder node on a socketpair bus (the boards' end is *ret_peer); the
 * control stage attaches after the CAN module, as in hilsim run. */
static void open_can(struct rig *r, int *ret_peer)
{
    static const char *yaml = "bench: {name: ctl-can}\n"
                              "models:\n"
                              "  - name: arm\n"
                              "    file: arm2.wrl\n"
                              "    initial: {joints: {SHOULDER: {q: 0.3}, ELBOW: {q: 0.6}}}\n"
                              "rt: {period_ns: 1000000}\n"
                              "can:\n"
                              "  buses: [{name: main, interface: vcan0}]\n"
                              "  nodes:\n"
                              "    - {name: shoulder, bus: main, protocol: mit, id: 1, "
                              "joint: SHOULDER, mit: {reply_id: 0}}\n";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    struct hs_diag d = {0};
    memset(r, 0, sizeof *r);
    if (hs_config_load_buffer(yaml, strlen(yaml), "can.yaml", dir, &r->cfg, &d) < 0 ||
        hs_bench_create(r->cfg, &r->bench, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    *ret_peer = can_boards_attach_module(r->bench, &r->can);
    assert_int_equal(hs_ctl_stage_create(r->bench, &r->ctl), 0);
    assert_int_equal(hs_ctl_stage_attach(r->ctl, r->bench), 0);
    hs_ctl_stage_set_can(r->ctl, r->can); /* as the service's ctl module does */
    hs_ctl_bench_names(r->bench, &r->names);
    hs_bench_sensors(r->bench, 0, 0);
}

/* One tick with the boards' command sent before it; returns the node's replies to it. */
static int can_tick(struct rig *r, int peer)
{
    can_boards_mit_command(peer, r->tick == 0);
    ticks(r, 1);
    return can_boards_mit_replies(peer);
}

static void test_injected_can_node_silent(void **state)
{
    (void)state;
    struct rig r;
    int peer;
    open_can(&r, &peer);
    for (int k = 0; k < 50; k++)
        assert_int_equal(can_tick(&r, peer), 1); /* one reply per command */
    /* bound while the bus runs: its rules join the filter the live set put on the bus */
    assert_int_equal(inject(&r, "{can_fault: {node: shoulder, kind: silent}, duration_s: 0.1}"), 0);
    int answered[200];
    for (int k = 0; k < 200; k++)
        answered[k] = can_tick(&r, peer);
    /* taken at tick 51 (index 0 here): replies of ticks 51..150 are lost, commands of 52..151 */
    int silent = 0, after = 0;
    for (int k = 0; k < 200; k++) {
        if (k < 100)
            silent += answered[k] == 0;
        else if (k > 100)
            after += answered[k] == 1;
    }
    print_message("silent %d of 100 ticks, answered %d of 99 after\n", silent, after);
    assert_int_equal(silent, 100);
    assert_int_equal(after, 99);
    assert_int_equal(live_steps(&r), 0);
    /* a delay on the filter live control owns: its clock moves with the ticks */
    assert_int_equal(
        inject(&r, "{can_fault: {node: shoulder, kind: delay, delay_s: 0.005, direction: tx}, "
                   "duration_s: 0.05}"),
        0);
    int late[100], held = 0, total = 0;
    for (int k = 0; k < 100; k++)
        total += late[k] = can_tick(&r, peer);
    for (int k = 0; k < 5; k++)
        held += late[k] == 0;
    print_message("delay: %d of the first 5 ticks without a reply, %d replies in 100 ticks\n", held,
                  total);
    assert_int_equal(held, 5);    /* the first replies come 5 ticks late */
    assert_int_equal(total, 100); /* none lost: the held ones come out after the step too */
    close(peer);
    rig_close(&r);
}

/* One controller error frame from the boards' end of the socketpair bus (as a CAN
 * controller's driver would deliver it), then one tick to read it. */
static void error_frame(struct rig *r, int peer, canid_t cls, uint8_t ctrl)
{
    struct can_frame e = {.can_id = CAN_ERR_FLAG | cls, .len = CAN_ERR_DLC};
    e.data[1] = ctrl;
    assert_int_equal(send(peer, &e, sizeof e, 0), (ssize_t)sizeof e);
    can_tick(r, peer);
}

/* The CAN buses in `status` (hs_ctl_can_text, the text the status line ends with) and in
 * `state --json`, on the CAN test double (a socketpair bus): the bus's config name, the state
 * the controller's error frames drove it to as of the last tick, and the kernel's drops. */
static void test_can_buses_in_status_and_state(void **state)
{
    (void)state;
    struct rig r;
    int peer;
    open_can(&r, &peer);
    char text[256];
    for (int k = 0; k < 5; k++)
        can_tick(&r, peer);
    const char *active = "can main (vcan0) error-active drops 0";
    assert_int_equal(hs_ctl_can_text(r.can, text, sizeof text), (int)strlen(active));
    assert_string_equal(text, active);
    error_frame(&r, peer, CAN_ERR_CRTL, CAN_ERR_CRTL_TX_PASSIVE);
    hs_ctl_can_text(r.can, text, sizeof text);
    assert_string_equal(text, "can main (vcan0) error-passive drops 0");
    static struct state_reader sr;
    read_json(&r, &sr);
    assert_non_null(strstr(sr.buf, ",\"can\":[{\"name\":\"main\",\"interface\":\"vcan0\","
                                   "\"state\":\"error-passive\",\"drops\":0}],"
                                   "\"phases_us\":null}\n")); /* no tick loop here: no phases */
    error_frame(&r, peer, CAN_ERR_BUSOFF, 0);
    hs_ctl_can_text(r.can, text, sizeof text);
    assert_string_equal(text, "can main (vcan0) bus-off drops 0");
    read_json(&r, &sr);
    assert_non_null(strstr(sr.buf, "\"state\":\"bus-off\""));
    error_frame(&r, peer, CAN_ERR_RESTARTED, 0);
    hs_ctl_can_text(r.can, text, sizeof text);
    assert_string_equal(text, active);
    /* a bench without CAN says so; a buffer too small is cut, terminated, and says so */
    assert_int_equal(hs_ctl_can_text(NULL, text, sizeof text), 8);
    assert_string_equal(text, "can none");
    json_t *none = hs_ctl_can_json(NULL);
    assert_true(json_is_array(none) && json_array_size(none) == 0);
    json_decref(none);
    char small[12];
    assert_int_equal(hs_ctl_can_text(r.can, small, sizeof small), -ENOSPC);
    assert_string_equal(small, "can");
    close(peer);
    rig_close(&r);
}

/* The contacts in `state --json`: the biped of config/biped-stand.yaml standing on the floor
 * under its PD hold carries its weight on its feet, so the vertical components of the contact
 * forces the copy lists sum to m g (within 1 %), every point lies under a foot at the floor
 * (z within the contact's sinkage, 1 mm) with the normal up, and each names the floor. */
static double json_num(const char **at, const char *key)
{
    const char *k = strstr(*at, key);
    assert_non_null(k);
    char *end;
    double v = strtod(k + strlen(key), &end);
    *at = end;
    return v;
}

static void test_contact_forces_carry_the_weight(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/config/biped-stand.yaml", getenv("HS_SOURCE_DIR"));
    struct rig r;
    memset(&r, 0, sizeof r);
    struct hs_diag d = {0};
    if (hs_config_load(path, &r.cfg, &d) < 0 || hs_bench_create(r.cfg, &r.bench, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    assert_int_equal(hs_ctl_stage_create(r.bench, &r.ctl), 0);
    assert_int_equal(hs_ctl_stage_attach(r.ctl, r.bench), 0);
    hs_bench_sensors(r.bench, 0, 0);
    ticks(&r, 2000); /* 2 s: the PD hold has settled the drop onto the floor */
    const struct hs_model *m = hs_bench_model(r.bench, 0);
    double mass = 0;
    for (uint32_t i = 0; i < m->nlinks; i++)
        mass += m->links[i].mass;
    const double *g = hs_world_params(hs_bench_world(r.bench))->gravity;
    double weight = mass * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    static struct state_reader sr;
    for (int read = 0; read < 2; read++) {
        read_json(&r, &sr);
        const char *at = strstr(sr.buf, ",\"contacts\":{\"made\":");
        assert_non_null(at);
        const char *end = strstr(at, "]},\"solver\":{");
        assert_non_null(end);
        int made = (int)json_num(&at, "\"made\":");
        int dropped = (int)json_num(&at, "\"dropped\":");
        assert_int_equal(dropped, 0);
        double fz = 0, fx = 0, fy = 0;
        int points = 0;
        for (const char *p = at; (p = strstr(p, "{\"link\":\"")) && p < end; points++) {
            const char *q = p + strlen("{\"link\":\"");
            assert_true(!strncmp(q, "biped/", 6));
            const char *other = "\"other\":\"floor/";
            assert_true(!strncmp(strstr(q, "\"other\":\""), other, strlen(other)));
            json_num(&q, "\"position_m\":[");
            json_num(&q, ",");
            double pz = json_num(&q, ",");
            json_num(&q, "\"normal\":[");
            json_num(&q, ",");
            double nz = json_num(&q, ",");
            fx += json_num(&q, "\"force_n\":[");
            fy += json_num(&q, ",");
            fz += json_num(&q, ",");
            assert_true(fabs(pz) < 0.001);
            assert_true(nz > 0.999);
            p = q;
        }
        assert_int_equal(points, made);
        print_message("%d contacts: sum of forces %.3f %.3f %.3f N, weight %.3f N (%.3f kg): "
                      "%+.3f %%\n",
                      points, fx, fy, fz, weight, mass, 100 * (fz - weight) / weight);
        assert_true(points >= 4); /* both soles flat: two corners each at least */
        assert_true(fabs(fz - weight) < 0.01 * weight);
        assert_true(fabs(fx) < 0.01 * weight && fabs(fy) < 0.01 * weight);
        ticks(&r, 500);
    }
    rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_changes_momentum_by_f_t),
        cmocka_unit_test(test_queue_bounds_and_clear),
        cmocka_unit_test(test_injected_push_is_the_scenario_push),
        cmocka_unit_test(test_injected_scene_changes_and_their_end),
        cmocka_unit_test(test_live_slots_refuse_when_full),
        cmocka_unit_test(test_scenario_started_live),
        cmocka_unit_test(test_injected_can_node_silent),
        cmocka_unit_test(test_state_at_a_tick_boundary),
        cmocka_unit_test(test_state_shows_the_scenario),
        cmocka_unit_test(test_can_buses_in_status_and_state),
        cmocka_unit_test(test_contact_forces_carry_the_weight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
