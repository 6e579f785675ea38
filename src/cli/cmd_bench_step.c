/* hilsim bench-step: cost of hs_world_step against a bare ODE step on the same world.
 *
 * A robot (default SR1.wrl) stands on an environment (default floor.wrl) with contacts at the
 * world's step (default 1 ms); its hinges hold position with ODE velocity motors, which cost the
 * same in both variants. The two variants run interleaved in blocks on the same world so that
 * machine noise hits both alike:
 *   hilsim: hs_world_step (efforts, collide, step, empty contacts, read-backs);
 *   bare:   dSpaceCollide with the world's near callback (its per-step counts reset first) +
 *           dWorldQuickStep + dJointGroupEmpty.
 * Heap calls during the measured steps are counted by perf/heap_counter.c, a malloc interposer
 * linked into the measuring tool perf/bench_step (this file built with HS_HEAP_COUNTER), never
 * into the shipped hilsim; counting is on only around the measured calls. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ode/ode.h>

#include "commands.h"
#include "hilsim/model.h"
#include "hilsim/world.h"
#include "hilsim/rt/rt_clock.h"

#ifdef HS_HEAP_COUNTER
#include "heap_counter.h"
#define HEAP_UNCOUNTED "not counted (sanitizer build)"
#else
/* hilsim itself interposes nothing: the counter stays at 0 and says where the figure is. */
static __thread int hs_heap_counting;
static long hs_heap_calls;
static const bool hs_heap_counter_active = false;
#define HEAP_UNCOUNTED "not counted by hilsim (perf/bench_step counts them)"
#endif

struct bench_opts {
    const char *model, *env;
    unsigned long steps, warmup, block;
    double step_s;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim bench-step [--model FILE] [--env FILE] [--steps N] [--warmup N]\n"
            "                         [--block N] [--dt SECONDS]\n\n"
            "Times hs_world_step against a bare ODE step (collide + dWorldQuickStep +\n"
            "dJointGroupEmpty) on the same world, interleaved in blocks, with the robot\n"
            "standing on the environment under contact.\n\n"
            "  --model FILE  robot (default $HS_SHARED_DIR/models/openhrp/SR1.wrl,\n"
            "                HS_SHARED_DIR defaulting to ../shared)\n"
            "  --env FILE    static environment (default .../floor.wrl; 'none' for none)\n"
            "  --steps N     measured steps per variant (default 10000)\n"
            "  --warmup N    unmeasured steps after create to let the robot settle (default 1000)\n"
            "  --block N     steps per interleaved block (default 100)\n"
            "  --dt SECONDS  physics step (default 0.001)\n");
}

static int parse_count(const char *s, unsigned long lo, unsigned long hi, unsigned long *ret)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
        return -EINVAL;
    *ret = v;
    return 0;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o, char *model, char *env,
                      size_t pathsz)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'}, {"env", required_argument, NULL, 'e'},
        {"steps", required_argument, NULL, 's'}, {"warmup", required_argument, NULL, 'w'},
        {"block", required_argument, NULL, 'b'}, {"dt", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    const char *shared = getenv("HS_SHARED_DIR");
    if (!shared || !*shared)
        shared = "../shared";
    snprintf(model, pathsz, "%s/models/openhrp/SR1.wrl", shared);
    snprintf(env, pathsz, "%s/models/openhrp/floor.wrl", shared);
    o->model = model;
    o->env = env;
    o->steps = 10000;
    o->warmup = 1000;
    o->block = 100;
    o->step_s = 1e-3;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int r = 0;
        char *end;
        switch (c) {
        case 'm':
            o->model = optarg;
            break;
        case 'e':
            o->env = strcmp(optarg, "none") ? optarg : NULL;
            break;
        case 's':
            r = parse_count(optarg, 1, 10000000, &o->steps);
            break;
        case 'w':
            r = parse_count(optarg, 0, 10000000, &o->warmup);
            break;
        case 'b':
            r = parse_count(optarg, 1, 1000000, &o->block);
            break;
        case 'd':
            o->step_s = strtod(optarg, &end);
            r = (*end || end == optarg) ? -EINVAL : 0;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return -EINVAL;
        }
        if (r) {
            const char *name = "?";
            for (const struct option *lo = longopts; lo->name; lo++)
                if (lo->val == c)
                    name = lo->name;
            fprintf(stderr, "hilsim bench-step: bad value '%s' for --%s\n", optarg, name);
            return -EINVAL;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "hilsim bench-step: unexpected argument '%s'\n", argv[optind]);
        return -EINVAL;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct summary {
    double median_us, p99_us, max_us, mean_us;
};

static struct summary summarize(double *ns, unsigned long n)
{
    struct summary s;
    double sum = 0;
    for (unsigned long i = 0; i < n; i++)
        sum += ns[i];
    qsort(ns, n, sizeof *ns, cmp_double);
    s.median_us = ns[n / 2] / 1e3;
    s.p99_us = ns[(unsigned long)(0.99 * (double)(n - 1))] / 1e3;
    s.max_us = ns[n - 1] / 1e3;
    s.mean_us = sum / (double)n / 1e3;
    return s;
}

static void bare_near(void *data, dGeomID g1, dGeomID g2)
{
    hs_world_ode_near_callback(data, g1, g2);
}

/* Velocity motors at zero speed hold every hinge of the robot: the same constraint work in both
 * variants, and no per-step torque computation that only one of them would do. */
static void hold_joints(struct hs_world *w, uint32_t body)
{
    const struct hs_model *m = hs_world_body_model(w, body);
    for (uint32_t i = 0; i < m->nlinks; i++) {
        dJointID j = hs_world_ode_joint(w, body, i);
        if (!j || m->links[i].joint_type != HS_JOINT_ROTATE)
            continue;
        dJointSetHingeParam(j, dParamVel, 0);
        dJointSetHingeParam(j, dParamFMax, 500);
    }
}

static int load(const char *path, struct hs_model **ret)
{
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_model_load(path, ret, &d);
    if (r) {
        char buf[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
        hs_diag_format(&d, buf, sizeof buf);
        fprintf(stderr, "hilsim bench-step: %s\n", buf[0] ? buf : path);
    }
    return r;
}

static void print_row(const char *name, const struct summary *s)
{
    printf("  %-22s %9.1f %9.1f %9.1f %9.1f\n", name, s->median_us, s->p99_us, s->max_us,
           s->mean_us);
}

int hs_cmd_bench_step(int argc, char **argv)
{
    struct bench_opts o;
    char model_path[4096], env_path[4096];
    int r = parse_opts(argc, argv, &o, model_path, env_path, sizeof model_path);
    if (r)
        return r > 0 ? HS_EXIT_OK : HS_EXIT_USAGE;

    struct hs_model *robot = NULL, *env = NULL;
    struct hs_world *w = NULL;
    double *t_hs = NULL, *t_bare = NULL;
    int rc = HS_EXIT_USAGE;
    if (load(o.model, &robot) || (o.env && load(o.env, &env)))
        goto out;

    struct hs_world_params p;
    hs_world_params_default(&p);
    p.step_s = o.step_s;
    struct hs_world_body_spec specs[2];
    uint32_t nspecs = 0, rb;
    if (env) {
        hs_world_spec_default(&specs[nspecs], env);
        specs[nspecs++].is_static = true;
    }
    rb = nspecs;
    hs_world_spec_default(&specs[nspecs++], robot);
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    r = hs_world_create(&p, specs, nspecs, &w, &d);
    if (r) {
        char buf[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
        hs_diag_format(&d, buf, sizeof buf);
        fprintf(stderr, "hilsim bench-step: world: %s\n", buf);
        goto out;
    }
    rc = HS_EXIT_FAILURE;
    t_hs = malloc(o.steps * sizeof *t_hs);
    t_bare = malloc(o.steps * sizeof *t_bare);
    if (!t_hs || !t_bare) {
        fprintf(stderr, "hilsim bench-step: out of memory\n");
        goto out;
    }
    /* Touch the sample buffers so page faults stay out of the measurement. */
    memset(t_hs, 0, o.steps * sizeof *t_hs);
    memset(t_bare, 0, o.steps * sizeof *t_bare);
    hold_joints(w, rb);
    for (unsigned long i = 0; i < o.warmup; i++)
        if (hs_world_step(w) < 0) {
            fprintf(stderr, "hilsim bench-step: the world faulted (divergence guard)\n");
            goto out;
        }

    dWorldID ow = hs_world_ode_world(w);
    dSpaceID space = hs_world_ode_space(w);
    dJointGroupID group = hs_world_ode_contact_group(w);
    unsigned long n_hs = 0, n_bare = 0, contacts = 0, contact_max = 0;
    unsigned long heap_hs = 0, heap_bare = 0;
    for (unsigned long blk = 0; n_hs < o.steps || n_bare < o.steps; blk++) {
        /* Alternate which variant goes first so neither always follows the other. */
        for (int k = 0; k < 2; k++) {
            bool hs_turn = (k == 0) == (blk % 2 == 0);
            for (unsigned long i = 0; i < o.block; i++) {
                if (hs_turn && n_hs < o.steps) {
                    long before = hs_heap_calls;
                    hs_heap_counting = 1;
                    double t0 = (double)hs_rt_now_ns();
                    int step_rc = hs_world_step(w);
                    double t1 = (double)hs_rt_now_ns();
                    hs_heap_counting = 0;
                    if (step_rc < 0) {
                        fprintf(stderr,
                                "hilsim bench-step: the world faulted (divergence guard)\n");
                        goto out;
                    }
                    heap_hs += (unsigned long)(hs_heap_calls - before);
                    t_hs[n_hs++] = t1 - t0;
                    unsigned long c = hs_world_contact_count(w);
                    contacts += c;
                    contact_max = c > contact_max ? c : contact_max;
                } else if (!hs_turn && n_bare < o.steps) {
                    long before = hs_heap_calls;
                    hs_heap_counting = 1;
                    double t0 = (double)hs_rt_now_ns();
                    hs_world_ode_step_begin(w);
                    dSpaceCollide(space, w, bare_near);
                    dWorldQuickStep(ow, p.step_s);
                    dJointGroupEmpty(group);
                    double t1 = (double)hs_rt_now_ns();
                    hs_heap_counting = 0;
                    heap_bare += (unsigned long)(hs_heap_calls - before);
                    t_bare[n_bare++] = t1 - t0;
                }
            }
        }
    }
    struct hs_pose root;
    hs_world_link_pose(w, rb, 0, &root);

    struct summary s_hs = summarize(t_hs, o.steps), s_bare = summarize(t_bare, o.steps);
    const struct hs_model *m = hs_world_body_model(w, rb);
    printf("bench-step: %s (%u links) on %s, dt %.3g s, %lu steps per variant, blocks of %lu,"
           " warm-up %lu\n",
           m->name, m->nlinks, env ? env->name : "nothing", p.step_s, o.steps, o.block, o.warmup);
    printf("  %-22s %9s %9s %9s %9s\n", "per step (us)", "median", "p99", "max", "mean");
    print_row("hs_world_step", &s_hs);
    print_row("bare ODE step", &s_bare);
    double ratio = s_hs.median_us / s_bare.median_us;
    printf("  ratio of medians      %9.3f   (target <= 1.10: %s)\n", ratio,
           ratio <= 1.10 ? "met" : "NOT met");
    if (hs_heap_counter_active)
        printf("  heap calls per step   hs_world_step %.4f, bare %.4f (after warm-up)\n",
               (double)heap_hs / (double)o.steps, (double)heap_bare / (double)o.steps);
    else
        printf("  heap calls per step   " HEAP_UNCOUNTED "\n");
    printf("  contacts per step     mean %.1f, max %lu (hs_world_step)\n",
           (double)contacts / (double)o.steps, contact_max);
    printf("  root link height      %.4f m at the end\n", root.p[2]);
    rc = HS_EXIT_OK;
out:
    free(t_hs);
    free(t_bare);
    hs_world_destroy(w);
    hs_model_free(robot);
    hs_model_free(env);
    return rc;
}
