/* Internal to hs_model: the one growable-array helper of the VRML and URDF loaders (init only). */
#ifndef HS_MODEL_GROW_H
#define HS_MODEL_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Makes *data (elem bytes each) hold at least need elements, doubling *cap (from 8); 0, or
 * -ENOMEM with *data and *cap untouched. */
int hs__grow(void **data, uint32_t *cap, uint32_t need, size_t elem);

#endif
