/* The step kind registry's tables, generated from scen_kinds.h. */
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
