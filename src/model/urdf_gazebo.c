/* What a URDF's <gazebo> extensions say beyond sensors (urdf_sensor.c):
 *   <gazebo reference="LINK"> mu1, mu2, kp, kd (as text or, as Gazebo also reads them, a
 *     `value` attribute) -> the link's contact surface (hs_link.mu1 ...,
 *     surface_given); the world combines them with the other side's (src/world/world_surface.c);
 *   everything that would change the physics and hilsim does not model (selfCollide, maxVel,
 *   minDepth, gravity, fdir1, joint stop ERP/CFM, plugins other than ros2_control's) -> one
 *   warning each, naming the element, so nobody believes it took effect;
 *   appearance (material, visual) and bookkeeping (provideFeedback) -> silently ignored. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "urdf_internal.h"

static int find_segment(const struct hs_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->nlinks; i++)
        if (strcmp(m->links[i].segment_name, name) == 0)
            return (int)i;
    return -1;
}

/* Elements without effect on the simulation, or handled elsewhere. */
static bool quiet_element(const xmlNode *e)
{
    static const char *const names[] = {
        "sensor",     "material", "visual", "provideFeedback", "turnGravityOff_visual",
        "laserRetro", NULL};
    for (int k = 0; names[k]; k++)
        if (hs__urdf_is(e, names[k]))
            return true;
    return false;
}

static const char *why_not(const xmlNode *e)
{
    if (hs__urdf_is(e, "selfCollide") || hs__urdf_is(e, "self_collide"))
        return "self collision is the world's setting physics.self_collision, for all links";
    if (hs__urdf_is(e, "maxVel") || hs__urdf_is(e, "minDepth") || hs__urdf_is(e, "maxContacts"))
        return "contact correction is the world's setting (physics.contact_erp, "
               "contact_cfm, max_contacts)";
    if (hs__urdf_is(e, "gravity") || hs__urdf_is(e, "turnGravityOff"))
        return "gravity acts on every link";
    if (hs__urdf_is(e, "implicitSpringDamper") || hs__urdf_is(e, "stopCfm") ||
        hs__urdf_is(e, "stopErp") || hs__urdf_is(e, "cfmDamping") || hs__urdf_is(e, "fudgeFactor"))
        return "joint limit softness is not modelled";
    return "hilsim does not model it";
}

static int surface(struct hs__urdf *u, const xmlNode *e, struct hs_link *l)
{
    static const struct {
        const char *name;
        uint32_t bit;
        size_t off;
    } f[] = {{"mu1", HS_SURFACE_MU1, offsetof(struct hs_link, mu1)},
             {"mu2", HS_SURFACE_MU2, offsetof(struct hs_link, mu2)},
             {"kp", HS_SURFACE_KP, offsetof(struct hs_link, contact_kp)},
             {"kd", HS_SURFACE_KD, offsetof(struct hs_link, contact_kd)}};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
        if (!hs__urdf_is(e, f[k].name))
            continue;
        /* Gazebo reads an extension's value from a `value` attribute first, then the text
         * (sdformat's URDF converter): Unitree's A1, Go1 and Aliengo write <kp value="1e6"/>. */
        double v;
        xmlChar *attr = xmlGetProp(e, (const xmlChar *)"value");
        int r =
            attr ? hs__urdf_attr_num(u, e, "value", true, 0.0, &v) : hs__urdf_text_num(u, e, &v);
        xmlFree(attr);
        if (r)
            return r;
        if (v < 0 || (f[k].bit == HS_SURFACE_KP && v == 0))
            return hs__urdf_err(u, e, -EINVAL, "link '%s': %s %g must be %s", l->segment_name,
                                f[k].name, v, f[k].bit == HS_SURFACE_KP ? "positive" : ">= 0");
        *(double *)((char *)l + f[k].off) = v;
        l->surface_given |= f[k].bit;
        return 1;
    }
    return 0;
}

static bool is_ros2_control_plugin(const xmlNode *p)
{
    xmlChar *f = xmlGetProp(p, (const xmlChar *)"filename");
    bool yes = f && strstr((const char *)f, "ros2_control") != NULL;
    xmlFree(f);
    return yes;
}

static int one(struct hs__urdf *u, const xmlNode *g)
{
    char ref[HS_NAME_MAX];
    int r = hs__urdf_attr_str(u, g, "reference", false, ref, sizeof ref);
    if (r)
        return r;
    int li = ref[0] ? find_segment(u->m, ref) : -1;
    if (ref[0] && li < 0 && hs__urdf_find_ref(u->m, ref) < 0)
        return 0; /* urdf_sensor.c warns about a dangling reference only if it holds sensors */
    for (const xmlNode *e = g->children; e; e = e->next) {
        if (e->type != XML_ELEMENT_NODE || quiet_element(e))
            continue;
        if (li >= 0 && (r = surface(u, e, &u->m->links[li])) != 0) {
            if (r < 0)
                return r;
            continue;
        }
        if (!ref[0] && hs__urdf_is(e, "plugin")) {
            if (is_ros2_control_plugin(e))
                continue; /* the <ros2_control> block itself is read (urdf_ros2.c) */
            char fn[128];
            if ((r = hs__urdf_attr_str(u, e, "filename", false, fn, sizeof fn)) ||
                (r = hs__urdf_warn(u, e,
                                   "Gazebo plugin '%s' is not run: hilsim's I/O comes from the "
                                   "bench config",
                                   fn)))
                return r;
            continue;
        }
        if (!ref[0] && hs__urdf_is(e, "static"))
            r = hs__urdf_warn(u, e,
                              "<gazebo><static> ignored: make the model static in the bench "
                              "config (models[].static)");
        else
            r = hs__urdf_warn(u, e, "<gazebo%s%s%s> <%s> ignored: %s", ref[0] ? " reference='" : "",
                              ref, ref[0] ? "'" : "", (const char *)e->name, why_not(e));
        if (r)
            return r;
    }
    return 0;
}

int hs__urdf_gazebo(struct hs__urdf *u, const xmlNode *robot)
{
    int r = 0;
    for (const xmlNode *g = robot->children; r == 0 && g; g = g->next)
        if (hs__urdf_is(g, "gazebo"))
            r = one(u, g);
    return r;
}
