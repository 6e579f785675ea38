/* AccelerationSensor: specific force (m/s², gravity included, as an accelerometer feels it) at
 * the sensor origin, in the sensor frame. Three values x y z; range from maxAcceleration.
 * The kinematic differences run every tick so a slow output rate still sees tick-exact
 * accelerations; only the output is decimated (rate_divider). Home of the kind
 * (hilsim/sensor_kinds.h); the IMU arithmetic is in imu_math.c, shared with Gyro. */
#include "hilsim/config.h"
#include "plant_internal.h"

/* sensors.imu entries naming this sensor as their accel. */
static void from_config(const struct hs_config *cfg, const struct hs_model *m, uint32_t index,
                        struct hs_plant_sensor_params *sp)
{
    hs__plant_imu_from_config(cfg, m, index, false, sp);
}

static void update(struct hs_plant *pl, struct hs__plant_sensor *s, const struct hs__sense_tick *t)
{
    hs__plant_imu_update(pl, s, t, false);
}

const struct hs__sensor_ops hs__sensor_ops_accel = {
    .unit = "m/s2",
    .group = 3,
    .fields = hs__plant_imu_fields,
    .simulated = true,
    .nvalues = hs__plant_imu_nvalues,
    .defaults = hs__plant_imu_defaults,
    .from_config = from_config,
    .init = hs__plant_imu_init,
    .update = update,
};
