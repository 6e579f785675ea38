/* hilsim sim: the bench offline, faster than real time, logging a CSV. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "hilsim/service/runner.h"
#include "hilsim/service/scenario_attach.h"
#include "sim_csv.h"

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/log.h"
#include "hilsim/model.h"
#include "hilsim/record.h"
#include "hilsim/rt/rt_clock.h"

#define MAX_TORQUES 64
#define MAX_PACKAGES 16
#define HS_QUICK_LOOK_MODELS 2 /* the robot and its environment */
/* rad/s: the quick look's servo bandwidth (src/bench/quick_look_gains.c; its loop is implicit, so
 * light links need no clamp). */
#define QUICK_LOOK_BANDWIDTH 30.0

struct sim_opts {
    const char *config, *model, *env, *out;
    const char *scenario, *junit, *result_json;
    const char *record; /* --record DIR */
    double duration_s;
    bool duration_given;
    unsigned log_every;
    bool free_joints;
    struct {
        const char *joint;
        double value;
    } torques[MAX_TORQUES];
    unsigned ntorques;
    const char *sets[MAX_TORQUES]; /* --set KEY=VALUE */
    uint32_t nsets;
    const char *packages[MAX_PACKAGES]; /* --package-path NAME=DIR or DIR, as `model` takes */
    uint32_t npackages;
    const char *mesh_collision; /* --mesh-collision: the robot's models[].mesh_collision */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hilsim sim CONFIG [options]\n"
            "       hilsim sim --model FILE [--env FILE] [options]\n\n"
            "Runs the bench offline, as fast as the machine can, holding the joints with the\n"
            "config's demo controller (a PD hold by default), and writes a CSV log: time, per\n"
            "joint q, dq, torque and encoder count, per robot its root pose (x y z qw qx qy qz),\n"
            "per sensor its reading. The same input gives a byte-identical log.\n\n"
            "options:\n"
            "  --duration S      simulated seconds (default 5)\n"
            "  --out FILE        CSV output, '-' for stdout (default: no log, summary only)\n"
            "  --log-every N     log every N-th tick (default 1)\n"
            "  --torque J=NM     apply a constant torque (N·m, or N for slide joints) to joint J\n"
            "                    instead of the controller; repeatable\n"
            "  --free            no controller: joints free-wheel (their safe behaviour)\n"
            "  --model FILE      quick look: this robot with default physics and a PD hold\n"
            "                    tuned per joint (critically damped, 30 rad/s)\n"
            "  --env FILE        quick look: a static environment (e.g. a floor)\n"
            "  --package-path NAME=DIR|DIR\n"
            "                    quick look: URDF package://NAME/ is DIR, or DIR holds\n"
            "                    packages (as `hilsim model` takes it); repeatable\n"
            "  --mesh-collision M  quick look: the robot's collision meshes (its\n"
            "                    models[].mesh_collision: config/README.md lists the values)\n"
            "  --set KEY=VALUE   override one config key (physics.friction=0.3), checked as in\n"
            "                    the file; repeatable\n"
            "  --scenario FILE   play a test scenario (scenarios/README.md); the run lasts\n"
            "                    its duration_s unless --duration is given\n"
            "  --junit FILE      with --scenario: the verdict as JUnit XML\n"
            "  --result-json F   with --scenario: the verdict as JSON\n"
            "  --record DIR      record the run into the new folder DIR, as `hilsim run\n"
            "                    --record` does (a CONFIG run without --torque or --free);\n"
            "                    `hilsim replay DIR` reproduces it. The run waits for the\n"
            "                    recorder's writer rather than drop a tick\n"
            "  -h, --help        this text\n\n"
            "SIGINT/SIGTERM stop the run after the tick being computed: the CSV ends with a\n"
            "whole row and the summary says where it stopped.\n\n"
            "exit codes: 0 done; 1 runtime failure (a write failed: the message gives the\n"
            "reason and a partial output file is removed) or stopped early by SIGINT/SIGTERM;\n"
            "2 bad usage or bad input (also a --duration shorter than one tick); 3 plant fault;\n"
            "5 the scenario's verdict is FAIL (ERROR, a run that could not decide it: 3 or 1)\n");
}

/* SIGINT/SIGTERM: finish the tick and its CSV row, then stop (see usage). */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

static void catch_stop_signals(void)
{
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Flushes and closes out (not stdout's stream); on a failed write names the reason and
 * removes a regular output file, so no partial log is left that looks complete. Returns 0 or
 * the errno of the first failure. */
static int close_output(FILE *out, const char *path, int err)
{
    if (!out)
        return err;
    if (fflush(out) != 0 && !err)
        err = errno ? errno : EIO;
    if (ferror(out) && !err)
        err = EIO;
    struct stat st;
    bool regular = out != stdout && fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode);
    if (out != stdout && fclose(out) != 0 && !err)
        err = errno ? errno : EIO;
    if (!err)
        return 0;
    if (regular && unlink(path) == 0)
        hs_log(HS_LOG_ERR, "%s: write failed: %s; the partial file was removed", path,
               strerror(err));
    else
        hs_log(HS_LOG_ERR, "%s: write failed: %s", path, strerror(err));
    return err;
}

static int parse(int argc, char **argv, struct sim_opts *o)
{
    static const struct option longopts[] = {{"duration", required_argument, 0, 'd'},
                                             {"out", required_argument, 0, 'o'},
                                             {"log-every", required_argument, 0, 'e'},
                                             {"torque", required_argument, 0, 't'},
                                             {"free", no_argument, 0, 'f'},
                                             {"model", required_argument, 0, 'm'},
                                             {"env", required_argument, 0, 'v'},
                                             {"package-path", required_argument, 0, 'p'},
                                             {"mesh-collision", required_argument, 0, 'M'},
                                             {"scenario", required_argument, 0, 's'},
                                             {"junit", required_argument, 0, 'j'},
                                             {"result-json", required_argument, 0, 'J'},
                                             {"set", required_argument, 0, 'S'},
                                             {"record", required_argument, 0, 'R'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    *o = (struct sim_opts){.duration_s = 5, .log_every = 1};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'd':
            o->duration_s = strtod(optarg, &end);
            if (*end || !(o->duration_s > 0) || o->duration_s > 1e6) {
                fprintf(stderr, "hilsim sim: --duration: '%s' is not in (0, 1e6] s\n", optarg);
                return HS_EXIT_USAGE;
            }
            o->duration_given = true;
            break;
        case 's':
            o->scenario = optarg;
            break;
        case 'j':
            o->junit = optarg;
            break;
        case 'S':
            if (o->nsets == MAX_TORQUES || !strchr(optarg, '=')) {
                fprintf(stderr, "hilsim sim: --set KEY=VALUE (at most %d), not '%s'\n", MAX_TORQUES,
                        optarg);
                return HS_EXIT_USAGE;
            }
            o->sets[o->nsets++] = optarg;
            break;
        case 'J':
            o->result_json = optarg;
            break;
        case 'R':
            o->record = optarg;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'e': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (*end || v == 0 || v > UINT_MAX) {
                fprintf(stderr, "hilsim sim: --log-every: '%s' is not a positive count\n", optarg);
                return HS_EXIT_USAGE;
            }
            o->log_every = (unsigned)v;
            break;
        }
        case 't': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || o->ntorques == MAX_TORQUES) {
                fprintf(stderr, "hilsim sim: --torque: expected JOINT=NM, got '%s'\n", optarg);
                return HS_EXIT_USAGE;
            }
            *eq = 0;
            double v = strtod(eq + 1, &end);
            if (end == eq + 1 || *end || !isfinite(v)) {
                fprintf(stderr, "hilsim sim: --torque %s: '%s' is not a number\n", optarg, eq + 1);
                return HS_EXIT_USAGE;
            }
            o->torques[o->ntorques].joint = optarg;
            o->torques[o->ntorques++].value = v;
            break;
        }
        case 'f':
            o->free_joints = true;
            break;
        case 'm':
            o->model = optarg;
            break;
        case 'v':
            o->env = optarg;
            break;
        case 'p':
            if (o->npackages == MAX_PACKAGES || !optarg[0] || optarg[0] == '=' ||
                optarg[strlen(optarg) - 1] == '=') {
                fprintf(stderr,
                        "hilsim sim: --package-path NAME=DIR or DIR (at most %d), not "
                        "'%s'\n",
                        MAX_PACKAGES, optarg);
                return HS_EXIT_USAGE;
            }
            o->packages[o->npackages++] = optarg;
            break;
        case 'M':
            o->mesh_collision = optarg;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return HS_EXIT_USAGE;
        }
    }
    if (optind < argc)
        o->config = argv[optind++];
    if ((o->junit || o->result_json) && !o->scenario) {
        fprintf(stderr, "hilsim sim: --junit and --result-json need --scenario\n");
        return HS_EXIT_USAGE;
    }
    /* A replay rebuilds the run from the config, its --set keys, the scenario and the recorded
     * commands: torques and --free are none of those. */
    if (o->record && (o->model || o->ntorques || o->free_joints)) {
        fprintf(stderr, "hilsim sim: --record takes a CONFIG run without --torque or --free (a "
                        "replay rebuilds the run from the config)\n");
        return HS_EXIT_USAGE;
    }
    if (!o->model && (o->npackages || o->mesh_collision)) {
        fprintf(stderr, "hilsim sim: --package-path and --mesh-collision belong to the quick look "
                        "(--model); a config says them in models[]\n");
        return HS_EXIT_USAGE;
    }
    if (optind < argc || (!o->config == !o->model) || (o->env && !o->model)) {
        fprintf(stderr, "hilsim sim: give either CONFIG or --model FILE [--env FILE]\n");
        usage(stderr);
        return HS_EXIT_USAGE;
    }
    return 0;
}

/* ANYmal C (52 kg) sank to its knees under the quick look's 30 rad/s hold and the summary only
 * said "largest joint deviation 1.67719": a floating robot whose root sank by a fifth of its
 * starting height, or a joint that moved more than 0.5 rad from its pose, was not held, and the
 * quick look says so and what to do. */
static void warn_if_not_held(const struct hs_config *cfg, struct hs_bench *b, const double *z0,
                             double worst, const char *worst_name)
{
    for (uint32_t m = 0; m < cfg->nmodels && m < HS_QUICK_LOOK_MODELS; m++) {
        if (cfg->models[m].is_static || hs_bench_model(b, m)->links[0].joint_type != HS_JOINT_FREE)
            continue;
        struct hs_pose p;
        hs_world_link_pose(hs_bench_world(b), m, 0, &p);
        if (z0[m] > 0 && p.p[2] < 0.8 * z0[m]) {
            hs_log(HS_LOG_WARNING,
                   "quick look: the hold did not hold the robot (%s): its root sank from %.3f "
                   "to %.3f m "
                   "(%.0f %%), %s moved %.3f from its initial pose: the quick look's servo "
                   "(30 rad/s on what each joint moves, within its torque limit) does not carry "
                   "this load; give the robot a config with controller.bandwidth_rad_s or "
                   "per-joint gains (config/README.md, 'controller'), and check the limits",
                   cfg->models[m].name, z0[m], p.p[2], 100 * (z0[m] - p.p[2]) / z0[m], worst_name,
                   worst);
            return;
        }
    }
    if (worst > 0.5)
        hs_log(HS_LOG_WARNING,
               "quick look: the hold did not hold the robot: %s moved %.3f from its initial pose "
               "(more than 0.5): the quick look's servo (30 rad/s on what each joint moves, "
               "within its torque limit) does not carry this load; give the robot a config with "
               "controller.bandwidth_rad_s or per-joint gains (config/README.md, 'controller'), "
               "and check the limits",
               worst_name, worst);
}

/* Where the collision time went (the solver health's per-pair-class cost), so a slow model
 * says which shapes make it slow: the costliest classes, as bench and run print them. */
static void print_collision_cost(FILE *f, const struct hs_world *w)
{
    struct hs_world_health_summary h;
    hs_world_health_summary(w, &h);
    for (uint32_t i = 0; i < h.npair_costs && h.steps; i++)
        fprintf(f, "%s%-20s %10.4g us/step over %.4g tests/step\n",
                i == 0 ? "collision " : "          ", h.pair_costs[i].name,
                1e6 * h.pair_costs[i].total_s / (double)h.steps,
                (double)h.pair_costs[i].calls / (double)h.steps);
}

/* A quick look goes through the same config parser as a bench file, so it is validated the
 * same way and the defaults are the documented ones. */
static int load_quick_look(const struct sim_opts *o, const struct hs_config **ret,
                           struct hs_diag *d)
{
    char model[PATH_MAX], env[PATH_MAX], yaml[3 * PATH_MAX];
    if (!realpath(o->model, model))
        return hs_diag_set(d, -errno, o->model, 0, 0, "cannot open model: %s", strerror(errno));
    int n = snprintf(yaml, sizeof yaml,
                     "bench: {name: quick-look}\n"
                     "models:\n  - name: robot\n    file: \"%s\"\n%s",
                     model, o->env ? "    rest_on_static: true\n" : "");
    if (o->env) {
        if (!realpath(o->env, env))
            return hs_diag_set(d, -errno, o->env, 0, 0, "cannot open model: %s", strerror(errno));
        n += snprintf(yaml + n, sizeof yaml - (size_t)n,
                      "  - name: env\n    file: \"%s\"\n    static: true\n", env);
    }
    snprintf(yaml + n, sizeof yaml - (size_t)n, "controller: {type: %s}\n",
             o->free_joints ? "none" : "pd_hold");
    /* --mesh-collision and --package-path NAME=DIR become the robot's config keys (so they are
     * checked as in a file); a bare DIR joins $HS_PACKAGE_PATH, which the loader searches as
     * `hilsim model --package-path DIR` does. */
    char sets_buf[MAX_PACKAGES + 1][PATH_MAX + 96];
    const char *sets[MAX_TORQUES + MAX_PACKAGES + 1];
    uint32_t nsets = 0;
    for (uint32_t i = 0; i < o->nsets; i++)
        sets[nsets++] = o->sets[i];
    if (o->mesh_collision) {
        snprintf(sets_buf[0], sizeof sets_buf[0], "models.0.mesh_collision=%s", o->mesh_collision);
        sets[nsets++] = sets_buf[0];
    }
    for (uint32_t i = 0; i < o->npackages; i++) {
        const char *arg = o->packages[i], *eq = strchr(arg, '=');
        char dir[PATH_MAX];
        if (!realpath(eq ? eq + 1 : arg, dir))
            return hs_diag_set(d, -errno, eq ? eq + 1 : arg, 0, 0,
                               "--package-path: cannot open directory: %s", strerror(errno));
        if (strpbrk(dir, "\"\\\n"))
            return hs_diag_set(d, -EINVAL, dir, 0, 0,
                               "--package-path: a directory name with a quote, backslash or "
                               "newline cannot be passed on; use a config file");
        if (!eq) {
            const char *old = getenv("HS_PACKAGE_PATH");
            char joined[2 * PATH_MAX + 2];
            snprintf(joined, sizeof joined, "%s%s%s", dir, old && *old ? ":" : "", old ? old : "");
            setenv("HS_PACKAGE_PATH", joined, 1);
            continue;
        }
        snprintf(sets_buf[i + 1], sizeof sets_buf[i + 1], "models.0.package_paths.%.*s.dir=\"%s\"",
                 (int)(eq - arg), arg, dir);
        sets[nsets++] = sets_buf[i + 1];
    }
    return hs_config_load_buffer_sets(yaml, strlen(yaml), "<quick look>", NULL, sets, nsets, ret,
                                      d);
}

/* A massless link between two moving joints (OpenHRP's *_bush samples model a bushing as six
 * dummy joints in a row) gives the iterative solver rows it cannot converge: the chain spins up
 * whatever the gains, while the exact solver holds it. Returns such a link's index or -1. */
static int massless_chain_link(const struct hs_model *m)
{
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        if (l->parent < 0 || l->joint_type == HS_JOINT_FIXED || l->mass > 0)
            continue;
        for (uint32_t k = i + 1; k < m->nlinks; k++) /* parents come first */
            if (m->links[k].parent == (int32_t)i && m->links[k].joint_type != HS_JOINT_FIXED)
                return (int)i;
    }
    return -1;
}

static bool solver_chosen(const struct sim_opts *o)
{
    for (uint32_t i = 0; i < o->nsets; i++)
        if (!strncmp(o->sets[i], "physics.solver=", strlen("physics.solver=")))
            return true;
    return false;
}

/* The quick look's physics follows the robot: a massless chain runs on the exact solver, said
 * once, unless the user chose a solver. Returns 1 when the caller must load again with the
 * added override. */
static int quick_look_solver(struct sim_opts *o, const struct hs_config *cfg, struct hs_bench *b)
{
    if (!o->model || solver_chosen(o) || cfg->physics.solver != HS_SOLVER_QUICK ||
        o->nsets >= MAX_TORQUES)
        return 0;
    const struct hs_model *m = hs_bench_model(b, 0);
    int k = massless_chain_link(m);
    if (k < 0)
        return 0;
    hs_log(HS_LOG_WARNING,
           "quick look: link '%s' is massless between two moving joints, which the iterative "
           "solver cannot hold: running physics.solver standard (--set physics.solver=quick "
           "to keep the iterative one)",
           m->links[k].name);
    o->sets[o->nsets++] = "physics.solver=standard";
    return 1;
}

struct torque_io {
    const struct sim_opts *o;
    int joint[MAX_TORQUES];
};

static int torque_inputs(void *ctx, struct hs_bench *b, int64_t now_ns)
{
    struct torque_io *t = ctx;
    for (unsigned k = 0; k < t->o->ntorques; k++) {
        struct hs_joint_command *cmd = hs_bench_joint(b, (uint32_t)t->joint[k])->cmd;
        cmd->mode = HS_JOINT_MODE_TORQUE;
        cmd->tau_ff = t->o->torques[k].value;
        cmd->rx_time_ns = now_ns;
        cmd->seq++;
    }
    return 0;
}

static const struct hs_bench_io_ops torque_io_ops = {
    .name = "constant torques",
    .inputs = torque_inputs,
    .destroy = free,
};

static int start_recording(const struct sim_opts *o, struct hs_bench *b, struct hs_recorder **ret,
                           struct hs_diag *d)
{
    const struct hs_cfg_record *c = &hs_bench_config(b)->record;
    struct hs_rec_opts ro = {
        .dir = o->record,
        .config_path = o->config,
        .scenario_path = o->scenario,
        .sets = o->sets,
        .nsets = o->nsets,
        .clock_mode = HS_REC_CLOCK_OFFLINE, /* as fast as the machine can: no host audit */
        .ring_items = c->ring_items,
        .ring_states = c->ring_states,
        .rotate_bytes = (uint64_t)(c->rotate_mib * 1048576.0),
        .rotate_s = c->rotate_s,
        .keep_segments = c->keep_segments,
        .no_compression = c->compression == HS_CFG_RECORD_NONE,
        .compression_level = (int)c->compression_level,
    };
    int r = hs_rec_create(&ro, b, ret, d);
    if (r < 0)
        return r;
    if ((r = hs_rec_attach(*ret, b)) < 0)
        return hs_diag_set(d, r, NULL, 0, 0, "record: cannot attach to the bench: %s",
                           strerror(-r));
    hs_log(HS_LOG_INFO, "recording to %s", hs_rec_dir(*ret));
    return 0;
}

static void summarise_recording(FILE *sum, const struct hs_recorder *rec)
{
    struct hs_rec_stats s;
    hs_rec_stats(rec, &s);
    fprintf(sum, "recording: %s: %llu ticks, %llu frames/commands/events, %.1f MiB%s\n",
            hs_rec_dir(rec), (unsigned long long)s.ticks, (unsigned long long)s.items,
            (double)s.bytes_written / 1048576.0,
            s.dropped_states || s.dropped_items ? " (records DROPPED: the recording has gaps)"
                                                : "");
}

int hs_cmd_sim(int argc, char **argv)
{
    struct sim_opts o;
    int r = parse(argc, argv, &o);
    if (r)
        return r < 0 ? HS_EXIT_OK : r;
    struct hs_diag d = {0};
    const struct hs_config *cfg = NULL;
    struct hs_bench *b = NULL;
    struct hs_recorder *rec = NULL;
    FILE *out = NULL;
    int rc = HS_EXIT_USAGE;
    r = o.config ? hs_config_load_sets(o.config, o.sets, o.nsets, &cfg, &d)
                 : load_quick_look(&o, &cfg, &d);
    if (r < 0) {
        hs_log_diag(&d);
        goto done;
    }
    if (o.free_joints && o.config) {
        /* --free only changes which joints the controller drives: none. */
        ((struct hs_config *)cfg)->controller.type = HS_CFG_CONTROLLER_NONE;
    }
    if ((r = hs_bench_create(cfg, &b, &d)) < 0) {
        hs_log_diag(&d);
        rc = r == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
        goto done;
    }
    if (quick_look_solver(&o, cfg, b)) {
        hs_bench_destroy(b);
        b = NULL;
        hs_config_free(cfg);
        cfg = NULL;
        if ((r = load_quick_look(&o, &cfg, &d)) < 0 || (r = hs_bench_create(cfg, &b, &d)) < 0) {
            hs_log_diag(&d);
            rc = r == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
            goto done;
        }
    }
    for (uint32_t i = 0; i < cfg->nmodels; i++) /* what the loader tolerated, once */
        for (uint32_t k = 0; k < hs_bench_model(b, i)->nwarnings; k++)
            hs_log(HS_LOG_WARNING, "%s", hs_bench_model(b, i)->warnings[k]);
    if (o.model)
        hs_bench_set_quick_look_gains(b, QUICK_LOOK_BANDWIDTH);
    for (uint32_t i = 0; i < hs_bench_warning_count(b); i++) /* once, after the gains */
        hs_log(HS_LOG_WARNING, "%s", hs_bench_warning(b, i));
    if (o.ntorques) {
        struct torque_io *t = calloc(1, sizeof *t);
        if (!t) {
            rc = HS_EXIT_FAILURE;
            goto done;
        }
        t->o = &o;
        for (unsigned k = 0; k < o.ntorques; k++) {
            t->joint[k] = hs_bench_find_joint(b, o.torques[k].joint);
            if (t->joint[k] < 0) {
                hs_log(HS_LOG_ERR, "--torque: the bench has no actuated joint '%s'",
                       o.torques[k].joint);
                free(t);
                goto done;
            }
            hs_bench_claim_joint(b, (uint32_t)t->joint[k]);
        }
        hs_bench_add_io(b, &torque_io_ops, t);
    }
    struct hs_scenario *scen = NULL;
    if (hs__scenario_check_outputs(o.junit, o.result_json, &d) < 0) {
        hs_log_diag(&d);
        rc = HS_EXIT_USAGE;
        goto done;
    }
    if (o.scenario && (r = hs__scenario_attach(b, o.scenario, &scen, &d)) < 0) {
        hs_log_diag(&d);
        rc = r == -EINVAL ? HS_EXIT_USAGE : HS_EXIT_FAILURE;
        goto done;
    }
    /* After the scenario: the recorder's module must end the inputs phase (hs_rec_attach). */
    if (o.record && (r = start_recording(&o, b, &rec, &d)) < 0) {
        hs_log_diag(&d);
        rc = r == -EINVAL || r == -EEXIST || r == -ENOTEMPTY ? HS_EXIT_USAGE : HS_EXIT_FAILURE;
        goto done;
    }
    if (scen && !o.duration_given)
        o.duration_s = hs_scenario_duration_s(scen);
    int64_t period = hs_bench_tick_period_ns(b);
    uint64_t ticks = (uint64_t)llround(o.duration_s * 1e9 / (double)period);
    if (ticks == 0) {
        hs_log(HS_LOG_ERR, "--duration %g s is shorter than half a tick (%.3f ms): nothing to run",
               o.duration_s, (double)period * 1e-6);
        goto done;
    }
    catch_stop_signals();
    if (o.out) {
        out = strcmp(o.out, "-") ? fopen(o.out, "w") : stdout;
        if (!out) {
            hs_log(HS_LOG_ERR, "%s: %s", o.out, strerror(errno));
            rc = HS_EXIT_FAILURE;
            goto done;
        }
        hs__sim_csv_header(out, b);
    }
    int werr = 0;
    /* The quick look says so when its hold did not hold the robot (below). */
    double z0[HS_QUICK_LOOK_MODELS] = {0};
    for (uint32_t m = 0; m < cfg->nmodels && m < HS_QUICK_LOOK_MODELS; m++) {
        struct hs_pose p;
        hs_world_link_pose(hs_bench_world(b), m, 0, &p);
        z0[m] = p.p[2];
    }
    int64_t w0 = hs_rt_now_ns();
    hs_bench_sensors(b, 0, 0);
    if (out)
        hs__sim_csv_row(out, b, 0.0);
    uint64_t done_ticks = 0;
    for (uint64_t k = 1; k <= ticks && !stop_signal && !(scen && hs_scenario_done(scen)); k++) {
        int64_t now = (int64_t)k * period;
        r = hs_bench_tick(b, now, k);
        hs__log_ode_messages(hs_bench_world(b), false);
        if (r < 0 && hs_bench_fault(b)) {
            /* The tick that tripped is logged in full (it shows the runaway value), then the
             * same safe stop as a bench run. */
            if (out)
                hs__sim_csv_row(out, b, (double)now * 1e-9);
            char why[512];
            hs_bench_fault_format(b, why, sizeof why);
            hs_log(HS_LOG_ERR, "plant fault: %s; safe stop", why);
            hs_bench_safe_stop(b);
            done_ticks = k;
            rc = HS_EXIT_PLANT_FAULT;
            break;
        }
        if (r < 0) {
            hs_log(HS_LOG_ERR, "tick %llu failed: %s", (unsigned long long)k, strerror(-r));
            rc = HS_EXIT_FAILURE;
            goto done;
        }
        done_ticks = k;
        if (rec && (r = hs_rec_wait_room(rec)) < 0) {
            hs_log(HS_LOG_ERR, "recording %s failed: %s", hs_rec_dir(rec), strerror(-r));
            rc = HS_EXIT_FAILURE;
            goto done;
        }
        if (out && k % o.log_every == 0) {
            errno = 0;
            hs__sim_csv_row(out, b, (double)now * 1e-9);
            if (ferror(out)) { /* a full disk: stop now, not after the whole run */
                werr = errno ? errno : EIO;
                break;
            }
        }
    }
    hs__log_ode_messages(hs_bench_world(b), true);
    if (out) {
        werr = close_output(out, o.out, werr);
        out = NULL;
        if (werr) {
            rc = HS_EXIT_FAILURE;
            goto done;
        }
    }
    if (stop_signal)
        ticks = done_ticks;
    double wall = (double)(hs_rt_now_ns() - w0) * 1e-9;
    double sim = (double)done_ticks * (double)period * 1e-9;
    /* The summary goes to stderr when the CSV goes to stdout. */
    FILE *sum = o.out && !strcmp(o.out, "-") ? stderr : stdout;
    if (stop_signal)
        fprintf(sum, "stopped by %s after tick %llu; the log ends with that tick's row\n",
                stop_signal == SIGINT ? "SIGINT" : "SIGTERM", (unsigned long long)ticks);
    fprintf(sum, "simulated %.3f s in %llu ticks of %.3f ms: %.3f s wall, %.1fx real time\n", sim,
            (unsigned long long)done_ticks, (double)period * 1e-6, wall, wall > 0 ? sim / wall : 0);
    for (uint32_t m = 0; m < cfg->nmodels; m++)
        if (!cfg->models[m].is_static) {
            struct hs_pose p;
            hs_world_link_pose(hs_bench_world(b), m, 0, &p);
            fprintf(sum, "%s root at (%.4f, %.4f, %.4f) m\n", cfg->models[m].name, p.p[0], p.p[1],
                    p.p[2]);
        }
    double worst = 0;
    const char *worst_name = "";
    for (uint32_t i = 0; i < hs_bench_joint_count(b); i++) {
        const struct hs_bench_joint *j = hs_bench_joint(b, i);
        double e = fabs(hs_bench_joint_reading(b, i)->q - j->q0);
        if (e > worst)
            worst = e, worst_name = j->name;
    }
    if (hs_bench_joint_count(b))
        fprintf(sum, "largest joint deviation from the initial pose: %.5f (%s)\n", worst,
                worst_name);
    print_collision_cost(sum, hs_bench_world(b));
    if (o.model && !o.free_joints && !o.ntorques && rc != HS_EXIT_PLANT_FAULT)
        warn_if_not_held(cfg, b, z0, worst, worst_name);
    /* --torque J=1e9 was bounded by the motor model without a word: say what the joint got. */
    for (unsigned k = 0; k < o.ntorques && rc != HS_EXIT_PLANT_FAULT; k++) {
        int j = hs_bench_find_joint(b, o.torques[k].joint);
        double want = o.torques[k].value, got = j >= 0 ? hs_bench_joint_reading(b, j)->torque : 0;
        if (j >= 0 && fabs(got) < 0.99 * fabs(want))
            hs_log(
                HS_LOG_WARNING,
                "--torque %s=%g: the drive delivered %g at the last tick: the motor model bounds "
                "it (torque, current or velocity limit: hilsim model lists the joint's)",
                o.torques[k].joint, want, got);
    }
    if (rc == HS_EXIT_PLANT_FAULT) {
        char why[512];
        hs_bench_fault_format(b, why, sizeof why);
        fprintf(sum, "stopped by a plant fault: %s\n", why);
    } else {
        rc = stop_signal ? HS_EXIT_FAILURE : HS_EXIT_OK;
    }
    if (rec) {
        const char *why = rc == HS_EXIT_PLANT_FAULT        ? "plant fault"
                          : stop_signal                    ? "stop requested"
                          : scen && hs_scenario_done(scen) ? "scenario done"
                                                           : "max ticks reached";
        int wr = hs_rec_finish(rec, why);
        if (wr < 0) {
            hs_log(HS_LOG_ERR, "recording %s: %s", hs_rec_dir(rec), strerror(-wr));
            rc = HS_EXIT_FAILURE;
        } else {
            summarise_recording(sum, rec);
        }
    }
    if (scen) {
        if (stop_signal)
            hs_scenario_set_stop_cause(scen, stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
        int vr = hs__scenario_report(scen, o.junit, o.result_json, sum);
        if (rc == HS_EXIT_OK)
            rc = vr;
    }
done:
    if (out && out != stdout) /* a tick failed, reported above */
        fclose(out);
    hs_bench_destroy(b);
    hs_rec_destroy(rec); /* after the bench, whose module points into it */
    hs_config_free(cfg);
    return rc;
}
