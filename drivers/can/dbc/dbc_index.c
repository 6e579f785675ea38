/* Hash index for the DBC parser: message IDs and signal names looked up in O(1) expected time,
 * so that a file with 100,000 signals in one message parses in linear time. */
#include <errno.h>
#include <stdlib.h>

#include "dbc_internal.h"

uint32_t hs__dbc_hash(const void *p, size_t n)
{
    /* FNV-1a: short keys, no adversary beyond the file's author; collisions only cost probes */
    const unsigned char *c = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 16777619u;
    return h;
}

static int rehash(struct hs__dbc_index *ix, unsigned cap)
{
    struct hs__dbc_slot *ns = calloc(cap, sizeof *ns);
    if (!ns)
        return -ENOMEM;
    for (unsigned i = 0; i < ix->cap; i++) {
        if (!ix->slot[i].item1)
            continue;
        unsigned k = ix->slot[i].hash & (cap - 1);
        while (ns[k].item1)
            k = (k + 1) & (cap - 1);
        ns[k] = ix->slot[i];
    }
    free(ix->slot);
    ix->slot = ns;
    ix->cap = cap;
    return 0;
}

int hs__dbc_index_add(struct hs__dbc_index *ix, uint32_t hash, unsigned item)
{
    if ((ix->n + 1) * 2 > ix->cap) { /* load factor at most 1/2 */
        int r = rehash(ix, ix->cap ? ix->cap * 2 : 16);
        if (r < 0)
            return r;
    }
    unsigned k = hash & (ix->cap - 1);
    while (ix->slot[k].item1)
        k = (k + 1) & (ix->cap - 1);
    ix->slot[k].item1 = item + 1;
    ix->slot[k].hash = hash;
    ix->n++;
    return 0;
}

int hs__dbc_index_next(const struct hs__dbc_index *ix, uint32_t hash, unsigned *cursor)
{
    if (!ix->cap)
        return -1;
    /* cursor counts probes from the home slot; the run ends at the first empty slot */
    for (unsigned i = *cursor; i < ix->cap; i++) {
        const struct hs__dbc_slot *sl = &ix->slot[(hash + i) & (ix->cap - 1)];
        if (!sl->item1)
            return -1;
        if (sl->hash == hash) {
            *cursor = i + 1;
            return (int)(sl->item1 - 1);
        }
    }
    return -1;
}

void hs__dbc_index_free(struct hs__dbc_index *ix)
{
    free(ix->slot);
    ix->slot = NULL;
    ix->cap = ix->n = 0;
}
