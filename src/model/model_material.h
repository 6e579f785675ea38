/* Internal to hs_model: the palette of a model's colours (hs_model.materials), shared by the
 * VRML and URDF loaders. Each distinct colour is kept once, so a robot whose hundred shapes are
 * painted in three colours holds three. */
#ifndef HS_MODEL_MATERIAL_H
#define HS_MODEL_MATERIAL_H

#include <stdint.h>

#include "hilsim/model.h"

/* More distinct colours than any robot is painted in; a model past it draws the rest in the
 * default colour (the caller says so once). It also bounds the search for a colour. */
#define HS_MODEL_MAX_MATERIALS 4096

struct hs__palette {
    struct hs_material *items; /* owned; moved into hs_model.materials */
    uint32_t n, cap;
    uint32_t last; /* 1 + index of the colour found last (consecutive shapes share one) */
};

/* init only: allocates. *ret_material = 1 + the index of rgba (each 0..1) in the palette,
 * added when new. 0, 1 when the palette is full (*ret_material = 0), or -ENOMEM. */
int hs__palette_add(struct hs__palette *p, const float rgba[4], uint32_t *ret_material);

#endif
