/* Sensors from the common Gazebo extensions in a URDF (URDF itself has none):
 *   <gazebo reference="LINK"><sensor type="imu" name="N"><pose>x y z r p y</pose>...</sensor>
 *     -> an accelerometer "N_accel" and a rate gyro "N_gyro" on LINK (the model has them
 *        separate, as OpenHRP does); an imu whose <imu> element holds only
 *        <linear_acceleration> (or only <angular_velocity>) is one accelerometer (gyro) "N":
 *        the convention hilsim's export writes lone OpenHRP sensors in (urdf_write.c);
 *   <gazebo reference="JOINT"><sensor type="force_torque" name="N">...</sensor>
 *     -> a force sensor "N" on the joint's child link, at the joint (Gazebo measures there).
 * The reference may name a URDF link or a joint. Sensor ids count per type in document order.
 * Other sensor types (camera, ray, ...) are skipped with a warning; noise and rates belong to
 * the bench config. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_internal.h"

int hs__urdf_find_ref(const struct hs_model *m, const char *ref)
{
    for (uint32_t i = 0; i < m->nlinks; i++)
        if (strcmp(m->links[i].segment_name, ref) == 0)
            return (int)i;
    return hs_model_find_link(m, ref);
}

static int pose_of(struct hs__urdf *u, const xmlNode *s, struct hs_pose *ret)
{
    hs_pose_identity(ret);
    const xmlNode *p = hs__urdf_child(s, "pose");
    if (!p)
        return 0;
    xmlChar *t = xmlNodeGetContent(p);
    double v[6];
    int n = 0;
    const char *c = t ? (const char *)t : "";
    char *end;
    for (; n < 6; n++) {
        v[n] = strtod(c, &end);
        if (end == c)
            break;
        c = end;
    }
    while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')
        c++;
    bool ok = n == 6 && !*c;
    xmlFree(t);
    if (!ok)
        return hs__urdf_err(u, p, -EINVAL, "expected six numbers: x y z roll pitch yaw");
    memcpy(ret->p, v, sizeof ret->p);
    hs__urdf_rpy(v + 3, ret->R);
    return 0;
}

static int push(struct hs__urdf *u, const xmlNode *n, const struct hs_sensor *s)
{
    struct hs_model *m = u->m;
    if (m->nsensors >= 1024)
        return hs__urdf_err(u, n, -E2BIG, "more than 1024 sensors");
    struct hs_sensor *a = realloc(m->sensors, (m->nsensors + 1) * sizeof *a);
    if (!a)
        return hs__urdf_err(u, n, -ENOMEM, "out of memory");
    m->sensors = a;
    m->sensors[m->nsensors++] = *s;
    return 0;
}

static int one(struct hs__urdf *u, const xmlNode *s, int li, int32_t ids[HS_SENSOR_TYPE_MAX])
{
    char type[32], name[HS_NAME_MAX - 6];
    int r = hs__urdf_attr_str(u, s, "type", true, type, sizeof type);
    if (r == 0)
        r = hs__urdf_attr_str(u, s, "name", true, name, sizeof name);
    if (r)
        return r;
    struct hs_sensor x = {.link = li};
    if ((r = pose_of(u, s, &x.pose)))
        return r;
    if (strcmp(type, "imu") == 0) {
        const xmlNode *imu = hs__urdf_child(s, "imu");
        bool acc = imu && hs__urdf_child(imu, "linear_acceleration"),
             gyro = imu && hs__urdf_child(imu, "angular_velocity");
        if (acc != gyro) { /* one part only: hilsim's export of a lone OpenHRP sensor */
            hs_sensor_kind_defaults(&x, acc ? HS_SENSOR_ACCEL : HS_SENSOR_GYRO);
            x.sensor_id = ids[x.type]++;
            snprintf(x.name, sizeof x.name, "%s", name);
            return push(u, s, &x);
        }
        hs_sensor_kind_defaults(&x, HS_SENSOR_ACCEL);
        x.sensor_id = ids[HS_SENSOR_ACCEL]++;
        snprintf(x.name, sizeof x.name, "%s_accel", name);
        if ((r = push(u, s, &x)))
            return r;
        hs_sensor_kind_defaults(&x, HS_SENSOR_GYRO);
        x.sensor_id = ids[HS_SENSOR_GYRO]++;
        snprintf(x.name, sizeof x.name, "%s_gyro", name);
        return push(u, s, &x);
    }
    if (strcmp(type, "force_torque") == 0) {
        hs_sensor_kind_defaults(&x, HS_SENSOR_FORCE);
        x.sensor_id = ids[HS_SENSOR_FORCE]++;
        snprintf(x.name, sizeof x.name, "%s", name);
        return push(u, s, &x);
    }
    return hs__urdf_warn(u, s,
                         "gazebo sensor '%s' of type '%s' skipped (imu and force_torque "
                         "are read)",
                         name, type);
}

int hs__urdf_sensors(struct hs__urdf *u, const xmlNode *robot)
{
    int32_t ids[HS_SENSOR_TYPE_MAX] = {0};
    int r = 0;
    for (const xmlNode *g = robot->children; r == 0 && g; g = g->next) {
        if (!hs__urdf_is(g, "gazebo") || !hs__urdf_child(g, "sensor"))
            continue;
        char ref[HS_NAME_MAX];
        if ((r = hs__urdf_attr_str(u, g, "reference", true, ref, sizeof ref)))
            return r;
        int li = hs__urdf_find_ref(u->m, ref);
        if (li < 0) { /* Gazebo ignores these too; real files have them */
            r = hs__urdf_warn(u, g,
                              "gazebo reference '%s' names no link or joint: its sensors "
                              "are skipped",
                              ref);
            continue;
        }
        for (const xmlNode *s = g->children; r == 0 && s; s = s->next)
            if (hs__urdf_is(s, "sensor"))
                r = one(u, s, li, ids);
    }
    return r;
}
