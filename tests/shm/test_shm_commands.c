/* Command section: ownership (claim, takeover of dead or lost owners), per-joint freshness and
 * staleness, and the seqlock guarantee that a client killed mid-write never gets a torn command
 * applied. Time is passed explicitly to read_commands, so nothing here depends on timing. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/client.h"
#include "shm/shm_test_layout.h"

#define MS 1000000LL

struct fixture {
    char bench[64];
    struct hs_test_layout t;
    struct hs_shm_server *s;
    uint32_t nj;
};

static void setup(struct fixture *f, const char *tag, uint32_t joints)
{
    hs_test_bench(f->bench, sizeof f->bench, tag);
    hs_test_layout_init(&f->t, joints);
    f->t.layout.command_timeout_ns = 10 * MS;
    f->t.layout.client_timeout_ns = 100 * MS;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(f->bench, &f->t.layout, NULL, 0, &f->s, &d), 0);
    f->nj = joints;
}

static struct hs_client_command pd(double k)
{
    /* Redundant fields: a torn mix of two commands breaks these relations. */
    return (struct hs_client_command){.mode = HS_SHM_MODE_POSITION_PD,
                                      .q = k,
                                      .dq = -k,
                                      .tau_ff = k + 0.5,
                                      .current_a = 2 * k,
                                      .kp = 3 * k,
                                      .kd = 4 * k};
}

static int consistent(const struct hs_shm_joint_command *c)
{
    double k = c->q;
    return c->mode == HS_SHM_MODE_POSITION_PD && c->dq == -k && c->tau_ff == k + 0.5 &&
           c->current_a == 2 * k && c->kp == 3 * k && c->kd == 4 * k;
}

static void test_fresh_held_stale_none(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, "fresh", 6);
    struct hs_shm_command_report rep;
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(f.s);

    hs_shm_server_read_commands(f.s, 1000 * MS, &rep);
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_NONE);
    assert_int_equal(rep.stale, 6);
    assert_int_equal(in[0].status, HS_SHM_CMD_NONE);

    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(f.bench, &c, err, sizeof err), 0);
    struct hs_client_command cmd = pd(1.25);
    assert_int_equal(hs_client_write_command(c, 3, &cmd), -EPERM); /* not claimed */
    assert_int_equal(hs_client_claim(c, err, sizeof err), 0);
    assert_int_equal(hs_client_write_command(c, 3, &cmd), 0);
    cmd.q = NAN;
    assert_int_equal(hs_client_write_command(c, 3, &cmd), -EINVAL);
    assert_int_equal(hs_client_write_command(c, 6, &cmd), -EINVAL);

    hs_shm_server_read_commands(f.s, 1001 * MS, &rep);
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_ACTIVE);
    assert_int_equal(rep.client_pid, getpid());
    assert_int_equal(rep.fresh, 1);
    assert_int_equal(rep.stale, 5);
    assert_int_equal(in[3].status, HS_SHM_CMD_FRESH);
    assert_true(consistent(&in[3].cmd));
    assert_true(in[3].cmd.q == 1.25);
    assert_int_equal(in[3].cmd.seq, hs_client_last_command_seq(c));
    assert_int_equal(in[2].status, HS_SHM_CMD_NONE);

    hs_shm_server_read_commands(f.s, 1005 * MS, &rep);
    assert_int_equal(in[3].status, HS_SHM_CMD_HELD);
    assert_int_equal(in[3].age_ns, 4 * MS);
    hs_client_heartbeat(c);
    hs_shm_server_read_commands(f.s, 1012 * MS, &rep);
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_ACTIVE);
    assert_int_equal(in[3].status, HS_SHM_CMD_STALE);

    /* A whole-robot write is one seqlock section with one seq. */
    struct hs_client_command all[6];
    for (int i = 0; i < 6; i++)
        all[i] = pd(10 + i);
    assert_int_equal(hs_client_write_commands(c, all, 6), 0);
    hs_shm_server_read_commands(f.s, 1013 * MS, &rep);
    assert_int_equal(rep.fresh, 6);
    assert_int_equal(rep.stale, 0);
    for (int i = 0; i < 6; i++) {
        assert_true(in[i].cmd.q == 10 + i);
        assert_int_equal(in[i].cmd.seq, in[0].cmd.seq);
    }
    assert_int_equal(rep.newest_seq, hs_client_last_command_seq(c));

    /* A second live client cannot take the commands. */
    struct hs_client *c2;
    assert_int_equal(hs_client_attach(f.bench, &c2, err, sizeof err), 0);
    assert_int_equal(hs_client_claim(c2, err, sizeof err), -EBUSY);
    assert_non_null(strstr(err, "live client pid"));
    hs_client_detach(c2);
    hs_client_detach(c);
    hs_shm_server_read_commands(f.s, 1014 * MS, &rep);
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_NONE);
    assert_int_equal(rep.stale, 6); /* released: the commands are no longer live */
    hs_shm_server_destroy(f.s);
}

/* The child claims, writes a good command, then dies (SIGKILL) in the middle of a second write:
 * seq odd, half of joint 0 overwritten with garbage. */
static void child_dies_mid_write(const char *bench, int go_fd, int done_fd)
{
    struct hs_client *c;
    if (hs_client_attach(bench, &c, NULL, 0) < 0 || hs_client_claim(c, NULL, 0) < 0)
        _exit(2);
    struct hs_client_command good = pd(7);
    struct hs_client_command all[3] = {good, good, good};
    if (hs_client_write_commands(c, all, 3) < 0)
        _exit(3);
    char b = 1;
    if (write(done_fd, &b, 1) != 1 || read(go_fd, &b, 1) != 1)
        _exit(4);
    char name[128];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    int fd = shm_open(name, O_RDWR, 0);
    struct hs_shm_header *h = mmap(NULL, 4096 * 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED)
        _exit(5);
    struct hs_shm_command_head *ch =
        (struct hs_shm_command_head *)((unsigned char *)h + h->command_offset);
    struct hs_shm_joint_command *jc = (struct hs_shm_joint_command *)(ch + 1);
    hs_shm_seq_write_begin(&ch->seq);
    uint64_t garbage[4] = {HS_SHM_MODE_TORQUE, 0x7ff0dead00000000ull, 99, 99};
    hs_shm_words_store(jc, garbage, 4); /* mode, q, dq, tau_ff torn; kp, kd, seq old */
    raise(SIGKILL);
    _exit(6);
}

static void test_client_killed_mid_write_then_takeover(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, "killed", 3);
    struct hs_shm_command_report rep;
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(f.s);
    int go[2], done[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(done), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        child_dies_mid_write(f.bench, go[0], done[1]);
    char b;
    assert_int_equal(read(done[0], &b, 1), 1);
    hs_shm_server_read_commands(f.s, 2000 * MS, &rep);
    assert_int_equal(rep.client_pid, child);
    assert_int_equal(rep.fresh, 3);
    assert_true(in[0].cmd.q == 7 && consistent(&in[0].cmd));

    assert_int_equal(write(go[1], &b, 1), 1);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    /* seq is left odd: every read is torn, the good command is held and ages. */
    hs_shm_server_read_commands(f.s, 2001 * MS, &rep);
    assert_int_equal(rep.torn, 1);
    assert_int_equal(rep.fresh, 0);
    assert_int_equal(in[0].status, HS_SHM_CMD_HELD);
    assert_true(in[0].cmd.q == 7 && consistent(&in[0].cmd));
    hs_shm_server_read_commands(f.s, 2011 * MS, &rep);
    assert_int_equal(rep.torn, 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(in[i].status, HS_SHM_CMD_STALE);
        assert_true(in[i].cmd.q == 7 && consistent(&in[i].cmd));
    }
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_ACTIVE);
    hs_shm_server_read_commands(f.s, 2101 * MS, &rep);
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_LOST); /* heartbeat stopped */
    assert_int_equal(rep.lost_total, 1);
    assert_true(rep.torn_total >= 3);

    /* A fresh client takes over the dead owner's section; the torn data is never applied. */
    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(f.bench, &c, err, sizeof err), 0);
    assert_int_equal(hs_client_claim(c, err, sizeof err), 0);
    hs_shm_server_read_commands(f.s, 2102 * MS, &rep);
    assert_int_equal(rep.torn, 0);
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_ACTIVE);
    assert_int_equal(rep.client_pid, getpid());
    assert_int_equal(rep.client_generation, 2);
    assert_int_equal(rep.fresh, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(in[i].status, HS_SHM_CMD_NONE);
    struct hs_client_command cmd = pd(1);
    assert_int_equal(hs_client_write_command(c, 0, &cmd), 0);
    hs_shm_server_read_commands(f.s, 2103 * MS, &rep);
    assert_int_equal(rep.fresh, 1);
    assert_int_equal(in[0].status, HS_SHM_CMD_FRESH);
    assert_true(in[0].cmd.q == 1 && consistent(&in[0].cmd));
    hs_client_detach(c);
    hs_shm_server_destroy(f.s);
}

/* Children write whole-robot commands as fast as they can and are SIGKILLed at random moments;
 * every command the server accepts must be internally consistent. */
static void test_random_kills_never_apply_a_torn_command(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, "random", HS_TEST_JOINTS);
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(f.s);
    struct hs_shm_command_report rep;
    unsigned seed = (unsigned)getpid();
    uint64_t accepted = 0, torn_reads = 0, left_odd = 0;
    int64_t now = 3000 * MS;
    for (int round = 0; round < 20; round++) {
        int ready[2];
        assert_int_equal(pipe(ready), 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            struct hs_client *c;
            char err[256];
            if (hs_client_attach(f.bench, &c, err, sizeof err) < 0 ||
                hs_client_claim(c, err, sizeof err) < 0)
                _exit(2);
            char b = 1;
            if (write(ready[1], &b, 1) != 1)
                _exit(3);
            struct hs_client_command all[HS_TEST_JOINTS];
            for (uint64_t k = 1;; k++) {
                for (int i = 0; i < HS_TEST_JOINTS; i++)
                    all[i] = pd((double)k);
                hs_client_write_commands(c, all, HS_TEST_JOINTS);
            }
        }
        char b;
        assert_int_equal(read(ready[0], &b, 1), 1);
        close(ready[0]);
        close(ready[1]);
        /* Read for a random number of polls, then kill. */
        int polls = 1000 + (int)(rand_r(&seed) % 20000);
        for (int p = 0; p < polls; p++) {
            hs_shm_server_read_commands(f.s, now += 1000, &rep);
            torn_reads += rep.torn;
            for (int i = 0; i < HS_TEST_JOINTS; i++) {
                if (in[i].status == HS_SHM_CMD_NONE)
                    continue;
                if (!consistent(&in[i].cmd) || in[i].cmd.q != in[0].cmd.q)
                    fail_msg("round %d joint %d: torn command applied (q %g dq %g kp %g)", round, i,
                             in[i].cmd.q, in[i].cmd.dq, in[i].cmd.kp);
            }
            accepted += rep.fresh ? 1 : 0;
        }
        kill(child, SIGKILL);
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        hs_shm_server_read_commands(f.s, now += 1000, &rep);
        left_odd += rep.torn;
        for (int i = 0; i < HS_TEST_JOINTS; i++)
            if (in[i].status != HS_SHM_CMD_NONE)
                assert_true(consistent(&in[i].cmd) && in[i].cmd.q == in[0].cmd.q);
    }
    print_message("20 kills: %llu polls with fresh commands, %llu torn reads, %llu kills left "
                  "the section mid-write\n",
                  (unsigned long long)accepted, (unsigned long long)torn_reads,
                  (unsigned long long)left_odd);
    assert_true(accepted > 0);
    hs_shm_server_destroy(f.s);
}

static void test_lost_live_client_can_be_replaced(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, "lost", 2);
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(f.s);
    struct hs_shm_command_report rep;
    struct hs_client *a, *b;
    char err[256];
    assert_int_equal(hs_client_attach(f.bench, &a, err, sizeof err), 0);
    assert_int_equal(hs_client_attach(f.bench, &b, err, sizeof err), 0);
    assert_int_equal(hs_client_claim(a, err, sizeof err), 0);
    struct hs_client_command cmd = pd(5);
    assert_int_equal(hs_client_write_command(a, 1, &cmd), 0);
    hs_shm_server_read_commands(f.s, 5000 * MS, &rep);
    assert_int_equal(in[1].status, HS_SHM_CMD_FRESH);
    assert_int_equal(hs_client_claim(b, err, sizeof err), -EBUSY);

    /* a hangs (no heartbeat) for longer than client_timeout_ns. */
    hs_shm_server_read_commands(f.s, 5101 * MS, &rep);
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_LOST);
    assert_int_equal(in[1].status, HS_SHM_CMD_STALE);
    assert_int_equal(hs_client_write_command(a, 1, &cmd), -ENOTCONN);

    assert_int_equal(hs_client_claim(b, err, sizeof err), 0);
    assert_int_equal(hs_client_write_command(a, 1, &cmd), -EPERM); /* taken over */
    cmd = pd(6);
    assert_int_equal(hs_client_write_command(b, 1, &cmd), 0);
    hs_shm_server_read_commands(f.s, 5102 * MS, &rep);
    assert_int_equal(rep.client_status, HS_SHM_CLIENT_ACTIVE);
    assert_int_equal(in[1].status, HS_SHM_CMD_FRESH);
    assert_true(in[1].cmd.q == 6);
    hs_client_detach(a);
    hs_client_detach(b);
    hs_shm_server_destroy(f.s);
}

/* A client that bypasses the library (or a corrupted segment) cannot get an invalid mode or a
 * non-finite setpoint applied. */
static void test_invalid_commands_are_refused(void **state)
{
    (void)state;
    struct fixture f;
    setup(&f, "invalid", 2);
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(f.s);
    struct hs_shm_command_report rep;
    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(f.bench, &c, err, sizeof err), 0);
    assert_int_equal(hs_client_claim(c, err, sizeof err), 0);
    struct hs_client_command good = pd(2);
    assert_int_equal(hs_client_write_command(c, 0, &good), 0);
    hs_shm_server_read_commands(f.s, 6000 * MS, &rep);
    assert_int_equal(in[0].status, HS_SHM_CMD_FRESH);

    char name[128];
    snprintf(name, sizeof name, "/hilsim-%s", f.bench);
    int fd = shm_open(name, O_RDWR, 0);
    struct hs_shm_header *h = mmap(NULL, 4096 * 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(h != MAP_FAILED);
    struct hs_shm_command_head *ch =
        (struct hs_shm_command_head *)((unsigned char *)h + h->command_offset);
    struct hs_shm_joint_command *jc = (struct hs_shm_joint_command *)(ch + 1);
    struct hs_shm_joint_command bad[2] = {{.mode = HS_SHM_MODE_MAX + 3, .q = 1, .seq = 100},
                                          {.mode = HS_SHM_MODE_TORQUE, .tau_ff = NAN, .seq = 101}};
    uint32_t odd = hs_shm_seq_write_begin(&ch->seq);
    hs_shm_words_store(jc, bad, 2 * sizeof bad[0] / 8);
    hs_shm_seq_write_end(&ch->seq, odd);
    hs_shm_server_read_commands(f.s, 6001 * MS, &rep);
    assert_int_equal(rep.torn, 0);
    assert_int_equal(rep.fresh, 0);
    assert_int_equal(rep.rejected_total, 2);
    assert_int_equal(in[0].status, HS_SHM_CMD_HELD);
    assert_true(in[0].cmd.q == 2 && consistent(&in[0].cmd));
    assert_int_equal(in[1].status, HS_SHM_CMD_NONE);
    munmap(h, 4096 * 4);
    hs_client_detach(c);
    hs_shm_server_destroy(f.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_held_stale_none),
        cmocka_unit_test(test_client_killed_mid_write_then_takeover),
        cmocka_unit_test(test_random_kills_never_apply_a_torn_command),
        cmocka_unit_test(test_lost_live_client_can_be_replaced),
        cmocka_unit_test(test_invalid_commands_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
