/* OpenHRP Joint (one link each) and Segment (mass properties of the enclosing link).
 *
 * Decisions: a Joint without jointType is "free" when it is the root and an error elsewhere
 * (Choreonoid also needs a type below the root); "free" is only valid on the root. The link
 * frame is the Joint's rigid part T*C*R*-C; its scale applies to what is below. Transforms
 * between two Joints, and above a Segment with mass, must be rigid. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "model_internal.h"

static int parse_joint_type(struct hs__builder *b, const struct hs__vnode *n, const char *s,
                            bool root, enum hs_joint_type *ret)
{
    if (!s[0] && root) {
        *ret = HS_JOINT_FREE;
        return 0;
    }
    static const struct {
        const char *name;
        enum hs_joint_type type;
    } map[] = {{"free", HS_JOINT_FREE},       {"rotate", HS_JOINT_ROTATE},
               {"slide", HS_JOINT_SLIDE},     {"fixed", HS_JOINT_FIXED},
               {"crawler", HS_JOINT_CRAWLER}, {"pseudoContinuousTrack", HS_JOINT_CRAWLER}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i].name) == 0) {
            if (map[i].type == HS_JOINT_FREE && !root)
                return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                                   "jointType \"free\" is only valid on the root Joint");
            *ret = map[i].type;
            return 0;
        }
    return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                       "%s jointType \"%s\": expected free, rotate, slide, fixed, crawler or "
                       "pseudoContinuousTrack",
                       s[0] ? "unknown" : "missing", s);
}

static int read_axis(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                     double ret[3])
{
    const struct hs__venv *e;
    const struct hs__vvalue *v = hs__vfield_get(n, "jointAxis", env, &e);
    static const double def[3] = {0, 0, 1};
    if (v && v->kind == HS__VV_SCALARS && v->n == 1 && v->items[0].kind == HS__VI_STR) {
        const char *s = v->items[0].str;
        memset(ret, 0, 3 * sizeof *ret);
        if (strcasecmp(s, "X") == 0)
            ret[0] = 1;
        else if (strcasecmp(s, "Y") == 0)
            ret[1] = 1;
        else if (strcasecmp(s, "Z") == 0)
            ret[2] = 1;
        else
            return hs_diag_set(b->diag, -EINVAL, v->file, v->line, v->column,
                               "jointAxis \"%s\": expected \"X\", \"Y\", \"Z\" or a vector", s);
        return 0;
    }
    return hs__get_vec3(b, n, env, "jointAxis", def, ret);
}

/* MFFloat limit: the first value, or the given infinity when empty or absent. */
static int read_limit(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                      const char *name, double inf, double *ret)
{
    const struct hs__vvalue *v;
    int r = hs__get_numbers(b, n, env, name, HS__FT_MFFLOAT, &v);
    if (r < 0)
        return r;
    *ret = v && v->n > 0 ? v->items[0].num : inf;
    return 0;
}

/* An SFFloat motor field with where it was written (NULL value: absent, *ret = def). */
static int read_motor(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                      const char *name, double def, double *ret, const struct hs__vvalue **ret_v)
{
    int r = hs__get_numbers(b, n, env, name, HS__FT_SFFLOAT, ret_v);
    if (r < 0)
        return r;
    *ret = *ret_v ? (*ret_v)->items[0].num : def;
    return 0;
}

/* Where a field's value was written; the Joint node when it came from nowhere in particular. */
static void where(const struct hs__vnode *n, const struct hs__vvalue *v, const char **ret_file,
                  int *ret_line, int *ret_column)
{
    *ret_file = v && v->file ? v->file : n->file;
    *ret_line = v ? v->line : n->line;
    *ret_column = v ? v->column : n->column;
}

static int motor_error(struct hs__builder *b, const struct hs__vnode *n, const struct hs__vvalue *v,
                       const char *link, const char *field, double value, const char *expected)
{
    const char *file;
    int line, column;
    where(n, v, &file, &line, &column);
    return hs_diag_set(b->diag, -EINVAL, file, line, column, "Joint %s: %s %g: expected %s", link,
                       field, value, expected);
}

/* Exporters write 0 for a motor figure they do not know (OpenHRP's own sample3dof.wrl has
 * gearRatio 0, torqueConst 0, encoderPulse 0), and OpenHRP and Choreonoid load such files: they
 * use these figures only in products (rotorInertia·gearRatio², current·torqueConst) where a
 * zero silently removes the motor. A zero ratio, efficiency, torque constant or encoder
 * resolution cannot be a real motor, so 0 is read as "not given": the default (1), with one
 * warning per Joint at the first such number. */
struct zeros {
    char names[96];
    const struct hs__vvalue *first;
};

static void zero_means_default(struct zeros *z, const struct hs__vvalue *v, const char *field,
                               double *value)
{
    if (*value != 0)
        return;
    *value = 1;
    size_t n = strlen(z->names);
    snprintf(z->names + n, sizeof z->names - n, "%s%s", n ? ", " : "", field);
    if (!z->first)
        z->first = v;
}

static int warn_zeros(struct hs__builder *b, const struct hs__vnode *n, const struct zeros *z,
                      const char *link)
{
    if (!z->names[0])
        return 0;
    const char *file;
    int line, column;
    where(n, z->first, &file, &line, &column);
    int r = hs__builder_warn(b, file, line, column,
                             "Joint %s: %s 0 read as not given, using 1 (0 cannot be a real "
                             "motor)",
                             link, z->names);
    return r < 0 ? hs_diag_set(b->diag, -ENOMEM, file, line, column, "out of memory") : 0;
}

static int read_joint_params(struct hs__builder *b, const struct hs__vnode *n,
                             const struct hs__venv *env, struct hs_link *l)
{
    int r;
    const struct hs__vvalue *v_gr, *v_ge, *v_ri, *v_rr, *v_kt, *v_ep, *v_cl;
    if ((r = read_limit(b, n, env, "ulimit", INFINITY, &l->ulimit)) < 0 ||
        (r = read_limit(b, n, env, "llimit", -INFINITY, &l->llimit)) < 0 ||
        (r = read_limit(b, n, env, "uvlimit", INFINITY, &l->uvlimit)) < 0 ||
        (r = read_limit(b, n, env, "lvlimit", -INFINITY, &l->lvlimit)) < 0 ||
        (r = read_motor(b, n, env, "gearRatio", 1, &l->gear_ratio, &v_gr)) < 0 ||
        (r = read_motor(b, n, env, "gearEfficiency", 1, &l->gear_efficiency, &v_ge)) < 0 ||
        (r = read_motor(b, n, env, "rotorInertia", 0, &l->rotor_inertia, &v_ri)) < 0 ||
        (r = read_motor(b, n, env, "rotorResistor", 0, &l->rotor_resistor, &v_rr)) < 0 ||
        (r = read_motor(b, n, env, "torqueConst", 1, &l->torque_const, &v_kt)) < 0 ||
        (r = read_motor(b, n, env, "encoderPulse", 1, &l->encoder_pulse, &v_ep)) < 0 ||
        (r = hs__get_numbers(b, n, env, "climit", HS__FT_MFFLOAT, &v_cl)) < 0)
        return r;
    if (l->llimit > l->ulimit)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "Joint %s: llimit %g above ulimit %g", l->name, l->llimit, l->ulimit);
    if (l->lvlimit > l->uvlimit)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "Joint %s: lvlimit %g above uvlimit %g", l->name, l->lvlimit,
                           l->uvlimit);
    /* A negative gearRatio is a reversing gear: the sign is kept. */
    struct zeros z = {0};
    zero_means_default(&z, v_gr, "gearRatio", &l->gear_ratio);
    zero_means_default(&z, v_ge, "gearEfficiency", &l->gear_efficiency);
    zero_means_default(&z, v_kt, "torqueConst", &l->torque_const);
    zero_means_default(&z, v_ep, "encoderPulse", &l->encoder_pulse);
    if ((r = warn_zeros(b, n, &z, l->name)) < 0)
        return r;
    if (!(l->gear_efficiency > 0 && l->gear_efficiency <= 1))
        return motor_error(b, n, v_ge, l->name, "gearEfficiency", l->gear_efficiency,
                           "a fraction in (0, 1]");
    if (l->rotor_inertia < 0)
        return motor_error(b, n, v_ri, l->name, "rotorInertia", l->rotor_inertia,
                           "kg·m² >= 0 (0: none)");
    if (l->rotor_resistor < 0)
        return motor_error(b, n, v_rr, l->name, "rotorResistor", l->rotor_resistor,
                           "ohm >= 0 (0: not given)");
    if (l->torque_const < 0)
        return motor_error(b, n, v_kt, l->name, "torqueConst", l->torque_const,
                           "N·m/A > 0 (0: not given)");
    if (l->encoder_pulse < 0)
        return motor_error(b, n, v_ep, l->name, "encoderPulse", l->encoder_pulse,
                           "counts per motor revolution > 0 (0: not given)");
    /* climit (A, motor side) is MFFloat like the other limits: the first value counts. */
    l->climit = v_cl && v_cl->n > 0 ? v_cl->items[0].num : INFINITY;
    if (!(l->climit > 0)) {
        const struct hs__vitem *it = &v_cl->items[0];
        if (l->climit < 0)
            return hs_diag_set(b->diag, -EINVAL, v_cl->file, it->line, it->column,
                               "Joint %s: climit %g: expected a current limit in A > 0 (leave it "
                               "out for none)",
                               l->name, l->climit);
        l->climit = INFINITY;
        if (hs__builder_warn(b, v_cl->file, it->line, it->column,
                             "Joint %s: climit 0 read as not given (no current limit)",
                             l->name) < 0)
            return hs_diag_set(b->diag, -ENOMEM, v_cl->file, it->line, it->column, "out of memory");
    }
    return 0;
}

int hs__build_joint(struct hs__builder *b, const struct hs__vnode *n, const struct hs__bctx *ctx)
{
    bool root = ctx->link < 0;
    if (root && b->nlinks > 0)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "second root Joint (expected one root Joint under the Humanoid)");
    if (b->nlinks >= HS_MODEL_MAX_LINKS)
        return hs_diag_set(b->diag, -E2BIG, n->file, n->line, n->column, "more than %d Joints",
                           HS_MODEL_MAX_LINKS);
    if (!hs__affine_is_rigid(&ctx->M))
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "Joint under a scaled Transform (expected rigid transforms between "
                           "Joints)");
    struct hs_link l = {.parent = ctx->link, .source_line = n->line, .source_column = n->column};
    int r = hs__node_name(b, n, ctx->env, true, l.name, sizeof l.name);
    if (r < 0)
        return r;
    if (!l.name[0])
        snprintf(l.name, sizeof l.name, "JOINT%u", b->nlinks);
    for (uint32_t i = 0; i < b->nlinks; i++)
        if (strcmp(b->links[i].link.name, l.name) == 0)
            return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                               "duplicate Joint name '%s' (first at line %d)", l.name,
                               b->links[i].link.source_line);
    char type[32];
    if ((r = hs__get_string(b, n, ctx->env, "jointType", type, sizeof type)) < 0 ||
        (r = parse_joint_type(b, n, type, root, &l.joint_type)) < 0)
        return r;
    if ((r = hs__get_int(b, n, ctx->env, "jointId", -1, &l.joint_id)) < 0)
        return r;
    if (l.joint_id < -1)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "jointId %d: expected -1 (none) or 0..N-1", l.joint_id);
    if (l.joint_id >= HS_MODEL_MAX_LINKS)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "jointId %d too large (at most %d)", l.joint_id, HS_MODEL_MAX_LINKS - 1);
    for (uint32_t i = 0; l.joint_id >= 0 && i < b->nlinks; i++)
        if (b->links[i].link.joint_id == l.joint_id)
            return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                               "duplicate jointId %d (also Joint '%s' at line %d)", l.joint_id,
                               b->links[i].link.name, b->links[i].link.source_line);
    if ((r = read_axis(b, n, ctx->env, l.axis)) < 0)
        return r;
    /* hypot does not overflow for an axis written as 1e200 0 0 (its square would). */
    double len = hypot(hypot(l.axis[0], l.axis[1]), l.axis[2]);
    bool needs_axis = l.joint_type == HS_JOINT_ROTATE || l.joint_type == HS_JOINT_SLIDE ||
                      l.joint_type == HS_JOINT_CRAWLER;
    if (!(len > 1e-12)) {
        if (needs_axis)
            return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                               "Joint %s: jointAxis is zero (expected a direction)", l.name);
        l.axis[2] = len = 1;
    }
    for (int i = 0; i < 3; i++)
        l.axis[i] /= len;
    if ((r = read_joint_params(b, n, ctx->env, &l)) < 0)
        return r;
    struct hs__affine rigid, scale, origin;
    if ((r = hs__read_transform(b, n, ctx->env, &rigid, &scale)) < 0)
        return r;
    hs__affine_mul(&ctx->M, &rigid, &origin);
    hs__affine_to_pose(&origin, &l.origin);
    if (hs__grow((void **)&b->links, &b->links_cap, b->nlinks + 1, sizeof *b->links) < 0)
        return hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
    b->links[b->nlinks] = (struct hs__link_acc){.link = l, .file = n->file, .column = n->column};
    struct hs__bctx c = *ctx;
    c.link = (int32_t)b->nlinks++;
    c.M = scale;
    return hs__build_children(b, n, "children", &c);
}

int hs__build_segment(struct hs__builder *b, const struct hs__vnode *n, const struct hs__bctx *ctx)
{
    if (ctx->link < 0)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "Segment outside any Joint (expected it in a Joint's children)");
    static const double zero[3] = {0, 0, 0};
    double mass, com[3], I[9] = {0};
    const struct hs__vvalue *moi;
    int r;
    if ((r = hs__get_float(b, n, ctx->env, "mass", 0, &mass)) < 0 ||
        (r = hs__get_vec3(b, n, ctx->env, "centerOfMass", zero, com)) < 0 ||
        (r = hs__get_numbers(b, n, ctx->env, "momentsOfInertia", HS__FT_MFFLOAT, &moi)) < 0)
        return r;
    if (mass < 0)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "Segment mass %g is negative", mass);
    if (moi) {
        if (moi->n != 9)
            return hs_diag_set(b->diag, -EINVAL, moi->file, moi->line, moi->column,
                               "momentsOfInertia has %u values (expected 9, a 3x3 matrix)", moi->n);
        for (int i = 0; i < 9; i++)
            I[i] = moi->items[i].num;
    }
    struct hs__link_acc *la = &b->links[ctx->link];
    if (!la->link.segment_name[0] && (r = hs__node_name(b, n, ctx->env, true, la->link.segment_name,
                                                        sizeof la->link.segment_name)) < 0)
        return r;
    bool massless = mass == 0;
    for (int i = 0; i < 9; i++)
        massless = massless && I[i] == 0;
    if (!massless) {
        if (!hs__affine_is_rigid(&ctx->M))
            return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                               "Segment with mass under a scaled Transform (expected rigid)");
        double c_link[3], I_link[9];
        hs__affine_apply(&ctx->M, com, c_link);
        hs__inertia_rotate(ctx->M.A, I, I_link);
        hs__mass_add(&la->mass, mass, c_link, I_link);
    }
    return hs__build_children(b, n, "children", ctx);
}
