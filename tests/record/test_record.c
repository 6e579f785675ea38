/* Record and replay on the real bench in simulated time: the arm with SHOULDER as an MIT node
 * on a socketpair bus (the boards in this process send a command every tick) and ELBOW
 * commanded by an shm client in this process.
 * - the recording replays bit-exact (every signal of every tick), CAN and shm inputs alike;
 * - the same inputs on a changed config (ELBOW's friction) diverge, and the replay names the
 *   first tick and signal;
 * - a writer that cannot keep up overflows the ring: the drops are counted in the stats and
 *   the manifest, and the state file holds exactly what the ring held;
 * - truncated and corrupted files are refused with the file and byte offset (or line). */
#include <errno.h>
#include <fcntl.h>
#include <linux/can.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/io_can.h"
#include "hilsim/io_shm.h"
#include "hilsim/can_mit.h"
#include "hilsim/client.h"
#include "hilsim/record.h"
#include "hilsim/scenario.h"
#include "hilsim/shm_abi.h"
#include "hilsim/world.h"

static char tmpdir[256];

static const char *models_dir(void)
{
    static char dir[4096];
    const char *s = getenv("HS_SOURCE_DIR");
    snprintf(dir, sizeof dir, "%s/models", s ? s : HS_TEST_SOURCE_DIR);
    return dir;
}

/* friction: ELBOW's viscous friction (N·m·s/rad). Returns the config file's path. */
static const char *write_config(const char *tag, double friction, char *path, size_t size)
{
    snprintf(path, size, "%s/%s.yaml", tmpdir, tag);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "bench: {name: rec-%d}\n"
            "models:\n"
            "  - name: arm\n"
            "    file: %s/arm2.wrl\n"
            "    initial: {joints: {SHOULDER: {q: 0.3}, ELBOW: {q: 0.6}}}\n"
            "  - {name: floor, file: %s/floor.wrl, static: true}\n"
            "rt: {warmup_ticks: 0}\n"
            "can:\n"
            "  buses: [{name: main, interface: vcan0}]\n"
            "  nodes: [{name: shoulder, bus: main, protocol: mit, id: 1, joint: SHOULDER}]\n"
            "actuators:\n"
            "  joints: {ELBOW: {source: shm, command_timeout_s: 1, viscous_friction: %.17g}}\n"
            "shm: {enabled: true}\n",
            (int)getpid(), models_dir(), models_dir(), friction);
    fclose(f);
    return path;
}

struct run {
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_recorder *rec;
    struct hs_client *client;
    int peer;                     /* the boards' end of the socketpair */
    struct hs_scenario *scenario; /* owned by the bench */
    char dir[512];
};

static void open_run_opts(struct run *r, const char *cfg_path, const char *tag,
                          const struct hs_rec_opts *extra)
{
    memset(r, 0, sizeof *r);
    struct hs_diag d = {0};
    if (hs_config_load(cfg_path, &r->cfg, &d) < 0 || hs_bench_create(r->cfg, &r->bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    snprintf(r->dir, sizeof r->dir, "%s/%s", tmpdir, tag);
    struct hs_rec_opts o = *extra;
    o.dir = r->dir;
    o.config_path = cfg_path;
    o.clock_mode = "simulated";
    o.version = "test";
    if (hs_rec_create(&o, r->bench, &r->rec, &d) < 0)
        fail_msg("record: %s: %s", d.file, d.msg);
    hs_rec_can_tap_install(r->rec);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
    struct hs_bench_can_opts co = {.backend = &hs_can_socketpair_ops, .tick_time_stamps = true};
    co.socketpair_fd[0] = sv[0];
    r->peer = sv[1];
    struct hs_bench_can *can;
    if (hs_bench_can_attach(r->bench, &co, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    struct hs_bench_shm *shm;
    if (hs_bench_shm_attach(r->bench, &shm, &d) < 0)
        fail_msg("shm: %s", d.msg);
    if (extra->scenario_path) { /* after the CAN module (its faults need the bus open) */
        struct hs_scenario_spec *spec = NULL;
        if (hs_scenario_parse_file(extra->scenario_path, &spec, &d) < 0 ||
            hs_scenario_compile(spec, r->bench, &r->scenario, &d) < 0)
            fail_msg("scenario: %s:%d: %s", d.file, d.line, d.msg);
        hs_scenario_spec_free(spec);
        assert_int_equal(hs_scenario_attach(r->scenario, r->bench), 0);
    }
    hs_rec_can_tap_remove(r->rec);
    assert_int_equal(hs_rec_attach(r->rec, r->bench), 0);
    char err[HS_CLIENT_ERRBUF_MIN];
    if (hs_client_attach(r->cfg->bench.name, &r->client, err, sizeof err) < 0)
        fail_msg("client: %s", err);
    assert_int_equal(hs_client_claim(r->client, NULL, 0), 0);
}

static void open_run(struct run *r, const char *cfg_path, const char *tag, uint32_t ring_states,
                     bool paused)
{
    struct hs_rec_opts o = {.ring_states = ring_states, .writer_paused = paused};
    open_run_opts(r, cfg_path, tag, &o);
}

static void board_send(int fd, const uint8_t data[8])
{
    struct can_frame f = {.can_id = 1, .len = 8};
    memcpy(f.data, data, 8);
    assert_int_equal(send(fd, &f, sizeof f, 0), (ssize_t)sizeof f);
}

/* ticks of the boards and the client commanding, the bench ticking in simulated time. */
static void drive(struct run *r, uint32_t ticks)
{
    int64_t period = hs_bench_tick_period_ns(r->bench);
    uint32_t elbow;
    assert_int_equal(hs_client_find_joint(r->client, "ELBOW", &elbow), 0);
    uint8_t d[8];
    hs_mit_pack_special(HS_MIT_ENTER, d);
    board_send(r->peer, d);
    struct hs_mit_limits lim = {-12.5, 12.5, -50, 50, 0, 500, 0, 5, -18, 18};
    for (uint32_t k = 0; k < ticks; k++) {
        double t = (double)k * 1e-3;
        if (k % 2 == 0) { /* the boards: every other tick, so some ticks have no frame */
            struct hs_mit_command c = {.p_rad = 0.3 + 0.4 * sin(6 * t), .kp = 30, .kd = 1};
            hs_mit_pack_command(&lim, &c, d);
            board_send(r->peer, d);
        }
        if (k % 5 == 0) { /* the client: every fifth tick */
            struct hs_client_command c = {
                .mode = HS_SHM_MODE_POSITION_PD, .q = 0.6 + 0.5 * sin(4 * t), .kp = 20, .kd = 0.5};
            assert_int_equal(hs_client_write_command(r->client, elbow, &c), 0);
        }
        hs_client_heartbeat(r->client);
        assert_int_equal(hs_bench_tick(r->bench, (int64_t)(k + 1) * period, k), 0);
        char sink[CANFD_MTU];
        while (recv(r->peer, sink, sizeof sink, MSG_DONTWAIT) > 0)
            ;
    }
}

static void close_run(struct run *r, struct hs_rec_stats *ret_stats)
{
    hs_bench_safe_stop(r->bench);
    assert_int_equal(hs_rec_finish(r->rec, "test"), 0);
    if (ret_stats)
        hs_rec_stats(r->rec, ret_stats);
    hs_client_detach(r->client);
    hs_bench_destroy(r->bench);
    hs_rec_destroy(r->rec);
    hs_config_free(r->cfg);
    close(r->peer);
}

static struct hs_recording *open_rec(const char *dir)
{
    struct hs_recording *rec = NULL;
    struct hs_diag d = {0};
    if (hs_recording_open(dir, &rec, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    return rec;
}

enum { TICKS = 1500 };

/* hs_replay_opts.after_tick: once per replayed state, in order, with the bench as it stands
 * after that tick (its SHOULDER angle the recorded one, bit for bit), diverged as the compare
 * found it; returning false ends the replay there. */
struct tick_watch {
    const struct hs_recording *rec;
    int q_col;
    uint32_t calls, stop_at, diverged_from;
    bool out_of_order, mismatch;
};

static bool watch_tick(void *ctx, uint32_t ord, struct hs_bench *b, bool diverged)
{
    struct tick_watch *w = ctx;
    w->out_of_order |= ord != w->calls;
    w->calls++;
    if (diverged && w->diverged_from == UINT32_MAX)
        w->diverged_from = ord;
    const struct hs_bench_joint *j = hs_bench_joint(b, 0); /* SHOULDER */
    double q = hs_world_joint_position(hs_bench_world(b), j->body, j->link);
    double rq = w->rec->values[(size_t)ord * w->rec->state_stride + (uint32_t)w->q_col];
    if (!diverged && memcmp(&q, &rq, sizeof q))
        w->mismatch = true;
    return ord + 1 < w->stop_at;
}

static void test_replay_bit_exact(void **state)
{
    (void)state;
    char cfg[512];
    struct run r;
    open_run(&r, write_config("exact", 0.05, cfg, sizeof cfg), "exact", 0, false);
    drive(&r, TICKS);
    struct hs_rec_stats st;
    close_run(&r, &st);
    assert_int_equal(st.ticks, TICKS);
    assert_int_equal(st.dropped_states + st.dropped_items, 0);

    struct hs_recording *rec = open_rec(r.dir);
    assert_int_equal(rec->nstates, TICKS);
    assert_int_equal(rec->nbuses, 1);
    assert_true(rec->complete);
    /* the boards' frames (R) and the node's replies (T) are both in the bus's log */
    uint32_t rx = 0, tx = 0;
    for (uint32_t i = 0; i < rec->nframes[0]; i++)
        rec->frames[0][i].rx ? rx++ : tx++;
    print_message("recorded %u ticks, %u frames received, %u sent, %u shm commands\n", rec->nstates,
                  rx, tx, rec->nshm);
    assert_int_equal(rx, TICKS / 2 + 1);
    assert_true(tx >= TICKS / 2);
    assert_int_equal(rec->nshm, TICKS / 5);

    struct hs_replay_opts o = {0};
    struct hs_replay_result res;
    struct hs_diag d = {0};
    if (hs_replay_run(rec, &o, &res, &d) < 0)
        fail_msg("replay: %s", d.msg);
    if (res.diverged) {
        char name[128];
        hs_recording_signal_name(rec, (uint32_t)res.first_signal, name, sizeof name);
        fail_msg("diverged at tick %llu: %s %.17g vs %.17g", (unsigned long long)res.first_tick,
                 name, res.recorded, res.replayed);
    }
    assert_int_equal(res.ticks, TICKS);
    assert_int_equal(res.frames_fed, rx);
    assert_int_equal(res.commands_fed, rec->nshm);
    /* the joints did move: a replay of a still arm would prove little */
    int q = hs_recording_find_signal(rec, "SHOULDER.q");
    assert_true(q >= 0);
    double lo = INFINITY, hi = -INFINITY;
    for (uint32_t k = 0; k < rec->nstates; k++) {
        double v = rec->values[(size_t)k * rec->state_stride + (uint32_t)q];
        lo = fmin(lo, v), hi = fmax(hi, v);
    }
    print_message("SHOULDER.q spans %.3f .. %.3f rad; replay bit-exact\n", lo, hi);
    assert_true(hi - lo > 0.3);
    free(res.values);

    /* the same replay watched tick by tick, keeping no values, stopped after 700 states */
    assert_string_equal(rec->joint_names[0], "SHOULDER");
    struct tick_watch w = {.rec = rec, .q_col = q, .stop_at = 700, .diverged_from = UINT32_MAX};
    struct hs_replay_opts wo = {.after_tick = watch_tick, .after_tick_ctx = &w, .no_values = true};
    assert_int_equal(hs_replay_run(rec, &wo, &res, &d), 0);
    assert_null(res.values);
    assert_false(res.diverged);
    assert_int_equal(res.ticks, 700);
    assert_int_equal(w.calls, 700);
    assert_false(w.out_of_order);
    assert_false(w.mismatch);
    assert_int_equal(w.diverged_from, UINT32_MAX);

    /* what if: the same inputs, ELBOW with 20x the friction */
    char cfg2[512];
    o.config_path = write_config("whatif", 1.0, cfg2, sizeof cfg2);
    o.tolerance = 1e-9;
    if (hs_replay_run(rec, &o, &res, &d) < 0)
        fail_msg("replay: %s", d.msg);
    assert_true(res.diverged);
    char name[128];
    hs_recording_signal_name(rec, (uint32_t)res.first_signal, name, sizeof name);
    print_message("what if (friction 1.0): diverged at tick %llu on %s (%.9g vs %.9g)\n",
                  (unsigned long long)res.first_tick, name, res.recorded, res.replayed);
    assert_true(strncmp(name, "ELBOW.", 6) == 0 || strncmp(name, "SHOULDER.", 9) == 0);
    free(res.values);
    /* watched, the what-if says diverged from the tick the compare found on */
    uint32_t first = res.first_ord;
    w = (struct tick_watch){
        .rec = rec, .q_col = q, .stop_at = UINT32_MAX, .diverged_from = UINT32_MAX};
    wo.config_path = o.config_path;
    wo.tolerance = o.tolerance;
    assert_int_equal(hs_replay_run(rec, &wo, &res, &d), 0);
    assert_true(res.diverged);
    assert_int_equal(w.calls, TICKS);
    assert_int_equal(w.diverged_from, first);
    assert_false(w.mismatch);
    hs_recording_free(rec);
    /* for test_record_python: the same recording read by python-can and the Python reader */
    const char *keep = getenv("HS_RECORD_KEEP");
    if (keep) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", keep, r.dir, keep);
        assert_int_equal(system(cmd), 0);
    }
}

/* A RangeSensor records its whole scan (the values its kind declares, not six per sensor): the
 * range mast of tests/sensors over its scene, with no I/O. The recorded SCAN rays read the
 * geometry (1.5 / cos(a) m at -0.5 .. 0.5 rad, tolerance 1e-9 m as in test_range_sensor), the
 * manifest names them r0 .. r4, and the replay matches every value of every tick bit for bit. */
static void test_range_scan_recorded_and_replayed(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/range.yaml", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "bench: {name: rec-range-%d}\n"
            "models:\n"
            "  - {name: mast, file: %s/tests/sensors/range_mast.wrl}\n"
            "  - {name: scene, file: %s/tests/sensors/range_scene.wrl, static: true}\n"
            "rt: {warmup_ticks: 0}\n"
            "controller: {type: pd_hold, defaults: {kp: 10, kd: 1}}\n",
            (int)getpid(), src ? src : HS_TEST_SOURCE_DIR, src ? src : HS_TEST_SOURCE_DIR);
    fclose(f);
    struct run r;
    memset(&r, 0, sizeof r);
    struct hs_diag d = {0};
    if (hs_config_load(path, &r.cfg, &d) < 0 || hs_bench_create(r.cfg, &r.bench, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    snprintf(r.dir, sizeof r.dir, "%s/range", tmpdir);
    struct hs_rec_opts o = {
        .dir = r.dir, .config_path = path, .clock_mode = "simulated", .version = "test"};
    if (hs_rec_create(&o, r.bench, &r.rec, &d) < 0)
        fail_msg("record: %s: %s", d.file, d.msg);
    assert_int_equal(hs_rec_attach(r.rec, r.bench), 0);
    int64_t period = hs_bench_tick_period_ns(r.bench);
    for (uint32_t k = 0; k < 200; k++)
        assert_int_equal(hs_bench_tick(r.bench, (int64_t)(k + 1) * period, k), 0);
    hs_bench_safe_stop(r.bench);
    assert_int_equal(hs_rec_finish(r.rec, "test"), 0);
    hs_bench_destroy(r.bench);
    hs_rec_destroy(r.rec);
    hs_config_free(r.cfg);

    struct hs_recording *rec = open_rec(r.dir);
    assert_int_equal(rec->nstates, 200);
    assert_int_equal(rec->format_version, 3);
    char name[64];
    for (uint32_t k = 0; k < 5; k++) {
        snprintf(name, sizeof name, "SCAN.r%u", k);
        int s = hs_recording_find_signal(rec, name);
        if (s < 0)
            fail_msg("no signal %s in the recording", name);
        double v = rec->values[(size_t)(rec->nstates - 1) * rec->state_stride + (uint32_t)s];
        double want = 1.5 / cos(-0.5 + 0.25 * k);
        if (!(fabs(v - want) <= 1e-9))
            fail_msg("%s recorded %.12g, want %.12g", name, v, want);
    }
    assert_true(hs_recording_find_signal(rec, "SCAN.r5") < 0);
    assert_true(hs_recording_find_signal(rec, "DOWN.r0") >= 0);
    struct hs_replay_opts ro = {0};
    struct hs_replay_result res;
    if (hs_replay_run(rec, &ro, &res, &d) < 0)
        fail_msg("replay: %s", d.msg);
    if (res.diverged) {
        hs_recording_signal_name(rec, (uint32_t)res.first_signal, name, sizeof name);
        fail_msg("diverged at tick %llu: %s %.17g vs %.17g", (unsigned long long)res.first_tick,
                 name, res.recorded, res.replayed);
    }
    assert_int_equal(res.ticks, 200);
    print_message("range: %u sensor values per tick recorded, replay bit-exact\n",
                  rec->nsensor_values);
    free(res.values);
    hs_recording_free(rec);
}

/* A scenario with a CAN fault: half the shoulder node's commands dropped at random for 0.3 s.
 * The recorded frames are the ones the node saw, after the fault, so the replay plays the
 * scenario again (its step events must match) but takes its fault filter off the bus: a filter
 * left on would drop about half of the recorded frames a second time and the replay would
 * diverge. */
static void test_can_fault_scenario_replays_bit_exact(void **state)
{
    (void)state;
    char cfg[512], scen[600];
    snprintf(scen, sizeof scen, "%s/drop.yaml", tmpdir);
    FILE *f = fopen(scen, "w");
    assert_non_null(f);
    fprintf(f, "scenario: {name: drop, duration_s: 1, seed: 11}\n"
               "steps:\n"
               "  - name: drop_half\n"
               "    at_s: 0.3\n"
               "    duration_s: 0.3\n"
               "    can_fault: {node: shoulder, kind: drop, direction: rx, probability: 0.5}\n");
    fclose(f);
    struct run r;
    struct hs_rec_opts o = {.scenario_path = scen};
    open_run_opts(&r, write_config("candrop", 0.05, cfg, sizeof cfg), "candrop", &o);
    drive(&r, 1000);
    uint64_t dropped = hs_scenario_can_frames_acted(r.scenario, 0);
    close_run(&r, NULL);
    struct hs_recording *rec = open_rec(r.dir);
    uint32_t rx = 0;
    for (uint32_t i = 0; i < rec->nframes[0]; i++)
        rx += rec->frames[0][i].rx;
    print_message("the fault dropped %llu of the boards' %u frames; %u recorded as received\n",
                  (unsigned long long)dropped, 1000 / 2 + 1, rx);
    assert_true(dropped > 30 && dropped < 120); /* about half of 150 */
    assert_int_equal(rx + dropped, 1000 / 2 + 1);
    assert_non_null(rec->scenario_text);
    struct hs_replay_opts ro = {0};
    struct hs_replay_result res;
    struct hs_diag d = {0};
    if (hs_replay_run(rec, &ro, &res, &d) < 0)
        fail_msg("replay: %s", d.msg);
    assert_true(res.scenario);
    assert_false(res.diverged);
    assert_int_equal(res.scenario_events_recorded, 2); /* the step began and ended */
    assert_int_equal(res.scenario_events_replayed, 2);
    assert_int_equal(res.scenario_mismatch_ord, -1);
    assert_int_equal(res.frames_fed, rx);
    free(res.values);
    hs_recording_free(rec);
}

static void test_overflow_counted(void **state)
{
    (void)state;
    char cfg[512];
    struct run r;
    open_run(&r, write_config("overflow", 0.05, cfg, sizeof cfg), "overflow", 64, true);
    drive(&r, 200);
    struct hs_rec_stats st;
    close_run(&r, &st);
    print_message("ring of 64 states, writer held: %llu of %llu ticks dropped\n",
                  (unsigned long long)st.dropped_states, (unsigned long long)st.ticks);
    assert_int_equal(st.ticks, 200);
    assert_int_equal(st.dropped_states, 200 - 64);
    struct hs_recording *rec = open_rec(r.dir);
    assert_int_equal(rec->nstates, 64);
    assert_int_equal(rec->dropped_states, 200 - 64);
    hs_recording_free(rec);
}

/* Rotation: segments cut by size; all kept, the run reads back whole and replays bit-exact;
 * with keep_segments the oldest go, and the replay starts from the first kept state. */
static void test_rotation(void **state)
{
    (void)state;
    char cfg[512];
    struct run r;
    struct hs_rec_opts o = {.rotate_bytes = 64 * 1024};
    open_run_opts(&r, write_config("rot", 0.05, cfg, sizeof cfg), "rot", &o);
    drive(&r, 600);
    struct hs_rec_stats st;
    close_run(&r, &st);
    print_message("600 ticks in %u segments of 64 KiB\n", st.segments);
    assert_true(st.segments >= 3);
    struct hs_recording *rec = open_rec(r.dir);
    assert_int_equal(rec->nstates, 600);
    for (uint32_t k = 1; k < rec->nstates; k++)
        assert_int_equal(rec->ticks[k], rec->ticks[k - 1] + 1);
    struct hs_replay_opts ro = {0};
    struct hs_replay_result res;
    struct hs_diag d = {0};
    assert_int_equal(hs_replay_run(rec, &ro, &res, &d), 0);
    assert_false(res.diverged);
    free(res.values);
    hs_recording_free(rec);

    o.keep_segments = 2;
    open_run_opts(&r, cfg, "rotkeep", &o);
    drive(&r, 600);
    close_run(&r, &st);
    assert_int_equal(st.segments, 2);
    char path[700];
    snprintf(path, sizeof path, "%s/state.bin", r.dir);
    assert_int_not_equal(access(path, F_OK), 0); /* segment 0 is gone */
    /* The replay starts from the first kept state (a checkpoint: joints' q and dq) and feeds
     * the kept segments' inputs from the tick after it. The MIT node here starts afresh, in
     * rest mode: the boards' "enter" went with segment 0, so its commands are not obeyed and
     * the shoulder sags; test_record_cli bounds the error of a run whose state the checkpoint
     * does hold (lockstep shm). */
    struct hs_recording *kept = open_rec(r.dir);
    assert_true(kept->first_segment >= 1);
    assert_true(kept->first_ord > 0);
    assert_int_equal(kept->ticks[0], kept->first_ord); /* no warm-up: tick = state index */
    assert_int_equal(kept->ticks[kept->nstates - 1], 599);
    assert_int_equal(hs_replay_run(kept, &ro, &res, &d), 0);
    print_message("keep_segments 2: from the checkpoint at tick %llu, %u ticks, max |q error| "
                  "%.3g rad, %llu frames, %llu commands fed\n",
                  (unsigned long long)kept->ticks[0], res.ticks, res.max_abs_q_err,
                  (unsigned long long)res.frames_fed, (unsigned long long)res.commands_fed);
    assert_true(res.from_checkpoint);
    assert_int_equal(res.ticks, kept->nstates);
    /* every kept input went in: the commands of the ticks after the checkpoint, and the
     * frames those ticks took (the boards send every other tick) */
    uint32_t cmds = 0;
    for (uint32_t i = 0; i < kept->nshm; i++)
        cmds += kept->shm[i].ord > kept->first_ord;
    assert_int_equal(res.commands_fed, cmds);
    assert_true(res.frames_fed >= (kept->nstates - 1) / 2);
    /* the checkpoint itself is the recorded state */
    assert_memory_equal(res.values, kept->values, 8 * (size_t)kept->state_stride);
    free(res.values);
    hs_recording_free(kept);
}

static void copy_tree(const char *from, const char *to)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", to, from, to);
    assert_int_equal(system(cmd), 0);
}

static void expect_error(const char *dir, const char *file_end, const char *msg_part)
{
    struct hs_recording *rec = NULL;
    struct hs_diag d = {0};
    int rc = hs_recording_open(dir, &rec, &d);
    print_message("%s: %s:%d: %s\n", file_end, d.file, d.line, d.msg);
    assert_int_equal(rc, -EBADMSG);
    size_t fl = strlen(d.file), el = strlen(file_end);
    assert_true(fl >= el && !strcmp(d.file + fl - el, file_end));
    assert_non_null(strstr(d.msg, msg_part));
}

static void test_damaged_recordings(void **state)
{
    (void)state;
    char cfg[512];
    struct run r;
    open_run(&r, write_config("good", 0.05, cfg, sizeof cfg), "good", 0, false);
    drive(&r, 40);
    close_run(&r, NULL);
    hs_recording_free(open_rec(r.dir));

    char bad[600], path[700];
    struct stat sb;
    /* truncated: the last block loses 5 bytes (a finished recording: an error, not salvage) */
    snprintf(bad, sizeof bad, "%s-trunc", r.dir);
    copy_tree(r.dir, bad);
    snprintf(path, sizeof path, "%s/state.bin", bad);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(truncate(path, sb.st_size - 5), 0);
    expect_error(bad, "state.bin", "truncated block at byte offset");

    /* corrupted: one bit in the first block's (compressed) payload; its CRC says so before
     * anything is decompressed, naming the block's offset (after the 80-byte header) */
    snprintf(bad, sizeof bad, "%s-flip", r.dir);
    copy_tree(r.dir, bad);
    snprintf(path, sizeof path, "%s/state.bin", bad);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t byte;
    off_t off = 80 + 16 + 40;
    assert_int_equal(pread(fd, &byte, 1, off), 1);
    byte ^= 0x10;
    assert_int_equal(pwrite(fd, &byte, 1, off), 1);
    close(fd);
    expect_error(bad, "state.bin", "corrupted block (CRC mismatch) at byte offset 80");

    /* another run's file: its header's run id is not the manifest's */
    snprintf(bad, sizeof bad, "%s-runid", r.dir);
    copy_tree(r.dir, bad);
    snprintf(path, sizeof path, "%s/events.bin", bad);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &byte, 1, 32), 1);
    byte ^= 1;
    assert_int_equal(pwrite(fd, &byte, 1, 32), 1);
    close(fd);
    expect_error(bad, "events.bin", "header_crc mismatch"); /* a flipped id breaks its CRC */

    /* a candump line that is not one: past the size the manifest gives the closed log, and,
     * in a recording without that bound (made before it was kept), refused by the parser */
    snprintf(bad, sizeof bad, "%s-can", r.dir);
    copy_tree(r.dir, bad);
    snprintf(path, sizeof path, "%s/can-main.log", bad);
    FILE *f = fopen(path, "a");
    fprintf(f, "(1700000000.000001) vcan0 12G#00 R\n");
    fclose(f);
    expect_error(bad, "can-main.log", "bytes the manifest's segments[0].can_bytes.main says");
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "sed -i '/\"can_bytes\": {/,/},/d; /\"can_sha256\": {/,/},/d' '%s/manifest.json'",
             bad);
    assert_int_equal(system(cmd), 0);
    expect_error(bad, "can-main.log", "not a candump log line");

    /* a shm record cut short */
    snprintf(bad, sizeof bad, "%s-shm", r.dir);
    copy_tree(r.dir, bad);
    snprintf(path, sizeof path, "%s/shm.bin", bad);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(truncate(path, sb.st_size - 1), 0);
    expect_error(bad, "shm.bin", "truncated block at byte offset");

    /* the manifest cut in the middle */
    snprintf(bad, sizeof bad, "%s-manifest", r.dir);
    copy_tree(r.dir, bad);
    snprintf(path, sizeof path, "%s/manifest.json", bad);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(truncate(path, sb.st_size / 2), 0);
    expect_error(bad, "manifest.json", "byte offset");
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hs-test-record-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_bit_exact),
        cmocka_unit_test(test_overflow_counted),
        cmocka_unit_test(test_damaged_recordings),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_can_fault_scenario_replays_bit_exact),
        cmocka_unit_test(test_range_scan_recorded_and_replayed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
