/* The step kind registry's tables, generated from scen_kinds.h. */
#include <string.h>

#include "scen_internal.h"

#define OPS_ENTRY(NAME, name) [HS__SCEN_##NAME] = &hs__scen_kind_##name,
static const struct hs__scen_kind_ops inert_ops = {0}; /* an inert live slot: does nothing */
static const struct hs__scen_kind_ops *const ops_table[HS__SCEN_KIND_MAX + 1] = {
    HS__SCEN_KINDS(OPS_ENTRY)[HS__SCEN_KIND_MAX] = &inert_ops};
#undef OPS_ENTRY

#define NAME_ENTRY(NAME, name) #name,
const char *const hs__scen_kind_names[] = {HS__SCEN_KINDS(NAME_ENTRY) NULL};
#undef NAME_ENTRY

const struct hs__scen_kind_ops *hs__scen_kind(enum hs__scen_kind kind)
{
    return ops_table[kind];
}

bool hs__scen_is_expectation(enum hs__scen_kind kind)
{
    return ops_table[kind]->judge != NULL;
}

/* the bytes a walker row writes (the kinds' own keys use these) */
static size_t row_size(const struct hs__cfg_field *f)
{
    switch (f->kind) {
    case HS__K_DOUBLE:
        return sizeof(double);
    case HS__K_VEC:
        return f->n * sizeof(double);
    case HS__K_NAME:
    case HS__K_TEXT:
        return f->n;
    case HS__K_ENUM:
        return sizeof(int);
    case HS__K_U32:
    case HS__K_I32:
        return sizeof(uint32_t);
    case HS__K_U64:
    case HS__K_I64:
        return sizeof(uint64_t);
    case HS__K_BOOL:
        return sizeof(bool);
    default:
        return 0;
    }
}

void hs__scen_own_defaults(struct hs__scen_step_spec *sp, const struct hs__cfg_field *rows,
                           size_t n, uint64_t seen, const void *defaults)
{
    const size_t own = offsetof(struct hs__scen_step_spec, own);
    for (size_t i = 0; i < n; i++)
        if (rows[i].off >= own && !(seen & (1ull << i)))
            memcpy((unsigned char *)sp + rows[i].off,
                   (const unsigned char *)defaults + (rows[i].off - own), row_size(&rows[i]));
}
