/* Public entry points: load from a file or a buffer, pack the builder's result into one
 * hs_model (all or nothing), free, and the lookup helpers. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model_format.h"
#include "model_internal.h"

static int fail_oom(struct hs_diag *diag, const char *path)
{
    return hs_diag_set(diag, -ENOMEM, path, 0, 0, "out of memory");
}

static int resolve_extras(struct hs__builder *b, struct hs_model *m)
{
    for (uint32_t i = 0; i < b->nextras; i++) {
        struct hs__extra_acc *x = &b->extras[i];
        int l1 = hs_model_find_link(m, x->link1), l2 = hs_model_find_link(m, x->link2);
        if (l1 < 0 || l2 < 0)
            return hs_diag_set(b->diag, -EINVAL, x->file, x->line, x->column,
                               "ExtraJoint %s: %s \"%s\" names no Joint", x->ej.name,
                               l1 < 0 ? "link1Name" : "link2Name", l1 < 0 ? x->link1 : x->link2);
        if (l1 == l2)
            return hs_diag_set(b->diag, -EINVAL, x->file, x->line, x->column,
                               "ExtraJoint %s connects link %s to itself", x->ej.name, x->link1);
        x->ej.link1 = l1;
        x->ej.link2 = l2;
        m->extra_joints[i] = x->ej;
    }
    return 0;
}

/* Gaps in jointId: each run of unused ids is named once, at the Joint whose id comes right
 * after it (that is where the numbering jumps). */
static int check_joint_ids(struct hs__builder *b, struct hs_model *m)
{
    int32_t max = -1;
    for (uint32_t i = 0; i < m->nlinks; i++)
        if (m->links[i].joint_id > max)
            max = m->links[i].joint_id;
    m->njoint_ids = (uint32_t)(max + 1);
    for (int32_t id = 0; id < max; id++) {
        if (hs_model_link_of_joint_id(m, id) >= 0)
            continue;
        int32_t end = id;
        while (hs_model_link_of_joint_id(m, end + 1) < 0)
            end++; /* ends at max - 1: max is used */
        int l = hs_model_link_of_joint_id(m, end + 1);
        const struct hs__link_acc *la = &b->links[l];
        char ids[48];
        if (end > id)
            snprintf(ids, sizeof ids, "jointIds %d..%d are", id, end);
        else
            snprintf(ids, sizeof ids, "jointId %d is", id);
        int r = hs__builder_warn(b, la->file, la->link.source_line, la->column,
                                 "%s not used: Joint %s has jointId %d (ids should be 0..%d "
                                 "without gaps)",
                                 ids, la->link.name, end + 1, max);
        if (r < 0)
            return r;
        id = end;
    }
    return 0;
}

static bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static bool pose_finite(const struct hs_pose *p)
{
    return all_finite(p->p, 3) && all_finite(p->R, 9);
}

static bool geom_finite(const struct hs_geom *g)
{
    if (!pose_finite(&g->pose))
        return false;
    switch (g->type) {
    case HS_GEOM_BOX:
        return all_finite(g->u.box.size, 3);
    case HS_GEOM_SPHERE:
        return isfinite(g->u.sphere.radius);
    case HS_GEOM_CYLINDER:
        return isfinite(g->u.cylinder.radius) && isfinite(g->u.cylinder.height);
    case HS_GEOM_CONE:
        return isfinite(g->u.cone.bottom_radius) && isfinite(g->u.cone.height);
    default:
        return all_finite(g->u.mesh.vertices, 3 * (size_t)g->u.mesh.nvertices);
    }
}

/* Each number in the file is finite, but sums, products of nested transforms and
 * parallel-axis terms can overflow (translation 1e308 twice); the physics must never see that. */
static int check_finite_masses(struct hs__builder *b, const struct hs_model *m)
{
    for (uint32_t g = 0; g < b->ngeoms; g++) {
        if (b->geoms[g].link < 0 || geom_finite(&b->geoms[g].geom))
            continue;
        const struct hs__link_acc *la = &b->links[b->geoms[g].link];
        return hs_diag_set(b->diag, -EINVAL, la->file, la->link.source_line, la->column,
                           "link %s: a shape's position or size is not finite (too large to "
                           "combine)",
                           la->link.name);
    }
    for (uint32_t s = 0; s < m->nsensors; s++) {
        if (pose_finite(&m->sensors[s].pose))
            continue;
        const struct hs__link_acc *la = &b->links[m->sensors[s].link];
        return hs_diag_set(b->diag, -EINVAL, la->file, la->link.source_line, la->column,
                           "sensor %s of link %s: its position is not finite (too large to "
                           "combine)",
                           m->sensors[s].name, la->link.name);
    }
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        if (!pose_finite(&l->origin) || !all_finite(l->axis, 3))
            return hs_diag_set(
                b->diag, -EINVAL, b->links[i].file, l->source_line, b->links[i].column,
                "link %s: its position is not finite (too large to combine)", l->name);
        bool ok = isfinite(l->mass);
        for (int k = 0; k < 3; k++)
            ok = ok && isfinite(l->com[k]);
        for (int k = 0; k < 9; k++)
            ok = ok && isfinite(l->inertia[k]);
        if (!ok)
            return hs_diag_set(b->diag, -EINVAL, b->links[i].file, l->source_line,
                               b->links[i].column,
                               "link %s: its Segments' combined mass, centre of mass or inertia "
                               "is not finite (too large to add up)",
                               l->name);
    }
    return 0;
}

/* A link that can move needs mass and inertia; the physics gives such links a small stand-in
 * (src/world/world_mass.c), which a user should know about. A fixed root (the floor, a bolted
 * base) never moves, so it needs neither. */
static int check_masses(struct hs__builder *b, const struct hs_model *m)
{
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        const struct hs__link_acc *la = &b->links[i];
        if (l->parent < 0 && l->joint_type == HS_JOINT_FIXED)
            continue;
        bool zero_inertia = true;
        for (int k = 0; k < 9; k++)
            zero_inertia = zero_inertia && l->inertia[k] == 0;
        /* A fixed link is merged into its parent's body by default (physics.merge_fixed_links,
         * src/world/world_merge.c): there a massless link adds nothing and a zero tensor is a
         * point mass, so the stand-in applies only when it keeps a body of its own. */
        const char *unless = l->joint_type == HS_JOINT_FIXED
                                 ? " unless it is merged into its parent's body "
                                   "(physics.merge_fixed_links)"
                                 : "";
        int r = 0;
        if (l->mass == 0)
            r = hs__builder_warn(b, la->file, l->source_line, la->column,
                                 "link %s has zero mass (no Segment with mass); the simulation "
                                 "gives it 1 g%s",
                                 l->name, unless);
        else if (zero_inertia)
            r = hs__builder_warn(b, la->file, l->source_line, la->column,
                                 "link %s (%g kg) has zero momentsOfInertia; the simulation gives "
                                 "it the inertia of a 1 cm sphere%s",
                                 l->name, l->mass, unless);
        if (r < 0)
            return r;
    }
    return 0;
}

/* Links point at the model's path, or at one copy per Inlined file. */
static int set_source_file(struct hs_model *m, struct hs_link *l, const char *file)
{
    if (!file || strcmp(file, m->path) == 0) {
        l->source_file = m->path;
        return 0;
    }
    for (uint32_t i = 0; i < m->nsource_files; i++)
        if (strcmp(m->source_files[i], file) == 0) {
            l->source_file = m->source_files[i];
            return 0;
        }
    char **nf = realloc(m->source_files, (m->nsource_files + 1) * sizeof *nf);
    if (!nf)
        return -ENOMEM;
    m->source_files = nf;
    if (!(nf[m->nsource_files] = strdup(file)))
        return -ENOMEM;
    l->source_file = nf[m->nsource_files++];
    return 0;
}

/* Moves everything out of the builder into a fresh model; geoms grouped by link. */
static int pack(struct hs__builder *b, const char *path, struct hs_model **ret_model)
{
    if (b->nlinks == 0)
        return hs_diag_set(b->diag, -EINVAL, path, 0, 0,
                           "no Joint node (expected an OpenHRP model: Humanoid with Joints)");
    struct hs_model *m = calloc(1, sizeof *m);
    if (!m)
        return fail_oom(b->diag, path);
    m->path = strdup(path);
    m->links = calloc(b->nlinks, sizeof *m->links);
    m->geoms = calloc(b->ngeoms ? b->ngeoms : 1, sizeof *m->geoms);
    m->sensors = calloc(b->nsensors ? b->nsensors : 1, sizeof *m->sensors);
    m->extra_joints = calloc(b->nextras ? b->nextras : 1, sizeof *m->extra_joints);
    int r;
    if (!m->path || !m->links || !m->geoms || !m->sensors || !m->extra_joints) {
        r = fail_oom(b->diag, path);
        goto fail;
    }
    m->nlinks = b->nlinks;
    for (uint32_t i = 0; i < b->nlinks; i++) {
        struct hs_link *l = &m->links[i];
        *l = b->links[i].link;
        l->mass = b->links[i].mass.mass;
        memcpy(l->com, b->links[i].mass.com, sizeof l->com);
        memcpy(l->inertia, b->links[i].mass.inertia, sizeof l->inertia);
    }
    for (uint32_t i = 0; i < b->nlinks; i++)
        if (set_source_file(m, &m->links[i], b->links[i].file) < 0) {
            r = fail_oom(b->diag, path);
            goto fail;
        }
    m->nsensors = b->nsensors;
    if (b->nsensors)
        memcpy(m->sensors, b->sensors, b->nsensors * sizeof *b->sensors);
    m->nextra_joints = b->nextras;
    if ((r = resolve_extras(b, m)) < 0 || (r = check_finite_masses(b, m)) < 0)
        goto fail;
    if (check_joint_ids(b, m) < 0 || check_masses(b, m) < 0) { /* they fail only for memory */
        r = fail_oom(b->diag, path);
        goto fail;
    }
    /* Stable grouping by link: counting sort keeps file order inside a link. */
    uint32_t k = 0;
    for (uint32_t l = 0; l < m->nlinks; l++) {
        m->links[l].geom_first = k;
        for (uint32_t g = 0; g < b->ngeoms; g++)
            if (b->geoms[g].link == (int32_t)l)
                m->geoms[k++] = b->geoms[g].geom;
        m->links[l].geom_count = k - m->links[l].geom_first;
    }
    m->ngeoms = k;
    memcpy(m->name, b->name, sizeof m->name);
    m->warnings = b->warnings;
    m->nwarnings = b->nwarnings;
    m->materials = b->palette.items;
    m->nmaterials = b->palette.n;
    /* Ownership of meshes, warnings and colours moved to the model. */
    b->ngeoms = 0;
    b->warnings = NULL;
    b->nwarnings = 0;
    b->palette = (struct hs__palette){0};
    *ret_model = m;
    return 0;
fail:
    m->nwarnings = 0;
    m->warnings = NULL;
    m->ngeoms = 0; /* meshes are still owned by the builder */
    hs_model_free(m);
    return r;
}

/* A model's default name: its file name up to the first dot ("robots/sr1.wrl" -> "sr1"). */
void hs__model_name_from_path(const char *path, char *buf, size_t size)
{
    const char *s = strrchr(path, '/');
    s = s ? s + 1 : path;
    size_t n = strcspn(s, ".");
    if (n >= size)
        n = size - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
}

int hs__vrml_load_buffer(const char *data, unsigned long size, const char *name,
                         const char *base_path, struct hs_model **ret_model, struct hs_diag *diag)
{
    struct hs__builder b = {.diag = diag};
    struct hs__vdoc *doc = NULL;
    const char *file = name ? name : "<buffer>";
    char dir[PATH_MAX];
    const char *dirp = NULL;
    if (base_path) {
        struct stat st;
        if (stat(base_path, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(dir, sizeof dir, "%s", base_path);
        } else {
            const char *slash = strrchr(base_path, '/');
            snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - base_path) : 1,
                     slash ? base_path : ".");
            if (!dir[0])
                strcpy(dir, "/");
            char *real = realpath(base_path, NULL);
            if (real) /* the top file is on the Inline stack, so including it back is a cycle */
                b.inline_stack[b.ninline++] = real;
        }
        dirp = dir;
    }
    int r = hs__vrml_parse(data, (size_t)size, file, &doc, diag);
    if (r < 0)
        goto out;
    if ((r = hs__grow((void **)&b.docs, &b.docs_cap, 1, sizeof *b.docs)) < 0) {
        hs__vrml_doc_free(doc);
        r = fail_oom(diag, file);
        goto out;
    }
    b.docs[b.ndocs++] = doc;
    if (hs__builder_warn_doc(&b, doc) < 0) {
        r = fail_oom(diag, file);
        goto out;
    }
    hs__model_name_from_path(file, b.name, sizeof b.name);
    struct hs__bctx ctx = {.link = -1, .dir = dirp};
    hs__affine_identity(&ctx.M);
    for (uint32_t i = 0; r == 0 && i < doc->nroots; i++)
        r = hs__build_visit(&b, doc->roots[i], &ctx);
    if (r == 0)
        r = pack(&b, file, ret_model);
out:
    hs__builder_free(&b);
    return r;
}

int hs_model_load_opts(const char *path, const struct hs_model_options *opts,
                       struct hs_model **ret_model, struct hs_diag *diag)
{
    static const struct hs_model_options none = {0};
    char *data;
    size_t size;
    int r = hs__read_file(path, &data, &size, diag, NULL, 0, 0);
    if (r < 0)
        return r;
    r = hs__model_load_buffer_opts(data, size, path, path, opts ? opts : &none, ret_model, diag);
    free(data);
    return r;
}

int hs_model_load(const char *path, struct hs_model **ret_model, struct hs_diag *diag)
{
    return hs_model_load_opts(path, NULL, ret_model, diag);
}

void hs_model_free(struct hs_model *model)
{
    if (!model)
        return;
    for (uint32_t i = 0; i < model->ngeoms; i++)
        if (model->geoms[i].type == HS_GEOM_MESH) {
            free(model->geoms[i].u.mesh.vertices);
            free(model->geoms[i].u.mesh.indices);
        }
    for (uint32_t i = 0; i < model->nvisuals; i++)
        if (model->visuals[i].type == HS_GEOM_MESH) {
            free(model->visuals[i].u.mesh.vertices);
            free(model->visuals[i].u.mesh.indices);
        }
    free(model->visuals);
    free(model->materials);
    hs__model_free_hulls(model);
    for (uint32_t i = 0; i < model->nwarnings; i++)
        free(model->warnings[i]);
    for (uint32_t i = 0; i < model->nsource_files; i++)
        free(model->source_files[i]);
    free(model->source_files);
    free(model->warnings);
    free(model->geoms);
    free(model->links);
    free(model->sensors);
    free(model->extra_joints);
    free(model->path);
    free(model);
}

int hs_model_find_link(const struct hs_model *model, const char *name)
{
    for (uint32_t i = 0; model && name && i < model->nlinks; i++)
        if (strcmp(model->links[i].name, name) == 0)
            return (int)i;
    return -ENOENT;
}

int hs_model_link_of_joint_id(const struct hs_model *model, int32_t joint_id)
{
    for (uint32_t i = 0; model && joint_id >= 0 && i < model->nlinks; i++)
        if (model->links[i].joint_id == joint_id)
            return (int)i;
    return -ENOENT;
}

double hs_model_total_mass(const struct hs_model *model)
{
    double m = 0;
    for (uint32_t i = 0; model && i < model->nlinks; i++)
        m += model->links[i].mass;
    return m;
}

const char *hs_joint_type_name(enum hs_joint_type t)
{
    static const char *const names[HS_JOINT_TYPE_MAX] = {
        [HS_JOINT_FIXED] = "fixed", [HS_JOINT_FREE] = "free",       [HS_JOINT_ROTATE] = "rotate",
        [HS_JOINT_SLIDE] = "slide", [HS_JOINT_CRAWLER] = "crawler",
    };
    return (unsigned)t < HS_JOINT_TYPE_MAX ? names[t] : "?";
}

const char *hs_sensor_type_name(enum hs_sensor_type t)
{
#define HS_SENSOR_NAME(name, NAME, node, role) [HS_SENSOR_##NAME] = #name,
    static const char *const names[HS_SENSOR_TYPE_MAX] = {HS_SENSOR_KINDS(HS_SENSOR_NAME)};
#undef HS_SENSOR_NAME
    return (unsigned)t < HS_SENSOR_TYPE_MAX ? names[t] : "?";
}

const char *hs_sensor_type_node(enum hs_sensor_type t)
{
#define HS_SENSOR_NODE(name, NAME, node, role) [HS_SENSOR_##NAME] = node,
    static const char *const nodes[HS_SENSOR_TYPE_MAX] = {HS_SENSOR_KINDS(HS_SENSOR_NODE)};
#undef HS_SENSOR_NODE
    return (unsigned)t < HS_SENSOR_TYPE_MAX ? nodes[t] : "?";
}

enum hs_sensor_role hs_sensor_type_role(enum hs_sensor_type t)
{
#define HS_SENSOR_ROLE(name, NAME, node, role) [HS_SENSOR_##NAME] = HS_SENSOR_ROLE_##role,
    static const enum hs_sensor_role roles[HS_SENSOR_TYPE_MAX] = {HS_SENSOR_KINDS(HS_SENSOR_ROLE)};
#undef HS_SENSOR_ROLE
    return (unsigned)t < HS_SENSOR_TYPE_MAX ? roles[t] : HS_SENSOR_ROLE_NONE;
}

int hs_model_find_sensor(const struct hs_model *model, const char *name, enum hs_sensor_type type)
{
    if (!name || !name[0])
        return -ENOENT;
    for (uint32_t s = 0; s < model->nsensors; s++)
        if (model->sensors[s].type == type && !strcmp(model->sensors[s].name, name))
            return (int)s;
    return -ENOENT;
}

int hs_model_find_sensor_role(const struct hs_model *model, const char *name,
                              enum hs_sensor_role role)
{
    if (!name || !name[0] || role == HS_SENSOR_ROLE_NONE)
        return -ENOENT;
    for (uint32_t s = 0; s < model->nsensors; s++)
        if (hs_sensor_type_role(model->sensors[s].type) == role &&
            !strcmp(model->sensors[s].name, name))
            return (int)s;
    return -ENOENT;
}
