/* A hostile client against a real server in another process: it truncates the segment, grows it,
 * and scribbles over every byte it can reach, while the server keeps ticking. Judged in
 * lockstep (a pipe hands the turn back and forth), so the counts are exact, never timed:
 * every truncation the server touches is absorbed and repaired once, scribbles over the header
 * and names are put back, no invalid command reaches the tick, and a client can attach again
 * afterwards. A second part lets the abuser run freely while the server ticks. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/client.h"
#include "shm/shm_test_layout.h"

enum abuse {
    ABUSE_TRUNCATE_ZERO,
    ABUSE_TRUNCATE_ONE,
    ABUSE_TRUNCATE_PAGE,
    ABUSE_GROW,
    ABUSE_SCRIBBLE_RANDOM,
    ABUSE_SCRIBBLE_NAN, /* consistent seqlock, every command word 0xff (NaN, bad mode) */
    ABUSE_MAP_TRUNCATE, /* truncate while the abuser itself has it mapped, then remap */
    ABUSE_HEADER_ONLY,  /* overwrite magic, sizes, offsets and one name */
    ABUSE_COUNT
};

/* Actions that must make the server repair exactly once (it touches every page each tick). */
static int shrinks(enum abuse a)
{
    return a == ABUSE_TRUNCATE_ZERO || a == ABUSE_TRUNCATE_ONE || a == ABUSE_TRUNCATE_PAGE ||
           a == ABUSE_MAP_TRUNCATE;
}

static void scribble(int fd, uint64_t size, unsigned seed, int nan_commands, uint64_t cmd_off)
{
    unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        _exit(3);
    srand(seed);
    if (nan_commands) {
        memset(p + cmd_off, 0xff, size - cmd_off);
        struct hs_shm_command_head *h = (struct hs_shm_command_head *)(p + cmd_off);
        atomic_store(&h->seq, 2); /* even: the server takes the section as consistent */
    } else {
        for (uint64_t i = 0; i < size; i++)
            p[i] = (unsigned char)rand();
    }
    munmap(p, size);
}

static void abuse(const char *shm_name, enum abuse a, uint64_t size, uint64_t cmd_off,
                  unsigned round)
{
    int fd = shm_open(shm_name, O_RDWR, 0);
    if (fd < 0)
        _exit(2);
    switch (a) {
    case ABUSE_TRUNCATE_ZERO:
        if (ftruncate(fd, 0) < 0)
            _exit(4);
        break;
    case ABUSE_TRUNCATE_ONE:
        if (ftruncate(fd, 1) < 0)
            _exit(4);
        break;
    case ABUSE_TRUNCATE_PAGE:
        if (ftruncate(fd, 4096) < 0)
            _exit(4);
        break;
    case ABUSE_GROW:
        if (ftruncate(fd, (off_t)size * 3) < 0 || ftruncate(fd, (off_t)size) < 0)
            _exit(4);
        break;
    case ABUSE_SCRIBBLE_RANDOM:
        scribble(fd, size, round, 0, cmd_off);
        break;
    case ABUSE_SCRIBBLE_NAN:
        scribble(fd, size, round, 1, cmd_off);
        break;
    case ABUSE_MAP_TRUNCATE: {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED || ftruncate(fd, 100) < 0)
            _exit(4);
        munmap(p, size);
        break;
    }
    case ABUSE_HEADER_ONLY: {
        unsigned char junk[512];
        memset(junk, 0x5a, sizeof junk);
        if (pwrite(fd, junk, 128, 0) != 128 || pwrite(fd, junk, 40, 200) != 40)
            _exit(4);
        break;
    }
    default:
        break;
    }
    close(fd);
}

static int command_ok(const struct hs_shm_joint_input *in)
{
    const struct hs_shm_joint_command *c = &in->cmd;
    return c->mode < HS_SHM_MODE_MAX && isfinite(c->q) && isfinite(c->dq) && isfinite(c->tau_ff) &&
           isfinite(c->current_a) && isfinite(c->kp) && isfinite(c->kd);
}

/* The server ticks `ticks` times; every command it hands over must be valid. */
static void tick(struct hs_shm_server *s, uint64_t *t, int ticks, struct hs_shm_command_report *rep)
{
    for (int k = 0; k < ticks; k++) {
        ++*t;
        hs_test_fill(s, *t);
        hs_shm_server_publish(s, *t, (double)*t * 1e-3, (int64_t)*t * 1000000);
        hs_shm_server_read_commands(s, (int64_t)*t * 1000000, rep);
        const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(s);
        for (uint32_t j = 0; j < hs_shm_server_joint_count(s); j++)
            assert_true(command_ok(&in[j]));
    }
}

static void test_lockstep_abuse(void **state)
{
    (void)state;
    char bench[64], name[128], path[128];
    hs_test_bench(bench, sizeof bench, "abuse");
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    assert_int_equal(hs_shm_server_path(bench, path, sizeof path), 0);
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    struct hs_shm_server *s = NULL;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    uint64_t size = (uint64_t)st.st_size;
    assert_true(size > 4096); /* the truncation to one page cuts sections the tick writes */

    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    hs_client_detach(c);
    int fd = shm_open(name, O_RDONLY, 0);
    struct hs_shm_header hdr;
    assert_int_equal(pread(fd, &hdr, sizeof hdr, 0), (ssize_t)sizeof hdr);
    close(fd);
    uint64_t cmd_off = hdr.command_offset;

    int go[2], done[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(done), 0);
    const unsigned rounds = 3 * ABUSE_COUNT;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        for (unsigned r = 0; r < rounds; r++) {
            char b;
            if (read(go[0], &b, 1) != 1)
                _exit(5);
            abuse(name, (enum abuse)(r % ABUSE_COUNT), size, cmd_off, r);
            if (write(done[1], &b, 1) != 1)
                _exit(5);
        }
        _exit(0);
    }

    uint64_t tk = 0, expect_repairs = 0;
    struct hs_shm_command_report rep;
    tick(s, &tk, 3, &rep);
    uint64_t prev_rejected = rep.rejected_total, prev_torn = rep.torn_total;
    for (unsigned r = 0; r < rounds; r++) {
        enum abuse a = (enum abuse)(r % ABUSE_COUNT);
        char b = 'x';
        assert_int_equal(write(go[1], &b, 1), 1);
        assert_int_equal(read(done[0], &b, 1), 1);
        uint64_t before = rep.repaired_total;
        /* Enough ticks to fault, repair, and audit the whole name table (64 bytes a tick). */
        tick(s, &tk, 2 + (int)(hdr.names_size / 64) + 2, &rep);
        if (shrinks(a)) {
            expect_repairs++;
            assert_int_equal(stat(path, &st), 0);
            assert_int_equal((uint64_t)st.st_size, size); /* the server sized it again */
        }
        if (a == ABUSE_SCRIBBLE_NAN)
            assert_true(rep.rejected_total > prev_rejected); /* refused and counted */
        if (a == ABUSE_SCRIBBLE_RANDOM || a == ABUSE_HEADER_ONLY)
            assert_true(rep.repaired_total > before); /* header or names put back */
        else if (!shrinks(a))
            assert_int_equal(rep.repaired_total, before);
        prev_rejected = rep.rejected_total;
        prev_torn = rep.torn_total;
        /* Whatever was done, a client can attach and read a consistent, current state. */
        assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
        struct hs_shm_joint_state js[HS_TEST_JOINTS];
        struct hs_shm_imu_state imu[HS_TEST_SENSORS];
        struct hs_shm_ft_state ft[HS_TEST_SENSORS];
        struct hs_client_state cs = {.joints = js, .imus = imu, .fts = ft};
        assert_int_equal(hs_client_read_state(c, &cs), 0);
        assert_int_equal(cs.tick, tk);
        assert_int_equal(hs_test_check(cs.tick, js, HS_TEST_JOINTS, imu, 3, ft, 3), 0);
        uint32_t ix;
        assert_int_equal(hs_client_find_joint(c, "RARM_ELBOW", &ix), 0);
        assert_int_equal(ix, 4);
        hs_client_detach(c);
    }
    (void)prev_torn;
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Each shrink was repaired once; scribbles add their own repairs on top. */
    assert_true(rep.repaired_total >= expect_repairs);
    close(go[0]);
    close(go[1]);
    close(done[0]);
    close(done[1]);
    hs_shm_server_destroy(s);
    assert_int_equal(stat(path, &st), -1);
}

/* The abuser runs freely (truncating and scribbling as fast as it can) while the server ticks;
 * the server must survive every interleaving and end with a usable segment. */
static void test_free_running_abuse(void **state)
{
    (void)state;
    char bench[64], name[128];
    hs_test_bench(bench, sizeof bench, "abusefree");
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    struct hs_shm_server *s = NULL;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    int fd = shm_open(name, O_RDONLY, 0);
    struct hs_shm_header hdr;
    assert_int_equal(pread(fd, &hdr, sizeof hdr, 0), (ssize_t)sizeof hdr);
    close(fd);

    int stop[2];
    assert_int_equal(pipe(stop), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(stop[1]);
        fcntl(stop[0], F_SETFL, O_NONBLOCK);
        char b;
        for (unsigned r = 0; read(stop[0], &b, 1) < 0; r++)
            abuse(name, (enum abuse)(r % ABUSE_COUNT), hdr.total_size, hdr.command_offset, r);
        _exit(0);
    }
    close(stop[0]);
    uint64_t tk = 0;
    struct hs_shm_command_report rep;
    tick(s, &tk, 20000, &rep);
    close(stop[1]); /* read() returns 0: the abuser stops */
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* After the abuser left, a few ticks repair whatever it left behind. */
    tick(s, &tk, 2 + (int)(hdr.names_size / 64) + 2, &rep);
    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    struct hs_shm_joint_state js[HS_TEST_JOINTS];
    struct hs_client_state cs = {.joints = js};
    assert_int_equal(hs_client_read_state(c, &cs), 0);
    assert_int_equal(cs.tick, tk);
    hs_client_detach(c);
    print_message("free-running abuse: %llu ticks, %llu repairs, %llu rejected, %llu torn\n",
                  (unsigned long long)tk, (unsigned long long)rep.repaired_total,
                  (unsigned long long)rep.rejected_total, (unsigned long long)rep.torn_total);
    hs_shm_server_destroy(s);
}

/* A SIGBUS that is not about a segment still kills the process as it would without the guard. */
static void test_foreign_sigbus_still_fatal(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "foreign");
    struct hs_test_layout t;
    hs_test_layout_init(&t, 3);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGBUS, SIG_DFL); /* as in hilsim; cmocka's own handler would catch it here */
        struct hs_shm_server *s;
        if (hs_shm_server_create(bench, &t.layout, NULL, 0, &s, NULL) < 0)
            _exit(2);
        FILE *f = tmpfile();
        if (!f)
            _exit(3);
        volatile unsigned char *p =
            mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0); /* size 0 */
        if (p == MAP_FAILED)
            _exit(3);
        hs_shm_server_mark_stopped(s);
        p[0] = 1; /* SIGBUS outside any segment */
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGBUS);
    /* Its segment was left marked stopped; the next server takes it over. */
    struct hs_shm_segment_info info;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_inspect(bench, &info, &d), 0);
    assert_int_equal(info.server_state, HS_SHM_SERVER_STOPPED);
    assert_false(info.alive);
    struct hs_shm_server *s2;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s2, &d), 0);
    assert_non_null(strstr(hs_shm_server_note(s2), "took over"));
    hs_shm_server_destroy(s2);
}

static void *mark_stopped_thread(void *server)
{
    hs_shm_server_mark_stopped(server);
    return NULL;
}

/* Each server owns its guard, and the state the SIGBUS handler reads is the faulting thread's:
 * more servers than the old process-wide table had slots (8), every one truncated, each fault
 * absorbed in that server's own calls and repaired; server 0 is first touched on another
 * thread (the emergency stop's mark_stopped runs on whichever thread took the signal). Without
 * the guard on that thread, or with a full table, the process dies of SIGBUS here. */
#define MANY_SERVERS 12
static void test_many_servers_each_guarded(void **state)
{
    (void)state;
    struct hs_test_layout t;
    hs_test_layout_init(&t, 3);
    struct hs_shm_server *s[MANY_SERVERS];
    char bench[MANY_SERVERS][64], path[128];
    uint64_t size[MANY_SERVERS];
    struct hs_diag d;
    for (int i = 0; i < MANY_SERVERS; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "many%d", i);
        hs_test_bench(bench[i], sizeof bench[i], tag);
        assert_int_equal(hs_shm_server_create(bench[i], &t.layout, NULL, 0, &s[i], &d), 0);
        struct stat st;
        assert_int_equal(hs_shm_server_path(bench[i], path, sizeof path), 0);
        assert_int_equal(stat(path, &st), 0);
        size[i] = (uint64_t)st.st_size;
        assert_int_equal(truncate(path, 0), 0);
    }
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, mark_stopped_thread, s[0]), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    for (int i = 0; i < MANY_SERVERS; i++) {
        uint64_t tk = 0;
        struct hs_shm_command_report rep;
        tick(s[i], &tk, 2, &rep); /* the first absorbs, the second repairs */
        assert_true(rep.repaired_total >= 1);
        struct stat st;
        assert_int_equal(hs_shm_server_path(bench[i], path, sizeof path), 0);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal((uint64_t)st.st_size, size[i]);
        struct hs_client *c;
        char err[256];
        assert_int_equal(hs_client_attach(bench[i], &c, err, sizeof err), 0);
        hs_client_detach(c);
        hs_shm_server_destroy(s[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lockstep_abuse),
        cmocka_unit_test(test_free_running_abuse),
        cmocka_unit_test(test_foreign_sigbus_still_fatal),
        cmocka_unit_test(test_many_servers_each_guarded),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
