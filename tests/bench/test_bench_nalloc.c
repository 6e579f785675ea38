/* After warm-up the real tick makes no heap allocation, no stdio call and takes no page fault:
 * 10,000 ticks of the RT loop driving the whole bench (SR1 standing on the floor with contacts,
 * PD hold, motor models, encoders, the waist IMU and both ankle F/T sensors with noise and
 * delay lines, two `state` copies with its contact points and the loop's phase window), and the
 * bundled arm with both I/O modules in the tick (CAN nodes on a socketpair
 * bus, commanded every tick, and the shared-memory segment). Heap and stdio calls are counted by
 * interposition on the loop's thread (tests/common/call_counter.c), page faults by
 * getrusage(RUSAGE_THREAD). The divergence guard checks every body and joint after every step
 * inside these windows (with SR1, its floor check too); more runs trip it inside the window (a
 * runaway torque, an ODE internal assertion caught in the step, a robot under the floor) and
 * show the fault path allocation-free too, and one drives a joint into its speed limit. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <cmocka.h>

#include <linux/can.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hilsim/io_can.h"
#include "hilsim/io_shm.h"
#include "common/call_counter.h"
#include "hilsim/bench.h"
#include "hilsim/can_mit.h"
#include "hilsim/client.h"
#include "hilsim/record.h"
#include "hilsim/shm_abi.h"
#include "hilsim/ctl.h"
#include "hilsim/scenario.h"
#include "hilsim/scenario_live.h"
#include "hilsim/rt/clock_discipline.h"
#include "hilsim/rt/tick_loop.h"

#include <ode/ode.h>

enum { WARMUP = 200, MEASURED = 10000 };

struct probe {
    struct hs_bench *bench;
    struct rusage before, after;
    uint64_t contacts_min, contacts_max;
    int peer_fd; /* the boards' end of the CAN socketpair, -1 without CAN */
    uint64_t replies;
    uint64_t trip_at; /* 0, or the tick sequence number at which fault() breaks the world */
    void (*fault)(struct probe *p);
    int physics_rc;
    struct hs_client *client; /* recording run: commands the ELBOW over shm */
    uint64_t commands;
    struct hs_client *stepper; /* lockstep: the controller stepping every tick, or NULL */
    struct hs_ctl_stage *ctl;  /* scenario run: live control commands inside the window */
    uint32_t live_slots[HS_SCENARIO_LIVE_SLOTS]; /* steps bound before the window, started in it */
    uint32_t nlive;
    struct hs_scenario *live_scen;    /* a scenario file started and stopped live in the window */
    struct hs_clock_discipline *disc; /* sync: the boards send a SYNC before every command */
    bool can_lockstep;                /* lockstep released by the boards' commands (can_commands) */
    bool moteus;                      /* the board is moteus servo 1 on CAN FD (board_io_moteus) */
};

/* Live control commands, queued from the tick thread itself inside the counted window (the
 * queue's producer side allocates nothing either): the first batch, a clear, every step bound
 * before the window (the short commands' steps and injected ones, as the socket thread binds
 * them) and a scenario file; the second batch, a clear that ends the steps and a stop that ends
 * the scenario; with each, a `state` request, so the tick copies the plant and the running
 * scenario's rows, then those kept from its last tick, in the window. Every per-tick path of the
 * control stage runs in between. */
static void ctl_io(struct probe *p, uint64_t seq)
{
    if (!p->ctl || (seq != WARMUP + 100 && seq != WARMUP + 5000))
        return;
    struct hs_ctl_cmd clear = {.kind = HS_CTL_CLEAR};
    hs_ctl_stage_push(p->ctl, &clear);
    if (seq == WARMUP + 100) {
        for (uint32_t i = 0; i < p->nlive; i++) {
            struct hs_ctl_cmd c = {.kind = HS_CTL_INJECT, .slot = p->live_slots[i]};
            hs_ctl_stage_push(p->ctl, &c);
        }
        if (p->live_scen)
            hs_ctl_stage_start_scenario(p->ctl, p->live_scen);
        char none[1];
        /* no wait: the request stays, and the next tick boundary answers it */
        assert_int_equal(hs_ctl_stage_state(p->ctl, 0, false, none, sizeof none, NULL), -ETIMEDOUT);
    } else {
        struct hs_ctl_cmd c = {.kind = HS_CTL_SCENARIO_STOP};
        hs_ctl_stage_push(p->ctl, &c);
        char none[1]; /* copied at the stop's tick: the scenario's rows as it is handed back */
        assert_int_equal(hs_ctl_stage_state(p->ctl, 0, false, none, sizeof none, NULL), -ETIMEDOUT);
    }
}

/* The loop counters' seqlock written every tick: here from the probe's own counters. */
static void loop_fill(void *ctx, struct hs_ctl_loop *ret)
{
    const struct probe *p = ctx;
    *ret = (struct hs_ctl_loop){.ticks = p->replies, .last_tick = p->commands, .running = true};
}

/* A moteus host, one CAN FD frame per tick in turn: velocity control with the position unset
 * and a query, a limited move waited on through 0x00b, a diagnostic-stream line (conf get, tel
 * get: the text protocol and its binary answers) and a poll that reads the answer back. */
static void board_io_moteus(struct probe *p, uint64_t seq)
{
    struct canfd_frame f = {.can_id = 0x8001 | CAN_EFF_FLAG, .flags = CANFD_BRS};
    static const char *const lines[] = {"conf get servo.pid_position.kp\n", "tel get firmware\n",
                                        "conf enumerate\n", "conf set servo.pid_position.kd 2\n"};
    float v[2];
    switch (seq % 4) {
    case 0: /* mode 10, position nan, velocity 0.01 rev/s (floats), query 0x001..0x003 */
        v[0] = NAN, v[1] = 0.01f;
        memcpy(f.data, (const uint8_t[]){0x01, 0x00, 0x0a, 0x0e, 0x20}, 5);
        memcpy(f.data + 5, v, 8);
        memcpy(f.data + 13, (const uint8_t[]){0x1f, 0x01, 0x50}, 3);
        f.len = 16;
        break;
    case 1: /* position 0.05 rev limited to 0.1 rev/s and 1 rev/s², query 0x00b */
        v[0] = 0.1f, v[1] = 1.0f;
        memcpy(f.data,
               (const uint8_t[]){0x01, 0x00, 0x0a, 0x0d, 0x20, 0xcd, 0xcc, 0x4c, 0x3d, 0x0e, 0x28},
               11);
        memcpy(f.data + 11, v, 8);
        memcpy(f.data + 19, (const uint8_t[]){0x11, 0x0b, 0x50, 0x50, 0x50}, 5);
        f.len = 24;
        break;
    case 2: { /* a line on the diagnostic stream, no reply asked for */
        const char *l = lines[seq / 4 % 4];
        size_t n = strlen(l);
        f.can_id = 0x0001 | CAN_EFF_FLAG;
        f.data[0] = 0x40, f.data[1] = 1, f.data[2] = (uint8_t)n;
        memcpy(f.data + 3, l, n);
        f.len = 48;
        memset(f.data + 3 + n, 0x50, f.len - 3 - n);
        break;
    }
    default: /* poll the stream */
        memcpy(f.data, (const uint8_t[]){0x42, 0x01, 0x30}, 3);
        f.len = 3;
        break;
    }
    send(p->peer_fd, &f, sizeof f, MSG_DONTWAIT);
    struct canfd_frame r;
    while (recv(p->peer_fd, &r, sizeof r, MSG_DONTWAIT) > 0)
        p->replies++;
}

/* The "boards": one MIT command per tick and every frame read back so no queue fills. Runs in
 * the counted window on purpose: send()/recv() are not interposed, so only hilsim's own calls
 * count. */
static void board_io(struct probe *p, uint64_t seq)
{
    if (p->peer_fd < 0)
        return;
    if (p->moteus) {
        board_io_moteus(p, seq);
        return;
    }
    if (p->disc) {
        struct can_frame sync = {.can_id = 0x080, .len = 0};
        send(p->peer_fd, &sync, sizeof sync, MSG_DONTWAIT);
    }
    struct can_frame f = {.can_id = 1, .len = 8};
    if (seq == 0) {
        hs_mit_pack_special(HS_MIT_ENTER, f.data);
    } else {
        struct hs_mit_limits lim = {-12.5, 12.5, -50, 50, 0, 500, 0, 5, -18, 18};
        struct hs_mit_command c = {.p_rad = 0.3 + 0.1 * sin((double)seq * 1e-3), .kp = 40, .kd = 1};
        hs_mit_pack_command(&lim, &c, f.data);
    }
    send(p->peer_fd, &f, sizeof f, MSG_DONTWAIT);
    if (p->client && seq % 4 == 0) {
        uint32_t elbow = 1; /* the arm's second joint; the client's index equals the bench's */
        struct hs_client_command c = {
            .mode = HS_SHM_MODE_POSITION_PD, .q = 0.2 * sin((double)seq * 1e-3), .kp = 20, .kd = 1};
        if (hs_client_write_command(p->client, elbow, &c) == 0)
            p->commands++;
        hs_client_heartbeat(p->client);
    }
    struct canfd_frame r;
    while (recv(p->peer_fd, &r, sizeof r, MSG_DONTWAIT) > 0)
        p->replies++;
}

static int inputs(void *ctx, const struct hs_tick_info *t)
{
    struct probe *p = ctx;
    if (t->seq == WARMUP) {
        getrusage(RUSAGE_THREAD, &p->before);
        counting = 1;
    } else if (t->seq == WARMUP + MEASURED) {
        counting = 0;
        getrusage(RUSAGE_THREAD, &p->after);
    }
    board_io(p, t->seq);
    ctl_io(p, t->seq);
    hs_bench_set_planned(p->bench, t->planned_ns);
    return hs_bench_inputs(p->bench, t->wake_ns);
}

static int actuation(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_actuation(((struct probe *)ctx)->bench, t->wake_ns);
}

static int physics(void *ctx, const struct hs_tick_info *t)
{
    struct probe *p = ctx;
    if (p->trip_at && t->seq == p->trip_at)
        p->fault(p);
    int r = hs_bench_physics(p->bench, t->wake_ns, t->tick);
    if (r < 0)
        p->physics_rc = r;
    uint32_t c = hs_world_contact_count(hs_bench_world(p->bench));
    if (t->seq >= WARMUP && c < p->contacts_min)
        p->contacts_min = c;
    if (t->seq >= WARMUP && c > p->contacts_max)
        p->contacts_max = c;
    return r;
}

static int sensors(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_sensors(((struct probe *)ctx)->bench, t->wake_ns, t->tick);
}

static int outputs(void *ctx, const struct hs_tick_info *t)
{
    struct probe *p = ctx;
    int r = hs_bench_outputs(p->bench, t->now_ns, t->tick);
    /* Lockstep: the controller answers the tick just published (a poll: it has come). */
    if (p->stepper && hs_client_wait_tick(p->stepper, 0, NULL, NULL) == 0)
        hs_client_step(p->stepper);
    return r;
}

/* sync: what the service's sync clock does after every tick (src/service/sync_clock.c). */
static int64_t discipline(void *ctx, const struct hs_tick_info *t)
{
    struct probe *p = ctx;
    int64_t ev[HS_BENCH_SYNC_EVENTS_MAX];
    uint32_t n = hs_bench_sync_take(p->bench, ev, HS_BENCH_SYNC_EVENTS_MAX);
    for (uint32_t i = 0; i < n && i < HS_BENCH_SYNC_EVENTS_MAX; i++)
        hs_clock_discipline_event(p->disc, ev[i], t->planned_ns);
    return hs_clock_discipline_adjust(p->disc, NULL);
}

static int gate(void *ctx, uint64_t tick, int64_t deadline_ns)
{
    (void)tick;
    return hs_bench_wait_release(((struct probe *)ctx)->bench, deadline_ns);
}

/* The bench of a config text (model files under dir) into p->bench, failing the test with the
 * file, line and column on error; returns the config, to free after the bench. */
static const struct hs_config *open_bench(struct probe *p, const char *yaml, const char *name,
                                          const char *dir)
{
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, strlen(yaml), name, dir, &cfg, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    if (hs_bench_create(cfg, &p->bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    return cfg;
}

/* A scenario text compiled for bench and attached to it (the bench owns it). */
static struct hs_scenario *open_scenario(struct hs_bench *bench, const char *text)
{
    struct hs_scenario_spec *spec = NULL;
    struct hs_scenario *s = NULL;
    struct hs_diag d = {0};
    if (hs_scenario_parse(text, strlen(text), "scen", NULL, &spec, &d) < 0 ||
        hs_scenario_compile(spec, bench, &s, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    hs_scenario_spec_free(spec);
    assert_int_equal(hs_scenario_attach(s, bench), 0);
    return s;
}

static void take_phases(void *ctx, struct hs_tick_window *ret)
{
    hs_tick_loop_take_window(ctx, ret);
}

/* Runs WARMUP + MEASURED ticks of p->bench in the real loop and checks the counted window. */
static void run_and_check(struct probe *p, const char *what, uint64_t min_contacts)
{
    struct hs_diag d = {0};
    struct hs_tick_config tc = {
        .period_ns = 250000, .policy = HS_OVERRUN_SKIP, .max_ticks = WARMUP + MEASURED + 1};
    struct hs_rt_opts rt = HS_RT_OPTS_DEFAULT;
    rt.priority = 0; /* faults and heap calls do not depend on the scheduling class */
    rt.hold_dma_latency = false;
    struct hs_tick_ops ops = {inputs, actuation, physics, sensors, outputs, NULL};
    if (p->stepper || p->can_lockstep)
        tc.clock = (struct hs_tick_clock){.mode = HS_CLOCK_LOCKSTEP,
                                          .lockstep_timeout_ns = 10000 * 1000000LL,
                                          .on_timeout = HS_LOCKSTEP_STOP};
    if (p->disc)
        tc.clock = (struct hs_tick_clock){.mode = HS_CLOCK_SYNC};
    struct hs_tick_loop *loop = NULL;
    assert_int_equal(hs_tick_loop_create(&tc, &rt, &ops, p, &loop, &d), 0);
    hs_tick_loop_set_gate(loop, &(struct hs_tick_gate){.wait = gate, .ctx = p});
    hs_tick_loop_set_discipline(loop, &(struct hs_tick_discipline){.adjust = discipline, .ctx = p});
    /* as the service's ctl module does: a state copy takes the loop's phase window too */
    if (p->ctl)
        hs_ctl_stage_set_phase_source(p->ctl, take_phases, loop);
    struct hs_rt_process proc = {.dma_fd = -1};
    struct hs_rt_report rep;
    hs_rt_setup_process(&rt, &proc, &rep);
    heap_calls = stdio_calls = 0;
    assert_int_equal(hs_tick_loop_run(loop), 0);
    long minflt = p->after.ru_minflt - p->before.ru_minflt;
    long majflt = p->after.ru_majflt - p->before.ru_majflt;
    print_message("%d ticks of %s: %ld heap calls, %ld stdio calls, %ld minor / %ld major "
                  "faults (mlockall %s); contacts %llu to %llu\n",
                  MEASURED, what, heap_calls, stdio_calls, minflt, majflt,
                  hs_rt_grant_name(rep.mlockall.state), (unsigned long long)p->contacts_min,
                  (unsigned long long)p->contacts_max);
    /* The contact path ran every tick where the robot stands on the floor. */
    assert_true(p->contacts_min >= min_contacts);
    assert_int_equal(heap_calls, 0);
    assert_int_equal(stdio_calls, 0);
    assert_int_equal(majflt, 0);
    assert_int_equal(minflt, 0);
    hs_tick_loop_destroy(loop);
    hs_rt_process_release(&proc);
}

/* The folder of the workplace's OpenHRP models, or NULL when they are absent (then skip). */
static const char *shared_models(void)
{
    static char dir[4096], sr1[4200];
    const char *s = getenv("HS_SHARED_DIR");
    if (!s)
        return NULL;
    snprintf(dir, sizeof dir, "%s/models/openhrp", s);
    snprintf(sr1, sizeof sr1, "%s/SR1.wrl", dir);
    FILE *f = fopen(sr1, "r");
    if (!f)
        return NULL;
    fclose(f);
    return dir;
}

static void test_sr1_bench_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    const char *dir = shared_models();
    if (!dir)
        skip();
    /* 250 us ticks keep the test short; the physics step follows the period. SR1 starts 5 mm
     * above the floor: at this step the default contact damping (chosen at 1 ms, where the
     * implicit step adds its own) lets it bounce once on landing, inside the counted window. */
    static const char yaml[] =
        "bench: {name: nalloc}\n"
        "models:\n"
        "  - {name: sr1, file: SR1.wrl}\n"
        "  - {name: floor, file: floor.wrl, static: true}\n"
        "physics: {step_s: 0.00025, substeps: 1, contact_damping_n_s_m: 3e4}\n"
        "rt: {period_ns: 250000}\n"
        "controller: {type: pd_hold, bandwidth_rad_s: 30}\n"
        "actuators: {defaults: {command_timeout_s: 0.01, command_delay_ticks: 2}}\n"
        "sensors:\n"
        "  encoders: {defaults: {counter_bits: 24, velocity_window_ticks: 8, delay_ticks: 1}}\n"
        "  imu:\n"
        "    waist: {accel: WaistAccelSensor, gyro: WaistGyro, rate_hz: 2000,\n"
        "            noise_density: {accel: 0.002, gyro: 0.0002}, delay_ticks: 2}\n"
        "  force:\n"
        "    LeftAnkleForceSensor: {force_noise_n: 0.2, delay_ticks: 1}\n"
        "    RightAnkleForceSensor: {force_noise_n: 0.2, delay_ticks: 1}\n";
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "nalloc.yaml", dir);
    /* live control with two `state` requests inside the window (ctl_io): each copy takes SR1's
     * contact points with their forces (4 or more every tick there) and the loop's phase window */
    assert_int_equal(hs_ctl_stage_create(p.bench, &p.ctl), 0);
    assert_int_equal(hs_ctl_stage_attach(p.ctl, p.bench), 0);
    hs_ctl_stage_set_loop_source(p.ctl, loop_fill, &p);
    run_and_check(&p, "SR1 on the floor", 4);
    struct hs_ctl_counters cc;
    hs_ctl_stage_counters(p.ctl, &cc);
    assert_int_equal(cc.state_copies, 2);
    struct hs_pose waist;
    hs_world_link_pose(hs_bench_world(p.bench), 0, 0, &waist);
    assert_true(waist.p[2] > 0.6); /* SR1 really stood on the floor the whole time */
    hs_bench_destroy(p.bench);
    hs_config_free(cfg);
}

/* Range sensors (tests/sensors/range_mast.wrl: six, one scanning five rays over 40 ticks)
 * cast their rays against the scene every tick, scenario sensor faults edit the scans, and the
 * shm module publishes every sensor's values in the readings section: none may allocate or
 * print. */
static void test_range_sensors_tick_without_alloc_or_stdio(void **state)
{
    (void)state;
    char yaml[1024], dir[4096];
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-range-%d}\n"
             "models:\n"
             "  - {name: mast, file: range_mast.wrl}\n"
             "  - {name: scene, file: range_scene.wrl, static: true}\n"
             "rt: {period_ns: 250000}\n"
             "controller: {type: pd_hold, defaults: {kp: 10, kd: 1}}\n"
             "shm: {enabled: true}\n",
             (int)getpid());
    const char *src = getenv("HS_SOURCE_DIR");
    snprintf(dir, sizeof dir, "%s/tests/sensors", src ? src : ".");
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "range.yaml", dir);
    struct hs_diag d = {0};
    struct hs_bench_shm *shm;
    if (hs_bench_shm_attach(p.bench, &shm, &d) < 0)
        fail_msg("shm: %s", d.msg);
    /* sensor faults on the scans, every edge inside the counted window (scenario time 0.05 ..
     * 2.55 s): stuck, delay and stale copy whole scans, noise and spikes draw per beam */
    const char *scen =
        "scenario: {name: nalloc-range, duration_s: 3}\n"
        "steps:\n"
        "  - {at_s: 0.1, duration_s: 1, sensor_fault: {sensor: SCAN, kind: stuck}}\n"
        "  - {at_s: 0.2, duration_s: 1, sensor_fault: {sensor: SCAN, kind: delay,\n"
        "     value: 0.01}}\n"
        "  - {at_s: 0.1, duration_s: 2, sensor_fault: {sensor: SCAN, kind: noise,\n"
        "     value: 0.01}}\n"
        "  - {at_s: 0.1, duration_s: 2, sensor_fault: {sensor: ONBOX, kind: spikes,\n"
        "     value: 0.1, probability: 0.5}}\n"
        "  - {at_s: 0.3, duration_s: 1, sensor_fault: {sensor: DOWN, kind: off}}\n"
        "  - {at_s: 0.4, duration_s: 1, shm_fault: {kind: stale}}\n";
    struct hs_scenario *s = open_scenario(p.bench, scen);
    run_and_check(&p, "range sensors with scan faults", 0);
    assert_int_equal(hs_scenario_step_active_ticks(s, 4), 4000); /* DOWN off: 1 s of 250 us */
    int down = hs_bench_find_sensor(p.bench, "DOWN", HS_SENSOR_RANGE);
    assert_true(down >= 0);
    assert_true(fabs(hs_bench_sensor(p.bench, (uint32_t)down)->values[0] - 1.0) < 1e-9);
    hs_bench_destroy(p.bench);
    hs_config_free(cfg);
}

/* Merged fixed links (tests/models/fixed_pendulum.wrl: bob, tip and a range finder's frame
 * on the rod's ODE body): the IMU and the range finder on merged links, link poses composed
 * with the fixed offsets, and a scenario push in the bob's own frame at its own centre of
 * mass, none of which may allocate or print. */
static void test_merged_links_tick_without_alloc_or_stdio(void **state)
{
    (void)state;
    char yaml[1024], dir[4096];
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-merge-%d}\n"
             "models:\n"
             "  - {name: pend, file: fixed_pendulum.wrl}\n"
             "physics: {merge_fixed_links: true}\n"
             "rt: {period_ns: 250000}\n"
             "controller: {type: pd_hold, defaults: {kp: 10, kd: 1}}\n",
             (int)getpid());
    const char *src = getenv("HS_SOURCE_DIR");
    snprintf(dir, sizeof dir, "%s/tests/models", src ? src : ".");
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "merge.yaml", dir);
    assert_int_equal(hs_world_merged_links(hs_bench_world(p.bench)), 3);
    const char *scen = "scenario: {name: nalloc-merge, duration_s: 3}\n"
                       "steps:\n"
                       "  - {at_s: 0.1, duration_s: 1,\n"
                       "     push: {link: BOB, force_n: [1, 0, 0], torque_nm: [0, 0.1, 0],\n"
                       "            frame: link}}\n";
    open_scenario(p.bench, scen);
    run_and_check(&p, "merged fixed links with sensors and a push", 0);
    hs_bench_destroy(p.bench);
    hs_config_free(cfg);
}

/* Contacts that grow after the warm-up: SR1, limp (no controller), starts 0.4 m above the
 * floor, so the warm-up at create sees no contact at all; inside the counted window it lands
 * and collapses onto the floor, touching it with far more points than a standing robot. ODE
 * grows its contact-joint arena and its step arena with the contact count, so this is where
 * a world that reserved only what the warm-up saw would allocate in the tick. */
static void test_sr1_falling_contacts_grow_without_alloc(void **state)
{
    (void)state;
    const char *dir = shared_models();
    if (!dir)
        skip();
    static const char yaml[] =
        "bench: {name: nalloc-fall}\n"
        "models:\n"
        "  - {name: sr1, file: SR1.wrl, pose: {position: [0, 0, 1.1],\n"
        "     rotation: [1, 0, 0, 0.3]}}\n"
        "  - {name: floor, file: floor.wrl, static: true}\n"
        "physics: {step_s: 0.00025, substeps: 1, contact_damping_n_s_m: 3e4}\n"
        "rt: {period_ns: 250000}\n"
        "controller: {type: none}\n";
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "fall.yaml", dir);
    run_and_check(&p, "SR1 falling onto the floor", 0);
    /* The window saw the air (no contact) and the robot lying on the floor. */
    assert_int_equal(p.contacts_min, 0);
    assert_true(p.contacts_max >= 10); /* standing: 4 to 8; lying: 12 here */
    hs_bench_destroy(p.bench);
    hs_config_free(cfg);
}

/* record: the recorder attached too (hilsim/record.h), its writer thread draining the rings
 * into files while the loop runs, and an shm client in this process commanding the ELBOW so
 * the shm module's slot writes go through the recording tap. */
static void io_ticks(bool record)
{
    char yaml[2048], dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-%d}\n"
             "models:\n"
             "  - {name: arm, file: arm2.wrl}\n"
             /* The floor in both runs: ODE's contact memory is sized at create for the most
              * contacts, so an arm pose that reaches it allocates nothing either (these
              * commands keep the arm off it; the falling SR1 above makes contacts grow). */
             "  - {name: floor, file: floor.wrl, static: true}\n"
             "physics: {step_s: 0.00025, substeps: 1}\n"
             "rt: {period_ns: 250000}\n"
             "can:\n"
             "  buses: [{name: main, interface: vcan0}]\n"
             "  nodes:\n"
             "    - {name: shoulder, bus: main, protocol: mit, id: 1, joint: SHOULDER}\n"
             "%s"
             "shm: {enabled: true}\n",
             (int)getpid(),
             record ? "actuators: {joints: {ELBOW: {source: shm, command_timeout_s: 0.1}}}\n"
                    : "    - {name: elbow, bus: main, protocol: odrive, id: 2, joint: ELBOW,\n"
                      "       odrive: {heartbeat_period_s: 0.01, encoder_period_s: 0.001}}\n");
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "io.yaml", dir);
    struct hs_diag d = {0};
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    struct hs_bench_can *can;
    struct hs_bench_shm *shm;
    struct hs_recorder *rec = NULL;
    char recdir[512];
    snprintf(recdir, sizeof recdir, "/tmp/hs-nalloc-rec-%d", (int)getpid());
    if (record) {
        struct hs_rec_opts ro = {.dir = recdir, .clock_mode = "realtime", .version = "test"};
        if (hs_rec_create(&ro, p.bench, &rec, &d) < 0)
            fail_msg("record: %s", d.msg);
        hs_rec_can_tap_install(rec);
    }
    if (hs_bench_can_attach(p.bench, &o, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    if (hs_bench_shm_attach(p.bench, &shm, &d) < 0)
        fail_msg("shm: %s", d.msg);
    if (record) {
        hs_rec_can_tap_remove(rec);
        assert_int_equal(hs_rec_attach(rec, p.bench), 0);
        char err[HS_CLIENT_ERRBUF_MIN];
        if (hs_client_attach(cfg->bench.name, &p.client, err, sizeof err) < 0)
            fail_msg("client: %s", err);
        assert_int_equal(hs_client_claim(p.client, NULL, 0), 0);
    }
    p.peer_fd = sv[1];
    run_and_check(&p, record ? "the arm over CAN and shm, recorded" : "the arm over CAN and shm",
                  0);
    print_message("the boards' end read %llu frames\n", (unsigned long long)p.replies);
    /* The MIT node answered the commands (and the ODrive sent its cyclic frames). */
    assert_true(p.replies >= MEASURED);
    if (record) {
        assert_int_equal(hs_rec_finish(rec, "test"), 0);
        struct hs_rec_stats st;
        hs_rec_stats(rec, &st);
        print_message("recorded %llu ticks, %llu items (%llu shm commands sent), dropped %llu "
                      "states, %llu items\n",
                      (unsigned long long)st.ticks, (unsigned long long)st.items,
                      (unsigned long long)p.commands, (unsigned long long)st.dropped_states,
                      (unsigned long long)st.dropped_items);
        /* every tick, every frame both ways and every command went through the taps */
        assert_int_equal(st.ticks, WARMUP + MEASURED + 1);
        assert_true(st.items > p.replies + p.commands);
        hs_client_detach(p.client);
    }
    hs_bench_destroy(p.bench); /* closes the bus and removes the segment */
    hs_rec_destroy(rec);
    close(sv[1]);
    hs_config_free(cfg);
    if (record) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", recdir);
        assert_int_equal(system(cmd), 0);
    }
}

static void test_io_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    io_ticks(false);
}

static void test_recording_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    io_ticks(true);
}

/* A scenario loaded: every step kind that touches the tick is active inside the counted
 * window (at 250 us per tick the window is scenario time 0.05 .. 2.55 s): pushes (repeated,
 * intermittent), a payload, gravity, a fixed joint, sensor faults with their delay ring and
 * random draws, actuator faults, the thermal model, shm freeze and stale, a CSV path, and
 * expectations judged every tick. */
static void test_scenario_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    char yaml[2048], dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-scen-%d}\n"
             "models:\n"
             "  - {name: arm, file: arm2.wrl}\n"
             "  - {name: floor, file: floor.wrl, static: true}\n"
             "physics: {step_s: 0.000125, substeps: 2}\n"
             "rt: {period_ns: 250000}\n"
             "controller: {type: trajectory, defaults: {kp: 300, kd: 6},\n"
             "             trajectory: {joint: SHOULDER, amplitude: 0.2, frequency_hz: 1}}\n"
             "sensors:\n"
             "  imu: {tip: {accel: TIP_ACCEL, gyro: TIP_GYRO}}\n"
             "shm: {enabled: true}\n",
             (int)getpid());
    static const char scen[] =
        "scenario: {name: nalloc, duration_s: 3, seed: 5}\n"
        "steps:\n"
        "  - {at_s: 0.1, duration_s: 0.05, repeat: 20, every_s: 0.1, on_s: 0.01, off_s: 0.01,\n"
        "     push: {link: ELBOW, force_n: [1, 2, 3], torque_nm: [0.1, 0, 0], frame: link}}\n"
        "  - {at_s: 0.2, duration_s: 1, payload: {link: ELBOW, mass_kg: 0.5}}\n"
        "  - {at_s: 0.3, duration_s: 1, gravity: {vector_m_s2: [0, 0, -5]}}\n"
        "  - {at_s: 0.4, duration_s: 0.2, joint: {joint: ELBOW, action: fix}}\n"
        "  - {at_s: 0.1, duration_s: 2, sensor_fault: {joint: SHOULDER, kind: delay, "
        "value: 0.01}}\n"
        "  - {at_s: 0.1, duration_s: 2, sensor_fault: {joint: ELBOW, kind: noise, value: 0.01}}\n"
        "  - {at_s: 0.1, duration_s: 2, sensor_fault: {joint: ELBOW, kind: spikes, value: 1,\n"
        "     probability: 0.1, field: velocity}}\n"
        "  - {at_s: 0.5, duration_s: 0.5, sensor_fault: {joint: ELBOW, kind: stuck}}\n"
        "  - {at_s: 0.6, duration_s: 0.5, sensor_fault: {joint: ELBOW, kind: skip_counts, "
        "value: 3}}\n"
        "  - {at_s: 0.7, sensor_fault: {joint: SHOULDER, kind: lose_index}}\n"
        "  - {at_s: 0.1, sensor_fault: {sensor: TIP_ACCEL, kind: saturate, value: 5}}\n"
        "  - {at_s: 0.1, duration_s: 1, sensor_fault: {sensor: TIP_GYRO, kind: delay, "
        "value: 0.002}}\n"
        "  - {at_s: 0.8, duration_s: 0.3, actuator_fault: {joint: SHOULDER, kind: derate, "
        "value: 0.5}}\n"
        "  - {at_s: 1.2, duration_s: 0.3, actuator_fault: {joint: ELBOW, kind: friction, "
        "value: 1, viscous: 0.1}}\n"
        "  - {at_s: 1.6, duration_s: 0.3, actuator_fault: {joint: ELBOW, kind: no_response}}\n"
        "  - {at_s: 2.0, duration_s: 0.2, actuator_fault: {joint: SHOULDER, kind: brake, "
        "value: 5}}\n"
        "  - {at_s: 0, thermal: {joint: SHOULDER}}\n"
        "  - {at_s: 1.0, duration_s: 0.1, shm_fault: {kind: freeze}}\n"
        "  - {at_s: 1.2, duration_s: 0.1, shm_fault: {kind: stale}}\n"
        "  - {at_s: 0, duration_s: 2.4, expect: {kind: temperature_below, joint: SHOULDER,\n"
        "     value: 200, hold: always}}\n"
        "  - {at_s: 0, duration_s: 2.4, expect: {kind: velocity_limits, value: 100, "
        "hold: always}}\n"
        "  - {at_s: 0, duration_s: 2.4, expect: {kind: command_torque, joint: ELBOW, "
        "value: 1e6, hold: always}}\n"
        "  - {at_s: 0, duration_s: 2.4, expect: {kind: link_above, link: ELBOW, value: -10, "
        "hold: always}}\n"
        "  - {when: {joint: SHOULDER, passes: 0.1}, duration_s: 2,\n"
        "     expect: {kind: joint_near, joint: SHOULDER, value: 10, tolerance: 0.1}}\n";
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "scen.yaml", dir);
    struct hs_diag d = {0};
    struct hs_bench_shm *shm;
    if (hs_bench_shm_attach(p.bench, &shm, &d) < 0)
        fail_msg("shm: %s", d.msg);
    struct hs_scenario_spec *spec = NULL;
    /* and a position path from a CSV on the elbow, after the stuck brake's window */
    char csv[] = "/tmp/hs-nalloc-path-XXXXXX", full[sizeof scen + 256];
    int fd = mkstemp(csv);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "time_s,ELBOW\n0,0.6\n0.1,0.7\n0.2,0.6\n");
    fclose(f);
    snprintf(full, sizeof full, "%s  - {at_s: 2.3, path: {file: \"%s\"}}\n", scen, csv);
    struct hs_scenario *s = open_scenario(p.bench, full); /* reads the CSV */
    unlink(csv);
    assert_int_equal(hs_ctl_stage_create(p.bench, &p.ctl), 0);
    assert_int_equal(hs_ctl_stage_attach(p.ctl, p.bench), 0);
    hs_ctl_stage_set_loop_source(p.ctl, loop_fill, &p);
    /* live steps of every kind that allocates or touches the world when bound or played */
    static const char *const live[] = {
        "{sensor_fault: {kind: noise, joint: ELBOW, value: 0.001}, duration_s: 0.5}",
        "{sensor_fault: {kind: delay, joint: SHOULDER, value: 0.01}, duration_s: 0.5}",
        "{gravity: {vector_m_s2: [0, 0, -9]}, duration_s: 0.2}",
        "{friction: {material1: default, material2: default, mu: 0.5}, duration_s: 0.3}",
        "{material: {link: ELBOW, material: default}, duration_s: 0.3}",
        "{payload: {link: ELBOW, mass_kg: 0.1}, duration_s: 0.3}",
        "{shm_fault: {kind: stale}, duration_s: 0.01}",
        "{actuator_fault: {kind: derate, joint: SHOULDER, value: 0.9}, after_s: 0.1}",
        "{push: {link: ELBOW, force_n: [0, 0, 1]}, on_s: 0.01, off_s: 0.01}",
    };
    /* the short commands, as the server turns them into steps */
    static const char *const lines[] = {
        "push ELBOW 1 2 3 1",
        "fault sensor ELBOW stuck",
        "fault sensor SHOULDER offset 0.001",
        "fault actuator SHOULDER derate 0.9",
        "fault actuator ELBOW no-response",
    };
    struct hs_ctl_names names;
    hs_ctl_bench_names(p.bench, &names);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        struct hs_ctl_cmd c;
        char err[160], step[HS_CTL_LINE_MAX];
        int n;
        if (hs_ctl_parse(lines[i], strlen(lines[i]), &names, &c, err, sizeof err) < 0 ||
            (n = hs_ctl_step_text(&c, p.bench, step, sizeof step)) < 0 ||
            hs_scenario_live_prepare(hs_ctl_stage_live(p.ctl), step, (size_t)n, NULL,
                                     &p.live_slots[p.nlive++], &d) < 0)
            fail_msg("%s: %s", lines[i], d.msg);
    }
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
        if (hs_scenario_live_prepare(hs_ctl_stage_live(p.ctl), live[i], strlen(live[i]), NULL,
                                     &p.live_slots[p.nlive++], &d) < 0)
            fail_msg("%s: %s:%d:%d: %s", live[i], d.file, d.line, d.column, d.msg);
    static const char live_scen[] =
        "scenario: {name: nalloc-live, duration_s: 2}\n"
        "steps:\n"
        "  - {at_s: 0.1, duration_s: 0.2, sensor_fault: {joint: ELBOW, kind: offset, value: 0.1}}\n"
        "  - {at_s: 0.2, duration_s: 0.1, friction: {link: ELBOW, mu: 0.3}}\n"
        "  - {at_s: 0, duration_s: 2, expect: {kind: link_above, link: ELBOW, value: -10, "
        "hold: always}}\n";
    if (hs_scenario_parse(live_scen, strlen(live_scen), "live", NULL, &spec, &d) < 0 ||
        hs_scenario_compile(spec, p.bench, &p.live_scen, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    hs_scenario_spec_free(spec);
    /* recorded too: each step's begin and end goes through the bench tap into the recorder's
     * ring from the tick (the intermittent push alone posts dozens inside the window) */
    struct hs_recorder *rec = NULL;
    char recdir[512];
    snprintf(recdir, sizeof recdir, "/tmp/hs-nalloc-scen-rec-%d", (int)getpid());
    struct hs_rec_opts ro = {.dir = recdir, .clock_mode = "realtime", .version = "test"};
    if (hs_rec_create(&ro, p.bench, &rec, &d) < 0)
        fail_msg("record: %s", d.msg);
    assert_int_equal(hs_rec_attach(rec, p.bench), 0);
    run_and_check(&p, "the arm with a scenario loaded, live control commands, recorded", 0);
    assert_int_equal(hs_rec_finish(rec, "test"), 0);
    struct hs_recording *recd = NULL;
    if (hs_recording_open(recdir, &recd, &d) < 0)
        fail_msg("%s: %s", d.file, d.msg);
    uint32_t scen_events = 0, live_events = 0;
    for (uint32_t i = 0; i < recd->nevents; i++) {
        scen_events += recd->events[i].kind == HS_REC_EV_SCENARIO;
        live_events += recd->events[i].kind == HS_REC_EV_LIVE;
    }
    print_message("recorded %u scenario events, %u live control events\n", scen_events,
                  live_events);
    assert_true(scen_events >= 40);
    /* every live command the tick applied was noted from the tick, inside the window: the
     * clears, the injected steps, the scenario's start and stop */
    assert_int_equal(live_events, 2 + p.nlive + 2);
    hs_recording_free(recd);
    struct hs_ctl_counters cc;
    hs_ctl_stage_counters(p.ctl, &cc);
    /* both batches' clears, the injected steps, the scenario's start and stop reached the tick */
    assert_int_equal(cc.applied, 2 + p.nlive + 2);
    assert_int_equal(cc.live_steps, 0);   /* ended, or cleared by the second batch */
    assert_int_equal(cc.state_copies, 2); /* both `state` copies were taken inside the window */
    assert_int_equal(hs_scenario_live_reap(hs_ctl_stage_live(p.ctl)), p.nlive);
    const struct hs_scenario *ls = hs_scenario_live_scenario(hs_ctl_stage_live(p.ctl));
    assert_true(hs_scenario_ticks(ls) > 9000);
    struct hs_ctl_loop lc;
    assert_true(hs_ctl_stage_loop(p.ctl, &lc));
    assert_int_equal(lc.ticks, p.replies);
    bool stopped;
    struct hs_scenario *back = hs_ctl_stage_take_scenario(p.ctl, false, &stopped);
    assert_ptr_equal(back, p.live_scen);
    assert_true(stopped);
    hs_scenario_finish(back);
    for (uint32_t i = 0; i < 2; i++) /* both steps ran inside the window */
        assert_true(hs_scenario_step_active_ticks(back, i) > 0);
    hs_scenario_destroy(back);
    hs_scenario_finish(s);
    /* the steps really ran: every step started, the expectations were judged */
    for (uint32_t i = 0; i < hs_scenario_step_count(s); i++)
        assert_true(hs_scenario_step_active_ticks(s, i) > 0);
    struct hs_scenario_result r;
    hs_scenario_result(s, 0, &r);
    assert_int_equal(r.status, HS_SCENARIO_PASS);
    hs_scenario_result(s, 4, &r); /* joint_near 10 rad: cannot hold */
    assert_int_equal(r.status, HS_SCENARIO_FAIL);
    print_message("winding at the end: %.2f °C\n", hs_scenario_winding_temp_c(s, 0));
    hs_bench_destroy(p.bench);
    hs_rec_destroy(rec);
    hs_config_free(cfg);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", recdir);
    assert_int_equal(system(cmd), 0);
}

/* A scenario's CAN side in the counted window (scenario time 0.05 .. 2.55 s): delays in both
 * directions with their queues, a duplicate, a thermal model reporting through the MIT node's
 * AK reply, MIT and ODrive nodes raising their own errors, a node-state condition checked every
 * tick and a node-state expectation judged every tick. */
static void test_scenario_can_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    char yaml[2048], dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-scan-%d}\n"
             "models:\n" /* no floor: a faulted arm falls onto it and ODE's contact arena grows */
             "  - {name: arm, file: arm2.wrl}\n"
             "physics: {step_s: 0.00025, substeps: 1}\n"
             "rt: {period_ns: 250000}\n"
             "can:\n"
             /* the tick sends the replies, so a tx delay holds them */
             "  buses: [{name: main, interface: vcan0, replies: tick}]\n"
             "  nodes:\n"
             "    - {name: shoulder, bus: main, protocol: mit, id: 1, joint: SHOULDER,\n"
             "       mit: {reply_format: ak}}\n"
             "    - {name: elbow, bus: main, protocol: odrive, id: 2, joint: ELBOW,\n"
             "       odrive: {heartbeat_period_s: 0.01, encoder_period_s: 0.001}}\n",
             (int)getpid());
    static const char scen[] =
        "scenario: {name: nalloc-can, duration_s: 3}\n"
        "steps:\n"
        "  - {at_s: 0.1, duration_s: 0.5, can_fault: {node: shoulder, kind: delay, "
        "direction: rx, delay_s: 0.002}}\n"
        "  - {at_s: 0.2, duration_s: 0.5, can_fault: {node: shoulder, kind: delay, "
        "direction: tx, delay_s: 0.001}}\n"
        "  - {at_s: 0.3, duration_s: 0.2, can_fault: {node: elbow, kind: duplicate, "
        "direction: tx}}\n"
        "  - {at_s: 0, thermal: {joint: SHOULDER}}\n"
        "  - {at_s: 0.8, duration_s: 0.3, node_fault: {node: shoulder, code: 2}}\n"
        "  - {at_s: 1.2, node_fault: {node: elbow, code: 0x800}}\n"
        "  - {at_s: 0.7, duration_s: 1.5, expect: {kind: node_state, node: shoulder, "
        "state: fault}}\n"
        "  - {when: {node: shoulder, state: rest_mode}, duration_s: 0.1,\n"
        "     expect: {kind: node_state, node: elbow, state: idle, hold: always}}\n";
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "scan.yaml", dir);
    struct hs_diag d = {0};
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    struct hs_bench_can *can;
    if (hs_bench_can_attach(p.bench, &o, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    struct hs_scenario *s = open_scenario(p.bench, scen);
    p.peer_fd = sv[1];
    run_and_check(&p, "the arm over CAN with a CAN scenario loaded", 0);
    hs_scenario_finish(s);
    /* the steps ran inside the window: frames were held and duplicated, the faults raised */
    for (uint32_t i = 0; i < 6; i++)
        assert_true(hs_scenario_step_active_ticks(s, i) > 0);
    print_message("delayed %llu + %llu frames, duplicated %llu\n",
                  (unsigned long long)hs_scenario_can_frames_acted(s, 0),
                  (unsigned long long)hs_scenario_can_frames_acted(s, 1),
                  (unsigned long long)hs_scenario_can_frames_acted(s, 2));
    assert_true(hs_scenario_can_frames_acted(s, 0) > 1000);
    assert_true(hs_scenario_can_frames_acted(s, 1) > 1000);
    assert_true(hs_scenario_can_frames_acted(s, 2) > 0);
    struct hs_scenario_result r;
    hs_scenario_result(s, 0, &r); /* the shoulder's fault state was seen */
    assert_int_equal(r.status, HS_SCENARIO_PASS);
    hs_scenario_result(s, 1, &r); /* out of fault it rests, and the elbow was idle throughout */
    assert_int_equal(r.status, HS_SCENARIO_PASS);
    hs_bench_destroy(p.bench);
    close(sv[1]);
    hs_config_free(cfg);
}

/* moteus on CAN FD: the trajectory (latched velocity control, a limited move), queries answered
 * by the reply thread (replies: immediate) and by the tick (replies: tick), and the diagnostic
 * stream's text protocol with its answers polled back add no allocation, stdio call or fault. */
static void moteus_ticks(const char *replies)
{
    char yaml[2048], dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-moteus-%d}\n"
             "models:\n"
             "  - {name: arm, file: arm2.wrl}\n"
             "  - {name: floor, file: floor.wrl, static: true}\n"
             "physics: {step_s: 0.00025, substeps: 1}\n"
             "rt: {period_ns: 250000}\n"
             "can:\n"
             "  buses: [{name: main, interface: vcan0, fd: true, replies: %s}]\n"
             "  nodes:\n"
             "    - {name: shoulder, bus: main, protocol: moteus, id: 1, joint: SHOULDER,\n"
             "       moteus: {kp_nm_rev: 300, kd_nm_s_rev: 10, max_torque_nm: 40}}\n",
             (int)getpid(), replies);
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1, .moteus = true};
    const struct hs_config *cfg = open_bench(&p, yaml, "moteus.yaml", dir);
    struct hs_diag d = {0};
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    struct hs_bench_can *can;
    if (hs_bench_can_attach(p.bench, &o, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    p.peer_fd = sv[1];
    run_and_check(&p, "the arm over CAN FD to a moteus servo", 0);
    print_message("the host read %llu replies\n", (unsigned long long)p.replies);
    /* three of every four frames ask for a reply: queries and stream polls */
    assert_true(p.replies >= MEASURED / 2);
    struct hs_bench_can_node_stats ns;
    assert_int_equal(hs_bench_can_node_stats(can, 0, &ns), 0);
    assert_int_equal(ns.node.frames_bad, 0);
    hs_bench_destroy(p.bench);
    close(sv[1]);
    hs_config_free(cfg);
}

static void test_moteus_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    moteus_ticks("immediate");
    moteus_ticks("tick");
}

/* The sync clock on a CAN SYNC: the clock frames' holding buffer, the bench's events and the
 * discipline add no allocation, stdio call or fault. */
static void test_sync_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    char yaml[2048], dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-sync-%d}\n"
             "models:\n"
             "  - {name: arm, file: arm2.wrl}\n"
             "  - {name: floor, file: floor.wrl, static: true}\n"
             "physics: {step_s: 0.00025, substeps: 1}\n"
             "rt: {period_ns: 250000, clock: {mode: sync, sync: {source: can}}}\n"
             "can:\n"
             "  buses: [{name: main, interface: vcan0, replies: tick}]\n"
             "  nodes:\n"
             "    - {name: shoulder, bus: main, protocol: mit, id: 1, joint: SHOULDER}\n",
             (int)getpid());
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "sync.yaml", dir);
    struct hs_diag d = {0};
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    struct hs_bench_can *can;
    if (hs_bench_can_attach(p.bench, &o, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    struct hs_clock_discipline disc;
    struct hs_clock_discipline_config dc = {
        .period_ns = 250000, .lead_ns = -1, .max_slew_ppm = 10000};
    assert_int_equal(hs_clock_discipline_init(&disc, &dc, NULL), 0);
    p.disc = &disc;
    p.peer_fd = sv[1];
    run_and_check(&p, "the arm on a sync clock over CAN", 0);
    struct hs_sync_status st;
    hs_clock_discipline_status(&disc, &st);
    print_message("the boards' end read %llu frames; the discipline saw %llu SYNCs\n",
                  (unsigned long long)p.replies, (unsigned long long)st.events);
    assert_true(p.replies > MEASURED);
    assert_true(st.events > MEASURED);
    hs_bench_destroy(p.bench);
    close(sv[1]);
    hs_config_free(cfg);
}

/* CAN lockstep released by the nodes' commands (rt.clock.lockstep_source can_commands): the gate
 * reading the bus frame by frame adds no allocation, stdio call or fault. The boards' command
 * sent in a tick releases the next one. */
static void test_can_lockstep_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    char yaml[2048], dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-cls-%d}\n"
             "models:\n"
             "  - {name: arm, file: arm2.wrl}\n"
             "  - {name: floor, file: floor.wrl, static: true}\n"
             "physics: {step_s: 0.00025, substeps: 1}\n"
             "rt: {period_ns: 250000, clock: {mode: lockstep, lockstep_source: can_commands}}\n"
             "can:\n"
             "  buses: [{name: main, interface: vcan0}]\n"
             "  nodes:\n"
             "    - {name: shoulder, bus: main, protocol: mit, id: 1, joint: SHOULDER}\n",
             (int)getpid());
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1, .can_lockstep = true};
    const struct hs_config *cfg = open_bench(&p, yaml, "cls.yaml", dir);
    struct hs_diag d = {0};
    hs_bench_set_clock_mode(p.bench, HS_CLOCK_LOCKSTEP);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}};
    struct hs_bench_can *can;
    if (hs_bench_can_attach(p.bench, &o, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    assert_int_equal(hs_bench_release_sources(p.bench), 1);
    p.peer_fd = sv[1];
    run_and_check(&p, "the arm in lockstep on its CAN node's commands", 0);
    struct hs_bench_can_node_stats ns;
    assert_int_equal(hs_bench_can_node_stats(can, 0, &ns), 0);
    print_message("the node took %llu commands, the boards read %llu replies\n",
                  (unsigned long long)ns.node.frames_ok, (unsigned long long)p.replies);
    assert_true(ns.node.frames_ok > MEASURED);
    hs_bench_destroy(p.bench);
    close(sv[1]);
    hs_config_free(cfg);
}

/* Lockstep over shm: the release wait and a controller's step every tick (same thread) add no
 * allocation, stdio call or fault. */
static void test_lockstep_ticks_without_alloc_stdio_or_faults(void **state)
{
    (void)state;
    char yaml[1024], dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    snprintf(yaml, sizeof yaml,
             "bench: {name: nalloc-ls-%d}\n"
             "models:\n"
             "  - {name: arm, file: arm2.wrl}\n"
             "  - {name: floor, file: floor.wrl, static: true}\n"
             "physics: {step_s: 0.00025, substeps: 1}\n"
             "rt: {period_ns: 250000, clock: {mode: lockstep}}\n"
             "shm: {enabled: true}\n",
             (int)getpid());
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    const struct hs_config *cfg = open_bench(&p, yaml, "ls.yaml", dir);
    struct hs_diag d = {0};
    struct hs_bench_shm *shm;
    if (hs_bench_shm_attach(p.bench, &shm, &d) < 0)
        fail_msg("shm: %s", d.msg);
    assert_int_equal(hs_bench_release_sources(p.bench), 1);
    char name[64], err[256];
    snprintf(name, sizeof name, "nalloc-ls-%d", (int)getpid());
    assert_int_equal(hs_client_attach(name, &p.stepper, err, sizeof err), 0);
    assert_int_equal(hs_client_claim(p.stepper, err, sizeof err), 0);
    run_and_check(&p, "the arm in lockstep over shm", 0);
    assert_int_equal(hs_client_missed_ticks(p.stepper), 0);
    hs_client_detach(p.stepper);
    hs_bench_destroy(p.bench);
    hs_config_free(cfg);
}

/* ---- the guard's trip inside the counted window ---- */

static void runaway_torque(struct probe *p)
{
    /* After actuation: the effort the next step applies, far beyond any limit. */
    const struct hs_bench_joint *j = hs_bench_joint(p->bench, 0);
    hs_world_set_joint_effort(hs_bench_world(p->bench), j->body, j->link, 1e9);
}

static void spin_link(struct probe *p)
{
    const struct hs_bench_joint *j = hs_bench_joint(p->bench, 0);
    dBodySetAngularVel(hs_world_ode_body(hs_bench_world(p->bench), j->body, j->link), 1e200, 0, 0);
}

/* The whole biped 5 m down, as it is: under the floor, nothing else out of bounds. */
static void sink_robot(struct probe *p)
{
    struct hs_world *w = hs_bench_world(p->bench);
    const struct hs_model *m = hs_world_body_model(w, 0);
    for (uint32_t i = 0; i < m->nlinks; i++) {
        dBodyID b = hs_world_ode_body(w, 0, i);
        if (b) {
            const dReal *x = dBodyGetPosition(b);
            dBodySetPosition(b, x[0], x[1], x[2] - 5);
        }
    }
}

static const char arm_trip_yaml[] = "bench: {name: nalloc-trip}\n"
                                    "models:\n"
                                    "  - {name: arm, file: arm2.wrl}\n"
                                    "  - {name: floor, file: floor.wrl, static: true}\n"
                                    "physics: {step_s: 0.00025, substeps: 1}\n"
                                    "rt: {period_ns: 250000}\n";

/* fault() breaks the world at tick WARMUP + 500; the guard stops the loop after_ticks later
 * (the tick of the fault itself is the first). */
static void trip_in_window(const char *yaml, void (*fault)(struct probe *), int expect_rc,
                           uint64_t after_ticks, const char *what)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, strlen(yaml), "trip.yaml", dir, &cfg, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    if (hs_bench_create(cfg, &p.bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    p.trip_at = WARMUP + 500;
    p.fault = fault;
    struct hs_tick_config tc = {
        .period_ns = 250000, .policy = HS_OVERRUN_SKIP, .max_ticks = WARMUP + MEASURED + 1};
    struct hs_rt_opts rt = HS_RT_OPTS_DEFAULT;
    rt.priority = 0;
    rt.hold_dma_latency = false;
    struct hs_tick_ops ops = {inputs, actuation, physics, sensors, outputs, NULL};
    struct hs_tick_loop *loop = NULL;
    assert_int_equal(hs_tick_loop_create(&tc, &rt, &ops, &p, &loop, &d), 0);
    heap_calls = stdio_calls = 0;
    int rc = hs_tick_loop_run(loop); /* counting began at tick WARMUP, on this thread */
    counting = 0;
    struct hs_tick_result res;
    hs_tick_loop_result(loop, &res);
    print_message("%s at tick %d: loop stopped after %llu ticks (%s), %ld heap calls, %ld stdio "
                  "calls in the window\n",
                  what, WARMUP + 500, (unsigned long long)res.ticks,
                  hs_tick_stop_reason_name(res.reason), heap_calls, stdio_calls);
    assert_int_equal(rc, expect_rc);
    assert_int_equal(p.physics_rc, expect_rc);
    assert_int_equal(res.reason, HS_TICK_STOP_PHASE_ERROR);
    assert_int_equal(res.ticks, WARMUP + 500 + after_ticks);
    assert_non_null(hs_bench_fault(p.bench));
    assert_int_equal(heap_calls, 0);
    assert_int_equal(stdio_calls, 0);
    hs_tick_loop_destroy(loop);
    hs_bench_destroy(p.bench);
    hs_config_free(cfg);
}

static void test_guard_trip_without_alloc_or_stdio(void **state)
{
    (void)state;
    trip_in_window(arm_trip_yaml, runaway_torque, -ERANGE, 1, "guard trip (1e9 N·m)");
}

/* The floor check trips floor_time_s (0.01 s: 40 steps of 0.25 ms) after the biped is put
 * under the floor; its per-step check ran in every tick before, the trip allocates nothing. */
static void test_floor_trip_without_alloc_or_stdio(void **state)
{
    (void)state;
    static const char yaml[] = "bench: {name: nalloc-floor}\n"
                               "models:\n"
                               "  - {name: biped, file: biped.wrl}\n"
                               "  - {name: floor, file: floor.wrl, static: true}\n"
                               "physics: {step_s: 0.00025, substeps: 1}\n"
                               "rt: {period_ns: 250000}\n";
    trip_in_window(yaml, sink_robot, -ERANGE, 40, "floor trip (biped 5 m down)");
}

/* The drive's speed limit in the tick: the arm's elbow asked to follow a sine of 1.5 rad at
 * 3 Hz (28 rad/s peak) against its 8 rad/s limit, so the speed-limit row engages and holds
 * (its torque read back from the joint feedback after every step) on many ticks. */
static void test_speed_limit_ticks_without_alloc_or_stdio(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    static const char yaml[] =
        "bench: {name: nalloc-speed}\n"
        "models:\n"
        "  - {name: arm, file: arm2.wrl}\n"
        "physics: {step_s: 0.00025, substeps: 1}\n"
        "rt: {period_ns: 250000}\n"
        "controller: {type: trajectory,\n"
        "             trajectory: {joint: ELBOW, amplitude: 1.5, frequency_hz: 3}}\n";
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, sizeof yaml - 1, "speed.yaml", dir, &cfg, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    struct probe p = {.contacts_min = UINT64_MAX, .peer_fd = -1};
    if (hs_bench_create(cfg, &p.bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    run_and_check(&p, "the arm's elbow at its speed limit", 0);
    const struct hs_bench_joint *j = hs_bench_joint(p.bench, hs_bench_find_joint(p.bench, "ELBOW"));
    struct hs_plant_joint_counters c;
    hs_plant_joint_counters(j->plant, j->plant_joint, &c);
    print_message("elbow: %llu ticks speed-limited\n", (unsigned long long)c.velocity_limits);
    assert_true(c.velocity_limits > 100);
    hs_bench_destroy(p.bench);
    hs_config_free(cfg);
}

static void test_ode_internal_error_without_alloc_or_stdio(void **state)
{
    (void)state;
    trip_in_window(arm_trip_yaml, spin_link, -EFAULT, 1, "ODE internal assertion");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sr1_bench_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_sr1_falling_contacts_grow_without_alloc),
        cmocka_unit_test(test_range_sensors_tick_without_alloc_or_stdio),
        cmocka_unit_test(test_merged_links_tick_without_alloc_or_stdio),
        cmocka_unit_test(test_io_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_lockstep_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_can_lockstep_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_sync_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_moteus_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_recording_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_scenario_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_scenario_can_ticks_without_alloc_stdio_or_faults),
        cmocka_unit_test(test_guard_trip_without_alloc_or_stdio),
        cmocka_unit_test(test_floor_trip_without_alloc_or_stdio),
        cmocka_unit_test(test_speed_limit_ticks_without_alloc_or_stdio),
        cmocka_unit_test(test_ode_internal_error_without_alloc_or_stdio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
