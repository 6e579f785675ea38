/* The walk over the node tree: dispatch by node type name, Transform and grouping nodes,
 * the Humanoid root, and expansion of PROTOs that are not OpenHRP nodes (their body is walked
 * with IS resolved against the instance). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

int hs__grow(void **data, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > (1u << 30))
            return -ENOMEM;
        ncap *= 2;
    }
    void *nd = realloc(*data, (size_t)ncap * elem);
    if (!nd)
        return -ENOMEM;
    *data = nd;
    *cap = ncap;
    return 0;
}

int hs__builder_warn(struct hs__builder *b, const char *file, int line, int column, const char *fmt,
                     ...)
{
    if (b->nwarnings >= 1000)
        return 0; /* enough to see the pattern */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *s = NULL;
    int n = column > 0 && line > 0 ? asprintf(&s, "%s:%d:%d: %s", file, line, column, msg)
            : line > 0             ? asprintf(&s, "%s:%d: %s", file, line, msg)
                                   : asprintf(&s, "%s: %s", file, msg);
    if (n < 0)
        return -ENOMEM;
    for (uint32_t i = 0; i < b->nwarnings; i++)
        if (strcmp(b->warnings[i], s) == 0) { /* a file inlined twice says it once */
            free(s);
            return 0;
        }
    if (hs__grow((void **)&b->warnings, &b->warnings_cap, b->nwarnings + 1, sizeof(char *)) < 0) {
        free(s);
        return -ENOMEM;
    }
    b->warnings[b->nwarnings++] = s;
    return 0;
}

int hs__builder_warn_doc(struct hs__builder *b, const struct hs__vdoc *doc)
{
    for (uint32_t i = 0; i < doc->nwarnings; i++) {
        const struct hs__vwarning *w = &doc->warnings[i];
        int r = hs__builder_warn(b, doc->file, w->line, w->column, "%s", w->msg);
        if (r < 0)
            return r;
    }
    return 0;
}

void hs__builder_free(struct hs__builder *b)
{
    free(b->links);
    for (uint32_t i = 0; i < b->ngeoms; i++)
        if (b->geoms[i].geom.type == HS_GEOM_MESH) {
            free(b->geoms[i].geom.u.mesh.vertices);
            free(b->geoms[i].geom.u.mesh.indices);
        }
    free(b->geoms);
    free(b->palette.items);
    free(b->sensors);
    free(b->extras);
    for (uint32_t i = 0; i < b->nwarnings; i++)
        free(b->warnings[i]);
    free(b->warnings);
    for (uint32_t i = 0; i < b->ndocs; i++)
        hs__vrml_doc_free(b->docs[i]);
    free(b->docs);
    for (int i = 0; i < b->ninline; i++)
        free(b->inline_stack[i]);
    memset(b, 0, sizeof *b);
}

int hs__build_children(struct hs__builder *b, const struct hs__vnode *node, const char *field,
                       const struct hs__bctx *ctx)
{
    struct hs__vnode *const *nodes;
    uint32_t n;
    const struct hs__venv *env;
    int r = hs__get_nodes(b, node, ctx->env, field, &nodes, &n, &env);
    struct hs__bctx c = *ctx;
    c.env = env;
    for (uint32_t i = 0; r == 0 && i < n; i++)
        r = hs__build_visit(b, nodes[i], &c);
    return r;
}

/* Reads the five Transform fields (with PROTO defaults) into rigid and scale parts. */
static int read_transform(struct hs__builder *b, const struct hs__vnode *n,
                          const struct hs__venv *env, struct hs__affine *ret_rigid,
                          struct hs__affine *ret_scale)
{
    static const double zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    double t[3], c[3], s[3], rot[4], so[4];
    int r;
    if ((r = hs__get_vec3(b, n, env, "translation", zero, t)) < 0 ||
        (r = hs__get_vec3(b, n, env, "center", zero, c)) < 0 ||
        (r = hs__get_vec3(b, n, env, "scale", one, s)) < 0 ||
        (r = hs__get_rotation(b, n, env, "rotation", rot)) < 0 ||
        (r = hs__get_rotation(b, n, env, "scaleOrientation", so)) < 0)
        return r;
    hs__affine_vrml(t, rot, c, s, so, ret_rigid, ret_scale);
    return 0;
}

int hs__read_transform(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                       struct hs__affine *ret_rigid, struct hs__affine *ret_scale)
{
    return read_transform(b, n, env, ret_rigid, ret_scale);
}

static int visit_transform(struct hs__builder *b, const struct hs__vnode *n,
                           const struct hs__bctx *ctx, const char *children_field)
{
    struct hs__affine rigid, scale, full;
    int r = read_transform(b, n, ctx->env, &rigid, &scale);
    if (r < 0)
        return r;
    hs__affine_mul(&rigid, &scale, &full);
    struct hs__bctx c = *ctx;
    hs__affine_mul(&ctx->M, &full, &c.M);
    return hs__build_children(b, n, children_field, &c);
}

static int visit_humanoid(struct hs__builder *b, const struct hs__vnode *n,
                          const struct hs__bctx *ctx)
{
    if (b->have_humanoid)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "second Humanoid node (a model file holds one Humanoid)");
    if (ctx->link >= 0)
        return hs_diag_set(b->diag, -EINVAL, n->file, n->line, n->column,
                           "Humanoid inside a Joint (expected Humanoid at the top)");
    b->have_humanoid = true;
    char name[HS_NAME_MAX];
    int r = hs__node_name(b, n, ctx->env, true, name, sizeof name);
    if (r < 0)
        return r;
    if (name[0])
        memcpy(b->name, name, sizeof name);
    /* Viewpoints, and the joints/segments lists (USEs of nodes in humanoidBody), add nothing. */
    return visit_transform(b, n, ctx, "humanoidBody");
}

static int visit_switch(struct hs__builder *b, const struct hs__vnode *n,
                        const struct hs__bctx *ctx, const char *field, int32_t which_default)
{
    int32_t which = which_default;
    int r = 0;
    if (strcmp(field, "choice") == 0 &&
        (r = hs__get_int(b, n, ctx->env, "whichChoice", -1, &which)) < 0)
        return r;
    struct hs__vnode *const *nodes;
    uint32_t cnt;
    const struct hs__venv *env;
    if ((r = hs__get_nodes(b, n, ctx->env, field, &nodes, &cnt, &env)) < 0)
        return r;
    if (which < 0 || (uint32_t)which >= cnt)
        return 0;
    struct hs__bctx c = *ctx;
    c.env = env;
    return hs__build_visit(b, nodes[which], &c);
}

static int visit_proto_body(struct hs__builder *b, const struct hs__vnode *n,
                            const struct hs__bctx *ctx)
{
    if (n->proto->external)
        return hs__builder_warn(b, n->file, n->line, n->column,
                                "instance of EXTERNPROTO %s skipped (its body is not loaded)",
                                n->type);
    struct hs__venv env = {.inst = n, .parent = ctx->env};
    struct hs__bctx c = *ctx;
    c.env = &env;
    int r = 0;
    for (uint32_t i = 0; r == 0 && i < n->proto->nbody; i++)
        r = hs__build_visit(b, n->proto->body[i], &c);
    return r;
}

/* Choreonoid's Surface PROTO wraps a link's shapes as two MFNode fields: `visual` (what its body,
 * a Group, draws) and `collision` (what collides; GR001 gives each dense foot mesh a thin box
 * there). A model's geoms are what collides, as a URDF's <collision>, so an instance that gives
 * collision nodes contributes those and not its visual ones; one that gives none collides its
 * visual shapes, as Choreonoid does. Only a PROTO named Surface declaring both fields as MFNode
 * is read this way; any other is expanded as written. */
static bool is_surface(const struct hs__vnode *n)
{
    if (!n->proto || n->proto->external || strcmp(n->type, "Surface") != 0)
        return false;
    int found = 0;
    for (uint32_t i = 0; i < n->proto->nifaces; i++) {
        const struct hs__viface *f = &n->proto->ifaces[i];
        if (f->type == HS__FT_MFNODE &&
            (strcmp(f->name, "visual") == 0 || strcmp(f->name, "collision") == 0))
            found++;
    }
    return found == 2;
}

static int visit_surface(struct hs__builder *b, const struct hs__vnode *n,
                         const struct hs__bctx *ctx)
{
    struct hs__vnode *const *nodes;
    uint32_t count;
    const struct hs__venv *env;
    int r = hs__get_nodes(b, n, ctx->env, "collision", &nodes, &count, &env);
    if (r < 0)
        return r;
    return hs__build_children(b, n, count ? "collision" : "visual", ctx);
}

int hs__build_visit(struct hs__builder *b, const struct hs__vnode *n, const struct hs__bctx *ctx)
{
    if (++b->visits > HS_MODEL_MAX_VISITS)
        return hs_diag_set(b->diag, -E2BIG, n->file, n->line, n->column,
                           "model too large: more than %d node visits (DEF/USE explosion?)",
                           HS_MODEL_MAX_VISITS);
    if (ctx->depth > HS_VRML_MAX_DEPTH)
        return hs_diag_set(b->diag, -E2BIG, n->file, n->line, n->column,
                           "nodes nested deeper than %d levels", HS_VRML_MAX_DEPTH);
    struct hs__bctx c = *ctx;
    c.depth++;
    const char *t = n->type;
    if (strcmp(t, "Humanoid") == 0)
        return visit_humanoid(b, n, &c);
    if (strcmp(t, "Joint") == 0)
        return hs__build_joint(b, n, &c);
    if (strcmp(t, "Segment") == 0)
        return hs__build_segment(b, n, &c);
    if (strcmp(t, "ExtraJoint") == 0)
        return hs__build_extra_joint(b, n, &c);
    /* Sensor nodes by the registry (hilsim/sensor_kinds.h); "GyroSensor" is an old alias. */
    for (int k = 0; k < HS_SENSOR_TYPE_MAX; k++)
        if (strcmp(t, hs_sensor_type_node((enum hs_sensor_type)k)) == 0)
            return hs__build_sensor(b, n, (enum hs_sensor_type)k, &c);
    if (strcmp(t, "GyroSensor") == 0)
        return hs__build_sensor(b, n, HS_SENSOR_GYRO, &c);
    if (strcmp(t, "Transform") == 0)
        return visit_transform(b, n, &c, "children");
    if (strcmp(t, "Group") == 0 || strcmp(t, "Collision") == 0 || strcmp(t, "Billboard") == 0 ||
        strcmp(t, "Anchor") == 0)
        return hs__build_children(b, n, "children", &c);
    if (strcmp(t, "Switch") == 0)
        return visit_switch(b, n, &c, "choice", -1);
    if (strcmp(t, "LOD") == 0)
        return visit_switch(b, n, &c, "level", 0); /* the most detailed level */
    if (strcmp(t, "Shape") == 0)
        return hs__build_shape(b, n, &c);
    if (strcmp(t, "Inline") == 0)
        return hs__build_inline(b, n, &c);
    if (is_surface(n))
        return visit_surface(b, n, &c);
    if (n->proto)
        return visit_proto_body(b, n, &c);
    return 0; /* Viewpoint, NavigationInfo, Background, lights, sensors of VRML: nothing here */
}
