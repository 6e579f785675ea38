/* One robot standing, then swaying its hips from foot to foot, under one physics variant, with
 * the solver's own noise measured where a balance controller sees it: the ankle F/T sensors and
 * the waist accelerometer (no sensor noise: the configs' noise is zeroed). Shared by the contact
 * benchmark (perf/contact_bench.c) and the accuracy test (tests/world/test_contact_accuracy.c),
 * so both judge the same figures. Time is simulated (lockstep ticks); only the benchmark times
 * the physics phase on the wall clock.
 *
 * Timeline at the config's tick: settle SETTLE ticks, measure rest over REST ticks, then sway:
 * hip roll +a and ankle roll -a on both legs (feet stay flat, the pelvis moves sideways), a
 * ramped sine of amplitude sway_rad and period 4 s over SWAY ticks. */
#ifndef HS_BENCH_CONTACT_RUN_H
#define HS_BENCH_CONTACT_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/world.h"

#define HS_CR_SETTLE 2000
#define HS_CR_REST 1000
#define HS_CR_SWAY 4000
#define HS_CR_TICKS (HS_CR_SETTLE + HS_CR_REST + HS_CR_SWAY)

struct hs_contact_variant {
    const char *name;
    enum hs_solver solver;
    uint32_t iterations;
    double stiffness_n_m, damping_n_s_m; /* per geom pair; 0 stiffness: erp/cfm per point */
    double erp, cfm;
    double sor_w;            /* quick-step SOR factor (physics.sor_w); 0 = the default (1.2) */
    uint32_t max_contacts;   /* 0 = the config's */
    bool config_physics;     /* take the config's physics as it is (the others are ignored) */
    double joint_cfm;        /* global CFM (every joint row); 0 = the config's */
    uint32_t iterations_min; /* adaptive iterations from iterations_min to iterations; 0: fixed */
    bool exact_step_memory;  /* ODE's step arena re-sized to the need (reserve factor 1, no
                                minimum) through our own block allocator */
    bool armature_rows;      /* params.armature_joint_space: rotor inertia as joint-space rows */
    bool no_body_bits;       /* every robot geom back on one category bit colliding with all, as
                                before the per-body broadphase filter (world_create.c) */
    bool same_shuffle;       /* params.quick_same_shuffle: quick-step's row shuffle alike each
                                step */
};

struct hs_contact_metrics {
    double load_n[2];         /* mean ankle Fz at rest (left, right), N */
    double rest_std_pct[2];   /* Fz std at rest, % of that ankle's load */
    double rest_jump_pct;     /* worst tick-to-tick Fz change at rest, % of the ankle's load */
    double imu_z_std;         /* waist accelerometer z std at rest, m/s² */
    double sum_err_pct;       /* (Fz left + right - weight above the sensors) / that weight, % */
    double weight_above_n;    /* g x (mass - the feet below the sensors) */
    double cop_m[2][2];       /* mean CoP per foot at rest, sensor frame x, y, m */
    double sway_noise_pct[2]; /* Fz noise while swaying (second-difference estimate), % of load */
    double sway_jump_pct;     /* worst tick-to-tick Fz change while swaying, % of rest load */
    double sway_imu_noise;    /* accelerometer z noise while swaying, m/s² */
    double sway_load_swing;   /* (max - min) of left Fz while swaying / its rest load */
    double step_median_us, step_p99_us; /* physics phase, wall clock (0 unless timed) */
    struct hs_world_health_summary health_rest, health_sway;
    double contacts_mean;
};

/* What a run records from the end of the settling, one entry per tick (HS_CR_REST at rest, then
 * HS_CR_SWAY swaying): each ankle F/T's Fz (left, right; the force the foot passes up to the
 * leg, N), its CoP in the sensor frame (x, y interleaved, m) and the accelerometer's z (specific
 * force in the sensor frame, m/s²). Every figure below is computed from these, whichever engine
 * recorded them (perf/mujoco_contact_run.c fills the same series from MuJoCo). */
struct hs_contact_series {
    double *fz[2];  /* HS_CR_REST + HS_CR_SWAY each */
    double *cop[2]; /* 2 x (HS_CR_REST + HS_CR_SWAY) each */
    double *imu_z;  /* HS_CR_REST + HS_CR_SWAY */
};

/* The force, IMU and CoP figures of a series (load_n .. sway_load_swing); the rest of ret is
 * left as it was. weight_above_n: g x the mass above the ankle sensors. */
void hs_contact_series_metrics(const struct hs_contact_series *s, double weight_above_n,
                               struct hs_contact_metrics *ret);
/* Worst CoP distance (m) between two series at the same sway tick, per foot while its Fz is
 * above a fifth of b's rest load; and the worst distance between the rest means. */
double hs_contact_series_cop_diff_sway(const struct hs_contact_series *a,
                                       const struct hs_contact_series *b);
double hs_contact_series_cop_diff_rest(const struct hs_contact_series *a,
                                       const struct hs_contact_series *b);
/* The sway's set point at tick (counted from the start, period_s a tick): the roll offset a
 * (hip rolls +a, ankle rolls -a) and its rate, rad and rad/s; 0 before the sway. */
void hs_contact_sway(uint32_t tick, double period_s, double sway_rad, double *ret_a,
                     double *ret_da);
/* The roll joints the sway drives, as SR1 (LLEG_HIP_R) or the biped (L_HIP_R) names them: hips
 * left, right, ankles left, right. NULL past the names known. */
const char *hs_contact_roll_joint(int k, int naming);

struct hs_contact_run;

/* init only: allocates. base: a loaded config (borrowed; must outlive the run). Returns 0 or a
 * negative errno with diag set (a config whose robot lacks two ankle F/T sensors, an
 * accelerometer or the four roll joints: -ENOENT). */
int hs_contact_run_create(const struct hs_config *base, const struct hs_contact_variant *v,
                          double sway_rad, struct hs_contact_run **ret, struct hs_diag *diag);
void hs_contact_run_destroy(struct hs_contact_run *run);
/* Steps up to n more ticks (of HS_CR_TICKS); timed: measure the physics phase. 0, or the
 * bench's error (a plant fault). */
int hs_contact_run_ticks(struct hs_contact_run *run, uint32_t n, bool timed);
bool hs_contact_run_done(const struct hs_contact_run *run);
/* After the last tick. */
void hs_contact_run_metrics(struct hs_contact_run *run, struct hs_contact_metrics *ret);
/* Worst CoP distance (m) between two runs at the same sway tick, per foot while its Fz is above
 * a fifth of its rest load; and the worst CoP distance of the rest means. */
double hs_contact_run_cop_diff_sway(const struct hs_contact_run *a, const struct hs_contact_run *b);
double hs_contact_run_cop_diff_rest(const struct hs_contact_run *a, const struct hs_contact_run *b);
const struct hs_contact_series *hs_contact_run_series(const struct hs_contact_run *run);
/* The parts the run measures and drives: bench sensor indices of the left and right ankle F/T
 * and the accelerometer, bench joint indices of the roll joints (hs_contact_roll_joint's
 * order), and g x the mass above the ankle sensors. */
struct hs_contact_parts {
    int ft[2];
    int accel;
    int roll[4];
    double weight_above_n;
};
void hs_contact_run_parts(const struct hs_contact_run *run, struct hs_contact_parts *ret);
const char *hs_contact_run_robot(const struct hs_contact_run *run);
/* The run's bench (owned by the run). */
struct hs_bench *hs_contact_run_bench(struct hs_contact_run *run);

#endif
