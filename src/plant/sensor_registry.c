/* The plant's ops table of the sensor kind registry, generated from hilsim/sensor_kinds.h, and
 * the layout queries every reading user goes through. */
#include <stdio.h>
#include <string.h>

#include "plant_internal.h"

#define HS_SENSOR_OPS_ENTRY(name, NAME, node, role) [HS_SENSOR_##NAME] = &hs__sensor_ops_##name,
static const struct hs__sensor_ops *const ops_table[HS_SENSOR_TYPE_MAX] = {
    HS_SENSOR_KINDS(HS_SENSOR_OPS_ENTRY)};
#undef HS_SENSOR_OPS_ENTRY

const struct hs__sensor_ops *hs__sensor_ops(enum hs_sensor_type t)
{
    return ops_table[t];
}

void hs_sensor_layout(const struct hs_sensor *sensor, struct hs_sensor_layout *ret)
{
    const struct hs__sensor_ops *o = hs__sensor_ops(sensor->type);
    *ret = (struct hs_sensor_layout){
        .kind = hs_sensor_type_name(sensor->type),
        .simulated = o->simulated,
        .nvalues = o->simulated ? o->nvalues(sensor) : 0,
        .group = o->group,
        .unit = o->unit,
        .no_return = o->no_return,
        .one_sided = o->one_sided,
    };
    if (o->params)
        o->params(sensor, ret->param);
}

void hs_sensor_value_name(const struct hs_sensor *sensor, uint32_t i, char *buf, size_t size)
{
    const struct hs__sensor_ops *o = hs__sensor_ops(sensor->type);
    if (o->fields)
        snprintf(buf, size, "%s", o->fields[i]);
    else
        snprintf(buf, size, "r%u", i);
}
