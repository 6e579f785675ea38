/* urdf_bench: what a URDF robot with meshes costs, triangle meshes against their bounding boxes
 * (hs_model_options.mesh_approx), measured side by side in one run:
 *   - load: hs_model_load_opts (XML, mesh files through assimp), median of N loads each;
 *   - build: hs_world_create of the robot on a floor (bodies, joints, trimesh data, warm-up);
 *   - step: hs_world_step of the two worlds interleaved in blocks, after the robot has been
 *     dropped from --z metres and lies on the floor in contact (no controller: the contact
 *     load is what the collision geometry decides).
 * A third variant, convex (the default: each mesh's qhull hull), is measured the same way.
 * Prints medians and the ratios exact / box and exact / convex; also the mesh bytes read, for the
 * issue's goal (20 MB of meshes loaded and built in under 1 s).
 *
 * usage: urdf_bench URDF [--package-path NAME=DIR]... [--floor FILE] [--z M] [--loads N]
 *                   [--steps N] [--block N]
 * e.g. ./build/tests/model/urdf_bench /tmp/hs-robots/.../g1_29dof_with_hand.urdf */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "hilsim/model.h"
#include "hilsim/world.h"

#define NV 3 /* variants: exact triangles, bounding boxes, hulls */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This thread's CPU time: what the work costs when other processes share the cores. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static struct hs_model *load(const char *path, const struct hs_model_options *o)
{
    struct hs_model *m = NULL;
    struct hs_diag d = {0};
    if (hs_model_load_opts(path, o, &m, &d) < 0) {
        fprintf(stderr, "urdf_bench: %s:%d: %s\n", d.file, d.line, d.msg);
        exit(2);
    }
    return m;
}

/* Robot dropped from z onto a 20 m x 20 m floor box (or the given environment). */
static struct hs_world *build(const struct hs_model *robot, const struct hs_model *floor, double z)
{
    struct hs_world_body_spec s[2];
    hs_world_spec_default(&s[0], robot);
    s[0].root_pose.p[2] += z;
    hs_world_spec_default(&s[1], floor);
    s[1].is_static = true;
    struct hs_world_params p;
    hs_world_params_default(&p);
    /* A limp robot's fingers flap past their velocity limits when it lands (G1's thumbs): this
     * measures cost, so the guard only checks that numbers stay finite. */
    p.guard.joint_rate_factor = INFINITY;
    struct hs_world *w = NULL;
    struct hs_diag d = {0};
    if (hs_world_create(&p, s, 2, &w, &d) < 0) {
        fprintf(stderr, "urdf_bench: world: %s\n", d.msg);
        exit(1);
    }
    return w;
}

static uint64_t mesh_bytes(const struct hs_model *m)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < m->ngeoms; i++)
        if (m->geoms[i].type == HS_GEOM_MESH)
            n += m->geoms[i].u.mesh.nvertices * 3ull * sizeof(double) +
                 m->geoms[i].u.mesh.ntriangles * 3ull * sizeof(uint32_t);
    return n;
}

static uint32_t triangles(const struct hs_model *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->ngeoms; i++)
        if (m->geoms[i].type == HS_GEOM_MESH)
            n += m->geoms[i].u.mesh.ntriangles;
    return n;
}

/* A flat floor as a URDF written next to nothing: one static box, top at z = 0. */
static struct hs_model *flat_floor(void)
{
    static const char urdf[] = "<robot name=\"floor\"><link name=\"floor\"><collision><origin "
                               "xyz=\"0 0 -0.05\"/><geometry><box size=\"20 20 0.1\"/></geometry>"
                               "</collision></link></robot>";
    struct hs_model *m = NULL;
    struct hs_diag d = {0};
    if (hs_model_load_buffer(urdf, sizeof urdf - 1, "floor.urdf", NULL, &m, &d) < 0) {
        fprintf(stderr, "urdf_bench: floor: %s\n", d.msg);
        exit(1);
    }
    return m;
}

static int diverged(const struct hs_world *w, const char *variant)
{
    char why[256];
    hs_world_fault_format(w, hs_world_fault(w), NULL, why, sizeof why);
    fprintf(stderr, "urdf_bench: the %s world stopped: %s\n", variant, why);
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *floor_path = NULL;
    struct hs_model_package pk[16];
    struct hs_model_options o[NV] = {{.packages = pk}, {.packages = pk}, {.packages = pk}};
    double z = 1.0;
    int loads = 5, steps = 4000, block = 100;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--package-path") && v && o[0].npackages < 16) {
            char *eq = strchr(argv[++i], '=');
            pk[o[0].npackages++] = eq ? (*eq = '\0', (struct hs_model_package){argv[i], eq + 1})
                                      : (struct hs_model_package){NULL, argv[i]};
        } else if (!strcmp(a, "--floor") && v) {
            floor_path = argv[++i];
        } else if (!strcmp(a, "--z") && v) {
            z = atof(argv[++i]);
        } else if (!strcmp(a, "--loads") && v) {
            loads = atoi(argv[++i]);
        } else if (!strcmp(a, "--steps") && v) {
            steps = atoi(argv[++i]);
        } else if (!strcmp(a, "--block") && v) {
            block = atoi(argv[++i]);
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            fprintf(stderr, "usage: urdf_bench URDF [--package-path NAME=DIR]... [--floor FILE] "
                            "[--z M] [--loads N] [--steps N] [--block N]\n");
            return 2;
        }
    }
    if (!path || loads < 1 || steps < block || block < 1) {
        fprintf(stderr, "urdf_bench: give a URDF; loads >= 1, steps >= block >= 1\n");
        return 2;
    }
    o[1].npackages = o[2].npackages = o[0].npackages;
    o[0].mesh_approx = HS_MESH_EXACT;
    o[1].mesh_approx = HS_MESH_BOX;
    o[2].mesh_approx = HS_MESH_CONVEX;
    static const char *const name[NV] = {"trimesh", "box", "convex"};
    struct hs_model *floor = floor_path ? load(floor_path, NULL) : flat_floor();

    /* Load and build, alternating the variants so drift hits both alike. */
    double *t_load[NV], *t_build[NV], *t_cpu[NV];
    struct hs_model *m[NV] = {NULL, NULL, NULL};
    for (int v = 0; v < NV; v++) {
        t_load[v] = calloc((size_t)loads, sizeof(double));
        t_build[v] = calloc((size_t)loads, sizeof(double));
        t_cpu[v] = calloc((size_t)loads, sizeof(double));
    }
    for (int k = 0; k < loads; k++)
        for (int v = 0; v < NV; v++) {
            double t0 = now_s(), c0 = cpu_s();
            struct hs_model *x = load(path, &o[v]);
            double t1 = now_s();
            struct hs_world *w = build(x, floor, z);
            double t2 = now_s();
            t_cpu[v][k] = cpu_s() - c0;
            t_load[v][k] = t1 - t0;
            t_build[v][k] = t2 - t1;
            hs_world_destroy(w);
            if (m[v])
                hs_model_free(x);
            else
                m[v] = x;
        }
    printf("%s: %u links, %u geoms, %u mesh triangles (%.1f MB of vertex and index arrays)\n", path,
           m[0]->nlinks, m[0]->ngeoms, triangles(m[0]), (double)mesh_bytes(m[0]) / 1e6);
    printf("  %-10s %12s %12s %14s\n", "variant", "load ms", "build ms", "step us");
    double med_load[NV], med_build[NV], med_step[NV];
    for (int v = 0; v < NV; v++) {
        med_load[v] = 1e3 * median(t_load[v], loads);
        med_build[v] = 1e3 * median(t_build[v], loads);
    }
    /* Steps: both worlds settle first, then alternate blocks; per-step time of each block. */
    struct hs_world *w[NV] = {build(m[0], floor, z), build(m[1], floor, z), build(m[2], floor, z)};
    for (int v = 0; v < NV; v++)
        for (int i = 0; i < 1500; i++)
            if (hs_world_step(w[v]) < 0)
                return diverged(w[v], name[v]);
    int nblocks = steps / block;
    double *t_step[NV];
    for (int v = 0; v < NV; v++)
        t_step[v] = calloc((size_t)nblocks, sizeof(double));
    uint32_t contacts[NV] = {0, 0, 0};
    for (int b = 0; b < nblocks; b++)
        for (int v = 0; v < NV; v++) {
            double t0 = now_s();
            for (int i = 0; i < block; i++)
                if (hs_world_step(w[v]) < 0)
                    return diverged(w[v], name[v]);
            t_step[v][b] = (now_s() - t0) / block;
            contacts[v] = hs_world_contact_count(w[v]);
        }
    for (int v = 0; v < NV; v++) {
        med_step[v] = 1e6 * median(t_step[v], nblocks);
        printf("  %-10s %12.2f %12.2f %14.1f   (%u contacts at the end)\n", name[v], med_load[v],
               med_build[v], med_step[v], contacts[v]);
    }
    printf("  ratio trimesh/box: load %.2f, build %.2f, step %.2f\n", med_load[0] / med_load[1],
           med_build[0] / med_build[1], med_step[0] / med_step[1]);
    printf("  ratio trimesh/convex: load %.2f, build %.2f, step %.2f\n", med_load[0] / med_load[2],
           med_build[0] / med_build[2], med_step[0] / med_step[2]);
    printf("  load + build with trimeshes: %.1f ms wall, %.1f ms CPU (goal for 20 MB of meshes: "
           "< 1000 ms)\n",
           med_load[0] + med_build[0], 1e3 * median(t_cpu[0], loads));
    for (int v = 0; v < NV; v++) {
        hs_world_destroy(w[v]);
        hs_model_free(m[v]);
        free(t_load[v]);
        free(t_build[v]);
        free(t_cpu[v]);
        free(t_step[v]);
    }
    hs_model_free(floor);
    return 0;
}
