/* The seqlock stress with threads, built with -fsanitize=thread: the protocol (relaxed atomic
 * data words between acquire/release sequence accesses) must be race-free for TSan. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seqlock_is_race_free_under_tsan),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
