/* See mujoco_urdf_accuracy.h. */
#include "mujoco_urdf_accuracy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact_run.h"
#include "hilsim/config.h"
#include "mujoco_contact_run.h"

/* The contact benchmark's goals, as tests/world/test_contact_accuracy.c states them. */
#define NOISE_PCT 0.5
#define JUMP_PCT 1.0
#define SUM_PCT 0.5
#define IMU_STD 0.02
#define COP_M 0.002
#define SINK_M 0.001
#define SWING_MIN 0.25

struct row {
    const char *engine, *solver;
    struct hs_contact_metrics m;
    double cop_rest, cop_sway; /* against the engine's exact solve; NAN on the reference */
    double sink, iters_rest, iters_sway;
};

/* The goals a row misses, named, into buf ("all met" when none). */
static bool goals(const struct row *r, char *buf, size_t n)
{
    const struct hs_contact_metrics *m = &r->m;
    struct {
        bool ok;
        const char *name;
    } g[] = {
        {m->load_n[0] > 0.3 * m->weight_above_n / 2 && m->load_n[1] > 0.3 * m->weight_above_n / 2,
         "both feet"},
        {m->rest_std_pct[0] <= NOISE_PCT && m->rest_std_pct[1] <= NOISE_PCT, "rest noise"},
        {m->rest_jump_pct <= JUMP_PCT, "rest jump"},
        {fabs(m->sum_err_pct) <= SUM_PCT, "sum"},
        {m->imu_z_std <= IMU_STD, "rest IMU"},
        {isnan(r->cop_rest) || r->cop_rest <= COP_M, "rest CoP"},
        {r->sink <= SINK_M, "sinkage"},
        {m->sway_noise_pct[0] <= NOISE_PCT && m->sway_noise_pct[1] <= NOISE_PCT, "sway noise"},
        {m->sway_jump_pct <= JUMP_PCT, "sway jump"},
        {m->sway_imu_noise <= IMU_STD, "sway IMU"},
        {isnan(r->cop_sway) || r->cop_sway <= COP_M, "sway CoP"},
        {m->sway_load_swing >= SWING_MIN, "load swing"},
    };
    bool all = true;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (!g[i].ok) {
            used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s",
                                     all ? "NOT met: " : ", ", g[i].name);
            all = false;
        }
    if (all)
        snprintf(buf, n, "all met");
    return all;
}

static void print_row(FILE *out, const struct row *r)
{
    const struct hs_contact_metrics *m = &r->m;
    char cr[16] = "ref", cs[16] = "ref", verdict[160];
    if (!isnan(r->cop_rest))
        snprintf(cr, sizeof cr, "%.3f", 1e3 * r->cop_rest);
    if (!isnan(r->cop_sway))
        snprintf(cs, sizeof cs, "%.3f", 1e3 * r->cop_sway);
    goals(r, verdict, sizeof verdict);
    fprintf(out,
            "| %s | %s | %.1f / %.1f | %.3f / %.3f | %.3f | %+.3f | %.4f | %s | %.3f | %.3f / %.3f "
            "| %.3f | %.4f | %s | %.0f | %.1f / %.1f | %.1f | %s |\n",
            r->engine, r->solver, m->load_n[0], m->load_n[1], m->rest_std_pct[0],
            m->rest_std_pct[1], m->rest_jump_pct, m->sum_err_pct, m->imu_z_std, cr, 1e3 * r->sink,
            m->sway_noise_pct[0], m->sway_noise_pct[1], m->sway_jump_pct, m->sway_imu_noise, cs,
            100 * m->sway_load_swing, r->iters_rest, r->iters_sway, m->contacts_mean, verdict);
}

/* hilsim's bench config around the URDF: the contact accuracy test's SR1 config with the URDF
 * as the robot (every physics key at its default). */
static const struct hs_config *hs_config_of(const char *urdf, const struct hs_model *robot,
                                            const char *floor)
{
    const char *accel = NULL, *gyro = NULL;
    for (uint32_t i = 0; i < robot->nsensors; i++) {
        if (!accel && robot->sensors[i].type == HS_SENSOR_ACCEL)
            accel = robot->sensors[i].name;
        if (!gyro && robot->sensors[i].type == HS_SENSOR_GYRO)
            gyro = robot->sensors[i].name;
    }
    if (!accel || !gyro) {
        fprintf(stderr, "%s: no accelerometer and gyro to make an IMU of\n", urdf);
        return NULL;
    }
    char yaml[8192];
    int n = snprintf(yaml, sizeof yaml,
                     "bench: {name: mujoco-urdf}\n"
                     "models:\n"
                     "  - {name: robot, file: \"%s\"}\n"
                     "  - {name: floor, file: \"%s\", static: true}\n"
                     "controller: {type: pd_hold, bandwidth_rad_s: 30}\n"
                     "sensors:\n"
                     "  imu:\n"
                     "    waist: {accel: \"%s\", gyro: \"%s\"}\n",
                     urdf, floor, accel, gyro);
    if (n < 0 || (size_t)n >= sizeof yaml)
        return NULL;
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, (unsigned long)n, "mujoco-urdf.yaml", "/", &cfg, &d) < 0) {
        fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.column, d.msg);
        return NULL;
    }
    return cfg;
}

static struct hs_contact_run *hs_run(const struct hs_config *cfg,
                                     const struct hs_contact_variant *v, double sway_rad)
{
    struct hs_contact_run *r = NULL;
    struct hs_diag d = {0};
    if (hs_contact_run_create(cfg, v, sway_rad, &r, &d) < 0) {
        fprintf(stderr, "hilsim, %s: %s\n", v->name, d.msg);
        return NULL;
    }
    if (hs_contact_run_ticks(r, HS_CR_TICKS, false)) {
        fprintf(stderr, "hilsim, %s: plant fault\n", v->name);
        hs_contact_run_destroy(r);
        return NULL;
    }
    return r;
}

static void hs_row(struct row *row, struct hs_contact_run *r, struct hs_contact_run *exact)
{
    hs_contact_run_metrics(r, &row->m);
    row->cop_rest = r == exact ? NAN : hs_contact_run_cop_diff_rest(r, exact);
    row->cop_sway = r == exact ? NAN : hs_contact_run_cop_diff_sway(r, exact);
    row->sink = row->m.health_rest.penetration_m.max;
    row->iters_rest = row->m.health_rest.quick_iterations_mean;
    row->iters_sway = row->m.health_sway.quick_iterations_mean;
}

static void mj_row(struct row *row, struct hs_mujoco_contact_run *r,
                   struct hs_mujoco_contact_run *conv)
{
    hs_mujoco_contact_run_metrics(r, &row->m);
    const struct hs_contact_series *a = hs_mujoco_contact_run_series(r),
                                   *b = hs_mujoco_contact_run_series(conv);
    row->cop_rest = r == conv ? NAN : hs_contact_series_cop_diff_rest(a, b);
    row->cop_sway = r == conv ? NAN : hs_contact_series_cop_diff_sway(a, b);
    row->sink = hs_mujoco_contact_run_sinkage(r);
    hs_mujoco_contact_run_iterations(r, &row->iters_rest, &row->iters_sway);
}

/* Every recorded tick of every run as CSV (HS_SERIES_CSV): to see where a figure comes from. */
static void write_csv(const char *path, const struct hs_contact_series *const ser[],
                      const char *const names[], int nruns)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    fprintf(f, "tick");
    for (int r = 0; r < nruns; r++)
        fprintf(f, ",%s_fz_l,%s_fz_r,%s_cop_l_x,%s_cop_l_y,%s_cop_r_x,%s_cop_r_y,%s_imu_z",
                names[r], names[r], names[r], names[r], names[r], names[r], names[r]);
    fprintf(f, "\n");
    for (uint32_t i = 0; i < HS_CR_REST + HS_CR_SWAY; i++) {
        fprintf(f, "%u", HS_CR_SETTLE + i);
        for (int r = 0; r < nruns; r++) {
            const struct hs_contact_series *s = ser[r];
            fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", s->fz[0][i], s->fz[1][i],
                    s->cop[0][2 * i], s->cop[0][2 * i + 1], s->cop[1][2 * i], s->cop[1][2 * i + 1],
                    s->imu_z[i]);
        }
        fprintf(f, "\n");
    }
    if (fclose(f))
        perror(path);
}

int hs_mujoco_urdf_accuracy(const char *urdf, const struct hs_model *robot, const char *floor,
                            const mjModel *mj, double sway_rad, FILE *out)
{
    const struct hs_config *cfg = hs_config_of(urdf, robot, floor);
    if (!cfg)
        return -1;
    const struct hs_world_params *p = &cfg->physics;
    const struct hs_contact_variant defaults = {.name = "defaults", .config_physics = true};
    /* The exact solver on the same contact, as the contact accuracy test's reference. */
    const struct hs_contact_variant exact = {.name = "exact",
                                             .solver = HS_SOLVER_STANDARD,
                                             .iterations = p->quick_iterations,
                                             .stiffness_n_m = p->contact_stiffness_n_m,
                                             .damping_n_s_m = p->contact_damping_n_s_m,
                                             .erp = p->contact_erp,
                                             .cfm = p->contact_cfm,
                                             .joint_cfm = p->cfm};
    int rc = -1;
    struct hs_contact_run *hd = hs_run(cfg, &defaults, sway_rad);
    struct hs_contact_run *he = hd ? hs_run(cfg, &exact, sway_rad) : NULL;
    /* MuJoCo as imported and with robot-floor contacts only, each with its converged twin. */
    static const unsigned mj_flags[4] = {0, HS_MJ_CONVERGED, HS_MJ_FLOOR_ONLY,
                                         HS_MJ_FLOOR_ONLY | HS_MJ_CONVERGED};
    struct hs_mujoco_contact_run *mr[4] = {NULL, NULL, NULL, NULL};
    char err[512] = "";
    if (!he)
        goto out;
    for (int k = 0; k < 4; k++) {
        if (hs_mujoco_contact_run_create(mj, hd, sway_rad, mj_flags[k], &mr[k], err, sizeof err)) {
            fprintf(stderr, "MuJoCo: %s\n", err);
            goto out;
        }
        hs_mujoco_contact_run_all(mr[k]);
    }

    char solver[96];
    if (p->quick_iterations_min)
        snprintf(solver, sizeof solver, "defaults: quick step %u (%u while calm), SOR w %.1f",
                 p->quick_iterations, p->quick_iterations_min, p->quick_w);
    else
        snprintf(solver, sizeof solver, "defaults: quick step %u, SOR w %.1f", p->quick_iterations,
                 p->quick_w);
    struct row rows[6] = {
        {.engine = "hilsim", .solver = solver},
        {.engine = "hilsim", .solver = "exact (dWorldStep): CoP reference"},
        {.engine = "MuJoCo, as imported", .solver = "defaults: Newton, tolerance 1e-8"},
        {.engine = "MuJoCo, as imported", .solver = "Newton to 1e-15: CoP reference"},
        {.engine = "MuJoCo, robot-floor contacts only",
         .solver = "defaults: Newton, tolerance 1e-8"},
        {.engine = "MuJoCo, robot-floor contacts only", .solver = "Newton to 1e-15: CoP reference"},
    };
    hs_row(&rows[0], hd, he);
    hs_row(&rows[1], he, he);
    for (int k = 0; k < 4; k++)
        mj_row(&rows[2 + k], mr[k], mr[k | 1]);
    fprintf(out,
            "\n%s on the URDF `hilsim model --urdf` writes, hilsim's bench and MuJoCo %s's own "
            "import: %u ticks settle, %u at rest, %u swaying ±%.2f rad at 0.25 Hz (simulated "
            "time); weight above the ankle sensors %.1f N\n\n",
            robot->name, mj_versionString(), HS_CR_SETTLE, HS_CR_REST, HS_CR_SWAY, sway_rad,
            rows[0].m.weight_above_n);
    fprintf(out, "| engine | solver | ankle Fz L / R N | Fz std L / R %% | worst Fz jump %% | "
                 "ΣFz − weight %% | IMU z std m/s² | CoP vs exact mm | sinkage mm | sway Fz noise "
                 "L / R %% | sway jump %% | sway IMU noise m/s² | sway CoP vs exact mm | load "
                 "swing %% | iterations rest / sway | contacts | goals |\n");
    fprintf(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < 6; i++)
        print_row(out, &rows[i]);
    fprintf(out,
            "\ngoals (tests/world/test_contact_accuracy.c): Fz std and sway noise <= %.1f %%, "
            "jumps <= %.1f %% of each foot's load, ΣFz = weight within %.1f %%, IMU z <= %.2f "
            "m/s², CoP within %.0f mm of the engine's own exact solve, sinkage <= %.0f mm, the "
            "sway swings the left load by >= %.0f %%\n",
            NOISE_PCT, JUMP_PCT, SUM_PCT, IMU_STD, 1e3 * COP_M, 1e3 * SINK_M, 100 * SWING_MIN);
    /* Across engines the CoP is no solver error: two contact models share a statically
     * indeterminate load between two feet. Shown, not judged. */
    const struct hs_contact_series *hs = hs_contact_run_series(he);
    for (int k = 1; k < 4; k += 2) {
        const struct hs_contact_series *ms = hs_mujoco_contact_run_series(mr[k]);
        fprintf(out,
                "across engines (not a goal): MuJoCo's converged CoP (%s) against hilsim's "
                "exact, rest means %.2f mm, worst while swaying %.2f mm\n",
                rows[2 + k].engine + strlen("MuJoCo, "),
                1e3 * hs_contact_series_cop_diff_rest(ms, hs),
                1e3 * hs_contact_series_cop_diff_sway(ms, hs));
    }
    const char *csv = getenv("HS_SERIES_CSV");
    if (csv && *csv) {
        const struct hs_contact_series *ser[6] = {hs_contact_run_series(hd), hs};
        for (int k = 0; k < 4; k++)
            ser[2 + k] = hs_mujoco_contact_run_series(mr[k]);
        const char *const names[6] = {"hs",      "hs_exact", "mj",
                                      "mj_conv", "mj_floor", "mj_floor_conv"};
        write_csv(csv, ser, names, 6);
    }
    char v[160];
    rc = goals(&rows[0], v, sizeof v) && goals(&rows[2], v, sizeof v) ? 0 : 1;
out:
    for (int k = 0; k < 4; k++)
        hs_mujoco_contact_run_destroy(mr[k]);
    hs_contact_run_destroy(hd);
    hs_contact_run_destroy(he);
    hs_config_free(cfg);
    return rc;
}
