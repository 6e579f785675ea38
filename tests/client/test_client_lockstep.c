/* Lockstep: a server thread publishes 10,000 ticks at 1 kHz (absolute CLOCK_MONOTONIC deadlines)
 * and reads commands each tick; the client blocks in hs_client_wait_tick, reads the state and
 * answers with a command every tick. Every tick is either seen exactly once or counted as missed;
 * misses are reported, not asserted (the host is not an RT machine). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "hilsim/client.h"
#include "shm/shm_test_layout.h"

#define TICKS 10000
#define PERIOD_NS 1000000LL

struct server_run {
    struct hs_shm_server *s;
    uint64_t published;
    uint64_t fresh_ticks; /* ticks at which a new command had arrived */
    uint64_t max_lag;     /* newest published tick minus the tick echoed in the command */
};

static void *server_thread(void *p)
{
    struct server_run *r = p;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    struct hs_shm_command_report rep;
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(r->s);
    for (uint64_t tick = 1; tick <= TICKS; tick++) {
        next.tv_nsec += PERIOD_NS;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        hs_shm_server_read_commands(r->s, (int64_t)next.tv_sec * 1000000000 + next.tv_nsec, &rep);
        if (rep.fresh) {
            r->fresh_ticks++;
            uint64_t echoed = (uint64_t)in[0].cmd.q; /* the client commands q = its tick */
            if (tick - 1 - echoed > r->max_lag)
                r->max_lag = tick - 1 - echoed;
        }
        hs_test_fill(r->s, tick);
        hs_shm_server_publish(r->s, tick, (double)tick * 1e-3,
                              (int64_t)next.tv_sec * 1000000000 + next.tv_nsec);
        r->published = tick;
    }
    return NULL;
}

static void test_client_sees_every_tick_once_or_counts_it_missed(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "lockstep");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    /* Liveness is not under test here: on a loaded host the server thread can be descheduled
     * and then catch up a burst of ticks faster than the client runs. */
    t.layout.command_timeout_ns = 1000 * PERIOD_NS;
    t.layout.client_timeout_ns = 10000 * PERIOD_NS;
    struct server_run run = {0};
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &run.s, &d), 0);
    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    assert_int_equal(hs_client_claim(c, err, sizeof err), 0);

    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, server_thread, &run), 0);
    struct hs_shm_joint_state j[HS_TEST_JOINTS];
    struct hs_client_state st = {.joints = j};
    struct hs_client_command cmd[HS_TEST_JOINTS] = {0};
    uint64_t seen = 0, missed = 0, prev = 0, bad = 0, timeouts = 0, tick;
    uint32_t m;
    while (prev < TICKS) {
        int r = hs_client_wait_tick(c, 1000000000, &tick, &m);
        if (r == -ETIMEDOUT) {
            if (++timeouts > 3)
                break; /* the server is gone: fail below instead of hanging */
            continue;
        }
        assert_int_equal(r, 0);
        assert_int_equal(tick, prev + 1 + m); /* never twice, never backwards */
        seen++;
        missed += m;
        prev = tick;
        if (hs_client_read_state(c, &st) == 0 && st.tick >= tick &&
            hs_test_check(st.tick, j, HS_TEST_JOINTS, NULL, 0, NULL, 0))
            bad++;
        for (int i = 0; i < HS_TEST_JOINTS; i++)
            cmd[i] = (struct hs_client_command){
                .mode = HS_SHM_MODE_POSITION_PD, .q = (double)tick, .kp = 1};
        assert_int_equal(hs_client_write_commands(c, cmd, HS_TEST_JOINTS), 0);
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    print_message("published %llu, seen %llu, missed %llu (client count %llu), server saw a "
                  "fresh command on %llu ticks, max command lag %llu ticks\n",
                  (unsigned long long)run.published, (unsigned long long)seen,
                  (unsigned long long)missed, (unsigned long long)hs_client_missed_ticks(c),
                  (unsigned long long)run.fresh_ticks, (unsigned long long)run.max_lag);
    assert_int_equal(run.published, TICKS);
    assert_int_equal(seen + missed, TICKS);
    assert_int_equal(hs_client_missed_ticks(c), missed);
    assert_int_equal(bad, 0);
    assert_true(run.fresh_ticks > 0);
    hs_client_detach(c);
    hs_shm_server_destroy(run.s);
}

/* ---- clock mode lockstep: the client's step releases each tick ---- */

#define STEP_TICKS 5000
#define STEP_WAIT_NS 5000000000LL /* generous: a loaded host may deschedule either side */

struct step_run {
    struct hs_shm_server *s;
    uint64_t published;
    uint64_t not_released; /* waits that ended without the release */
    uint64_t wrong_echo;   /* released ticks whose command was not the answer to that tick */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Tick 1 is published before the client attaches; every later tick waits for the release. */
static void *step_server(void *p)
{
    struct step_run *r = p;
    struct hs_shm_command_report rep;
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(r->s);
    for (uint64_t tick = 2; tick <= STEP_TICKS; tick++) {
        if (hs_shm_server_wait_release(r->s, tick - 1, now_ns() + STEP_WAIT_NS) != 0) {
            r->not_released++;
            break;
        }
        /* Simulated time: the command ages one period per tick, however long the wait. */
        hs_shm_server_read_commands(r->s, (int64_t)tick * PERIOD_NS, &rep);
        if (!rep.fresh || in[0].cmd.q != (double)(tick - 1))
            r->wrong_echo++;
        hs_test_fill(r->s, tick);
        hs_shm_server_publish(r->s, tick, (double)tick * 1e-3, now_ns());
        r->published = tick;
    }
    return NULL;
}

static void test_step_releases_every_tick_exactly_once(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "step");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    t.layout.clock_mode = HS_SHM_CLOCK_LOCKSTEP;
    struct step_run run = {.published = 1};
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &run.s, &d), 0);
    hs_test_fill(run.s, 1);
    hs_shm_server_publish(run.s, 1, 1e-3, now_ns());
    /* Nobody released tick 1: the server's wait runs out. */
    assert_int_equal(hs_shm_server_wait_release(run.s, 1, now_ns() + 1000000), -ETIMEDOUT);

    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    assert_int_equal(info.clock_mode, HS_SHM_CLOCK_LOCKSTEP);
    assert_int_equal(hs_client_step(c), -EPERM); /* only the command owner releases */
    assert_int_equal(hs_client_claim(c, err, sizeof err), 0);

    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, step_server, &run), 0);
    struct hs_shm_joint_state j[HS_TEST_JOINTS];
    struct hs_client_state st = {.joints = j};
    struct hs_client_command cmd[HS_TEST_JOINTS] = {0};
    uint64_t prev = 0, tick, missed = 0, bad = 0;
    uint32_t m;
    while (prev < STEP_TICKS) {
        int r = hs_client_wait_tick(c, STEP_WAIT_NS, &tick, &m);
        if (r != 0)
            break;
        /* The tick pending at attach comes first; then every tick once, in order. */
        assert_int_equal(tick, prev + 1);
        missed += m;
        prev = tick;
        assert_int_equal(hs_client_read_state(c, &st), 0);
        bad += st.tick != tick || hs_test_check(st.tick, j, HS_TEST_JOINTS, NULL, 0, NULL, 0);
        for (int i = 0; i < HS_TEST_JOINTS; i++)
            cmd[i] = (struct hs_client_command){
                .mode = HS_SHM_MODE_POSITION_PD, .q = (double)tick, .kp = 1};
        assert_int_equal(hs_client_write_commands(c, cmd, HS_TEST_JOINTS), 0);
        assert_int_equal(hs_client_step(c), 0);
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(prev, STEP_TICKS);
    assert_int_equal(missed, 0);
    assert_int_equal(bad, 0);
    assert_int_equal(run.published, STEP_TICKS);
    assert_int_equal(run.not_released, 0);
    assert_int_equal(run.wrong_echo, 0);
    /* A step with nothing new written releases too (the previous commands stay). */
    assert_int_equal(hs_shm_server_wait_release(run.s, STEP_TICKS, now_ns() + STEP_WAIT_NS), 0);
    hs_client_detach(c);
    hs_shm_server_destroy(run.s);
}

/* A client of a wall-clock server sees clock_mode wall (0, as from servers before ABI 1.2). */
static void test_wall_server_says_wall(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "wall");
    struct hs_test_layout t;
    hs_test_layout_init(&t, 2);
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    assert_int_equal(info.clock_mode, HS_SHM_CLOCK_WALL);
    hs_client_detach(c);
    hs_shm_server_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_sees_every_tick_once_or_counts_it_missed),
        cmocka_unit_test(test_step_releases_every_tick_exactly_once),
        cmocka_unit_test(test_wall_server_says_wall),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
