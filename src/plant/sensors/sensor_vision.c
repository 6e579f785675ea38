/* VisionSensor: parsed from the model (src/model/model_sensor.c keeps its camera fields for
 * `hilsim model`), not simulated: hilsim renders no images, so the plant leaves it idle and no
 * bench user (shm, CSV, DBC, recordings) sees it. Home of the kind (hilsim/sensor_kinds.h). */
#include "plant_internal.h"

static uint32_t nvalues(const struct hs_sensor *ms)
{
    (void)ms;
    return 0;
}

static int init(struct hs_plant *pl, struct hs__plant_sensor *s)
{
    (void)pl;
    s->active = false;
    return 0;
}

static void update(struct hs_plant *pl, struct hs__plant_sensor *s, const struct hs__sense_tick *t)
{
    (void)pl, (void)s, (void)t; /* never called: the sensor is never active */
}

const struct hs__sensor_ops hs__sensor_ops_vision = {
    .unit = "",
    .group = 1,
    .simulated = false,
    .nvalues = nvalues,
    .init = init,
    .update = update,
};
