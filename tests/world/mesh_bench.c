/* Benchmark (not a test): the step of a robot with dense meshes (tests/world/dense_biped.h:
 * 20 172-triangle feet, grams per link) standing on the box floor under a PD hold, with
 * mesh_collision convex against exact, in one process, interleaved in rounds so both see the
 * same machine load. Default physics (quick step, the quick look's). Prints per variant the
 * median step, the fast mode (10th percentile) and the slow mode (90th: steps on these shared
 * VMs are bimodal), the collision's share from the solver health, and the ratio of medians.
 *   ./build/tests/world/mesh_bench [rounds=5] [steps per round=400] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hilsim/world.h"
#include "world/dense_biped.h"
#include "world/model_builders.h"

struct variant {
    const char *name;
    enum hs_mesh_approx how;
    struct hs_model *floor, *robot;
    struct hs_world *w;
    double *us;
    size_t n;
};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int make(struct variant *v)
{
    v->floor = mb_floor();
    v->robot = hs_test_dense_biped(v->how);
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], v->floor);
    s[0].is_static = true;
    hs_world_spec_default(&s[1], v->robot);
    s[1].root_pose.p[2] = 0.2605;
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_diag d = {0};
    int r = hs_world_create(&p, s, 2, &v->w, &d);
    if (r)
        fprintf(stderr, "%s: %s\n", v->name, d.msg);
    return r;
}

static void hold(struct variant *v)
{
    for (uint32_t i = 1; i < v->robot->nlinks; i++)
        hs_world_set_joint_effort(v->w, 1, i,
                                  -3 * hs_world_joint_position(v->w, 1, i) -
                                      0.003 * hs_world_joint_velocity(v->w, 1, i));
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5, steps = argc > 2 ? atoi(argv[2]) : 400;
    if (rounds < 1 || steps < 1)
        return 2;
    struct variant vs[2] = {{.name = "convex", .how = HS_MESH_CONVEX},
                            {.name = "exact", .how = HS_MESH_EXACT}};
    for (int k = 0; k < 2; k++) {
        if (make(&vs[k]))
            return 1;
        vs[k].us = malloc((size_t)rounds * (size_t)steps * sizeof *vs[k].us);
        if (!vs[k].us)
            return 1;
        for (int i = 0; i < 200; i++) { /* settle before timing */
            hold(&vs[k]);
            hs_world_step(vs[k].w);
        }
        hs_world_health_reset(vs[k].w);
    }
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < steps; i++) {
                hold(&vs[k]);
                double t0 = now_us();
                int rc = hs_world_step(vs[k].w);
                vs[k].us[vs[k].n++] = now_us() - t0;
                if (rc) {
                    fprintf(stderr, "%s: step failed %d\n", vs[k].name, rc);
                    return 1;
                }
            }
    printf("dense biped (2 x 20172-triangle feet), %d rounds x %d steps, interleaved\n", rounds,
           steps);
    printf("%-8s %10s %10s %10s %12s  %s\n", "variant", "median us", "fast p10", "slow p90",
           "coll. mean us", "costliest pair class");
    double med[2];
    for (int k = 0; k < 2; k++) {
        struct variant *v = &vs[k];
        qsort(v->us, v->n, sizeof *v->us, cmp);
        med[k] = v->us[v->n / 2];
        struct hs_world_health_summary h;
        hs_world_health_summary(v->w, &h);
        double coll = 0;
        for (uint32_t i = 0; i < h.npair_costs; i++)
            coll += h.pair_costs[i].total_s;
        printf("%-8s %10.1f %10.1f %10.1f %12.1f  %s\n", v->name, med[k], v->us[v->n / 10],
               v->us[v->n * 9 / 10], h.steps ? 1e6 * coll / (double)h.steps : 0,
               h.npair_costs ? h.pair_costs[0].name : "-");
    }
    printf("exact / convex (medians): %.1f\n", med[1] / med[0]);
    for (int k = 0; k < 2; k++) {
        hs_world_destroy(vs[k].w);
        hs_model_free(vs[k].robot);
        mb_free(vs[k].floor);
        free(vs[k].us);
    }
    return 0;
}
