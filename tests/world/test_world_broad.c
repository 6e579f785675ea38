/* The broad phase of a world with one robot (world_broad.c) hands the near callback every pair
 * that makes a contact: a limp four-link chain dropped tumbling onto a floor with a block on it
 * (two scenery geoms; links touching, leaving and touching again, several at once) makes, at
 * every step, exactly the contacts and colliding pairs that ODE's full pair test of the space
 * (dSpaceCollide, what the world did before) finds on the same state. Real ODE world, simulated
 * time. A world with two robots or self-collision keeps dSpaceCollide. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "../../src/world/world_internal.h"
#include "hilsim/world.h"
#include "world/model_builders.h"

#define NLINKS 4
#define LEN 0.3
#define STEPS 3000

/* A chain of NLINKS boxes LEN long, hinged end to end about alternating axes (y, z, y),
 * unactuated: it flops when it lands. */
static struct hs_model *chain(void)
{
    struct hs_model *m = mb_new("chain", NLINKS, NLINKS, 0);
    for (uint32_t i = 0; i < NLINKS; i++) {
        struct hs_link *l = &m->links[i];
        double i_end = 0.5 * (LEN * LEN) / 12; /* 0.5 kg rod */
        mb_mass(l, 0.5, LEN / 2, 0, 0, 1e-4, i_end, i_end);
        mb_box(m, i, LEN, 0.04, 0.04, LEN / 2, 0, 0);
        if (i > 0) {
            mb_joint(l, HS_JOINT_ROTATE, 0, i % 2 ? 0 : 1, i % 2 ? 1 : 0);
            l->origin.p[0] = LEN;
        }
    }
    return m;
}

/* Scenery: the floor (top at z = 0) and a 0.2 m block standing on it under the chain. */
static struct hs_model *block(void)
{
    struct hs_model *m = mb_new("block", 1, 1, 0);
    m->links[0].joint_type = HS_JOINT_FIXED;
    mb_box(m, 0, 0.3, 0.3, 0.2, 0.45, 0.1, 0.1);
    return m;
}

static struct hs_world *make(struct hs_model *floor, struct hs_model *blk, struct hs_model *ch,
                             struct hs_model *ch2, bool self_collision)
{
    struct hs_world_body_spec s[4];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], blk);
    s[1].is_static = true;
    static const double q0[NLINKS] = {0, 0.6, -0.9, 0.7};
    hs_world_spec_default(&s[2], ch);
    s[2].q0 = q0;
    s[2].root_pose.p[2] = 0.6;
    /* tilted 0.5 rad about y and 0.3 about x, so it lands on a corner and tumbles */
    double cy = cos(0.5), sy = sin(0.5), cx = cos(0.3), sx = sin(0.3);
    const double R[9] = {cy, sy * sx, sy * cx, 0, cx, -sx, -sy, cy * sx, cy * cx};
    memcpy(s[2].root_pose.R, R, sizeof R);
    uint32_t n = 3;
    if (ch2) {
        hs_world_spec_default(&s[3], ch2);
        s[3].root_pose.p[0] = 2;
        s[3].root_pose.p[2] = 0.3;
        n = 4;
    }
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.self_collision = self_collision;
    return mb_world(&p, s, n);
}

struct full_test {
    struct hs_world *w;
    uint32_t contacts, pairs;
    bool block_touched;
    dContactGeom points[64];
};

/* What the near callback would make of a pair: ODE's contact points, capped as the callback
 * caps them, for the pairs that may touch. */
static void full_pair(void *data, dGeomID a, dGeomID b)
{
    struct full_test *f = data;
    if (!hs__world_may_touch(f->w, a, b))
        return;
    int n =
        dCollide(a, b, (int)hs_world_params(f->w)->max_contacts, f->points, sizeof f->points[0]);
    if (n <= 0)
        return;
    f->pairs++;
    f->contacts += (uint32_t)n;
    const struct hs__world_link *la = dGeomGetData(a), *lb = dGeomGetData(b);
    f->block_touched |= la->owner->index == 1 || lb->owner->index == 1;
}

static void same_contacts_as_full_pair_test(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *blk = block(), *ch = chain();
    struct hs_world *w = make(floor, blk, ch, NULL, false);
    assert_true(w->near_pruned);
    assert_int_equal(w->nnear_static, 2); /* the floor and the block */
    assert_int_equal(w->nnear_dyn, NLINKS);
    uint32_t steps_touching = 0, most_pairs = 0, changes = 0, last_pairs = 0;
    bool block_touched = false;
    for (int i = 0; i < STEPS; i++) {
        struct full_test f = {.w = w};
        dSpaceCollide(hs_world_ode_space(w), &f, full_pair);
        assert_int_equal(hs_world_step(w), 0);
        if (hs_world_contact_count(w) != f.contacts || hs_world_colliding_pairs(w) != f.pairs)
            fail_msg("step %d: %u contacts in %u pairs, the full pair test finds %u in %u", i,
                     hs_world_contact_count(w), hs_world_colliding_pairs(w), f.contacts, f.pairs);
        steps_touching += f.pairs > 0;
        most_pairs = f.pairs > most_pairs ? f.pairs : most_pairs;
        changes += f.pairs != last_pairs;
        last_pairs = f.pairs;
        block_touched |= f.block_touched;
    }
    print_message("%d steps: %u with contacts, at most %u colliding pairs, the set changed %u "
                  "times, the block touched: %s\n",
                  STEPS, steps_touching, most_pairs, changes, block_touched ? "yes" : "no");
    /* The scene did what it is for: contacts most of the time, several links and the block at
     * once, the set of touching links changing as it tumbles. */
    assert_true(steps_touching > STEPS / 2);
    assert_true(most_pairs >= 3);
    assert_true(block_touched);
    assert_true(changes >= 4);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(blk);
    mb_free(ch);
}

static void other_worlds_keep_the_full_test(void **state)
{
    (void)state;
    struct hs_model *floor = mb_floor(), *blk = block(), *ch = chain(), *ch2 = chain();
    struct hs_world *w = make(floor, blk, ch, NULL, true);
    assert_false(w->near_pruned);
    hs_world_destroy(w);
    w = make(floor, blk, ch, ch2, false);
    assert_false(w->near_pruned);
    hs_world_destroy(w);
    mb_free(floor);
    mb_free(blk);
    mb_free(ch);
    mb_free(ch2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_contacts_as_full_pair_test),
        cmocka_unit_test(other_worlds_keep_the_full_test),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
