/* The palette of a model's colours: what its shapes look like, each distinct colour once. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model_grow.h"
#include "model_material.h"

static bool same(const struct hs_material *m, const float rgba[4])
{
    return memcmp(m->rgba, rgba, sizeof m->rgba) == 0;
}

int hs__palette_add(struct hs__palette *p, const float rgba_in[4], uint32_t *ret_material)
{
    float rgba[4];
    for (int k = 0; k < 4; k++)
        rgba[k] = rgba_in[k] + 0.0f; /* -0 is 0: one entry */
    if (p->last && p->last <= p->n && same(&p->items[p->last - 1], rgba)) {
        *ret_material = p->last;
        return 0;
    }
    for (uint32_t i = 0; i < p->n; i++)
        if (same(&p->items[i], rgba)) {
            *ret_material = p->last = i + 1;
            return 0;
        }
    *ret_material = 0;
    if (p->n >= HS_MODEL_MAX_MATERIALS)
        return 1;
    if (hs__grow((void **)&p->items, &p->cap, p->n + 1, sizeof *p->items) < 0)
        return -ENOMEM;
    memcpy(p->items[p->n].rgba, rgba, sizeof p->items[p->n].rgba);
    *ret_material = p->last = ++p->n;
    return 0;
}
