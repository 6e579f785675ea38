/* The control stage on a real ODE world: a live push of F for t changes a floating robot's
 * momentum by F·t (the force acts in every physics substep, for whole ticks), commands wait in
 * the queue and at most HS_CTL_POP_PER_TICK reach the tick per boundary, a full queue refuses,
 * and clear ends a push early. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ode/ode.h>

#include "ctl.h"
#include "hilsim/bench.h"
#include "hilsim/config.h"

/* The biped floating in zero gravity, no floor, no controller: only the push changes its
 * momentum. Two substeps per tick, so a force applied once per tick would show as half. */
static const char *floating_biped = "bench: {name: ctl-float}\n"
                                    "models:\n"
                                    "  - {name: biped, file: biped.wrl}\n"
                                    "physics: {substeps: 2, solver: standard, gravity: [0, 0, 0]}\n"
                                    "rt: {period_ns: 1000000}\n"
                                    "controller: {type: none}\n";

struct rig {
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_ctl_stage *ctl;
    struct hs_ctl_names names;
    uint64_t tick;
};

static void rig_open(struct rig *r)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", getenv("HS_SOURCE_DIR"));
    struct hs_diag d = {0};
    memset(r, 0, sizeof *r);
    if (hs_config_load_buffer(floating_biped, strlen(floating_biped), "float.yaml", dir, &r->cfg,
                              &d) < 0 ||
        hs_bench_create(r->cfg, &r->bench, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    assert_int_equal(hs_ctl_stage_create(r->bench, &r->ctl), 0);
    assert_int_equal(hs_ctl_stage_attach(r->ctl, r->bench), 0);
    hs_ctl_bench_names(r->bench, &r->names);
    hs_bench_sensors(r->bench, 0, 0);
}

static void rig_close(struct rig *r)
{
    hs_bench_destroy(r->bench);
    hs_config_free(r->cfg);
}

static void ticks(struct rig *r, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        r->tick++;
        assert_int_equal(hs_bench_tick(r->bench, (int64_t)r->tick * 1000000, r->tick), 0);
    }
}

static int send(struct rig *r, const char *line)
{
    struct hs_ctl_cmd c;
    char err[200];
    if (hs_ctl_parse(line, strlen(line), &r->names, &c, err, sizeof err) < 0)
        fail_msg("%s: %s", line, err);
    return hs_ctl_stage_push(r->ctl, &c);
}

static void momentum(struct rig *r, double ret[3])
{
    struct hs_world *w = hs_bench_world(r->bench);
    const struct hs_model *m = hs_bench_model(r->bench, 0);
    ret[0] = ret[1] = ret[2] = 0;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        dBodyID b = hs_world_ode_body(w, 0, l);
        if (!b)
            continue;
        dMass mass;
        dBodyGetMass(b, &mass);
        const dReal *v = dBodyGetLinearVel(b);
        for (int k = 0; k < 3; k++)
            ret[k] += mass.mass * v[k];
    }
}

static void test_push_changes_momentum_by_f_t(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    double p0[3], p1[3];
    ticks(&r, 50);
    momentum(&r, p0);
    assert_int_equal(send(&r, "push WAIST 3 50 -2 0.2"), 0);
    ticks(&r, 300);
    momentum(&r, p1);
    /* F t = (0.6, 10, -0.4) N·s over exactly 200 ticks; joints only move momentum around */
    double want[3] = {0.6, 10, -0.4};
    for (int k = 0; k < 3; k++) {
        print_message("axis %d: dp = %.6f N·s, F t = %.6f\n", k, p1[k] - p0[k], want[k]);
        assert_true(fabs(p1[k] - p0[k] - want[k]) < 0.005 * 10); /* 0.5 % of |F t| */
    }
    struct hs_ctl_counters c;
    hs_ctl_stage_counters(r.ctl, &c);
    assert_int_equal(c.applied, 1);
    assert_int_equal(c.last_applied_tick, 51);
    assert_int_equal(c.pushes_active, 0);
    rig_close(&r);
}

static void test_queue_bounds_and_clear(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r);
    /* a push, then a clear in the same batch: the clear ends it at once */
    assert_int_equal(send(&r, "push WAIST 0 100 0 1"), 0);
    ticks(&r, 10);
    double p0[3], p1[3];
    momentum(&r, p0);
    assert_int_equal(send(&r, "clear"), 0);
    ticks(&r, 10);
    momentum(&r, p1);
    /* one tick at most of the push after p0 (the clear lands at the next boundary) */
    assert_true(fabs(p1[1] - p0[1]) < 100 * 0.001 + 1e-6);
    /* a full queue refuses; the tick drains it HS_CTL_POP_PER_TICK at a time */
    struct hs_ctl_counters c0, c1;
    hs_ctl_stage_counters(r.ctl, &c0);
    for (int k = 0; k < HS_CTL_QUEUE_LEN; k++)
        assert_int_equal(send(&r, "fault sensor R_KNEE offset 0.1"), 0);
    assert_int_equal(send(&r, "status"), -ENOBUFS);
    ticks(&r, 1);
    hs_ctl_stage_counters(r.ctl, &c1);
    assert_int_equal(c1.applied - c0.applied, HS_CTL_POP_PER_TICK);
    assert_int_equal(c1.queue_full, 1);
    ticks(&r, HS_CTL_QUEUE_LEN / HS_CTL_POP_PER_TICK);
    hs_ctl_stage_counters(r.ctl, &c1);
    assert_int_equal(c1.applied - c0.applied, HS_CTL_QUEUE_LEN);
    assert_int_equal(c1.faults_active, 1);
    rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_changes_momentum_by_f_t),
        cmocka_unit_test(test_queue_bounds_and_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
