/* The emergency path of `hilsim run`: the hook registry, and a process dying of a fatal or
 * watchdog signal that still puts the CAN boards' stop frames on the wire. The bench is the
 * bundled arm2-can.yaml served over socketpair buses (tests/canio/canio_rig.c); the process
 * that dies is a forked child sharing the bus sockets, the parent is the boards' host. */
#include "mit_config.h"
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "canio/canio_rig.h"
#include "hilsim/can_mit.h"
#include "hilsim/can_odrive.h"
#include "emergency.h"

static int calls[3];

static void count0(void *ctx)
{
    (void)ctx;
    calls[0]++;
}

static void count1(void *ctx)
{
    calls[1] += *(int *)ctx;
}

static void test_registry_runs_each_hook_once_in_order(void **state)
{
    (void)state;
    int weight = 5;
    memset(calls, 0, sizeof calls);
    hs__emergency_clear();
    assert_int_equal(hs__emergency_register("a", count0, NULL), 0);
    assert_int_equal(hs__emergency_register("b", count1, &weight), 0);
    assert_int_equal(hs__emergency_run(), 2);
    assert_int_equal(hs__emergency_run(), 0); /* once: a second signal does not repeat it */
    assert_int_equal(calls[0], 1);
    assert_int_equal(calls[1], 5);
    hs__emergency_clear(); /* a cleared registry calls nothing */
    assert_int_equal(hs__emergency_run(), 0);
    hs__emergency_clear();
    for (int i = 0; i < HS_EMERGENCY_MAX_HOOKS; i++)
        assert_int_equal(hs__emergency_register("x", count0, NULL), 0);
    assert_int_equal(hs__emergency_register("x", count0, NULL), -ENOSPC);
    hs__emergency_clear();
}

static struct canio_rig rig;

static void can_hook(void *ctx)
{
    struct canio_rig *r = ctx;
    hs_bench_can_emergency_stop(r->can, r->bench);
}

static int open_rig(void)
{
    const char *src = getenv("HS_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/config/arm2-can.yaml", src ? src : ".");
    if (canio_rig_open(&rig, path, NULL, NULL, true) < 0)
        return -1;
    for (int i = 0; i < 50; i++) /* let the joints move off their initial pose */
        canio_rig_tick(&rig);
    struct hs_can_frame f[64];
    for (uint32_t b = 0; b < rig.npeers; b++)
        while (canio_recv(&rig, b, f, 64) > 0) /* the cyclic frames of those ticks */
            ;
    return 0;
}

/* All frames waiting at the peers, bus by bus. */
static unsigned drain(struct hs_can_frame *out, unsigned max)
{
    unsigned n = 0;
    for (uint32_t b = 0; b < rig.npeers; b++) {
        int k;
        while (n < max && (k = canio_recv(&rig, b, out + n, max - n)) > 0)
            n += (unsigned)k;
    }
    return n;
}

/* The child dies of sig with the hooks installed; the frames it leaves on the buses must be
 * exactly those the orderly safe stop sends for the same joint state. */
static void dies_of_with_stop_frames(int sig)
{
    assert_int_equal(open_rig(), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        if (hs__emergency_install() < 0 || hs__emergency_register("can", can_hook, &rig) < 0)
            _exit(99);
        raise(sig);
        _exit(98); /* not reached: the handler re-raises with the default action */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sig);

    struct hs_can_frame em[64], st[64];
    unsigned nem = drain(em, 64);
    hs_bench_safe_stop(rig.bench); /* the parent's state is the child's at the fork */
    unsigned nst = drain(st, 64);
    assert_int_equal(nem, rig.cfg->can.nnodes); /* one per MIT/ODrive node */
    assert_int_equal(nem, nst);
    for (unsigned i = 0; i < nem; i++) {
        assert_int_equal(em[i].id, st[i].id);
        assert_int_equal(em[i].len, st[i].len);
        assert_memory_equal(em[i].data, st[i].data, em[i].len);
    }
    /* And what each says, from the protocols' own definitions (arm2-can.yaml: MIT node 1
     * replying to 0 with the current, ODrive node 2). */
    bool mit = false, odrive = false;
    for (unsigned i = 0; i < nem; i++) {
        if (em[i].id == hs_odrive_can_id(2, HS_ODRIVE_HEARTBEAT)) {
            odrive = true;
            assert_int_equal(em[i].len, 8);
            assert_int_equal(em[i].data[4], HS_ODRIVE_STATE_IDLE);
        } else {
            const struct hs_cfg_mit *m = hs_cfg_mit(&rig.cfg->can.nodes[0]);
            struct hs_mit_limits lim = {m->p_min,  m->p_max, m->v_min,  m->v_max, 0,
                                        m->kp_max, 0,        m->kd_max, m->i_min, m->i_max};
            uint8_t id;
            double p, v, t;
            assert_int_equal(em[i].id, m->reply_id);
            assert_int_equal(hs_mit_unpack_reply(&lim, em[i].data, em[i].len, &id, &p, &v, &t), 0);
            mit = true;
            assert_int_equal(id, 1);
            assert_true(fabs(t) <= (m->i_max - m->i_min) / 4095.0); /* zero current, 12 bits */
            double q = hs_bench_joint_reading(rig.bench,
                                              (uint32_t)hs_bench_find_joint(rig.bench, "SHOULDER"))
                           ->q;
            assert_true(fabs(p - q) <= (m->p_max - m->p_min) / 65535.0);
            assert_true(fabs(q) > 1e-3); /* the joint has moved: the frame carries its state */
        }
    }
    assert_true(mit && odrive);
    canio_rig_close(&rig);
}

static void test_sigquit_sends_stop_frames_and_dies_of_it(void **state)
{
    (void)state;
    dies_of_with_stop_frames(SIGQUIT);
}

static void test_sigabrt_sends_stop_frames_and_dies_of_it(void **state)
{
    (void)state;
    dies_of_with_stop_frames(SIGABRT);
}

static void test_sigbus_sends_stop_frames_and_dies_of_it(void **state)
{
    (void)state;
    dies_of_with_stop_frames(SIGBUS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_runs_each_hook_once_in_order),
        cmocka_unit_test(test_sigquit_sends_stop_frames_and_dies_of_it),
        cmocka_unit_test(test_sigabrt_sends_stop_frames_and_dies_of_it),
        cmocka_unit_test(test_sigbus_sends_stop_frames_and_dies_of_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
