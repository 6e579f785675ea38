/* OpenHRP sensors (attached to the enclosing Joint's link, pose in the link frame) and
 * ExtraJoint (closed loops; link names are resolved once all links exist). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "model_internal.h"

/* Each kind's own fields of its node, from its list in hilsim/sensor_kinds.h. */
enum field_type { FIELD_VEC3, FIELD_FLOAT, FIELD_INT, FIELD_STRING, FIELD_NAME };
struct field {
    const char *name; /* NULL: the list's end */
    enum field_type type;
    size_t off, size; /* in struct hs_sensor */
    double vec[3], num;
    const char *str;
};

/* where member m (of the common part, or u.<kind>.m of the kind's own) is, and its size; a
 * member not of type T does not build */
#define AT(m, T)                                                                                   \
    offsetof(struct hs_sensor, m) + _Generic(((struct hs_sensor *)0)->m, T : 0),                   \
        sizeof(((struct hs_sensor *)0)->m)
#define OWN(k, m, T) AT(u.k.m, T)
#define ROW_VEC3(k, f, m, d) {f, FIELD_VEC3, OWN(k, m, double *), .vec = HS__SENSOR_VEC3_##d},
#define ROW_MAX(k, f, m, d) {f, FIELD_VEC3, AT(m, double *), .vec = HS__SENSOR_VEC3_##d},
#define ROW_FLOAT(k, f, m, d) {f, FIELD_FLOAT, OWN(k, m, double), .num = d},
#define ROW_INT(k, f, m, d) {f, FIELD_INT, OWN(k, m, int32_t), .num = d},
#define ROW_STRING(k, f, m, d) {f, FIELD_STRING, OWN(k, m, char *), .str = d},
#define ROW_NAME(k, f, m, d) {f, FIELD_NAME, AT(m, char *), .str = d},
#define ROW(k, f, TYPE, m, d) ROW_##TYPE(k, f, m, d)
#define KIND_FIELDS(kind, NAME, node, role)                                                        \
    static const struct field fields_##kind[] = {HS_SENSOR_FIELDS_##kind(ROW, kind){.name = NULL}};
HS_SENSOR_KINDS(KIND_FIELDS)
#undef KIND_FIELDS
#define KIND_ENTRY(name, NAME, node, role) [HS_SENSOR_##NAME] = fields_##name,
static const struct field *const kind_fields[HS_SENSOR_TYPE_MAX] = {HS_SENSOR_KINDS(KIND_ENTRY)};
#undef KIND_ENTRY

void hs_sensor_kind_defaults(struct hs_sensor *s, enum hs_sensor_type type)
{
    s->type = type;
    memset(&s->u, 0, sizeof s->u);
    for (int i = 0; i < 3; i++)
        s->max[i] = -1;
    unsigned char *base = (unsigned char *)s;
    for (const struct field *f = kind_fields[type]; f->name; f++) {
        void *at = base + f->off;
        int32_t i = (int32_t)f->num;
        switch (f->type) {
        case FIELD_VEC3:
            memcpy(at, f->vec, sizeof f->vec);
            break;
        case FIELD_FLOAT:
            memcpy(at, &f->num, sizeof f->num);
            break;
        case FIELD_INT:
            memcpy(at, &i, sizeof i);
            break;
        case FIELD_STRING:
            snprintf((char *)at, f->size, "%s", f->str);
            break;
        case FIELD_NAME:
            break;
        }
    }
}

/* Whether the kind's node has a name field (VisionSensor): read when the node has no DEF name. */
static bool has_name_field(enum hs_sensor_type type)
{
    for (const struct field *f = kind_fields[type]; f->name; f++)
        if (f->type == FIELD_NAME)
            return true;
    return false;
}

static int read_fields(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                       struct hs_sensor *s)
{
    unsigned char *base = (unsigned char *)s;
    for (const struct field *f = kind_fields[s->type]; f->name; f++) {
        void *at = base + f->off;
        int r = 0;
        int32_t i;
        switch (f->type) {
        case FIELD_VEC3:
            r = hs__get_vec3(b, n, env, f->name, f->vec, (double *)at);
            break;
        case FIELD_FLOAT:
            r = hs__get_float(b, n, env, f->name, f->num, (double *)at);
            break;
        case FIELD_INT:
            if ((r = hs__get_int(b, n, env, f->name, (int32_t)f->num, &i)) == 0)
                memcpy(at, &i, sizeof i);
            break;
        case FIELD_STRING:
            if ((r = hs__get_string(b, n, env, f->name, (char *)at, f->size)) == 0 &&
                !((char *)at)[0])
                snprintf((char *)at, f->size, "%s", f->str);
            break;
        case FIELD_NAME:
            break;
        }
        if (r < 0)
            return r;
    }
    return 0;
}

int hs__build_sensor(struct hs__builder *b, const struct hs__vnode *n, enum hs_sensor_type type,
                     const struct hs__bctx *ctx)
{
    if (ctx->link < 0)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "%s outside any Joint (expected it in a Joint's children)",
                           hs_sensor_type_node(type));
    struct hs_sensor s = {.link = ctx->link};
    hs_sensor_kind_defaults(&s, type);
    int r;
    if ((r = hs__node_name(b, n, ctx->env, false, s.name, sizeof s.name)) < 0)
        return r;
    if (!s.name[0] && has_name_field(type) &&
        (r = hs__node_name(b, n, ctx->env, true, s.name, sizeof s.name)) < 0)
        return r;
    if ((r = hs__get_int(b, n, ctx->env, "sensorId", -1, &s.sensor_id)) < 0)
        return r;
    if (!s.name[0])
        snprintf(s.name, sizeof s.name, "%s%d", hs_sensor_type_node(type), s.sensor_id);
    static const double zero[3] = {0, 0, 0};
    double t[3], rot[4];
    if ((r = hs__get_vec3(b, n, ctx->env, "translation", zero, t)) < 0 ||
        (r = hs__get_rotation(b, n, ctx->env, "rotation", rot)) < 0)
        return r;
    if ((r = read_fields(b, n, ctx->env, &s)) < 0)
        return r;
    static const double one[3] = {1, 1, 1}, no_rot[4] = {0, 0, 1, 0};
    struct hs__affine local, unused, pose;
    hs__affine_vrml(t, rot, zero, one, no_rot, &local, &unused);
    hs__affine_mul(&ctx->M, &local, &pose);
    if (!hs__affine_is_rigid(&pose))
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "%s under a scaled Transform (expected a rigid sensor frame)",
                           hs_sensor_type_node(type));
    hs__affine_to_pose(&pose, &s.pose);
    if (hs__grow((void **)&b->sensors, &b->sensors_cap, b->nsensors + 1, sizeof s) < 0)
        return hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
    b->sensors[b->nsensors++] = s;
    /* Shapes under a sensor (a camera body) belong to the link like any other shape. */
    const struct hs__venv *e;
    if (!hs__vfield_get(n, "children", ctx->env, &e))
        return 0;
    struct hs__bctx c = *ctx;
    c.M = pose;
    return hs__build_children(b, n, "children", &c);
}

int hs__build_extra_joint(struct hs__builder *b, const struct hs__vnode *n,
                          const struct hs__bctx *ctx)
{
    struct hs__extra_acc x = {.line = n->line, .column = n->column};
    snprintf(x.file, sizeof x.file, "%s", n->file);
    static const double zero[3] = {0, 0, 0}, xaxis[3] = {1, 0, 0};
    char type[16];
    int r;
    if ((r = hs__node_name(b, n, ctx->env, false, x.ej.name, sizeof x.ej.name)) < 0 ||
        (r = hs__get_string(b, n, ctx->env, "link1Name", x.link1, sizeof x.link1)) < 0 ||
        (r = hs__get_string(b, n, ctx->env, "link2Name", x.link2, sizeof x.link2)) < 0 ||
        (r = hs__get_vec3(b, n, ctx->env, "link1LocalPos", zero, x.ej.pos1)) < 0 ||
        (r = hs__get_vec3(b, n, ctx->env, "link2LocalPos", zero, x.ej.pos2)) < 0 ||
        (r = hs__get_vec3(b, n, ctx->env, "jointAxis", xaxis, x.ej.axis)) < 0 ||
        (r = hs__get_string(b, n, ctx->env, "jointType", type, sizeof type)) < 0)
        return r;
    /* "xyz" (three constrained axes) is a ball joint; "xy" (two axes normal to jointAxis)
     * leaves motion along the axis: a piston. */
    if (strcmp(type, "ball") == 0 || strcmp(type, "xyz") == 0 || !type[0])
        x.ej.type = HS_EXTRA_BALL;
    else if (strcmp(type, "piston") == 0 || strcmp(type, "xy") == 0)
        x.ej.type = HS_EXTRA_PISTON;
    else
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "ExtraJoint jointType \"%s\": expected ball (xyz) or piston (xy)", type);
    double len = 0;
    for (int i = 0; i < 3; i++)
        len += x.ej.axis[i] * x.ej.axis[i];
    if (!(len > 1e-24))
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "ExtraJoint jointAxis is zero (expected a direction)");
    for (int i = 0; i < 3; i++)
        x.ej.axis[i] /= sqrt(len);
    if (!x.ej.name[0])
        snprintf(x.ej.name, sizeof x.ej.name, "EXTRA%u", b->nextras);
    if (hs__grow((void **)&b->extras, &b->extras_cap, b->nextras + 1, sizeof x) < 0)
        return hs_diag_set(b->diag, -ENOMEM, n->file, n->line, n->column, "out of memory");
    b->extras[b->nextras++] = x;
    return 0;
}
