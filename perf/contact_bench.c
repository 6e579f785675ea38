/* contact_bench: the issue-16 table. For each robot config, every physics variant below stands
 * the robot, then sways its hips from foot to foot (contact_run.h), all variants interleaved in
 * blocks of ticks in one process so that machine noise hits them alike. Prints per variant the
 * physics phase's wall time (median, p99) and the solver's own noise where a balance controller
 * sees it, with the exact solver (dWorldStep) on the same contact as the CoP reference.
 *
 *   ./build/perf/contact_bench [CONFIG ...]
 *     (default: perf/sr1-floor.yaml and config/biped-stand.yaml, found from the source tree)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact_run.h"
#include "hilsim/config.h"
#ifdef HS_HAVE_MUJOCO
#include "mujoco_run.h"
#endif

#define BLOCK 100

/* The defaults (src/common/world_params_default.c): contact k and c per geom pair, joint CFM. */
#define K0 2e6
#define C0 5e3
#define C_OLD 1e4 /* the contact damping before (with quick 16) */
#define J0 1e-4
#define Q(nm, it, k, c, w, mc, jcfm)                                                               \
    {                                                                                              \
        .name = nm, .solver = HS_SOLVER_QUICK, .iterations = it, .stiffness_n_m = k,               \
        .damping_n_s_m = c, .sor_w = w, .max_contacts = mc, .joint_cfm = jcfm                      \
    }
#define OLD(nm, sv, it, pcfm)                                                                      \
    {                                                                                              \
        .name = nm, .solver = sv, .iterations = it, .erp = 0.2, .cfm = pcfm, .joint_cfm = 1e-10,   \
        .sor_w = 1.3                                                                               \
    }

/* Row 0 is the reference: the exact solver on the default contact. Row 1 is the default physics
 * (quick 12 and 8 while the scene is calm, SOR w 1.2, contact damping 5e3); then the defaults
 * before (quick 12 every step; quick 16, damping 1e4);
 * each later row changes one lever from the default (sor_w 0: the default's 1.2; "same
 * shuffle": params.quick_same_shuffle, ODE's own random one otherwise; 8 or fewer iterations
 * shuffle nothing) or shows older defaults (quick 20 at ODE's SOR w 1.3; the old contact 0.2 /
 * 1e-5 per point). */
static const struct hs_contact_variant variants[] = {
    {.name = "standard (exact), defaults",
     .solver = HS_SOLVER_STANDARD,
     .iterations = 20,
     .stiffness_n_m = K0,
     .damping_n_s_m = C0,
     .joint_cfm = J0},
    {.name = "quick 12, 8 while calm, SOR w 1.2, contact c 5e3: defaults",
     .solver = HS_SOLVER_QUICK,
     .iterations = 12,
     .stiffness_n_m = K0,
     .damping_n_s_m = C0,
     .joint_cfm = J0,
     .iterations_min = 8},
    Q("quick 12 fixed: the defaults before", 12, K0, C0, 0, 0, J0),
    Q("quick 16, contact c 1e4: the defaults before", 16, K0, C_OLD, 0, 0, J0),
    Q("quick 20, SOR w 1.3, contact c 1e4: older defaults", 20, K0, C_OLD, 1.3, 0, J0),
    Q("quick 12, contact c 1e4", 12, K0, C_OLD, 0, 0, J0),
    Q("quick 14, contact c 1e4", 14, K0, C_OLD, 0, 0, J0),
    Q("quick 8", 8, K0, C0, 0, 0, J0),
    Q("quick 9", 9, K0, C0, 0, 0, J0),
    Q("quick 10", 10, K0, C0, 0, 0, J0),
    Q("quick 11", 11, K0, C0, 0, 0, J0),
    Q("quick 13", 13, K0, C0, 0, 0, J0),
    Q("quick 14", 14, K0, C0, 0, 0, J0),
    Q("quick 16", 16, K0, C0, 0, 0, J0),
    Q("quick 20", 20, K0, C0, 0, 0, J0),
    Q("quick 30", 30, K0, C0, 0, 0, J0),
    Q("quick 50", 50, K0, C0, 0, 0, J0),
    Q("quick 100", 100, K0, C0, 0, 0, J0),
    Q("SOR w 1.0", 12, K0, C0, 1.0, 0, J0),
    Q("SOR w 1.1", 12, K0, C0, 1.1, 0, J0),
    Q("SOR w 1.3 (ODE's default)", 12, K0, C0, 1.3, 0, J0),
    Q("SOR w 1.25", 12, K0, C0, 1.25, 0, J0),
    Q("SOR w 1.4", 12, K0, C0, 1.4, 0, J0),
    Q("quick 8, SOR w 1.3", 8, K0, C0, 1.3, 0, J0),
    Q("quick 9, SOR w 1.3", 9, K0, C0, 1.3, 0, J0),
    Q("quick 10, SOR w 1.3", 10, K0, C0, 1.3, 0, J0),
    Q("quick 11, SOR w 1.3", 11, K0, C0, 1.3, 0, J0),
    Q("quick 10, SOR w 1.25", 10, K0, C0, 1.25, 0, J0),
    Q("quick 11, SOR w 1.25", 11, K0, C0, 1.25, 0, J0),
    Q("quick 10, SOR w 1.3, contact c 3e3", 10, K0, 3e3, 1.3, 0, J0),
    Q("quick 9, SOR w 1.3, contact c 3e3", 9, K0, 3e3, 1.3, 0, J0),
    Q("quick 8, SOR w 1.3, contact c 3e3", 8, K0, 3e3, 1.3, 0, J0),
#define S(nm, it, w)                                                                               \
    {                                                                                              \
        .name = nm, .solver = HS_SOLVER_QUICK, .iterations = it, .stiffness_n_m = K0,              \
        .damping_n_s_m = C0, .sor_w = w, .joint_cfm = J0, .same_shuffle = true                     \
    }
    S("same shuffle: quick 12", 12, 0),
    S("same shuffle: quick 11", 11, 0),
    S("same shuffle: quick 10", 10, 0),
    S("same shuffle: quick 9", 9, 0),
    S("same shuffle: quick 10, SOR w 1.3", 10, 1.3),
    S("same shuffle: quick 9, SOR w 1.3", 9, 1.3),
    Q("joint cfm 1e-10 (rigid)", 12, K0, C0, 0, 0, 1e-10),
    Q("joint cfm 1e-5", 12, K0, C0, 0, 0, 1e-5),
    Q("joint cfm 3e-4", 12, K0, C0, 0, 0, 3e-4),
    Q("joint cfm 1e-10, quick 50", 50, K0, C0, 0, 0, 1e-10),
    Q("contact k 5e5", 12, 5e5, C0, 0, 0, J0),
    Q("contact k 1e6", 12, 1e6, C0, 0, 0, J0),
    Q("contact k 1e7", 12, 1e7, C0, 0, 0, J0),
    Q("contact c 3e3", 12, K0, 3e3, 0, 0, J0),
    Q("contact c 4e3", 12, K0, 4e3, 0, 0, J0),
    Q("contact c 7e3", 12, K0, 7e3, 0, 0, J0),
    Q("contact c 3e4", 12, K0, 3e4, 0, 0, J0),
    Q("1 contact/pair", 12, K0, C0, 0, 1, J0),
    Q("2 contacts/pair", 12, K0, C0, 0, 2, J0),
    Q("3 contacts/pair", 12, K0, C0, 0, 3, J0),
    Q("8 contacts/pair", 12, K0, C0, 0, 8, J0),
    {.name = "adaptive 10..20",
     .solver = HS_SOLVER_QUICK,
     .iterations = 20,
     .stiffness_n_m = K0,
     .damping_n_s_m = C0,
     .joint_cfm = J0,
     .iterations_min = 10},
    {.name = "adaptive 5..30",
     .solver = HS_SOLVER_QUICK,
     .iterations = 30,
     .stiffness_n_m = K0,
     .damping_n_s_m = C0,
     .joint_cfm = J0,
     .iterations_min = 5},
    {.name = "step memory: exact arena, own allocator",
     .solver = HS_SOLVER_QUICK,
     .iterations = 12,
     .stiffness_n_m = K0,
     .damping_n_s_m = C0,
     .joint_cfm = J0,
     .exact_step_memory = true},
    {.name = "broadphase: one category bit for all robots (before)",
     .solver = HS_SOLVER_QUICK,
     .iterations = 12,
     .stiffness_n_m = K0,
     .damping_n_s_m = C0,
     .joint_cfm = J0,
     .no_body_bits = true},
#define A(nm, sv, it)                                                                              \
    {                                                                                              \
        .name = nm, .solver = sv, .iterations = it, .stiffness_n_m = K0, .damping_n_s_m = C0,      \
        .joint_cfm = J0, .armature_rows = true                                                     \
    }
    A("armature as joint-space rows", HS_SOLVER_QUICK, 12),
    A("armature as joint-space rows, quick 50", HS_SOLVER_QUICK, 50),
    A("armature as joint-space rows, exact", HS_SOLVER_STANDARD, 20),
    OLD("old: quick 20, cfm 1e-5/pt, rigid joints", HS_SOLVER_QUICK, 20, 1e-5),
    OLD("old: quick 100, same", HS_SOLVER_QUICK, 100, 1e-5),
    OLD("old: standard, same", HS_SOLVER_STANDARD, 20, 1e-5),
    OLD("old contact, quick 50, cfm 1e-3/pt", HS_SOLVER_QUICK, 50, 1e-3),
    {.name = "the config's own physics", .config_physics = true},
};
#define NV (sizeof variants / sizeof variants[0])

static int bench_robot(const char *path, double sway_rad)
{
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    const struct hs_config *cfg = NULL;
    char buf[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
    if (hs_config_load(path, &cfg, &d)) {
        hs_diag_format(&d, buf, sizeof buf);
        fprintf(stderr, "contact_bench: %s\n", buf);
        return 1;
    }
    struct hs_contact_run *runs[NV] = {0};
    int rc = 1;
    const char *only = getenv("HS_VARIANTS");
    bool skip[NV] = {0};
    for (size_t v = 0; v < NV; v++)
        skip[v] = v > 0 && only && !strstr(only, variants[v].name);
    for (size_t v = 0; v < NV; v++)
        if (!skip[v] && hs_contact_run_create(cfg, &variants[v], sway_rad, &runs[v], &d)) {
            hs_diag_format(&d, buf, sizeof buf);
            fprintf(stderr, "contact_bench: %s: %s: %s\n", path, variants[v].name, buf);
            goto out;
        }
    bool failed[NV] = {0};
#ifdef HS_HAVE_MUJOCO
    struct hs_mujoco_run *mj = NULL;
    char mjerr[512] = "";
    /* Row 0 is never skipped; MuJoCo's model takes only its robot, floor, step and gravity. */
    if (hs_mujoco_run_create(hs_contact_run_bench(runs[0]), &mj, mjerr, sizeof mjerr))
        fprintf(stderr, "contact_bench: %s: MuJoCo: %s\n", path, mjerr);
#endif
    for (bool more = true; more;) {
        more = false;
#ifdef HS_HAVE_MUJOCO
        if (mj && !hs_mujoco_run_done(mj)) {
            hs_mujoco_run_ticks(mj, BLOCK);
            more = true;
        }
#endif
        for (size_t v = 0; v < NV; v++) {
            if (skip[v] || failed[v] || hs_contact_run_done(runs[v]))
                continue;
            if (hs_contact_run_ticks(runs[v], BLOCK, true)) {
                failed[v] = true;
                fprintf(stderr, "contact_bench: %s: %s: plant fault\n", path, variants[v].name);
            }
            more = true;
        }
    }
    printf("\n## %s (%s), %u ticks settle, %u at rest, %u swaying ±%.2f rad at 0.25 Hz\n\n",
           cfg->bench.name, path, HS_CR_SETTLE, HS_CR_REST, HS_CR_SWAY, sway_rad);
    printf("| physics | step median µs | step p99 µs | ankle Fz std L / R %% | worst Fz jump %% | "
           "IMU z std m/s² | ΣFz − weight %% | CoP vs exact mm | sinkage mm | sway Fz noise "
           "L / R %% | sway jump %% | sway IMU noise m/s² | sway CoP vs exact mm | health: "
           "jump p99 N / joint err max mm | contacts | iterations mean rest / sway |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t v = 0; v < NV; v++) {
        if (skip[v])
            continue;
        if (failed[v]) {
            printf("| %s | plant fault |\n", variants[v].name);
            continue;
        }
        struct hs_contact_metrics m;
        hs_contact_run_metrics(runs[v], &m);
        printf("| %s | %.1f | %.1f | %.3f / %.3f | %.3f | %.4f | %+.3f | %.2f | %.3f | %.3f / "
               "%.3f | %.3f | %.4f | %.2f | %.2f / %.3f | %.1f | %.1f / %.1f |\n",
               variants[v].name, m.step_median_us, m.step_p99_us, m.rest_std_pct[0],
               m.rest_std_pct[1], m.rest_jump_pct, m.imu_z_std, m.sum_err_pct,
               1e3 * hs_contact_run_cop_diff_rest(runs[v], runs[0]),
               1e3 * m.health_rest.penetration_m.max, m.sway_noise_pct[0], m.sway_noise_pct[1],
               m.sway_jump_pct, m.sway_imu_noise,
               failed[0] ? NAN : 1e3 * hs_contact_run_cop_diff_sway(runs[v], runs[0]),
               m.health_rest.force_jump_n.p99, 1e3 * m.health_sway.joint_error_m.max,
               m.contacts_mean, m.health_rest.quick_iterations_mean,
               m.health_sway.quick_iterations_mean);
    }
#ifdef HS_HAVE_MUJOCO
    if (mj) {
        struct hs_contact_metrics mm, m1 = {.step_median_us = NAN}; /* nan: row not run */
        hs_mujoco_run_metrics(mj, &mm);
        if (!skip[1] && !failed[1]) /* HS_VARIANTS may leave the defaults' row out */
            hs_contact_run_metrics(runs[1], &m1);
        printf("| MuJoCo %s mj_step (Newton, its defaults; foot contact normal force, waist "
               "body z accel) | %.1f | %.1f | %.3f / %.3f | %.3f | %.4f | – | – | – | – | – | – | "
               "– | – | %.1f |\n",
               hs_mujoco_version(), mm.step_median_us, mm.step_p99_us, mm.rest_std_pct[0],
               mm.rest_std_pct[1], mm.rest_jump_pct, mm.imu_z_std, mm.contacts_mean);
        printf("\nratio of median step times to MuJoCo's mj_step: hilsim's defaults (quick 12, "
               "8 while calm, SOR w 1.2, contact c 5e3) %.2f",
               m1.step_median_us / mm.step_median_us);
        if (!skip[2] && !failed[2]) {
            struct hs_contact_metrics m2;
            hs_contact_run_metrics(runs[2], &m2);
            printf(", quick 12 every step (the defaults before) %.2f",
                   m2.step_median_us / mm.step_median_us);
        }
        if (!skip[NV - 1] && !failed[NV - 1]) {
            struct hs_contact_metrics mc;
            hs_contact_run_metrics(runs[NV - 1], &mc);
            printf(", the config's own physics %.2f", mc.step_median_us / mm.step_median_us);
        }
        printf(" (MuJoCo's foot loads %.1f / %.1f N include the feet)\n", mm.load_n[0],
               mm.load_n[1]);
        hs_mujoco_run_destroy(mj);
    }
#else
    printf("| MuJoCo | not built: libmujoco-dev (Debian 12: 2.2.2) was not found |\n");
#endif
    struct hs_contact_metrics m0;
    hs_contact_run_metrics(runs[0], &m0);
    printf("\nstatic load L / R %.1f / %.1f N, weight above the sensors %.1f N; sway moved the "
           "left load by %.0f %% of it (exact solver)\n",
           m0.load_n[0], m0.load_n[1], m0.weight_above_n, 100 * m0.sway_load_swing);
    rc = 0;
out:
    for (size_t v = 0; v < NV; v++)
        hs_contact_run_destroy(runs[v]);
    hs_config_free(cfg);
    return rc;
}

int main(int argc, char **argv)
{
    static const char *defaults[] = {HS_SOURCE_DIR "/perf/sr1-floor.yaml",
                                     HS_SOURCE_DIR "/config/biped-stand.yaml"};
    int n = argc > 1 ? argc - 1 : 2;
    const char **paths = argc > 1 ? (const char **)argv + 1 : defaults;
    const char *sway = getenv("HS_SWAY_RAD");
    double sway_rad = sway ? atof(sway) : 0.03;
    int rc = 0;
    for (int i = 0; i < n; i++)
        rc |= bench_robot(paths[i], sway_rad);
    return rc;
}
