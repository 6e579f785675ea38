#ifndef HS_BENCH_INTERNAL_H
#define HS_BENCH_INTERNAL_H

#include "hilsim/bench.h"

/* The tick calls inputs and outputs through these, never through a NULL op: hs_bench_add_io
 * puts no-ops where a module has none, as the bench keeps a compact array of the plants that
 * exist. One rule: the tick makes no NULL checks. */
struct hs_bench_io {
    const struct hs_bench_io_ops *ops;
    void *ctx;
    int (*inputs)(void *ctx, struct hs_bench *b, int64_t now_ns);
    int (*outputs)(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick);
};

/* A stage (the scenario, the control socket's commands); unset ops are no-ops, so the tick
 * needs no NULL check. The tick runs the stages in attach order. */
struct hs_bench_stage {
    void *ctx;
    void (*commands)(void *ctx, struct hs_bench *b, int64_t now_ns);
    void (*substep)(void *ctx, struct hs_bench *b, uint32_t substep);
    void (*readings)(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick);
    bool taken;
};

struct hs_bench {
    const struct hs_config *cfg;
    uint32_t nmodels;
    struct hs_model *models[HS_CFG_MAX_MODELS];
    struct hs_plant *plants[HS_CFG_MAX_MODELS];      /* NULL for static models */
    struct hs_plant *live_plants[HS_CFG_MAX_MODELS]; /* the non-NULL plants, for the tick */
    uint32_t nlive_plants;
    struct hs_world *world;
    struct hs_bench_joint *joints;
    uint32_t njoints;
    struct hs_bench_sensor *sensors;
    uint32_t nsensors;
    struct hs_bench_io io[HS_BENCH_MAX_IO];
    uint32_t nio;
    struct hs_bench_stage stage[HS_BENCH_MAX_STAGES];
    uint32_t nstages;
    /* The modules with a wait_release op (lockstep release sources), in attach order. */
    const struct hs_bench_io *gates[HS_BENCH_MAX_IO];
    uint32_t ngates;
    enum hs_clock_mode clock_mode; /* rt.clock.mode, or the runner's --clock */
    /* this tick's sync clock events (hs_bench_sync_event), tick thread only */
    int64_t sync_ev[HS_BENCH_SYNC_EVENTS_MAX];
    uint32_t nsync_ev;
    int64_t planned_ns; /* the tick's planned wake (hs_bench_set_planned), 0: unknown */
    int64_t period_ns;
    int64_t start_ns; /* first actuation's now_ns: the demo trajectory's time origin */
    bool started;
    bool safe_hold;                 /* rt:w; set once, read by the tick */
    bool warming_up;                /* set by the runner around its warm-up: outputs stay inside */
    bool stopped;                   /* safe_stop ran */
    bool shm_frozen;                /* rt:w; the scenario's shm freeze fault */
    int fault_rc;                   /* rt:w; 0, or the world's fault: the bench is latched */
    int trajectory_joint;           /* bench joint index, -1 none */
    const struct hs_bench_tap *tap; /* never NULL: hs__bench_noop_tap until a recorder sets one */
    char **warnings;                /* what the CLI should print once (hs_bench_warning) */
    /* The single-joint CAN ports by config node index (src/bench/can/joint_port_bind.c): what
     * hs_can_port_find answers. Init only. */
    struct hs_can_port *can_ports[HS_CFG_MAX_NODES];
    /* The buses the CAN module opened, by config bus index (hs_bench_can_bus_find), and the
     * tap the buses it opens get (hs_bench_can_set_tap). Init only. */
    struct hs_can_bus *can_buses[HS_CFG_MAX_BUSES];
    const struct hs_can_tap_ops *can_tap;
    void *can_tap_ctx;
    uint32_t nwarnings;
};

/* bench_plant_params.c: config -> plant parameters for one model. init only: allocates. */
int hs__bench_plant_params(const struct hs_config *cfg, const struct hs_model *model,
                           struct hs_plant_params *ret_params, struct hs_diag *diag);
/* bench_tick.c: the no-op inputs and outputs of modules that have none. RT-safe. */
int hs__bench_io_no_inputs(void *ctx, struct hs_bench *b, int64_t now_ns);
int hs__bench_io_no_outputs(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick);
extern const struct hs_bench_tap hs__bench_noop_tap; /* bench_tick.c */
/* bench_tick.c: the stage ops of a bench without a scenario. RT-safe. */
void hs__bench_stage_none(struct hs_bench_stage *ret);
/* bench_warnings.c: init only. Appends one formatted line; -ENOMEM when it cannot. */
int hs__bench_warn(struct hs_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* init only: the warnings a new bench owes its user: torque limits left infinite, initial
 * positions outside joint limits, bodies that start overlapping. */
int hs__bench_collect_warnings(struct hs_bench *b);
void hs__bench_free_warnings(struct hs_bench *b);

/* joint_inertia.c: what joint (link) i of m moves, at link poses `poses` (world frame). All
 * inertias about the joint axis in kg·m² (rotate) or masses in kg (slide). scratch: nlinks
 * doubles. */
struct hs__joint_inertia {
    double moved;        /* the links beyond the joint plus their reflected rotor inertias */
    double moment_moved; /* sum of mass x distance of the centre of mass from the axis, kg·m */
    double moment_rest;  /* the same for every link not beyond the joint */
};
void hs__bench_joint_inertia(const struct hs_model *m, const struct hs_pose *poses, uint32_t i,
                             double *scratch, struct hs__joint_inertia *ret);
/* joint_inertia.c: ret[k] (nlinks doubles) = the inertia (kg·m², or kg for a slider) joint k's
 * torque meets within one tick with every other joint free, 1 / (M^-1)_kk; 0 for links without
 * a hinge or slider. init only: allocates. -ENOMEM, or -EDOM when the mass matrix is not
 * positive definite. */
int hs__bench_effective_inertias(const struct hs_model *m, const struct hs_pose *poses,
                                 double *ret);
/* Link k is in the subtree of link i (links are ordered parent first). */
bool hs__bench_in_subtree(const struct hs_model *m, uint32_t k, uint32_t i);

/* The same, with fixed joints (not the root's) rigid, or free to turn like ball joints: what
 * ODE's iterative quick-step solver makes of a fixed joint between bodies of very different
 * inertia within one tick (RH2's 5 g pan-tilt links carrying a 0.1 kg·m² sensor). */
int hs__bench_effective_inertias_as(const struct hs_model *m, const struct hs_pose *poses,
                                    bool fixed_rigid, double *ret);
/* Link frames at the model's zero pose with the root where the file puts it. */
void hs__bench_model_poses(const struct hs_model *m, struct hs_pose *ret);

/* auto_gains.c: the largest critically damped bandwidth (rad/s) whose gains, sized for
 * tuned_inertia, keep an explicit PD with tick h_s stable on effective_inertia (derivation in
 * auto_gains.c). 0 when effective_inertia is not positive. */
double hs__bench_pd_bandwidth_max(double tuned_inertia, double effective_inertia, double h_s);

/* bench_plant_params.c: the finite torque limit (N·m or N) a joint gets when the config leaves
 * torque_limit_nm out; poses from hs__bench_model_poses; gravity in m/s². */
/* The command modes a joint accepts: the config's, unless the config leaves them at their default
 * (all four) and the model says which interfaces ros2_control commands (URDF <ros2_control>):
 * then those, position -> position, velocity -> velocity, effort -> torque. */
uint32_t hs__bench_command_modes(const struct hs_cfg_actuator *a, const struct hs_link *l);
double hs__bench_default_torque_limit(const struct hs_model *m, const struct hs_pose *poses,
                                      uint32_t link, double *scratch, double velocity_limit,
                                      double gravity);

/* demo_controller.c: RT-safe. Writes the controller-sourced joints' command slots. */
void hs__bench_demo_controller(struct hs_bench *b, int64_t now_ns);

#endif
