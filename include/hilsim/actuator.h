/* The motor model of one joint: turns a joint command into the effort the world applies, with
 * the gear (ratio, efficiency), torque and current saturation, friction, velocity limits, and
 * the command watchdog (a stale command falls back to a safe behaviour).
 *
 * The output has two parts because ODE can do part of the job better than an explicit torque:
 * an explicit effort (added each physics step) and ODE's joint motor row (target velocity and
 * maximum force). The motor row is an implicit constraint: it gives stiction for Coulomb
 * friction and a rigid brake without the chatter or the stability limit of an explicit term.
 * Rotor inertia is not here: the world adds N² J_rotor to the child body about the joint axis
 * (hs_world_body_spec.armature, see hs_plant_armature()).
 *
 * Units: rotate joints N·m, rad, rad/s; slide joints N, m, m/s ("torque" below covers both).
 * Joint side unless the name says motor. Ownership: plain caller-owned storage, no allocation. */
#ifndef HILSIM_ACTUATOR_H
#define HILSIM_ACTUATOR_H

#include <stdbool.h>
#include <stdint.h>

/* The ODE motor row's bound for an unlimited (INFINITY) brake or velocity loop, N·m or N. */
#define HS_ACTUATOR_RIGID_EFFORT 1e6

enum hs_joint_mode {
    HS_JOINT_MODE_DISABLED, /* free-wheeling: no motor torque (friction still acts) */
    HS_JOINT_MODE_TORQUE,   /* tau_ff is the joint torque */
    HS_JOINT_MODE_CURRENT,  /* current (A) -> current · torque_const · gear_ratio · efficiency */
    HS_JOINT_MODE_VELOCITY, /* velocity (rad/s) through the velocity loop, plus tau_ff */
    HS_JOINT_MODE_POSITION, /* MIT PD: kp (q - q) + kd (dq - dq) + tau_ff */
    HS_JOINT_MODE_BRAKE,    /* held by the brake up to brake_torque */
    HS_JOINT_MODE_MAX
};

/* One command slot per joint, written by whichever source drives the joint (controller, CAN,
 * shm). seq == 0 means no command has arrived yet: the joint then keeps its safe behaviour. */
struct hs_joint_command {
    uint32_t mode;      /* enum hs_joint_mode */
    double q;           /* position set point, rad or m */
    double dq;          /* velocity set point for the PD, rad/s or m/s */
    double kp;          /* N·m/rad or N/m */
    double kd;          /* N·m·s/rad or N·s/m */
    double tau_ff;      /* feed-forward (torque mode: the torque), N·m or N */
    double current;     /* motor current, A */
    double velocity;    /* velocity-mode target, rad/s or m/s */
    int64_t rx_time_ns; /* when the command was received, same clock as the tick's now_ns */
    uint64_t seq;       /* increments per command; 0 = never received */
};

enum hs_safe_behaviour {
    HS_SAFE_ZERO_TORQUE, /* free-wheel */
    HS_SAFE_BRAKE,       /* brake at brake_torque */
    HS_SAFE_HOLD,        /* PD (hold_kp, hold_kd) to the position where the fallback began */
    HS_SAFE_MAX
};

enum hs_velocity_loop {
    HS_VELOCITY_LOOP_GAIN,      /* tau = velocity_gain (v* - dq) + tau_ff, explicit */
    HS_VELOCITY_LOOP_ODE_MOTOR, /* ODE motor row: reaches v* in one step within torque_max */
    HS_VELOCITY_LOOP_MAX
};

struct hs_actuator_params {
    double gear_ratio;          /* N, motor turns per joint turn, != 0 */
    double gear_efficiency;     /* eta, (0, 1] */
    double rotor_inertia;       /* J_rotor, kg·m², motor side (the world reflects N² J) */
    double torque_const;        /* Kt, N·m/A, motor side, > 0 */
    double torque_max;          /* joint-side saturation, > 0, INFINITY = none */
    double current_max;         /* A, > 0, INFINITY = none */
    double viscous;             /* N·m·s/rad, joint side, >= 0 */
    double coulomb;             /* N·m, joint side, >= 0 (ODE motor row: includes stiction) */
    double q_min, q_max;        /* position stops (ODE LoStop/HiStop); ±INFINITY = none */
    double dq_min, dq_max;      /* velocity limits; ±INFINITY = none */
    double velocity_limit_gain; /* past a velocity limit: tau capped at gain · (limit - dq);
                                   0 = only refuse torque that drives further past it */
    /* The drive's speed limit as an ODE motor row (hs_actuator_compute): the most a joint's
     * speed can change in one step per N·m (rad/s per N·m, or m/s per N: the step over the
     * smallest inertia the joint moves); 0 = off (only the explicit limiter above). */
    double velocity_limit_reach;
    enum hs_velocity_loop velocity_loop;
    double velocity_gain; /* N·m·s/rad, HS_VELOCITY_LOOP_GAIN */
    double brake_torque;  /* holding torque, > 0, INFINITY = rigid */
    int64_t timeout_ns;   /* command older than this is stale; 0 = no watchdog */
    enum hs_safe_behaviour safe;
    double hold_kp, hold_kd; /* HS_SAFE_HOLD gains */
};

/* What the motor model asks of the world for one physics step. */
struct hs_actuator_output {
    double effort;          /* explicit joint torque (motor minus viscous friction) */
    double motor_torque;    /* the motor's joint-side torque after saturation */
    double current;         /* motor current that motor_torque takes, A */
    double ode_vel;         /* ODE motor row target velocity */
    double ode_fmax;        /* ODE motor row force limit (0 = off) */
    bool ode_motor_drives;  /* the row is the motor (brake, ODE velocity loop), not friction */
    bool torque_saturated;  /* torque_max limited it */
    bool current_saturated; /* current_max limited it */
    /* The explicit limiter (past a velocity limit) made the torque differ from what the
     * command gives after saturation alone. */
    bool velocity_limited;
    /* The speed-limit row is engaged: ODE's motor row at the limit (ode_vel), bounded by the
     * command's torque (ode_fmax). Whether it held the joint back, applying less than the
     * command, shows only after the step (hs_actuator_speed_row_held). */
    bool speed_limit_row;
    /* The command, or a step of its torque law, was not finite (e.g. kp·(q*−q) overflowing):
     * the outputs are zero torque and the caller executes the joint's safe behaviour instead. */
    bool invalid_command;
};

/* RT-safe: after a step that ran the speed-limit row of o, whether the row held the joint at
 * its limit: row_torque, the torque (force) the row applied along the axis (ODE's joint
 * feedback), is below the command's |motor_torque|. A row that passed the full command is
 * the explicit torque, not a limit. */
bool hs_actuator_speed_row_held(const struct hs_actuator_output *o, double row_torque);

/* Per-joint watchdog and counters. */
struct hs_actuator_state {
    bool stale;            /* the safe behaviour is active */
    double hold_q;         /* HS_SAFE_HOLD target */
    uint64_t stale_events; /* transitions from a fresh command into the safe behaviour */
    uint64_t stale_ticks;  /* ticks spent in the safe behaviour after a command had arrived */
    uint64_t torque_saturations, current_saturations, velocity_limits; /* ticks */
    bool invalid;              /* the last tick's command was invalid (its safe behaviour runs) */
    uint64_t invalid_commands; /* ticks whose command was invalid */
};

/* Fills defaults from the model joint's fields: gear ratio, efficiency, rotor inertia, torque
 * constant, limits, torque_max (effort_max, INFINITY when 0), viscous and Coulomb friction
 * (damping, friction: URDF's; VRML gives 0); no current saturation, velocity_gain 0, rigid brake,
 * no watchdog, HS_SAFE_ZERO_TORQUE, hold gains 0. */
struct hs_link;
void hs_actuator_params_default(const struct hs_link *link, struct hs_actuator_params *ret);
/* Returns 0 or -EINVAL and sets *ret_field to the bad field's name. */
int hs_actuator_params_check(const struct hs_actuator_params *p, const char **ret_field);

/* RT-safe. Torque that `current` amps give at the joint, and back. */
double hs_actuator_current_to_torque(const struct hs_actuator_params *p, double current);
double hs_actuator_torque_to_current(const struct hs_actuator_params *p, double torque);

/* RT-safe watchdog: decides whether cmd is stale at now_ns (age strictly above timeout_ns, or no
 * command yet) and returns the command to execute (cmd itself, or the safe behaviour written into
 * *scratch). new_tick counts the tick once when apply runs several times per tick (substeps). */
const struct hs_joint_command *hs_actuator_select(const struct hs_actuator_params *p,
                                                  struct hs_actuator_state *st,
                                                  const struct hs_joint_command *cmd,
                                                  int64_t now_ns, bool new_tick, double q,
                                                  struct hs_joint_command *scratch);
/* RT-safe: the joint's safe behaviour (brake, hold at st->hold_q, or free-wheel) as a command
 * written into *scratch, keeping cmd's seq and receive time. Returns scratch. */
const struct hs_joint_command *hs_actuator_safe_command(const struct hs_actuator_params *p,
                                                        const struct hs_actuator_state *st,
                                                        const struct hs_joint_command *cmd,
                                                        struct hs_joint_command *scratch);
/* RT-safe: the motor model for one physics step from the executed command and joint state. */
void hs_actuator_compute(const struct hs_actuator_params *p, const struct hs_joint_command *cmd,
                         double q, double dq, struct hs_actuator_output *ret);

#endif
