/* Field types of the built-in nodes the loader interprets, and the type check of one value.
 * Nodes without a schema here (NavigationInfo, ImageTexture, ...) are parsed but not checked. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "hilsim/sensor_kinds.h"
#include "vrml_internal.h"

static const char *const type_names[HS__FT_MAX] = {
    [HS__FT_UNKNOWN] = "?",
    [HS__FT_SFBOOL] = "SFBool",
    [HS__FT_SFCOLOR] = "SFColor",
    [HS__FT_SFFLOAT] = "SFFloat",
    [HS__FT_SFIMAGE] = "SFImage",
    [HS__FT_SFINT32] = "SFInt32",
    [HS__FT_SFNODE] = "SFNode",
    [HS__FT_SFROTATION] = "SFRotation",
    [HS__FT_SFSTRING] = "SFString",
    [HS__FT_SFTIME] = "SFTime",
    [HS__FT_SFVEC2F] = "SFVec2f",
    [HS__FT_SFVEC3F] = "SFVec3f",
    [HS__FT_MFCOLOR] = "MFColor",
    [HS__FT_MFFLOAT] = "MFFloat",
    [HS__FT_MFINT32] = "MFInt32",
    [HS__FT_MFNODE] = "MFNode",
    [HS__FT_MFROTATION] = "MFRotation",
    [HS__FT_MFSTRING] = "MFString",
    [HS__FT_MFTIME] = "MFTime",
    [HS__FT_MFVEC2F] = "MFVec2f",
    [HS__FT_MFVEC3F] = "MFVec3f",
};

enum hs__vftype hs__vftype_parse(const char *name)
{
    for (int t = 1; t < HS__FT_MAX; t++)
        if (strcmp(type_names[t], name) == 0)
            return (enum hs__vftype)t;
    return HS__FT_UNKNOWN;
}

const char *hs__vftype_name(enum hs__vftype t)
{
    return (unsigned)t < HS__FT_MAX ? type_names[t] : "?";
}

#define F(n, t)                                                                                    \
    {                                                                                              \
        n, HS__FT_##t                                                                              \
    }
#define GROUPING                                                                                   \
    F("addChildren", MFNODE), F("removeChildren", MFNODE), F("children", MFNODE),                  \
        F("bboxCenter", SFVEC3F), F("bboxSize", SFVEC3F)
#define XFORM                                                                                      \
    F("center", SFVEC3F), F("rotation", SFROTATION), F("scale", SFVEC3F),                          \
        F("scaleOrientation", SFROTATION), F("translation", SFVEC3F)
#define SENSOR_POSE F("translation", SFVEC3F), F("rotation", SFROTATION), F("sensorId", SFINT32)

static const struct hs__vschema_field s_transform[] = {GROUPING, XFORM};
static const struct hs__vschema_field s_group[] = {GROUPING};
static const struct hs__vschema_field s_collision[] = {GROUPING, F("collide", SFBOOL),
                                                       F("proxy", SFNODE)};
static const struct hs__vschema_field s_billboard[] = {GROUPING, F("axisOfRotation", SFVEC3F)};
static const struct hs__vschema_field s_anchor[] = {GROUPING, F("description", SFSTRING),
                                                    F("parameter", MFSTRING), F("url", MFSTRING)};
static const struct hs__vschema_field s_switch[] = {F("choice", MFNODE), F("whichChoice", SFINT32)};
static const struct hs__vschema_field s_lod[] = {F("level", MFNODE), F("center", SFVEC3F),
                                                 F("range", MFFLOAT)};
static const struct hs__vschema_field s_shape[] = {F("appearance", SFNODE), F("geometry", SFNODE)};
static const struct hs__vschema_field s_box[] = {F("size", SFVEC3F)};
static const struct hs__vschema_field s_sphere[] = {F("radius", SFFLOAT)};
static const struct hs__vschema_field s_cylinder[] = {F("bottom", SFBOOL), F("height", SFFLOAT),
                                                      F("radius", SFFLOAT), F("side", SFBOOL),
                                                      F("top", SFBOOL)};
static const struct hs__vschema_field s_cone[] = {F("bottomRadius", SFFLOAT), F("height", SFFLOAT),
                                                  F("side", SFBOOL), F("bottom", SFBOOL)};
static const struct hs__vschema_field s_ifs[] = {
    F("color", SFNODE),
    F("coord", SFNODE),
    F("normal", SFNODE),
    F("texCoord", SFNODE),
    F("ccw", SFBOOL),
    F("colorIndex", MFINT32),
    F("colorPerVertex", SFBOOL),
    F("convex", SFBOOL),
    F("coordIndex", MFINT32),
    F("creaseAngle", SFFLOAT),
    F("normalIndex", MFINT32),
    F("normalPerVertex", SFBOOL),
    F("solid", SFBOOL),
    F("texCoordIndex", MFINT32),
};
static const struct hs__vschema_field s_extrusion[] = {
    F("beginCap", SFBOOL),        F("ccw", SFBOOL),           F("convex", SFBOOL),
    F("creaseAngle", SFFLOAT),    F("crossSection", MFVEC2F), F("endCap", SFBOOL),
    F("orientation", MFROTATION), F("scale", MFVEC2F),        F("solid", SFBOOL),
    F("spine", MFVEC3F),
};
static const struct hs__vschema_field s_coordinate[] = {F("point", MFVEC3F)};
static const struct hs__vschema_field s_appearance[] = {F("material", SFNODE), F("texture", SFNODE),
                                                        F("textureTransform", SFNODE)};
static const struct hs__vschema_field s_material[] = {
    F("ambientIntensity", SFFLOAT), F("diffuseColor", SFCOLOR),  F("emissiveColor", SFCOLOR),
    F("shininess", SFFLOAT),        F("specularColor", SFCOLOR), F("transparency", SFFLOAT)};
static const struct hs__vschema_field s_inline[] = {F("url", MFSTRING), F("bboxCenter", SFVEC3F),
                                                    F("bboxSize", SFVEC3F)};

/* OpenHRP nodes used without a PROTO declaration in the file (see openhrp-model-format). */
static const struct hs__vschema_field s_humanoid[] = {
    F("bboxCenter", SFVEC3F),  F("bboxSize", SFVEC3F),  XFORM,
    F("humanoidBody", MFNODE), F("info", MFSTRING),     F("joints", MFNODE),
    F("name", SFSTRING),       F("segments", MFNODE),   F("sites", MFNODE),
    F("version", SFSTRING),    F("viewpoints", MFNODE),
};
static const struct hs__vschema_field s_joint[] = {
    XFORM,
    F("children", MFNODE),
    F("llimit", MFFLOAT),
    F("lvlimit", MFFLOAT),
    F("ulimit", MFFLOAT),
    F("uvlimit", MFFLOAT),
    F("limitOrientation", SFROTATION),
    F("name", SFSTRING),
    F("stiffness", MFFLOAT),
    F("jointType", SFSTRING),
    F("jointId", SFINT32),
    F("jointAxis", UNKNOWN), /* SFVec3f, or the OpenHRP 2 string "X", "Y", "Z" */
    F("gearRatio", SFFLOAT),
    F("gearEfficiency", SFFLOAT),
    F("rotorInertia", SFFLOAT),
    F("rotorResistor", SFFLOAT),
    F("torqueConst", SFFLOAT),
    F("encoderPulse", SFFLOAT),
    F("climit", MFFLOAT),
};
static const struct hs__vschema_field s_segment[] = {
    GROUPING,
    F("centerOfMass", SFVEC3F),
    F("coord", SFNODE),
    F("displacers", MFNODE),
    F("mass", SFFLOAT),
    F("momentsOfInertia", MFFLOAT),
    F("name", SFSTRING),
};
static const struct hs__vschema_field s_extra_joint[] = {
    F("link1Name", SFSTRING),    F("link2Name", SFSTRING), F("link1LocalPos", SFVEC3F),
    F("link2LocalPos", SFVEC3F), F("jointType", SFSTRING), F("jointAxis", SFVEC3F),
};
/* the sensor kinds' nodes: the pose, children, and each kind's own fields (its list in
 * hilsim/sensor_kinds.h) */
#define SCHEMA_VEC3 SFVEC3F
#define SCHEMA_MAX SFVEC3F
#define SCHEMA_FLOAT SFFLOAT
#define SCHEMA_INT SFINT32
#define SCHEMA_STRING SFSTRING
#define SCHEMA_NAME SFSTRING
#define SCHEMA_ROW_(f, t) F(f, t),
#define SCHEMA_ROW(k, f, TYPE, m, d) SCHEMA_ROW_(f, SCHEMA_##TYPE)
#define SENSOR_SCHEMA(name, NAME, node, role)                                                      \
    static const struct hs__vschema_field s_##name[] = {                                           \
        SENSOR_POSE, F("children", MFNODE), HS_SENSOR_FIELDS_##name(SCHEMA_ROW, name)};
HS_SENSOR_KINDS(SENSOR_SCHEMA)
#undef SENSOR_SCHEMA
#undef F

#define S(name, arr)                                                                               \
    {                                                                                              \
        name, arr, sizeof arr / sizeof arr[0]                                                      \
    }
static const struct {
    const char *type;
    const struct hs__vschema_field *fields;
    uint32_t n;
} schemas[] = {
    S("Transform", s_transform),
    S("Group", s_group),
    S("Collision", s_collision),
    S("Billboard", s_billboard),
    S("Anchor", s_anchor),
    S("Switch", s_switch),
    S("LOD", s_lod),
    S("Shape", s_shape),
    S("Box", s_box),
    S("Sphere", s_sphere),
    S("Cylinder", s_cylinder),
    S("Cone", s_cone),
    S("IndexedFaceSet", s_ifs),
    S("Extrusion", s_extrusion),
    S("Coordinate", s_coordinate),
    S("Appearance", s_appearance),
    S("Material", s_material),
    S("Inline", s_inline),
    S("Humanoid", s_humanoid),
    S("Joint", s_joint),
    S("Segment", s_segment),
    S("ExtraJoint", s_extra_joint),
#define SENSOR_ENTRY(name, NAME, node, role) S(node, s_##name),
    HS_SENSOR_KINDS(SENSOR_ENTRY)
#undef SENSOR_ENTRY
        S("GyroSensor", s_gyro), /* an old alias of Gyro (model_build.c) */
};
#undef S

const struct hs__vschema_field *hs__vschema_find(const char *node_type, uint32_t *ret_n)
{
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
        if (strcmp(schemas[i].type, node_type) == 0) {
            *ret_n = schemas[i].n;
            return schemas[i].fields;
        }
    return NULL;
}

/* Components per element and the item kind they need. */
static void elem_shape(enum hs__vftype t, uint32_t *ret_comp, enum hs__vitem_kind *ret_kind,
                       bool *ret_int, bool *ret_mf)
{
    *ret_int = false;
    *ret_kind = HS__VI_NUM;
    *ret_mf = t >= HS__FT_MFCOLOR;
    switch (t) {
    case HS__FT_SFBOOL:
        *ret_comp = 1;
        *ret_kind = HS__VI_BOOL;
        break;
    case HS__FT_SFSTRING:
    case HS__FT_MFSTRING:
        *ret_comp = 1;
        *ret_kind = HS__VI_STR;
        break;
    case HS__FT_SFINT32:
    case HS__FT_MFINT32:
    case HS__FT_SFIMAGE:
        *ret_comp = 1;
        *ret_int = true;
        break;
    case HS__FT_SFCOLOR:
    case HS__FT_MFCOLOR:
    case HS__FT_SFVEC3F:
    case HS__FT_MFVEC3F:
        *ret_comp = 3;
        break;
    case HS__FT_SFROTATION:
    case HS__FT_MFROTATION:
        *ret_comp = 4;
        break;
    case HS__FT_SFVEC2F:
    case HS__FT_MFVEC2F:
        *ret_comp = 2;
        break;
    default:
        *ret_comp = 1;
        break;
    }
}

static const char *kind_word(enum hs__vitem_kind k)
{
    switch (k) {
    case HS__VI_NUM:
        return "a number";
    case HS__VI_STR:
        return "a string";
    case HS__VI_BOOL:
        return "TRUE or FALSE";
    default:
        return "NULL";
    }
}

int hs__vvalue_check(const struct hs__vvalue *v, enum hs__vftype t, const char *field,
                     const char *node_type, struct hs_diag *diag)
{
    if (t == HS__FT_UNKNOWN || v->kind == HS__VV_IS)
        return 0;
    const char *tn = hs__vftype_name(t);
    if (t == HS__FT_SFNODE || t == HS__FT_MFNODE) {
        bool ok;
        if (v->kind == HS__VV_NODES)
            ok = t == HS__FT_MFNODE ? (v->bracketed || v->n == 1) : (!v->bracketed && v->n == 1);
        else
            ok = (v->n == 0 && v->bracketed && t == HS__FT_MFNODE) ||
                 (v->n == 1 && !v->bracketed && v->items[0].kind == HS__VI_NULL);
        if (!ok)
            return hs_diag_set(diag, -EINVAL, v->file, v->line, v->column,
                               "field '%s' of %s expects %s (a node%s)", field, node_type, tn,
                               t == HS__FT_MFNODE ? " or [ nodes ]" : " or NULL");
        return 0;
    }
    if (v->kind != HS__VV_SCALARS)
        return hs_diag_set(diag, -EINVAL, v->file, v->line, v->column,
                           "field '%s' of %s expects %s, got a node", field, node_type, tn);
    uint32_t comp;
    enum hs__vitem_kind kind;
    bool is_int, mf;
    elem_shape(t, &comp, &kind, &is_int, &mf);
    bool count_ok;
    if (t == HS__FT_SFIMAGE)
        count_ok = !v->bracketed && v->n >= 3;
    else if (!mf)
        count_ok = !v->bracketed && v->n == comp;
    else
        count_ok = v->bracketed ? v->n % comp == 0 : v->n == comp;
    if (!count_ok)
        return hs_diag_set(diag, -EINVAL, v->file, v->line, v->column,
                           "field '%s' of %s expects %s (%s%u %s%s), got %u value%s%s", field,
                           node_type, tn, mf ? "[ ] of " : "", comp,
                           kind == HS__VI_STR    ? "string"
                           : kind == HS__VI_BOOL ? "bool"
                                                 : "number",
                           mf ? " each" : (comp > 1 ? "s" : ""), v->n, v->n == 1 ? "" : "s",
                           v->bracketed && !mf ? " in [ ]" : "");
    for (uint32_t i = 0; i < v->n; i++) {
        const struct hs__vitem *it = &v->items[i];
        if (it->kind != kind)
            return hs_diag_set(diag, -EINVAL, v->file, it->line, it->column,
                               "field '%s' of %s expects %s: %s, got %s", field, node_type, tn,
                               kind_word(kind), kind_word(it->kind));
        if (is_int && (it->num != floor(it->num) || fabs(it->num) > 2147483647.0))
            return hs_diag_set(diag, -EINVAL, v->file, it->line, it->column,
                               "field '%s' of %s expects %s: an integer, got %g", field, node_type,
                               tn, it->num);
    }
    return 0;
}
