/* The URDF loader: a <robot> parsed by libxml2 into the same hs_model the VRML loader builds.
 *
 * libxml2 because it is C, maintained, in every distribution, and gives each element its line
 * (xmlGetLineNo) for messages; urdfdom is C++ and pulls an old TinyXML.
 *
 * Mapping (README.md, "URDF"):
 *   - one hs_link per URDF link, in tree order (parents first, siblings in document order);
 *     hs_link.name is the name of the joint above the link (what configs, shm names and CAN
 *     bindings refer to), segment_name the URDF link's name; the root's name is its link name;
 *   - the root link floats (HS_JOINT_FREE), except that a root called "world" with no inertial
 *     and no collision is dropped and the joint below it becomes the root joint (fixed, revolute,
 *     prismatic ... to the world; floating stays free);
 *   - revolute, continuous and prismatic joints are actuated and numbered 0, 1, ... in document
 *     order of their <joint> elements (URDF has no joint ids);
 *   - limit lower/upper/velocity/effort and dynamics damping/friction go to the link's limits,
 *     effort_max, damping and friction; continuous joints have no position limits;
 *   - mimic couples the joint to its leader (hs_link.mimics; the world enforces it) and takes
 *     it out of the joint ids; safety_controller is ignored;
 *   - a <transmission>'s mechanicalReduction is the joint's gear ratio; <ros2_control> command
 *     and state interfaces and their limits (urdf_ros2.c); Gazebo IMU and force-torque
 *     sensors (urdf_sensor.c) and link surfaces mu1/mu2/kp/kd (urdf_gazebo.c);
 *   - planar joints and floating joints below the root are refused;
 *   - inertial: mass, the centre of mass from its origin, the tensor rotated into the link frame;
 *   - collision geometry only (urdf_geom.c); visuals are not simulated.
 */
#include <errno.h>
#include <libxml/parser.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_format.h"
#include "model_internal.h"
#include "urdf_internal.h"

static const char *skip_prolog(const char *p, const char *end)
{
    if (end - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
            p++;
        /* <?xml ...?>, <!-- ... -->, <!DOCTYPE ...> */
        size_t left = (size_t)(end - p);
        const char *close;
        /* cppcheck 2.10 loses track of p across the loop and calls these three always false. */
        // cppcheck-suppress knownConditionTrueFalse
        if (left >= 2 && p[0] == '<' && p[1] == '?')
            close = "?>";
        // cppcheck-suppress knownConditionTrueFalse
        else if (left >= 4 && memcmp(p, "<!--", 4) == 0)
            close = "-->";
        // cppcheck-suppress knownConditionTrueFalse
        else if (left >= 2 && p[0] == '<' && p[1] == '!')
            close = ">";
        else
            return p;
        const char *q = memmem(p + 2, (size_t)(end - p - 2), close, strlen(close));
        if (!q)
            return end;
        p = q + strlen(close);
    }
}

bool hs__urdf_probe(const char *data, size_t size)
{
    const char *p = skip_prolog(data, data + size);
    return (size_t)(data + size - p) > 6 && memcmp(p, "<robot", 6) == 0 &&
           (p[6] == ' ' || p[6] == '>' || p[6] == '\t' || p[6] == '\n' || p[6] == '\r');
}

/* One URDF joint as read. */
struct ujoint {
    const xmlNode *node;
    char name[HS_NAME_MAX];
    int32_t parent, child; /* URDF link indices */
};

struct ulink {
    const xmlNode *node;
    char name[HS_NAME_MAX];
    int32_t joint; /* index of the joint above, -1 for the root */
};

static int find_ulink(const struct ulink *l, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(l[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The first element in the xacro namespace (xacro:property, xacro:macro, ...), or NULL. A mere
 * xmlns:xacro declaration is common in expanded files and harmless. Iterative: no recursion
 * depth for a hostile file to exhaust. */
static const xmlNode *xacro_element(const xmlNode *root)
{
    const xmlNode *n = root;
    while (n) {
        if (n->type == XML_ELEMENT_NODE && n->ns && n->ns->prefix &&
            strcmp((const char *)n->ns->prefix, "xacro") == 0)
            return n;
        if (n->children) {
            n = n->children;
            continue;
        }
        while (n && n != root && !n->next)
            n = n->parent;
        if (!n || n == root)
            break;
        n = n->next;
    }
    return NULL;
}

static int read_inertial(struct hs__urdf *u, const xmlNode *link, struct hs_link *l)
{
    const xmlNode *in = hs__urdf_child(link, "inertial");
    if (!in)
        return 0; /* massless: the world gives it its minimum mass */
    struct hs_pose o;
    int r = hs__urdf_origin(u, in, &o);
    if (r)
        return r;
    const xmlNode *mass = hs__urdf_child(in, "mass"), *it = hs__urdf_child(in, "inertia");
    if (!mass)
        return hs__urdf_err(u, in, -EINVAL, "missing <mass>");
    if ((r = hs__urdf_attr_num(u, mass, "value", true, 0, &l->mass)))
        return r;
    if (l->mass < 0)
        return hs__urdf_err(u, mass, -EINVAL, "attribute 'value' must not be negative");
    double I[9] = {0};
    if (it) {
        static const char *const names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
        static const int at[6][2] = {{0, 0}, {1, 3}, {2, 6}, {4, 4}, {5, 7}, {8, 8}};
        for (int k = 0; k < 6; k++) {
            double v;
            if ((r = hs__urdf_attr_num(u, it, names[k], k == 0 || k == 3 || k == 5, 0, &v)))
                return r;
            I[at[k][0]] = I[at[k][1]] = v;
        }
        if (I[0] < 0 || I[4] < 0 || I[8] < 0)
            return hs__urdf_err(u, it, -EINVAL, "ixx, iyy and izz must not be negative");
    } else {
        return hs__urdf_err(u, in, -EINVAL, "missing <inertia>");
    }
    memcpy(l->com, o.p, sizeof l->com);
    hs__inertia_rotate(o.R, I, l->inertia);
    return 0;
}

static int read_joint(struct hs__urdf *u, const xmlNode *j, int32_t *next_id, struct hs_link *l)
{
    char type[32];
    int r = hs__urdf_attr_str(u, j, "type", true, type, sizeof type);
    if (r)
        return r;
    bool limited = false;
    if (strcmp(type, "revolute") == 0) {
        l->joint_type = HS_JOINT_ROTATE;
        limited = true;
    } else if (strcmp(type, "continuous") == 0) {
        l->joint_type = HS_JOINT_ROTATE;
    } else if (strcmp(type, "prismatic") == 0) {
        l->joint_type = HS_JOINT_SLIDE;
        limited = true;
    } else if (strcmp(type, "fixed") == 0) {
        l->joint_type = HS_JOINT_FIXED;
    } else if (strcmp(type, "floating") == 0) {
        l->joint_type = HS_JOINT_FREE; /* only valid at the root; the caller checks */
    } else if (strcmp(type, "planar") == 0) {
        return hs__urdf_err(u, j, -ENOTSUP,
                            "joint '%s': type 'planar' is not supported (hilsim's world has no "
                            "planar joint); model it as two prismatic and one revolute joint",
                            l->name);
    } else {
        return hs__urdf_err(u, j, -EINVAL,
                            "joint '%s': attribute 'type' is \"%s\" (expected revolute, "
                            "continuous, prismatic, fixed or floating)",
                            l->name, type);
    }
    if ((r = hs__urdf_origin(u, j, &l->origin)))
        return r;
    bool actuated = l->joint_type == HS_JOINT_ROTATE || l->joint_type == HS_JOINT_SLIDE;
    if (!actuated)
        return 0;
    static const double x_axis[3] = {1, 0, 0};
    const xmlNode *ax = hs__urdf_child(j, "axis");
    if ((r = hs__urdf_attr_vec(u, ax ? ax : j, "xyz", 3, x_axis, l->axis)))
        return r;
    double n = sqrt(l->axis[0] * l->axis[0] + l->axis[1] * l->axis[1] + l->axis[2] * l->axis[2]);
    if (!(n > 1e-9))
        return hs__urdf_err(u, ax, -EINVAL, "joint '%s': attribute 'xyz' must not be zero",
                            l->name);
    for (int k = 0; k < 3; k++)
        l->axis[k] /= n;
    l->joint_id = (*next_id)++;
    const xmlNode *lim = hs__urdf_child(j, "limit");
    if (lim) {
        double lo, hi, vel, eff;
        if ((r = hs__urdf_attr_num(u, lim, "lower", false, 0, &lo)) ||
            (r = hs__urdf_attr_num(u, lim, "upper", false, 0, &hi)) ||
            (r = hs__urdf_attr_num(u, lim, "velocity", false, INFINITY, &vel)) ||
            (r = hs__urdf_attr_num(u, lim, "effort", false, 0, &eff)))
            return r;
        if (vel < 0 || eff < 0)
            return hs__urdf_err(u, lim, -EINVAL,
                                "joint '%s': 'velocity' and 'effort' must not be negative",
                                l->name);
        if (limited && lo > hi)
            return hs__urdf_err(u, lim, -EINVAL, "joint '%s': 'lower' %g is above 'upper' %g",
                                l->name, lo, hi);
        if (limited) {
            l->llimit = lo;
            l->ulimit = hi;
        }
        if (vel > 0 && isfinite(vel)) {
            l->lvlimit = -vel;
            l->uvlimit = vel;
        }
        l->effort_max = eff;
    } else if (limited) {
        if ((r = hs__urdf_warn(u, j, "joint '%s': %s joint without <limit> loaded unlimited",
                               l->name, type)))
            return r;
    }
    const xmlNode *dyn = hs__urdf_child(j, "dynamics");
    if (dyn && ((r = hs__urdf_attr_num(u, dyn, "damping", false, 0, &l->damping)) ||
                (r = hs__urdf_attr_num(u, dyn, "friction", false, 0, &l->friction))))
        return r;
    if (l->damping < 0 || l->friction < 0)
        return hs__urdf_err(u, dyn, -EINVAL,
                            "joint '%s': 'damping' and 'friction' must not be negative", l->name);
    return 0;
}

/* <mimic joint= multiplier= offset=>: resolved once every link exists (the leader may come
 * later in the file). The follower keeps its joint and is driven by the world's mimic motor;
 * it gets no joint id, as ros2_control does not command a mimic joint. */
static int read_mimic(struct hs__urdf *u, const xmlNode *j, uint32_t li)
{
    const xmlNode *mimic = hs__urdf_child(j, "mimic");
    struct hs_link *l = &u->m->links[li];
    if (!mimic)
        return 0;
    if (l->joint_id < 0)
        return hs__urdf_warn(u, mimic, "joint '%s' is not movable: <mimic> ignored", l->name);
    char of[HS_NAME_MAX];
    int r;
    if ((r = hs__urdf_attr_str(u, mimic, "joint", true, of, sizeof of)) ||
        (r = hs__urdf_attr_num(u, mimic, "multiplier", false, 1, &l->mimic_multiplier)) ||
        (r = hs__urdf_attr_num(u, mimic, "offset", false, 0, &l->mimic_offset)))
        return r;
    int k = hs_model_find_link(u->m, of);
    if (k < 0 || u->m->links[k].joint_id < 0)
        return hs__urdf_err(u, mimic, -EINVAL, "joint '%s' mimics '%s', which is no movable joint",
                            l->name, of);
    if ((uint32_t)k == li)
        return hs__urdf_err(u, mimic, -EINVAL, "joint '%s' mimics itself", l->name);
    if (u->m->links[k].joint_type != l->joint_type)
        return hs__urdf_err(u, mimic, -ENOTSUP,
                            "joint '%s' mimics '%s' of another kind (revolute and prismatic "
                            "cannot be coupled by hilsim's mimic motor)",
                            l->name, of);
    l->mimics = true;
    l->mimic_of = k;
    return 0;
}

/* <transmission>: a joint's mechanicalReduction (in <actuator>, or directly inside the
 * transmission in the old format) becomes its gear ratio: motor turns per joint turn, as
 * ros_control defines it. Interfaces and the transmission type are not used. */
static int read_transmission(struct hs__urdf *u, const xmlNode *t)
{
    const xmlNode *red = hs__urdf_child(t, "mechanicalReduction");
    const xmlNode *act = hs__urdf_child(t, "actuator");
    if (!red && act)
        red = hs__urdf_child(act, "mechanicalReduction");
    if (!red)
        return 0;
    double n = 1;
    int r = hs__urdf_text_num(u, red, &n);
    if (r)
        return r;
    if (n == 0)
        return hs__urdf_err(u, red, -EINVAL, "mechanicalReduction must not be 0");
    for (const xmlNode *j = t->children; j; j = j->next) {
        if (!hs__urdf_is(j, "joint"))
            continue;
        char name[HS_NAME_MAX];
        if ((r = hs__urdf_attr_str(u, j, "name", true, name, sizeof name)))
            return r;
        int li = hs_model_find_link(u->m, name);
        if (li < 0 || u->m->links[li].joint_id < 0)
            return hs__urdf_err(u, j, -EINVAL, "transmission names no actuated joint '%s'", name);
        u->m->links[li].gear_ratio = n;
    }
    return 0;
}

static void link_defaults(struct hs_link *l)
{
    *l = (struct hs_link){.parent = -1, .joint_type = HS_JOINT_FIXED, .joint_id = -1};
    hs_pose_identity(&l->origin);
    l->axis[0] = 1;
    l->ulimit = l->uvlimit = INFINITY;
    l->llimit = l->lvlimit = -INFINITY;
    l->gear_ratio = l->gear_efficiency = l->torque_const = l->encoder_pulse = 1;
}

static bool is_dummy_world(const struct ulink *ul)
{
    return strcmp(ul->name, "world") == 0 && !hs__urdf_child(ul->node, "inertial") &&
           !hs__urdf_child(ul->node, "collision");
}

/* Reads links and joints, orders them parents first, fills u->m. */
static int build(struct hs__urdf *u, const xmlNode *robot)
{
    uint32_t nl = 0, nj = 0;
    for (const xmlNode *c = robot->children; c; c = c->next) {
        nl += hs__urdf_is(c, "link");
        nj += hs__urdf_is(c, "joint");
    }
    if (nl == 0)
        return hs__urdf_err(u, robot, -EINVAL, "no <link>");
    if (nl > HS_URDF_MAX_LINKS)
        return hs__urdf_err(u, robot, -E2BIG, "more than %d links", HS_URDF_MAX_LINKS);
    if (nj >= nl)
        return hs__urdf_err(u, robot, -EINVAL, "%u joints for %u links: the links must form a tree",
                            nj, nl);
    struct ulink *ul = calloc(nl, sizeof *ul);
    struct ujoint *uj = calloc(nj ? nj : 1, sizeof *uj);
    uint32_t *order = calloc(nl, sizeof *order);
    int32_t *index = calloc(nl, sizeof *index);
    u->m->links = calloc(nl, sizeof *u->m->links);
    int r = 0;
    if (!ul || !uj || !order || !index || !u->m->links) {
        r = hs__urdf_err(u, robot, -ENOMEM, "out of memory");
        goto out;
    }
    if (u->opts->visuals && (r = hs__urdf_materials(u, robot)) < 0)
        goto out;
    uint32_t il = 0, ij = 0;
    for (const xmlNode *c = robot->children; r == 0 && c; c = c->next) {
        if (hs__urdf_is(c, "link")) {
            ul[il] = (struct ulink){.node = c, .joint = -1};
            r = hs__urdf_attr_str(u, c, "name", true, ul[il].name, sizeof ul[il].name);
            if (r == 0 && find_ulink(ul, il, ul[il].name) >= 0)
                r = hs__urdf_err(u, c, -EINVAL, "link name '%s' used twice", ul[il].name);
            il++;
        } else if (hs__urdf_is(c, "joint")) {
            uj[ij].node = c;
            r = hs__urdf_attr_str(u, c, "name", true, uj[ij].name, sizeof uj[ij].name);
            for (uint32_t k = 0; r == 0 && k < ij; k++)
                if (strcmp(uj[k].name, uj[ij].name) == 0)
                    r = hs__urdf_err(u, c, -EINVAL, "joint name '%s' used twice", uj[ij].name);
            ij++;
        }
    }
    for (uint32_t j = 0; r == 0 && j < nj; j++) {
        const xmlNode *p = hs__urdf_child(uj[j].node, "parent"),
                      *ch = hs__urdf_child(uj[j].node, "child");
        char pn[HS_NAME_MAX], cn[HS_NAME_MAX];
        if (!p || !ch) {
            r = hs__urdf_err(u, uj[j].node, -EINVAL, "joint '%s': missing <%s>", uj[j].name,
                             p ? "child" : "parent");
            break;
        }
        if ((r = hs__urdf_attr_str(u, p, "link", true, pn, sizeof pn)) ||
            (r = hs__urdf_attr_str(u, ch, "link", true, cn, sizeof cn)))
            break;
        uj[j].parent = find_ulink(ul, nl, pn);
        uj[j].child = find_ulink(ul, nl, cn);
        if (uj[j].parent < 0 || uj[j].child < 0)
            r = hs__urdf_err(u, uj[j].parent < 0 ? p : ch, -EINVAL,
                             "joint '%s': no <link name=\"%s\">", uj[j].name,
                             uj[j].parent < 0 ? pn : cn);
        else if (ul[uj[j].child].joint >= 0)
            r = hs__urdf_err(u, ch, -EINVAL, "link '%s' is the child of two joints ('%s' and '%s')",
                             cn, uj[ul[uj[j].child].joint].name, uj[j].name);
        else if (uj[j].child == uj[j].parent)
            r = hs__urdf_err(u, ch, -EINVAL, "joint '%s' connects link '%s' to itself", uj[j].name,
                             cn);
        else
            ul[uj[j].child].joint = (int32_t)j;
    }
    if (r)
        goto out;
    /* Exactly one root; breadth-first from it gives parents before children. */
    int32_t root = -1;
    for (uint32_t i = 0; i < nl && r == 0; i++)
        if (ul[i].joint < 0) {
            if (root >= 0)
                r = hs__urdf_err(u, ul[i].node, -EINVAL,
                                 "links '%s' and '%s' both have no parent joint (one root "
                                 "expected)",
                                 ul[root].name, ul[i].name);
            root = (int32_t)i;
        }
    if (r)
        goto out;
    if (root < 0) {
        r = hs__urdf_err(u, robot, -EINVAL,
                         "every link has a parent joint: the joints form a cycle");
        goto out;
    }
    /* Depth first, children in the document order of their <link> elements: the order the
     * VRML loader gives (and urdf_write.c writes), so a round trip keeps the link order. */
    uint32_t no = 0, nstack = 0;
    uint32_t *stack = (uint32_t *)index; /* free until the links are filled */
    stack[nstack++] = (uint32_t)root;
    while (nstack > 0 && no < nl) {
        uint32_t p = stack[--nstack];
        order[no++] = p;
        for (uint32_t i = nl; i-- > 0;)
            if (ul[i].joint >= 0 && uj[ul[i].joint].parent == (int32_t)p && nstack < nl)
                stack[nstack++] = i;
    }
    if (no != nl) {
        for (uint32_t i = 0; i < nl; i++)
            index[i] = -1;
        for (uint32_t k = 0; k < no; k++)
            index[order[k]] = 0;
        for (uint32_t i = 0; i < nl; i++)
            if (index[i] < 0) {
                r = hs__urdf_err(u, ul[i].node, -EINVAL,
                                 "link '%s' is not connected to the root '%s' (a cycle?)",
                                 ul[i].name, ul[root].name);
                goto out;
            }
    }
    /* A dummy "world" root: the joint below it attaches the robot to the world. */
    uint32_t first = 0;
    if (is_dummy_world(&ul[root])) {
        uint32_t children = 0;
        for (uint32_t j = 0; j < nj; j++)
            children += uj[j].parent == root;
        if (children != 1) {
            r = hs__urdf_err(u, ul[root].node, -EINVAL,
                             "link 'world' must have exactly one child joint");
            goto out;
        }
        first = 1;
    }
    struct hs_model *m = u->m;
    /* index[model link] = its URDF joint, for numbering joint ids in document order. */
    for (uint32_t i = 0; i < nl; i++)
        index[i] = -1;
    for (uint32_t k = first; k < nl && r == 0; k++) {
        const struct ulink *x = &ul[order[k]];
        struct hs_link *l = &m->links[k - first];
        link_defaults(l);
        l->source_line = (int32_t)xmlGetLineNo(x->node);
        snprintf(l->segment_name, sizeof l->segment_name, "%s", x->name);
        if (k == first && first == 0) {
            snprintf(l->name, sizeof l->name, "%s", x->name);
            l->joint_type = HS_JOINT_FREE;
        } else {
            const struct ujoint *jn = &uj[x->joint];
            snprintf(l->name, sizeof l->name, "%s", jn->name);
            l->source_line = (int32_t)xmlGetLineNo(jn->node);
            if (k > first) {
                for (uint32_t q = first; q < k; q++)
                    if (order[q] == (uint32_t)jn->parent)
                        l->parent = (int32_t)(q - first);
            }
            int32_t unused = 0;
            index[k - first] = x->joint;
            r = read_joint(u, jn->node, &unused, l);
            if (r == 0 && l->joint_type == HS_JOINT_FREE && k != first)
                r = hs__urdf_err(u, jn->node, -ENOTSUP,
                                 "joint '%s': a floating joint is only allowed at the root (below "
                                 "a 'world' link)",
                                 jn->name);
        }
        if (r == 0)
            r = read_inertial(u, x->node, l);
        /* Bullet's KUKA iiwa: a massless link_0 and no 'world' link, so the arm's base floats
         * at the stand-in mass under the whole arm and jitters or topples; it loaded silently. */
        if (r == 0 && k == first && first == 0 && l->mass == 0)
            r = hs__urdf_warn(u, x->node,
                              "link '%s' is the robot's root: it floats (no 'world' link fixes it) "
                              "and has no <inertial>, so the simulation gives it 1 g under the "
                              "whole robot; a base meant to be bolted down needs <link "
                              "name=\"world\"/> and a fixed joint from it to '%s', a free one "
                              "its mass",
                              x->name, x->name);
        if (r == 0) {
            l->geom_first = m->ngeoms;
            r = hs__urdf_collisions(u, x->node, (int32_t)(k - first));
            l->geom_count = m->ngeoms - l->geom_first;
        }
        if (r == 0 && u->opts->visuals) {
            l->visual_first = m->nvisuals;
            r = hs__urdf_visuals(u, x->node);
            l->visual_count = m->nvisuals - l->visual_first;
        }
        if (r == 0 && !hs__urdf_child(x->node, "collision") && hs__urdf_child(x->node, "visual"))
            r = hs__urdf_warn(u, x->node,
                              "link '%s' has a <visual> but no <collision>: it does "
                              "not collide",
                              x->name);
        m->nlinks = k - first + 1;
    }
    if (r)
        goto out;
    for (uint32_t i = 0; r == 0 && i < m->nlinks; i++)
        if (index[i] >= 0)
            r = read_mimic(u, uj[index[i]].node, i);
    if (r)
        goto out;
    int32_t next_id = 0;
    for (uint32_t j = 0; j < nj; j++)
        for (uint32_t i = 0; i < m->nlinks; i++)
            if (index[i] == (int32_t)j && m->links[i].joint_id >= 0)
                m->links[i].joint_id = m->links[i].mimics ? -1 : next_id++;
    m->njoint_ids = (uint32_t)next_id;
    for (const xmlNode *c = robot->children; r == 0 && c; c = c->next)
        if (hs__urdf_is(c, "transmission"))
            r = read_transmission(u, c);
    if (r == 0)
        r = hs__urdf_sensors(u, robot);
    if (r == 0)
        r = hs__urdf_gazebo(u, robot);
    for (const xmlNode *c = robot->children; r == 0 && c; c = c->next)
        if (hs__urdf_is(c, "ros2_control"))
            r = hs__urdf_ros2_control(u, c);
    if (r == 0)
        r = hs__urdf_ros2_unlisted(u, robot);
out:
    free(ul);
    free(uj);
    free(order);
    free(index);
    return r;
}

static void dir_of(const char *base_path, char *dir, size_t size)
{
    struct stat st;
    if (stat(base_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(dir, size, "%s", base_path);
        return;
    }
    const char *slash = strrchr(base_path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == base_path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - base_path), base_path);
}

/* libxml2 reports some problems (input encoding) through its generic error handler, which
 * prints to stderr by default; library code must not print, and the parser context's last
 * error carries the message anyway. The handler is per thread in libxml2. */
static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

int hs__urdf_load_buffer(const char *data, size_t size, const char *name, const char *base_path,
                         const struct hs_model_options *opts, struct hs_model **ret_model,
                         struct hs_diag *diag)
{
    const char *file = name ? name : "<buffer>";
    char dir[PATH_MAX];
    struct hs__urdf u = {.file = file, .diag = diag, .opts = opts};
    if (base_path) {
        dir_of(base_path, dir, sizeof dir);
        u.dir = dir;
    }
    if (size > INT_MAX)
        return hs_diag_set(diag, -EFBIG, file, 0, 0, "file too large");
    xmlGenericErrorFunc old_handler = xmlGenericError;
    void *old_ctx = xmlGenericErrorContext;
    xmlSetGenericErrorFunc(NULL, quiet);
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        xmlSetGenericErrorFunc(old_ctx, old_handler);
        return hs_diag_set(diag, -ENOMEM, file, 0, 0, "out of memory");
    }
    /* No network, no entity substitution, no DTD loading: a model file reads nothing else. */
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, data, (int)size, file, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    int r = 0;
    if (!doc) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        char msg[256] = "not well-formed XML";
        if (e && e->message) {
            snprintf(msg, sizeof msg, "%s", e->message);
            size_t n = strlen(msg);
            while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
                msg[--n] = '\0';
        }
        r = hs_diag_set(diag, -EINVAL, file, e ? e->line : 0, e && e->int2 > 0 ? e->int2 : 0,
                        "XML: %s", msg);
        xmlFreeParserCtxt(ctxt);
        xmlSetGenericErrorFunc(old_ctx, old_handler);
        return r;
    }
    xmlFreeParserCtxt(ctxt);
    xmlSetGenericErrorFunc(old_ctx, old_handler);
    const xmlNode *robot = xmlDocGetRootElement(doc);
    u.m = calloc(1, sizeof *u.m);
    if (!u.m) {
        r = hs_diag_set(diag, -ENOMEM, file, 0, 0, "out of memory");
    } else if (!robot || !hs__urdf_is(robot, "robot")) {
        r = hs__urdf_err(&u, robot, -EINVAL, "expected a URDF <robot> root element");
    } else if (xacro_element(robot)) {
        r = hs__urdf_err(&u, xacro_element(robot), -ENOTSUP,
                         "this is a xacro file: expand it first (xacro %s > robot.urdf) and load "
                         "the result",
                         file);
    } else {
        char rname[HS_NAME_MAX];
        r = hs__urdf_attr_str(&u, robot, "name", false, rname, sizeof rname);
        if (r == 0 && !rname[0])
            hs__model_name_from_path(file, rname, sizeof rname);
        if (r == 0) {
            memcpy(u.m->name, rname, sizeof rname);
            u.m->path = strdup(file);
            if (!u.m->path)
                r = hs_diag_set(diag, -ENOMEM, file, 0, 0, "out of memory");
        }
        if (r == 0)
            r = build(&u, robot);
        if (r == 0 && ((!u.m->sensors && !(u.m->sensors = calloc(1, sizeof *u.m->sensors))) ||
                       !(u.m->extra_joints = calloc(1, sizeof *u.m->extra_joints))))
            r = hs_diag_set(diag, -ENOMEM, file, 0, 0, "out of memory");
    }
    xmlFreeDoc(doc);
    hs__urdf_materials_free(&u);
    if (u.m) { /* the colours go with the model, kept or freed */
        u.m->materials = u.palette.items;
        u.m->nmaterials = u.palette.n;
    } else {
        free(u.palette.items);
    }
    if (r) {
        hs_model_free(u.m);
        return r < 0 ? r : -r;
    }
    *ret_model = u.m;
    return 0;
}
