/* The seqlock stress with threads, built with -fsanitize=thread: the protocol (relaxed atomic
 * data words between acquire/release sequence accesses) must be race-free for TSan. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "shm/shm_stress_core.h"

#define READERS 2

struct reader_arg {
    const char *bench;
    uint64_t final_tick;
    struct stress_result r;
};

static void *reader(void *p)
{
    struct reader_arg *a = p;
    struct hs_client *c = NULL;
    a->r.attach_error = hs_client_attach(a->bench, &c, NULL, 0);
    if (c)
        stress_read(c, a->final_tick, &a->r);
    hs_client_detach(c);
    return NULL;
}

static void test_seqlock_is_race_free_under_tsan(void **state)
{
    (void)state;
    const char *e = getenv("HS_STRESS_UPDATES");
    uint64_t n = e ? strtoull(e, NULL, 10) : 1000000;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "tsan");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);

    struct reader_arg args[READERS];
    pthread_t th[READERS];
    for (int i = 0; i < READERS; i++) {
        args[i] = (struct reader_arg){.bench = bench, .final_tick = n};
        assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
    }
    stress_write(s, n);
    for (int i = 0; i < READERS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        struct stress_result *r = &args[i].r;
        print_message("reader: %llu consistent snapshots, %llu torn, %llu gave-up reads\n",
                      (unsigned long long)r->snapshots, (unsigned long long)r->bad,
                      (unsigned long long)r->eagain);
        assert_int_equal(r->attach_error, 0);
        assert_int_equal(r->bad, 0);
        assert_int_equal(r->regressions, 0);
        assert_int_equal(r->last_tick, n);
    }
    hs_shm_server_destroy(s);
}

/* Command seqlock and tick futex under TSan: a client thread waits for each tick and answers with
 * a whole-robot command (redundant fields), the server thread publishes and reads commands. */
struct lockstep_arg {
    const char *bench;
    uint64_t ticks;
    int error;
    uint64_t seen, missed;
    /* Set once the client has attached and claimed: a tick published before then is neither
     * seen nor missed by it, so the server must not start before (or seen + missed races). */
    atomic_bool ready;
};

static void *client_thread(void *p)
{
    struct lockstep_arg *a = p;
    struct hs_client *c = NULL;
    if ((a->error = hs_client_attach(a->bench, &c, NULL, 0)) < 0) {
        atomic_store(&a->ready, true);
        return NULL;
    }
    if ((a->error = hs_client_claim(c, NULL, 0)) < 0) {
        hs_client_detach(c);
        atomic_store(&a->ready, true);
        return NULL;
    }
    atomic_store(&a->ready, true);
    struct hs_client_command cmd[HS_TEST_JOINTS];
    uint64_t tick = 0;
    uint32_t missed;
    while (tick < a->ticks) {
        int r = hs_client_wait_tick(c, 1000000000, &tick, &missed);
        if (r < 0) {
            a->error = r;
            break;
        }
        a->seen++;
        a->missed += missed;
        for (int i = 0; i < HS_TEST_JOINTS; i++)
            cmd[i] = (struct hs_client_command){.mode = HS_SHM_MODE_POSITION_PD,
                                                .q = (double)tick,
                                                .dq = -(double)tick,
                                                .kp = 2.0 * (double)tick};
        hs_client_write_commands(c, cmd, HS_TEST_JOINTS);
    }
    hs_client_detach(c);
    return NULL;
}

static void test_commands_and_futex_under_tsan(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "tsancmd");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    t.layout.client_timeout_ns = 60000000000ull;
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    struct lockstep_arg a = {.bench = bench, .ticks = 20000};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, client_thread, &a), 0);
    while (!atomic_load(&a.ready)) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    assert_int_equal(a.error, 0);
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(s);
    struct hs_shm_command_report rep;
    uint64_t fresh = 0, bad = 0;
    for (uint64_t tick = 1; tick <= a.ticks; tick++) {
        struct timespec gap = {0, 20000};
        nanosleep(&gap, NULL); /* give the client a chance to keep up */
        hs_shm_server_read_commands(s, (int64_t)tick * 1000, &rep);
        fresh += rep.fresh ? 1 : 0;
        for (int i = 0; i < HS_TEST_JOINTS; i++)
            if (in[i].status != HS_SHM_CMD_NONE &&
                (in[i].cmd.dq != -in[i].cmd.q || in[i].cmd.kp != 2 * in[i].cmd.q ||
                 in[i].cmd.q != in[0].cmd.q))
                bad++;
        hs_shm_server_publish(s, tick, 0, 0);
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    print_message("client saw %llu ticks, missed %llu; server took fresh commands on %llu ticks\n",
                  (unsigned long long)a.seen, (unsigned long long)a.missed,
                  (unsigned long long)fresh);
    assert_int_equal(a.error, 0);
    assert_int_equal(a.seen + a.missed, a.ticks);
    assert_int_equal(bad, 0);
    assert_true(fresh > 0);
    hs_shm_server_destroy(s);
}

/* Lockstep: the release word, its futex and the waiting flag between server and client threads;
 * every tick's commands are the answer to the previous one, so nothing is ever torn or early. */
static void *step_client(void *p)
{
    struct lockstep_arg *a = p;
    struct hs_client *c = NULL;
    if ((a->error = hs_client_attach(a->bench, &c, NULL, 0)) == 0)
        a->error = hs_client_claim(c, NULL, 0);
    atomic_store(&a->ready, true);
    struct hs_client_command cmd[HS_TEST_JOINTS];
    uint64_t tick = 0;
    uint32_t missed;
    while (a->error == 0 && tick < a->ticks) {
        int r = hs_client_wait_tick(c, 10000000000LL, &tick, &missed);
        if (r < 0) {
            a->error = r;
            break;
        }
        a->seen++;
        a->missed += missed;
        for (int i = 0; i < HS_TEST_JOINTS; i++)
            cmd[i] = (struct hs_client_command){.mode = HS_SHM_MODE_POSITION_PD,
                                                .q = (double)tick,
                                                .dq = -(double)tick,
                                                .kp = 2.0 * (double)tick};
        if (hs_client_write_commands(c, cmd, HS_TEST_JOINTS) < 0 || hs_client_step(c) < 0)
            a->error = -EIO;
    }
    hs_client_detach(c);
    return NULL;
}

static void test_lockstep_release_under_tsan(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "tsanstep");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    t.layout.clock_mode = HS_SHM_CLOCK_LOCKSTEP;
    t.layout.client_timeout_ns = 60000000000ull;
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    struct lockstep_arg a = {.bench = bench, .ticks = 5000};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, step_client, &a), 0);
    while (!atomic_load(&a.ready)) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    assert_int_equal(a.error, 0);
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(s);
    struct hs_shm_command_report rep;
    uint64_t wrong = 0, unreleased = 0;
    hs_shm_server_publish(s, 1, 0, 0);
    for (uint64_t tick = 2; tick <= a.ticks; tick++) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t deadline = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec + 10000000000LL;
        if (hs_shm_server_wait_release(s, tick - 1, deadline) != 0) {
            unreleased++;
            break;
        }
        hs_shm_server_read_commands(s, (int64_t)tick * 1000, &rep);
        for (int i = 0; i < HS_TEST_JOINTS; i++)
            wrong += in[i].cmd.q != (double)(tick - 1) || in[i].cmd.dq != -in[i].cmd.q ||
                     in[i].cmd.kp != 2 * in[i].cmd.q;
        hs_shm_server_publish(s, tick, 0, 0);
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(a.error, 0);
    assert_int_equal(unreleased, 0);
    assert_int_equal(wrong, 0);
    assert_int_equal(a.seen, a.ticks);
    assert_int_equal(a.missed, 0);
    hs_shm_server_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seqlock_is_race_free_under_tsan),
        cmocka_unit_test(test_commands_and_futex_under_tsan),
        cmocka_unit_test(test_lockstep_release_under_tsan),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
