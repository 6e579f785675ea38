/* shm_bench: costs of the shared-memory interface for a humanoid-sized bench (30 joints, 3 IMUs,
 * 3 F/T sensors), as percentiles in nanoseconds. Not a ctest: the host is not an RT machine, so
 * figures are reported next to the cost of the timing itself (clock_gettime pair) as a baseline.
 *
 *   shm_bench [ITERATIONS]
 *
 * publish:        hs_shm_server_publish, nobody waiting (no syscall)
 * publish+wake:   hs_shm_server_publish while a client blocks in hs_client_wait_tick (FUTEX_WAKE)
 * publish+nowake: waiters raised but nobody asleep (a waiter was killed): the wake syscall alone
 * read_commands:  hs_shm_server_read_commands with a client's commands present
 * client read:    hs_client_read_state of the full snapshot
 * round trip:     client writes a command -> server thread (spinning tick loop: read commands,
 *                 publish) -> client sees command_seq echoed in a published state */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hilsim/client.h"
#include "shm/shm_test_layout.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    printf("%-14s n=%-7zu p50 %6lld  p90 %6lld  p99 %6lld  p99.9 %7lld  max %8lld ns\n", what, n,
           (long long)v[n / 2], (long long)v[n * 9 / 10], (long long)v[n * 99 / 100],
           (long long)v[n * 999 / 1000], (long long)v[n - 1]);
}

struct shared {
    struct hs_shm_server *s;
    const char *bench;
    atomic_int stop;
    atomic_int ready;
    size_t n;
    int64_t *samples;
};

static void *waiter_thread(void *p)
{
    struct shared *sh = p;
    struct hs_client *c;
    if (hs_client_attach(sh->bench, &c, NULL, 0) < 0)
        return NULL;
    atomic_store(&sh->ready, 1);
    while (!atomic_load(&sh->stop))
        hs_client_wait_tick(c, 10000000, NULL, NULL);
    hs_client_detach(c);
    return NULL;
}

static void *tick_thread(void *p)
{
    struct shared *sh = p;
    struct hs_shm_command_report rep;
    for (uint64_t tick = 1; !atomic_load_explicit(&sh->stop, memory_order_relaxed); tick++) {
        hs_shm_server_read_commands(sh->s, now_ns(), &rep);
        hs_shm_server_publish(sh->s, tick, 0, now_ns());
    }
    return NULL;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
    if (n < 1000)
        n = 1000;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "bench");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    t.layout.client_timeout_ns = 60000000000ull;
    t.layout.command_timeout_ns = 60000000000ull;
    struct hs_shm_server *s;
    struct hs_diag d;
    if (hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d) < 0) {
        fprintf(stderr, "shm_bench: %s\n", d.msg);
        return 1;
    }
    int64_t *v = malloc(n * sizeof *v);
    printf("shm_bench: %u joints, %u IMUs, %u F/T, state %zu bytes, %zu iterations\n",
           hs_shm_server_joint_count(s), hs_shm_server_imu_count(s), hs_shm_server_ft_count(s),
           (size_t)hs_shm_state_bytes(HS_TEST_JOINTS, 3, 3), n);

    for (size_t i = 0; i < n; i++) {
        int64_t a = now_ns();
        v[i] = now_ns() - a;
    }
    report("timer pair", v, n);

    for (size_t i = 0; i < n; i++) {
        hs_test_fill(s, i + 1);
        int64_t a = now_ns();
        hs_shm_server_publish(s, i + 1, 0, a);
        v[i] = now_ns() - a;
    }
    report("publish", v, n);

    struct shared sh = {.s = s, .bench = bench};
    pthread_t th;
    pthread_create(&th, NULL, waiter_thread, &sh);
    while (!atomic_load(&sh.ready))
        ;
    size_t nw = n / 10;
    uint64_t tick = n;
    for (size_t i = 0; i < nw; i++) {
        struct timespec gap = {0, 20000}; /* let the waiter go back to sleep */
        nanosleep(&gap, NULL);
        int64_t a = now_ns();
        hs_shm_server_publish(s, ++tick, 0, a);
        v[i] = now_ns() - a;
    }
    atomic_store(&sh.stop, 1);
    hs_shm_server_publish(s, ++tick, 0, 0);
    pthread_join(th, NULL);
    report("publish+wake", v, nw);

    /* A client killed inside FUTEX_WAIT leaves waiters raised: every publish then makes a
     * FUTEX_WAKE syscall that finds nobody. */
    char name[128];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    int fd = shm_open(name, O_RDWR, 0);
    struct hs_shm_header *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (h != MAP_FAILED) {
        atomic_fetch_add(&h->waiters, 1);
        for (size_t i = 0; i < n; i++) {
            int64_t a = now_ns();
            hs_shm_server_publish(s, ++tick, 0, a);
            v[i] = now_ns() - a;
        }
        atomic_fetch_sub(&h->waiters, 1);
        munmap(h, sizeof *h);
        report("publish+nowake", v, n);
    }

    struct hs_client *c;
    char err[256];
    if (hs_client_attach(bench, &c, err, sizeof err) < 0 || hs_client_claim(c, err, sizeof err)) {
        fprintf(stderr, "shm_bench: %s\n", err);
        return 1;
    }
    struct hs_client_command cmds[HS_TEST_JOINTS] = {0};
    for (int i = 0; i < HS_TEST_JOINTS; i++)
        cmds[i] = (struct hs_client_command){.mode = HS_SHM_MODE_POSITION_PD, .kp = 1};
    struct hs_shm_command_report rep;
    for (size_t i = 0; i < n; i++) {
        if (i % 2 == 0)
            hs_client_write_commands(c, cmds, HS_TEST_JOINTS);
        int64_t a = now_ns();
        hs_shm_server_read_commands(s, a, &rep);
        v[i] = now_ns() - a;
    }
    report("read_commands", v, n);

    struct hs_shm_joint_state j[HS_TEST_JOINTS];
    struct hs_shm_imu_state m[3];
    struct hs_shm_ft_state f[3];
    struct hs_client_state st = {.joints = j, .imus = m, .fts = f};
    for (size_t i = 0; i < n; i++) {
        int64_t a = now_ns();
        hs_client_read_state(c, &st);
        v[i] = now_ns() - a;
    }
    report("client read", v, n);

    sh.stop = 0;
    pthread_create(&th, NULL, tick_thread, &sh);
    size_t nr = n / 10, done = 0;
    for (size_t i = 0; i < nr; i++) {
        hs_client_write_commands(c, cmds, HS_TEST_JOINTS);
        uint64_t seq = hs_client_last_command_seq(c);
        int64_t a = now_ns();
        for (;;) {
            if (hs_client_read_state(c, &st) == 0 && st.command_seq >= seq)
                break;
            if (now_ns() - a > 100000000)
                break;
        }
        v[done++] = now_ns() - a;
    }
    atomic_store(&sh.stop, 1);
    pthread_join(th, NULL);
    report("round trip", v, done);

    hs_client_detach(c);
    hs_shm_server_destroy(s);
    free(v);
    return 0;
}
