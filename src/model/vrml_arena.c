/* One arena per parsed file: the node tree is freed in one call, also on every error path. */
#include <stdlib.h>
#include <string.h>

#include "vrml_internal.h"

struct hs__arena_block {
    struct hs__arena_block *next;
    max_align_t align[]; /* payload */
};

void *hs__arena_alloc(struct hs__arena *a, size_t size)
{
    if (size > ((size_t)1 << 40))
        return NULL;
    struct hs__arena_block *b = calloc(1, sizeof *b + (size ? size : 1));
    if (!b)
        return NULL;
    b->next = a->head;
    a->head = b;
    return b->align;
}

void *hs__arena_dup(struct hs__arena *a, const void *p, size_t size)
{
    void *r = hs__arena_alloc(a, size);
    if (r && size)
        memcpy(r, p, size);
    return r;
}

void hs__arena_free(struct hs__arena *a)
{
    struct hs__arena_block *b = a->head;
    while (b) {
        struct hs__arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
}
