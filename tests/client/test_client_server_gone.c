/* A client learns that its server is gone: a stop gives -ESHUTDOWN (writes included), a crash
 * gives -EIDRM (from wait_tick's timeout path, read_state of an old state, and
 * hs_client_server_check), also once a new server took the name over; attaching again then
 * reaches the new server. Real servers in other processes, judged in lockstep over pipes. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/client.h"
#include "shm/shm_test_layout.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A server process that publishes one tick (stamped age_ns in the past), says 'r', and on the
 * next byte dies without destroying anything (as under SIGKILL). */
static pid_t crashing_server(const char *bench, int64_t age_ns, int *ret_go, int *ret_ready)
{
    int go[2], ready[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(ready), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct hs_test_layout t;
        hs_test_layout_init(&t, 3);
        struct hs_shm_server *s;
        if (hs_shm_server_create(bench, &t.layout, NULL, 0, &s, NULL) < 0)
            _exit(2);
        hs_test_fill(s, 1);
        hs_shm_server_publish(s, 1, 1e-3, now_ns() - age_ns);
        char b = 'r';
        if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
            _exit(3);
        _exit(0);
    }
    close(go[0]);
    close(ready[1]);
    *ret_go = go[1];
    *ret_ready = ready[0];
    char b;
    assert_int_equal(read(ready[0], &b, 1), 1);
    return child;
}

static void kill_server(pid_t child, int go, int ready)
{
    char b = 'x';
    assert_int_equal(write(go, &b, 1), 1);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(go);
    close(ready);
}

static void test_stopped_server_refuses_writes(void **state)
{
    (void)state;
    char bench[64], err[256];
    hs_test_bench(bench, sizeof bench, "stopped");
    struct hs_test_layout t;
    hs_test_layout_init(&t, 3);
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    hs_test_fill(s, 1);
    hs_shm_server_publish(s, 1, 1e-3, now_ns());
    struct hs_client *c;
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    assert_int_equal(hs_client_claim(c, err, sizeof err), 0);
    struct hs_client_command cmd = {.mode = HS_SHM_MODE_TORQUE, .tau_ff = 1.0};
    assert_int_equal(hs_client_write_command(c, 0, &cmd), 0);
    assert_int_equal(hs_client_server_check(c), 0);
    struct hs_shm_joint_state js[3];
    struct hs_client_state st = {.joints = js};
    assert_int_equal(hs_client_read_state(c, &st), 0);

    hs_shm_server_destroy(s);
    assert_int_equal(hs_client_write_command(c, 0, &cmd), -ESHUTDOWN);
    assert_int_equal(hs_client_write_commands(c, &cmd, 1), -ESHUTDOWN);
    assert_int_equal(hs_client_wait_tick(c, 1000000, NULL, NULL), -ESHUTDOWN);
    memset(js, 0, sizeof js);
    assert_int_equal(hs_client_read_state(c, &st), -ESHUTDOWN);
    assert_int_equal(st.tick, 1); /* the last state is still there to look at */
    assert_int_equal(hs_test_check(1, js, 3, NULL, 0, NULL, 0), 0);
    assert_int_equal(hs_client_server_check(c), -ESHUTDOWN);
    hs_client_detach(c);
}

static void test_crashed_server_then_new_one(void **state)
{
    (void)state;
    char bench[64], err[256];
    hs_test_bench(bench, sizeof bench, "crash");
    int go, ready;
    pid_t child = crashing_server(bench, 0, &go, &ready);
    struct hs_client *c;
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    assert_int_equal(hs_client_server_check(c), 0);
    /* A live server that publishes nothing is a timeout, not a gone server. */
    assert_int_equal(hs_client_wait_tick(c, 1000000, NULL, NULL), -ETIMEDOUT);
    kill_server(child, go, ready);

    assert_int_equal(hs_client_wait_tick(c, 1000000, NULL, NULL), -EIDRM);
    assert_int_equal(hs_client_server_check(c), -EIDRM);

    /* A new server takes the name over; the old attachment still reports the old one gone. */
    struct hs_test_layout t;
    hs_test_layout_init(&t, 3);
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    assert_non_null(strstr(hs_shm_server_note(s), "took over"));
    assert_int_equal(hs_client_wait_tick(c, 1000000, NULL, NULL), -EIDRM);
    hs_client_detach(c);

    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    assert_int_equal(hs_client_server_check(c), 0);
    hs_test_fill(s, 7);
    hs_shm_server_publish(s, 7, 7e-3, now_ns());
    uint64_t tick;
    assert_int_equal(hs_client_wait_tick(c, 0, &tick, NULL), 0);
    assert_int_equal(tick, 7);
    hs_client_detach(c);
    hs_shm_server_destroy(s);
}

/* read_state of a state older than the silence limit asks whether the server still exists. */
static void test_read_state_of_a_dead_server(void **state)
{
    (void)state;
    char bench[64], err[256];
    hs_test_bench(bench, sizeof bench, "oldstate");
    int go, ready;
    /* Published "an hour ago": far beyond ten client timeouts (100 ms each here) and 1 s. */
    pid_t child = crashing_server(bench, 3600LL * 1000000000, &go, &ready);
    struct hs_client *c;
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    struct hs_shm_joint_state js[3];
    struct hs_client_state st = {.joints = js};
    assert_int_equal(hs_client_read_state(c, &st), 0); /* old, but its server is alive */
    kill_server(child, go, ready);
    assert_int_equal(hs_client_read_state(c, &st), -EIDRM);
    assert_int_equal(st.tick, 1);
    hs_client_detach(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stopped_server_refuses_writes),
        cmocka_unit_test(test_crashed_server_then_new_one),
        cmocka_unit_test(test_read_state_of_a_dead_server),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
