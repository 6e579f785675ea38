/* The plant's side of the sensor kind registry (hilsim/sensor_kinds.h): one ops table per kind,
 * each defined in the kind's own file src/plant/sensors/sensor_<name>.c, and the table of them
 * generated from the registry (sensor_registry.c). plant_params.c, plant_create.c and
 * plant_sense.c call these ops and know no kind by name.
 *
 * Where each op runs: nvalues, params, value_name and defaults anywhere (no allocation); init
 * and destroy at plant create/destroy (init only: may allocate); update on the tick thread
 * (RT-safe: no allocation, no stdio, bounded work). Not installed. */
#ifndef HS_PLANT_SENSOR_OPS_H
#define HS_PLANT_SENSOR_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/model.h"
#include "hilsim/plant.h"

struct hs__plant_sensor;
struct hs_config;

/* What one update knows about the tick. */
struct hs__sense_tick {
    int64_t now_ns;
    double now_s; /* world time */
    double dt_s;  /* world time since the previous update */
    uint64_t tick;
};

struct hs__sensor_ops {
    const char *unit; /* per group, comma separated (see struct hs_sensor_layout) */
    uint32_t group;   /* values per group */
    /* Value names when the count is fixed (nvalues entries); NULL: "r0", "r1", ... */
    const char *const *fields;
    /* false: the plant leaves sensors of this kind idle (no reading, no bench entry). */
    bool simulated;
    /* What scenario sensor faults (src/scenario/scen_sensor_fault.c) need to know of the
     * values, through struct hs_sensor_layout: the value of no return (a dropout) and whether
     * they are one-sided distances (no ± saturation). Zero for a signed quantity read as 0. */
    double no_return;
    bool one_sided;
    uint32_t (*nvalues)(const struct hs_sensor *ms);
    /* Optional (NULL: zeros): struct hs_sensor_layout.param. */
    void (*params)(const struct hs_sensor *ms, double ret_param[4]);
    /* Params from the model, after the generic defaults (every tick, no noise, no delay,
     * unlimited range): e.g. the channel range from maxAcceleration. May be NULL. */
    void (*defaults)(const struct hs_sensor *ms, struct hs_plant_sensor_params *sp);
    /* Params from the bench config's sensors section for model sensor `index`, after the
     * defaults (hs_plant_params_from_config). May be NULL: the kind has no config keys. */
    void (*from_config)(const struct hs_config *cfg, const struct hs_model *m, uint32_t index,
                        struct hs_plant_sensor_params *sp);
    /* init only. After the generic set-up (link, pose, body, channels, delay line of the
     * struct hs_sensor_reading, values = reading.v): the kind's own; sets s->active. */
    int (*init)(struct hs_plant *pl, struct hs__plant_sensor *s);
    /* RT-safe. Samples (on its own schedule) and publishes through the delay lines. Called
     * only for active sensors. */
    void (*update)(struct hs_plant *pl, struct hs__plant_sensor *s, const struct hs__sense_tick *t);
    void (*destroy)(struct hs__plant_sensor *s); /* may be NULL; frees what init allocated */
};

#define HS_SENSOR_OPS_DECL(name, NAME, node, role)                                                 \
    extern const struct hs__sensor_ops hs__sensor_ops_##name;
HS_SENSOR_KINDS(HS_SENSOR_OPS_DECL)
#undef HS_SENSOR_OPS_DECL

/* The kind's ops; t must be a valid enum value. */
const struct hs__sensor_ops *hs__sensor_ops(enum hs_sensor_type t);

/* Shared steps of the kinds (plant_sense.c). RT-safe. */
/* Sensor frame in the world and the sensor origin, from the link's pose. */
void hs__plant_sensor_frame(struct hs_plant *pl, const struct hs__plant_sensor *s, double R_ws[9],
                            double p_ws[3]);
/* Takes a sample: the error models of channel 0 on v (and channel 1 on t, if not NULL) into the
 * held reading, counts it and stamps it. */
void hs__plant_sensor_hold(struct hs__plant_sensor *s, const double v[3], const double t[3],
                           const struct hs__sense_tick *tk);
/* Pushes the held reading through the delay line into the published one. */
void hs__plant_sensor_publish(struct hs__plant_sensor *s);
/* AccelerationSensor and Gyro share the IMU kinematics (imu_math.c): init resets the finite
 * differences, sample gives the specific force (gyro false) or the angular rate (true). */
int hs__plant_imu_init(struct hs_plant *pl, struct hs__plant_sensor *s);
void hs__plant_imu_sample(struct hs_plant *pl, struct hs__plant_sensor *s, double dt_s, bool gyro,
                          double ret[3]);
/* The rest both IMU kinds share: three values x y z, range from the model's max, and the
 * per-tick update (sample every tick so the finite differences stay tick-exact; hold at the
 * output rate). */
extern const char *const hs__plant_imu_fields[3];
uint32_t hs__plant_imu_nvalues(const struct hs_sensor *ms);
void hs__plant_imu_defaults(const struct hs_sensor *ms, struct hs_plant_sensor_params *sp);
void hs__plant_imu_update(struct hs_plant *pl, struct hs__plant_sensor *s,
                          const struct hs__sense_tick *t, bool gyro);
/* The config's IMU entries (sensors.imu) name an accelerometer and a gyro: applies every entry
 * whose accel (gyro true: gyro) is model sensor `index`, in config order (accel.c, gyro.c). */
void hs__plant_imu_from_config(const struct hs_config *cfg, const struct hs_model *m,
                               uint32_t index, bool gyro, struct hs_plant_sensor_params *sp);
/* The model writes -1 for "unlimited"; the channel treats <= 0 as unlimited too. */
void hs__plant_range_from_model(const double max[3], double ret[3]);

#endif
