/* Seqlock stress across processes: a server publishing 10^6 ticks at full speed and two forked
 * reader processes (each attached through libhilsim-client) verifying every snapshot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "shm/shm_stress_core.h"

#define READERS 2

static uint64_t updates(void)
{
    const char *e = getenv("HS_STRESS_UPDATES");
    return e ? strtoull(e, NULL, 10) : 1000000;
}

static void test_readers_never_see_a_torn_snapshot(void **state)
{
    (void)state;
    uint64_t n = updates();
    char bench[64];
    hs_test_bench(bench, sizeof bench, "stress");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);

    int ready[2], results[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(results), 0);
    pid_t pids[READERS];
    for (int i = 0; i < READERS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            struct stress_result r = {0};
            struct hs_client *c = NULL;
            r.attach_error = hs_client_attach(bench, &c, NULL, 0);
            char one = 1;
            if (write(ready[1], &one, 1) != 1)
                _exit(3);
            if (c)
                stress_read(c, n, &r);
            hs_client_detach(c);
            _exit(write(results[1], &r, sizeof r) == sizeof r ? 0 : 3);
        }
    }
    for (int i = 0; i < READERS; i++) {
        char one;
        assert_int_equal(read(ready[0], &one, 1), 1);
    }
    double t0 = stress_now_s();
    stress_write(s, n);
    double dt = stress_now_s() - t0;

    for (int i = 0; i < READERS; i++) {
        struct stress_result r;
        assert_int_equal(read(results[0], &r, sizeof r), (ssize_t)sizeof r);
        print_message("reader: %llu consistent snapshots, %llu torn, %llu regressions, %llu "
                      "gave-up reads, last tick %llu\n",
                      (unsigned long long)r.snapshots, (unsigned long long)r.bad,
                      (unsigned long long)r.regressions, (unsigned long long)r.eagain,
                      (unsigned long long)r.last_tick);
        assert_int_equal(r.attach_error, 0);
        assert_int_equal(r.bad, 0);
        assert_int_equal(r.regressions, 0);
        assert_true(r.snapshots > 0);
        assert_int_equal(r.last_tick, n);
    }
    for (int i = 0; i < READERS; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    print_message("writer: %llu publishes in %.3f s (%.0f ns each)\n", (unsigned long long)n, dt,
                  dt * 1e9 / (double)n);
    hs_shm_server_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readers_never_see_a_torn_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
