/* A URDF's <ros2_control> blocks onto hilsim's joints, so that a ros2_control user's URDF tells
 * hilsim which joints are commanded how:
 *   <joint name=J><command_interface name=position|velocity|effort> -> hs_link
 *     command_interfaces (the bench's actuator modes position, velocity and torque);
 *     <param name=min|max> on velocity and effort tighten the joint's velocity limit and
 *     effort_max (the hardware cannot exceed them); on position they are checked against the
 *     joint's <limit> (a controller clamp, not the joint's travel, which stays <limit>);
 *   <state_interface name=position|velocity|effort> -> hs_link state_interfaces (the encoder
 *     gives position and velocity; effort is the actuator's applied torque);
 *   <transmission><joint><mechanical_reduction> -> the joint's gear ratio, as <transmission>;
 *   <hardware> (the plugin hilsim replaces), <sensor> and <gpio> -> warnings saying where that
 *     goes in hilsim (sensors: Gazebo tags or the bench config).
 * Other interface names (acceleration, current, custom ones) are warnings naming the joint.
 * A joint named here that is not a movable URDF joint is an error at its line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "urdf_internal.h"

static int iface_of(const char *name)
{
    if (strcmp(name, "position") == 0)
        return HS_IFACE_POSITION;
    if (strcmp(name, "velocity") == 0)
        return HS_IFACE_VELOCITY;
    if (strcmp(name, "effort") == 0)
        return HS_IFACE_EFFORT;
    return -1;
}

/* <param name=min|max> of an interface; NAN when absent. */
static int limits(struct hs__urdf *u, const xmlNode *ci, double *lo, double *hi)
{
    *lo = *hi = NAN;
    for (const xmlNode *p = ci->children; p; p = p->next) {
        if (!hs__urdf_is(p, "param"))
            continue;
        char pn[32];
        int r = hs__urdf_attr_str(u, p, "name", true, pn, sizeof pn);
        if (r)
            return r;
        double *to = strcmp(pn, "min") == 0 ? lo : strcmp(pn, "max") == 0 ? hi : NULL;
        if (to && (r = hs__urdf_text_num(u, p, to)))
            return r;
    }
    if (*lo > *hi)
        return hs__urdf_err(u, ci, -EINVAL, "param min %g is above max %g", *lo, *hi);
    return 0;
}

static int command(struct hs__urdf *u, const xmlNode *ci, struct hs_link *l, int k)
{
    double lo, hi;
    int r = limits(u, ci, &lo, &hi);
    if (r)
        return r;
    l->command_interfaces |= HS_IFACE_BIT(k);
    /* The tighter bound wins: the hardware interface clamps what the joint may be asked. */
    double mag = fmax(isnan(lo) ? 0 : fabs(lo), isnan(hi) ? 0 : fabs(hi));
    if (k == HS_IFACE_VELOCITY && mag > 0) {
        l->uvlimit = fmin(l->uvlimit, isnan(hi) ? mag : fabs(hi));
        l->lvlimit = fmax(l->lvlimit, isnan(lo) ? -mag : -fabs(lo));
    } else if (k == HS_IFACE_EFFORT && mag > 0) {
        l->effort_max = l->effort_max > 0 ? fmin(l->effort_max, mag) : mag;
    } else if (k == HS_IFACE_POSITION &&
               ((!isnan(lo) && lo < l->llimit) || (!isnan(hi) && hi > l->ulimit))) {
        return hs__urdf_warn(u, ci,
                             "joint '%s': position command range [%g, %g] reaches beyond the "
                             "joint's <limit> [%g, %g]; the joint stops at <limit>",
                             l->name, lo, hi, l->llimit, l->ulimit);
    }
    return 0;
}

static int state(struct hs__urdf *u, const xmlNode *si, struct hs_link *l, int k)
{
    l->state_interfaces |= HS_IFACE_BIT(k);
    for (const xmlNode *p = si->children; p; p = p->next) {
        if (!hs__urdf_is(p, "param"))
            continue;
        xmlChar *pn = xmlGetProp(p, (const xmlChar *)"name");
        bool init = pn && strcmp((const char *)pn, "initial_value") == 0;
        xmlFree(pn);
        if (init)
            return hs__urdf_warn(u, p,
                                 "joint '%s': initial_value is not used; set the start in the "
                                 "bench config (models[].initial)",
                                 l->name);
    }
    return 0;
}

static int joint(struct hs__urdf *u, const xmlNode *jn)
{
    char name[HS_NAME_MAX];
    int r = hs__urdf_attr_str(u, jn, "name", true, name, sizeof name);
    if (r)
        return r;
    int li = hs_model_find_link(u->m, name);
    struct hs_link *l = li >= 0 ? &u->m->links[li] : NULL;
    if (!l || (l->joint_type != HS_JOINT_ROTATE && l->joint_type != HS_JOINT_SLIDE))
        return hs__urdf_err(u, jn, -EINVAL, "ros2_control names no movable joint '%s'", name);
    if (l->mimics)
        return hs__urdf_warn(u, jn,
                             "joint '%s' is a mimic joint: the world couples it to its leader; "
                             "its ros2_control interfaces are ignored",
                             name);
    for (const xmlNode *c = jn->children; r == 0 && c; c = c->next) {
        bool cmd = hs__urdf_is(c, "command_interface"), st = hs__urdf_is(c, "state_interface");
        if (!cmd && !st)
            continue;
        char in[64];
        if ((r = hs__urdf_attr_str(u, c, "name", true, in, sizeof in)))
            return r;
        int k = iface_of(in);
        if (k < 0)
            r = hs__urdf_warn(u, c,
                              "joint '%s': %s interface '%s' is not supported (hilsim has "
                              "position, velocity and effort)",
                              name, cmd ? "command" : "state", in);
        else
            r = cmd ? command(u, c, l, k) : state(u, c, l, k);
    }
    return r;
}

static int transmission(struct hs__urdf *u, const xmlNode *t)
{
    int r = 0;
    for (const xmlNode *jn = t->children; r == 0 && jn; jn = jn->next) {
        const xmlNode *red =
            hs__urdf_is(jn, "joint") ? hs__urdf_child(jn, "mechanical_reduction") : NULL;
        if (!red)
            continue;
        char name[HS_NAME_MAX];
        double n;
        if ((r = hs__urdf_attr_str(u, jn, "name", true, name, sizeof name)) ||
            (r = hs__urdf_text_num(u, red, &n)))
            return r;
        int li = hs_model_find_link(u->m, name);
        if (li < 0 || u->m->links[li].joint_type == HS_JOINT_FIXED)
            return hs__urdf_err(u, jn, -EINVAL, "transmission names no movable joint '%s'", name);
        if (n == 0)
            return hs__urdf_err(u, red, -EINVAL, "mechanical_reduction must not be 0");
        u->m->links[li].gear_ratio = n;
    }
    return r;
}

int hs__urdf_ros2_control(struct hs__urdf *u, const xmlNode *rc)
{
    int r = 0;
    for (const xmlNode *c = rc->children; r == 0 && c; c = c->next) {
        if (hs__urdf_is(c, "joint"))
            r = joint(u, c);
        else if (hs__urdf_is(c, "transmission"))
            r = transmission(u, c);
        else if (hs__urdf_is(c, "sensor"))
            r = hs__urdf_warn(u, c,
                              "ros2_control sensor: its state interfaces are not mapped; "
                              "declare the sensor with a <gazebo> imu or force_torque tag or "
                              "in the bench config (models[].sensors, then sensors.imu or "
                              "sensors.force)");
        else if (hs__urdf_is(c, "gpio"))
            r = hs__urdf_warn(u, c, "ros2_control gpio is not supported");
    }
    return r;
}

int hs__urdf_ros2_unlisted(struct hs__urdf *u, const xmlNode *robot)
{
    const xmlNode *rc = hs__urdf_child(robot, "ros2_control");
    if (!rc)
        return 0;
    int r = 0;
    for (uint32_t i = 0; r == 0 && i < u->m->nlinks; i++) {
        const struct hs_link *l = &u->m->links[i];
        if (l->joint_id >= 0 && !l->command_interfaces && !l->state_interfaces)
            r = hs__urdf_warn(u, rc,
                              "joint '%s' is in no <ros2_control> block: the bench config "
                              "decides how it is commanded",
                              l->name);
    }
    return r;
}
