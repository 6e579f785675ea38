/* hilsim model FILE [--json]: load an OpenHRP VRML97 or URDF model and print its link tree, joints,
 * masses, sensors and extra joints. Warnings go to stderr. */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "json_doc.h"
#include "commands.h"
#include "hilsim/model.h"
#include "hilsim/world.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hilsim model [--json] [--urdf OUT.urdf] [--package-path NAME=DIR|DIR]...\n"
            "                    [--mesh-collision convex|exact|box|auto] FILE\n\n"
            "Loads an OpenHRP VRML97 model (.wrl; Inline URLs are resolved next to the file)\n"
            "or a URDF (.urdf; meshes via package:// through --package-path, then\n"
            "$HS_PACKAGE_PATH, $ROS_PACKAGE_PATH, then the file's parent directories)\n"
            "and prints the link tree (indented by depth) with joint types, jointIds, axes,\n"
            "limits and masses, then the total mass, the sensors with their links and the\n"
            "extra (closed-loop) joints. Warnings, such as gaps in jointId, go to stderr.\n"
            "Errors name file:line:column and what was expected.\n\n"
            "  --json   machine-readable output: fixed key order, numbers as %%.9g,\n"
            "           absent limits as null\n"
            "  --urdf OUT.urdf  also write the model as URDF (meshes as binary STL in\n"
            "           OUT_meshes/; accel, gyro and force sensors as Gazebo sensor tags);\n"
            "           cameras, extra joints and motor fields but the gear ratio are\n"
            "           left out\n"
            "  --package-path NAME=DIR  package://NAME/ is DIR (repeatable); a bare DIR\n"
            "           is a directory of packages, as a $ROS_PACKAGE_PATH entry\n"
            "  --mesh-collision convex|exact|box|auto  how collision meshes (VRML and\n"
            "           URDF) are simulated: their convex hulls (default), the triangle\n"
            "           meshes, their bounding boxes, or chosen per mesh (src/model/README.md)\n\n"
            "exit codes: 0 loaded, 1 runtime failure, 2 bad usage or bad model file\n");
}

static int depth_of(const struct hs_model *m, uint32_t i)
{
    int d = 0;
    for (int32_t p = m->links[i].parent; p >= 0 && d < (int)m->nlinks; p = m->links[p].parent)
        d++;
    return d;
}

static void print_text(const struct hs_model *m)
{
    printf("model %s: %u links, %u joint ids, %u geoms, total mass %.6g kg\n", m->name, m->nlinks,
           m->njoint_ids, m->ngeoms, hs_model_total_mass(m));
    printf("links:\n");
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        printf("  %*s%s  %s", 2 * depth_of(m, i), "", l->name, hs_joint_type_name(l->joint_type));
        if (l->joint_id >= 0)
            printf(" id %d", l->joint_id);
        if (l->joint_type == HS_JOINT_ROTATE || l->joint_type == HS_JOINT_SLIDE ||
            l->joint_type == HS_JOINT_CRAWLER)
            printf(" axis (%g %g %g)", l->axis[0], l->axis[1], l->axis[2]);
        if (isfinite(l->llimit) || isfinite(l->ulimit))
            printf(" limits [%g, %g]", l->llimit, l->ulimit);
        if (isfinite(l->lvlimit) || isfinite(l->uvlimit))
            printf(" vlimits [%g, %g]", l->lvlimit, l->uvlimit);
        if (isfinite(l->climit))
            printf(" climit %g A", l->climit);
        if (l->mimics)
            printf(" mimics %s x %g %+g", m->links[l->mimic_of].name, l->mimic_multiplier,
                   l->mimic_offset);
        if (l->command_interfaces)
            printf(" commands%s%s%s",
                   l->command_interfaces & HS_IFACE_BIT(HS_IFACE_POSITION) ? " position" : "",
                   l->command_interfaces & HS_IFACE_BIT(HS_IFACE_VELOCITY) ? " velocity" : "",
                   l->command_interfaces & HS_IFACE_BIT(HS_IFACE_EFFORT) ? " effort" : "");
        if (l->surface_given & HS_SURFACE_MU1)
            printf(" mu %g", l->mu1);
        printf("  mass %g kg com (%g %g %g)  geoms %u\n", l->mass, l->com[0], l->com[1], l->com[2],
               l->geom_count);
    }
    printf("total mass: %.9g kg\n", hs_model_total_mass(m));
    if (m->nsensors) {
        printf("sensors:\n");
        for (uint32_t i = 0; i < m->nsensors; i++) {
            const struct hs_sensor *s = &m->sensors[i];
            printf("  %s  %s id %d on %s at (%g %g %g)\n", s->name, hs_sensor_type_name(s->type),
                   s->sensor_id, m->links[s->link].name, s->pose.p[0], s->pose.p[1], s->pose.p[2]);
        }
    }
    if (m->nextra_joints) {
        printf("extra joints:\n");
        for (uint32_t i = 0; i < m->nextra_joints; i++) {
            const struct hs_extra_joint *e = &m->extra_joints[i];
            printf("  %s  %s %s (%g %g %g) - %s (%g %g %g) axis (%g %g %g)\n", e->name,
                   e->type == HS_EXTRA_PISTON ? "piston" : "ball", m->links[e->link1].name,
                   e->pos1[0], e->pos1[1], e->pos1[2], m->links[e->link2].name, e->pos2[0],
                   e->pos2[1], e->pos2[2], e->axis[0], e->axis[1], e->axis[2]);
        }
    }
}

/* One link as a JSON object. Key order is fixed (jansson keeps insertion order), so two models'
 * documents compare key by key. */
/* What the world collides for a convex or auto mesh (null: no hull, the triangles): its size,
 * so a slow or poorly fitting mesh shows in the model's own listing. */
static json_t *hull_json(struct hs_json_doc *doc, const struct hs_hull *h)
{
    if (!h)
        return json_null();
    json_t *o = json_object();
    hs_json_set(doc, o, "nvertices", json_integer(h->npoints));
    hs_json_set(doc, o, "nfaces", json_integer(h->nplanes));
    hs_json_set(doc, o, "ntriangles", json_integer(h->ntriangles));
    hs_json_set(doc, o, "volume_m3", hs_json_num(h->volume_m3));
    /* null for an open or flat mesh (it encloses nothing) */
    hs_json_set(doc, o, "volume_ratio",
                hs_json_num(h->mesh_volume_m3 > 0 ? h->volume_m3 / h->mesh_volume_m3 : NAN));
    return o;
}

static json_t *link_json(struct hs_json_doc *doc, const struct hs_model *m, uint32_t i)
{
    const struct hs_link *l = &m->links[i];
    json_t *j = json_object();
    hs_json_set(doc, j, "name", hs_json_str(l->name));
    hs_json_set(doc, j, "segment", hs_json_str(l->segment_name));
    hs_json_set(doc, j, "parent", json_integer(l->parent));
    hs_json_set(doc, j, "depth", json_integer(depth_of(m, i)));
    hs_json_set(doc, j, "joint_type", json_string(hs_joint_type_name(l->joint_type)));
    hs_json_set(doc, j, "joint_id", json_integer(l->joint_id));
    hs_json_set(doc, j, "origin_p", hs_json_vec(l->origin.p, 3));
    hs_json_set(doc, j, "origin_R", hs_json_vec(l->origin.R, 9));
    hs_json_set(doc, j, "axis", hs_json_vec(l->axis, 3));
    hs_json_set(doc, j, "llimit", hs_json_num(l->llimit));
    hs_json_set(doc, j, "ulimit", hs_json_num(l->ulimit));
    hs_json_set(doc, j, "lvlimit", hs_json_num(l->lvlimit));
    hs_json_set(doc, j, "uvlimit", hs_json_num(l->uvlimit));
    hs_json_set(doc, j, "gear_ratio", hs_json_num(l->gear_ratio));
    hs_json_set(doc, j, "gear_efficiency", hs_json_num(l->gear_efficiency));
    hs_json_set(doc, j, "rotor_inertia", hs_json_num(l->rotor_inertia));
    hs_json_set(doc, j, "rotor_resistor", hs_json_num(l->rotor_resistor));
    hs_json_set(doc, j, "torque_const", hs_json_num(l->torque_const));
    hs_json_set(doc, j, "encoder_pulse", hs_json_num(l->encoder_pulse));
    hs_json_set(doc, j, "climit", hs_json_num(l->climit));         /* null: no current limit */
    hs_json_set(doc, j, "effort_max", hs_json_num(l->effort_max)); /* 0: none given */
    hs_json_set(doc, j, "damping", hs_json_num(l->damping));
    hs_json_set(doc, j, "friction", hs_json_num(l->friction));
    json_t *mimic = json_null();
    if (l->mimics) {
        mimic = json_object();
        hs_json_set(doc, mimic, "joint", hs_json_str(m->links[l->mimic_of].name));
        hs_json_set(doc, mimic, "multiplier", hs_json_num(l->mimic_multiplier));
        hs_json_set(doc, mimic, "offset", hs_json_num(l->mimic_offset));
    }
    hs_json_set(doc, j, "mimic", mimic);
    static const char *const sn[4] = {"mu1", "mu2", "kp", "kd"};
    const double sv[4] = {l->mu1, l->mu2, l->contact_kp, l->contact_kd};
    json_t *surface = json_object();
    for (int k = 0; k < 4; k++) /* null: the world's value */
        hs_json_set(doc, surface, sn[k], hs_json_num((l->surface_given & (1u << k)) ? sv[k] : NAN));
    hs_json_set(doc, j, "surface", surface);
    static const char *const ifn[HS_IFACE_MAX] = {"position", "velocity", "effort"};
    json_t *cmd = json_array(), *st = json_array();
    for (int k = 0; k < HS_IFACE_MAX; k++) {
        if (l->command_interfaces & HS_IFACE_BIT(k))
            hs_json_add(doc, cmd, json_string(ifn[k]));
        if (l->state_interfaces & HS_IFACE_BIT(k))
            hs_json_add(doc, st, json_string(ifn[k]));
    }
    hs_json_set(doc, j, "command_interfaces", cmd);
    hs_json_set(doc, j, "state_interfaces", st);
    hs_json_set(doc, j, "mass", hs_json_num(l->mass));
    hs_json_set(doc, j, "com", hs_json_vec(l->com, 3));
    hs_json_set(doc, j, "inertia", hs_json_vec(l->inertia, 9));
    json_t *geoms = json_array();
    for (uint32_t g = 0; g < l->geom_count; g++) {
        const struct hs_geom *ge = &m->geoms[l->geom_first + g];
        static const char *const gn[HS_GEOM_TYPE_MAX] = {"box", "sphere", "cylinder", "cone",
                                                         "mesh"};
        json_t *o = json_object();
        hs_json_set(doc, o, "type", json_string(gn[ge->type]));
        hs_json_set(doc, o, "p", hs_json_vec(ge->pose.p, 3));
        hs_json_set(doc, o, "R", hs_json_vec(ge->pose.R, 9));
        switch (ge->type) {
        case HS_GEOM_BOX:
            hs_json_set(doc, o, "size", hs_json_vec(ge->u.box.size, 3));
            break;
        case HS_GEOM_SPHERE:
            hs_json_set(doc, o, "radius", hs_json_num(ge->u.sphere.radius));
            break;
        case HS_GEOM_CYLINDER:
            hs_json_set(doc, o, "radius", hs_json_num(ge->u.cylinder.radius));
            hs_json_set(doc, o, "height", hs_json_num(ge->u.cylinder.height));
            break;
        case HS_GEOM_CONE:
            hs_json_set(doc, o, "bottom_radius", hs_json_num(ge->u.cone.bottom_radius));
            hs_json_set(doc, o, "height", hs_json_num(ge->u.cone.height));
            break;
        default:
            hs_json_set(doc, o, "nvertices", json_integer(ge->u.mesh.nvertices));
            hs_json_set(doc, o, "ntriangles", json_integer(ge->u.mesh.ntriangles));
            hs_json_set(doc, o, "collision",
                        json_string(hs_mesh_approx_name(ge->u.mesh.collision)));
            hs_json_set(doc, o, "hull", hull_json(doc, ge->u.mesh.hull));
            break;
        }
        hs_json_add(doc, geoms, o);
    }
    hs_json_set(doc, j, "geoms", geoms);
    return j;
}

static json_t *sensor_json(struct hs_json_doc *doc, const struct hs_model *m, uint32_t i)
{
    const struct hs_sensor *s = &m->sensors[i];
    json_t *j = json_object();
    hs_json_set(doc, j, "name", hs_json_str(s->name));
    hs_json_set(doc, j, "type", json_string(hs_sensor_type_name(s->type)));
    hs_json_set(doc, j, "sensor_id", json_integer(s->sensor_id));
    hs_json_set(doc, j, "link", hs_json_str(m->links[s->link].name));
    hs_json_set(doc, j, "p", hs_json_vec(s->pose.p, 3));
    hs_json_set(doc, j, "R", hs_json_vec(s->pose.R, 9));
    hs_json_set(doc, j, "max", hs_json_vec(s->max, 3));
    if (s->type == HS_SENSOR_FORCE)
        hs_json_set(doc, j, "max_torque", hs_json_vec(s->u.force.max_torque, 3));
    return j;
}

static json_t *extra_joint_json(struct hs_json_doc *doc, const struct hs_model *m, uint32_t i)
{
    const struct hs_extra_joint *e = &m->extra_joints[i];
    json_t *j = json_object();
    hs_json_set(doc, j, "name", hs_json_str(e->name));
    hs_json_set(doc, j, "type", json_string(e->type == HS_EXTRA_PISTON ? "piston" : "ball"));
    hs_json_set(doc, j, "link1", hs_json_str(m->links[e->link1].name));
    hs_json_set(doc, j, "link2", hs_json_str(m->links[e->link2].name));
    hs_json_set(doc, j, "pos1", hs_json_vec(e->pos1, 3));
    hs_json_set(doc, j, "pos2", hs_json_vec(e->pos2, 3));
    hs_json_set(doc, j, "axis", hs_json_vec(e->axis, 3));
    return j;
}

static int print_json(const struct hs_model *m)
{
    struct hs_json_doc doc = {0};
    json_t *root = json_object();
    hs_json_set(&doc, root, "name", hs_json_str(m->name));
    hs_json_set(&doc, root, "nlinks", json_integer(m->nlinks));
    hs_json_set(&doc, root, "njoint_ids", json_integer(m->njoint_ids));
    hs_json_set(&doc, root, "total_mass", hs_json_num(hs_model_total_mass(m)));
    json_t *a = json_array();
    for (uint32_t i = 0; i < m->nlinks; i++)
        hs_json_add(&doc, a, link_json(&doc, m, i));
    hs_json_set(&doc, root, "links", a);
    a = json_array();
    for (uint32_t i = 0; i < m->nsensors; i++)
        hs_json_add(&doc, a, sensor_json(&doc, m, i));
    hs_json_set(&doc, root, "sensors", a);
    a = json_array();
    for (uint32_t i = 0; i < m->nextra_joints; i++)
        hs_json_add(&doc, a, extra_joint_json(&doc, m, i));
    hs_json_set(&doc, root, "extra_joints", a);
    a = json_array();
    for (uint32_t i = 0; i < m->nwarnings; i++)
        hs_json_add(&doc, a, hs_json_str(m->warnings[i]));
    hs_json_set(&doc, root, "warnings", a);
    return hs_json_doc_print(&doc, root, stdout, JSON_COMPACT | JSON_REAL_PRECISION(9));
}

#define HS_MODEL_MAX_PACKAGES 64

/* --package-path NAME=DIR (package NAME is DIR) or DIR (a directory of packages). The name is
 * cut out of the argument in place. */
static int add_package(char *arg, struct hs_model_package *pk, uint32_t *n)
{
    if (*n >= HS_MODEL_MAX_PACKAGES) {
        fprintf(stderr, "hilsim model: more than %d --package-path\n", HS_MODEL_MAX_PACKAGES);
        return HS_EXIT_USAGE;
    }
    char *eq = strchr(arg, '=');
    if (eq) {
        *eq = '\0';
        pk[*n] = (struct hs_model_package){.name = arg, .dir = eq + 1};
    } else {
        pk[*n] = (struct hs_model_package){.name = NULL, .dir = arg};
    }
    if (!pk[*n].dir[0] || (eq && !arg[0])) {
        fprintf(stderr, "hilsim model: --package-path needs NAME=DIR or DIR\n");
        return HS_EXIT_USAGE;
    }
    (*n)++;
    return 0;
}

/* What `hilsim sim` would refuse, refused here the same way: the world built from the model
 * with default physics runs the world's own checks (finite mesh vertices and poses, joint
 * axes, geometry sizes) and its warm-up under the divergence guard (a mass of 1e308 kg
 * diverges there), one validation path for both commands. */
static int check_as_simulated(const struct hs_model *m, struct hs_diag *d)
{
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    struct hs_world *w = NULL;
    int r = hs_world_create(&p, &s, 1, &w, d);
    hs_world_destroy(w);
    return r;
}

int hs_cmd_model(int argc, char **argv)
{
    bool json = false;
    const char *file = NULL, *urdf_out = NULL;
    struct hs_model_package packages[HS_MODEL_MAX_PACKAGES];
    struct hs_model_options opts = {.packages = packages};
    /* Options with a value, which the shared flag parser does not take: out first. */
    char *args[64];
    int nargs = 0;
    for (int i = 0; i < argc; i++) {
        bool val =
            i >= 1 && (strcmp(argv[i], "--urdf") == 0 || strcmp(argv[i], "--package-path") == 0 ||
                       strcmp(argv[i], "--mesh-collision") == 0);
        if (val && i + 1 >= argc) {
            fprintf(stderr, "hilsim model: %s needs a value\n", argv[i]);
            return HS_EXIT_USAGE;
        }
        if (val && strcmp(argv[i], "--urdf") == 0) {
            urdf_out = argv[++i];
        } else if (val && strcmp(argv[i], "--package-path") == 0) {
            int rc = add_package(argv[++i], packages, &opts.npackages);
            if (rc)
                return rc;
        } else if (val) {
            const char *v = argv[++i];
            int a = 0;
            while (a < HS_MESH_APPROX_MAX && strcmp(v, hs_mesh_approx_name(a)) != 0)
                a++;
            if (a == HS_MESH_APPROX_MAX) {
                fprintf(stderr,
                        "hilsim model: --mesh-collision is convex, exact, box or auto, not '%s'\n",
                        v);
                return HS_EXIT_USAGE;
            }
            opts.mesh_approx = (enum hs_mesh_approx)a;
        } else if (nargs < (int)(sizeof args / sizeof args[0])) {
            args[nargs++] = argv[i];
        } else {
            fprintf(stderr, "hilsim model: too many arguments\n");
            return HS_EXIT_USAGE;
        }
    }
    const struct hs_cli_flag flags[] = {{"--json", NULL, &json}, {NULL, NULL, NULL}};
    int rc = hs__cli_one_file("model", nargs, args, 1, flags, usage, &file);
    if (rc)
        return rc < 0 ? HS_EXIT_OK : rc;
    struct hs_model *m = NULL;
    struct hs_diag diag = {0};
    int r = hs_model_load_opts(file, &opts, &m, &diag);
    if (r < 0) {
        hs__cli_print_diag("model", &diag);
        return r == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
    }
    for (uint32_t i = 0; i < m->nwarnings; i++)
        fprintf(stderr, "hilsim model: warning: %s\n", m->warnings[i]);
    if ((r = check_as_simulated(m, &diag)) < 0) {
        if (!diag.file[0]) /* the warm-up's guard names no file: it is this model */
            snprintf(diag.file, sizeof diag.file, "%s", file);
        hs__cli_print_diag("model", &diag);
        hs_model_free(m);
        return r == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
    }
    if (urdf_out) {
        uint32_t lost = 0;
        if (hs_model_write_urdf(m, urdf_out, &lost, &diag) < 0) {
            hs__cli_print_diag("model", &diag);
            hs_model_free(m);
            return HS_EXIT_FAILURE;
        }
        fprintf(stderr,
                "hilsim model: wrote %s (%u vision/range sensor, extra-joint, crawler or cone "
                "item%s not expressible in URDF left out; of the motor fields only gear ratios "
                "are written)\n",
                urdf_out, lost, lost == 1 ? "" : "s");
    }
    int pr = 0;
    if (json)
        pr = print_json(m);
    else
        print_text(m);
    rc = pr == 0 && fflush(stdout) == 0 && !ferror(stdout) ? HS_EXIT_OK : HS_EXIT_FAILURE;
    hs_model_free(m);
    return rc;
}
