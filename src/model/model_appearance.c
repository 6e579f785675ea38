/* A Shape's colour: appearance Appearance { material Material { diffuseColor transparency } }
 * (DEF/USE of either node is resolved by the parser, so a USE'd Material is the same node).
 * Only viewers read it (the web view, through the URDF export); the bench never does, so a
 * model keeps each distinct colour once (model_material.c) and every geom a 4-byte index.
 *
 * VRML97 gives colours and transparency the range 0..1. A number outside it is a warning at the
 * number, and is drawn clamped into the range as a renderer would: the bench never uses a colour,
 * so a model that Choreonoid draws (it clamps too) is not refused for one (a nan there is read
 * as 0 with a warning by the parser, as in every looks-only field). Not read: ambientIntensity,
 * shininess, specularColor and emissiveColor (the page lights every shape alike) and textures. */
#include <errno.h>
#include <string.h>

#include "model_internal.h"

/* One SFColor (count 3) or SFFloat (count 1) field, each number clamped to 0..1 with a
 * warning. */
static int unit_numbers(struct hs__builder *b, const struct hs__vnode *mat,
                        const struct hs__venv *env, const char *field, enum hs__vftype type,
                        int count, const double *def, double *ret)
{
    const struct hs__vvalue *v;
    int r = hs__get_numbers(b, mat, env, field, type, &v);
    if (r < 0)
        return r;
    if (v && (v->kind != HS__VV_SCALARS || v->n < (uint32_t)count))
        v = NULL; /* the type check passed nothing else; never index past it */
    for (int k = 0; k < count; k++) {
        const struct hs__vitem *it = v ? &v->items[k] : NULL;
        ret[k] = it ? it->num : def[k];
        if (it && !(ret[k] >= 0 && ret[k] <= 1)) { /* the defaults are in range */
            double c = ret[k] > 1 ? 1 : ret[k] >= 0 ? ret[k] : 0;
            if ((r = hs__builder_warn(b, v->file, it->line, it->column,
                                      "field '%s' of Material: %g is outside 0..1: drawn as %g",
                                      field, ret[k], c)) < 0)
                return r;
            ret[k] = c;
        }
    }
    return 0;
}

int hs__build_appearance(struct hs__builder *b, const struct hs__vnode *shape,
                         const struct hs__venv *env, uint32_t *ret_material)
{
    struct hs__vnode *const *ap, *const *mat;
    uint32_t nap, nmat;
    const struct hs__venv *aenv, *menv;
    *ret_material = 0;
    int r = hs__get_nodes(b, shape, env, "appearance", &ap, &nap, &aenv);
    if (r < 0 || nap == 0 || strcmp(ap[0]->type, "Appearance") != 0)
        return r;
    if ((r = hs__get_nodes(b, ap[0], aenv, "material", &mat, &nmat, &menv)) < 0 || nmat == 0 ||
        strcmp(mat[0]->type, "Material") != 0)
        return r;
    static const double grey[3] = {0.8, 0.8, 0.8}, clear[1] = {0};
    double diffuse[3], transparency;
    if ((r = unit_numbers(b, mat[0], menv, "diffuseColor", HS__FT_SFCOLOR, 3, grey, diffuse)) < 0 ||
        (r = unit_numbers(b, mat[0], menv, "transparency", HS__FT_SFFLOAT, 1, clear,
                          &transparency)) < 0)
        return r;
    const float rgba[4] = {(float)diffuse[0], (float)diffuse[1], (float)diffuse[2],
                           (float)(1 - transparency)};
    r = hs__palette_add(&b->palette, rgba, ret_material);
    if (r < 0)
        return hs_diag_set(b->diag, r, mat[0]->file, mat[0]->line, mat[0]->column, "out of memory");
    if (r > 0 && !b->warned_palette_full) {
        b->warned_palette_full = true;
        return hs__builder_warn(b, mat[0]->file, mat[0]->line, mat[0]->column,
                                "more than %d colours: this and later new ones are drawn in the "
                                "default colour",
                                HS_MODEL_MAX_MATERIALS);
    }
    return 0;
}
