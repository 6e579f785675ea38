/* URDF colours: <material> definitions at <robot> level (a name and a <color rgba>), and the
 * <material> of each <visual> (and of each <collision>: hilsim's own export writes them there
 * for models whose collision shapes are what is drawn, such as VRML ones) into the model's
 * palette (hs_model.materials). Read only with hs_model_options.visuals: the bench draws nothing.
 *
 * As urdfdom and urdf-loader resolve it: a <material name> defined at <robot> level is that
 * definition, else its own <color>; a name defined nowhere with no colour of its own warns and
 * is drawn in the default colour. A <texture> is noted (one warning per model), not drawn: the
 * page gets the colour. rgba must be four numbers, each 0..1; anything else is an error naming
 * the file, line and attribute. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_internal.h"

struct hs__urdf_named {
    char *name;
    uint32_t material; /* 1 + palette index; 0: a definition without a colour */
};

static int note_texture(struct hs__urdf *u, const xmlNode *mat)
{
    const xmlNode *t = hs__urdf_child(mat, "texture");
    if (!t || u->texture_said)
        return 0;
    u->texture_said = true;
    xmlChar *file = xmlGetProp(t, (const xmlChar *)"filename");
    int r = hs__urdf_warn(u, t,
                          "<visual> not drawn with its texture (\"%.200s\"): hilsim keeps the "
                          "<material>'s colour only (said once per model)",
                          file ? (const char *)file : "");
    xmlFree(file);
    return r;
}

/* The <color> of a <material> into rgba: 1, 0 when it has none, or an error. */
static int read_color(struct hs__urdf *u, const xmlNode *mat, float rgba[4])
{
    int r = note_texture(u, mat);
    const xmlNode *c = hs__urdf_child(mat, "color");
    if (r < 0 || !c)
        return r;
    double v[4];
    if ((r = hs__urdf_attr_vec(u, c, "rgba", 4, NULL, v)) < 0)
        return r;
    for (int k = 0; k < 4; k++) {
        if (!(v[k] >= 0 && v[k] <= 1))
            return hs__urdf_err(u, c, -EINVAL,
                                "attribute 'rgba': %g is outside 0..1 (red green blue alpha, "
                                "each 0..1)",
                                v[k]);
        rgba[k] = (float)v[k];
    }
    return 1;
}

static int add_color(struct hs__urdf *u, const xmlNode *at, const float rgba[4],
                     uint32_t *ret_material)
{
    int r = hs__palette_add(&u->palette, rgba, ret_material);
    if (r < 0)
        return hs__urdf_err(u, at, r, "out of memory");
    if (r > 0 && !u->palette_full_said) {
        u->palette_full_said = true;
        return hs__urdf_warn(u, at,
                             "more than %d colours: this and later new ones are drawn in the "
                             "default colour",
                             HS_MODEL_MAX_MATERIALS);
    }
    return 0;
}

static struct hs__urdf_named *find_named(struct hs__urdf *u, const char *name)
{
    for (uint32_t i = 0; i < u->nnamed; i++)
        if (strcmp(u->named[i].name, name) == 0)
            return &u->named[i];
    return NULL;
}

int hs__urdf_materials(struct hs__urdf *u, const xmlNode *robot)
{
    for (const xmlNode *c = robot->children; c; c = c->next) {
        if (!hs__urdf_is(c, "material"))
            continue;
        char name[HS_URDF_MATERIAL_NAME_MAX];
        float rgba[4] = {0};
        uint32_t material = 0;
        int r = hs__urdf_attr_str(u, c, "name", true, name, sizeof name);
        if (r == 0 && (r = read_color(u, c, rgba)) > 0)
            r = add_color(u, c, rgba, &material);
        if (r < 0)
            return r;
        struct hs__urdf_named *n = find_named(u, name);
        if (n) { /* urdf-loader takes the last one */
            n->material = material;
            if ((r = hs__urdf_warn(u, c,
                                   "material '%s' is defined again: this definition is "
                                   "used",
                                   name)) < 0)
                return r;
            continue;
        }
        if (u->nnamed >= HS_MODEL_MAX_MATERIALS) {
            if ((r = hs__urdf_warn(u, c,
                                   "more than %d named materials: the rest are not read and "
                                   "what names them is drawn in the default colour",
                                   HS_MODEL_MAX_MATERIALS)) < 0)
                return r;
            break;
        }
        if (hs__grow((void **)&u->named, &u->named_cap, u->nnamed + 1, sizeof *u->named) < 0)
            return hs__urdf_err(u, c, -ENOMEM, "out of memory");
        if (!(u->named[u->nnamed].name = strdup(name)))
            return hs__urdf_err(u, c, -ENOMEM, "out of memory");
        u->named[u->nnamed++].material = material;
    }
    return 0;
}

int hs__urdf_material_of(struct hs__urdf *u, const xmlNode *elem, uint32_t *ret_material)
{
    *ret_material = 0;
    const xmlNode *mat = hs__urdf_child(elem, "material");
    if (!mat)
        return 0;
    char name[HS_URDF_MATERIAL_NAME_MAX];
    float rgba[4] = {0};
    int r = hs__urdf_attr_str(u, mat, "name", false, name, sizeof name);
    const struct hs__urdf_named *n = r == 0 && name[0] ? find_named(u, name) : NULL;
    if (r < 0 || (r = read_color(u, mat, rgba)) < 0)
        return r;
    if (n) {
        *ret_material = n->material;
        return 0;
    }
    if (r > 0)
        return add_color(u, mat, rgba, ret_material);
    if (!name[0])
        return 0;
    return hs__urdf_warn(u, mat,
                         "material '%s' is not defined at <robot> level and has no <color>: "
                         "drawn in the default colour",
                         name);
}

void hs__urdf_materials_free(struct hs__urdf *u)
{
    for (uint32_t i = 0; i < u->nnamed; i++)
        free(u->named[i].name);
    free(u->named);
    u->named = NULL;
    u->nnamed = u->named_cap = 0;
}
