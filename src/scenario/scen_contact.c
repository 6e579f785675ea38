/* Contact changes during a run: a friction step sets the Coulomb friction of a material pair
 * (or of a link's material against every material), a material step changes what a link is made
 * of. Both act at the step's start tick, before its physics (the commands phase), and what was
 * there before comes back when a finite duration ends. Overlapping steps on the same pair restore
 * in the order they end, so nest them. RT-safe: the world's setters write two table cells or a
 * link's index (src/world/world_material_set.c). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "scen_internal.h"

static int material(struct hs_scenario *s, const struct hs__scen_step_spec *sp, const char *name,
                    struct hs_diag *diag)
{
    int m = hs_world_material_find(hs_bench_world(s->bench), name);
    if (m < 0 && s->end_tick == HS_SCEN_NEVER) /* a live step */
        return hs_diag_set(diag, -EINVAL, s->path, sp->src.line, sp->src.column,
                           "step.%s: no material '%s' (default, or one given in "
                           "physics.materials)",
                           hs__scen_kind_names[sp->kind], name);
    if (m < 0)
        return hs_diag_set(diag, -EINVAL, s->path, sp->src.line, sp->src.column,
                           "steps[%ld].%s: no material '%s' (default, or one given in "
                           "physics.materials)",
                           (long)(sp - s->specs), hs__scen_kind_names[sp->kind], name);
    return m;
}

static int bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    st->mat_a = st->mat_b = -1;
    st->saved_material = -1;
    if (sp->kind == HS__SCEN_MATERIAL) {
        int m = material(s, sp, sp->material, diag);
        if (m < 0)
            return m;
        st->mat_a = m;
        return 0;
    }
    if (sp->t.link[0])
        return 0; /* the link's material is read when the step starts */
    int a = material(s, sp, sp->material, diag);
    if (a < 0)
        return a;
    int b = material(s, sp, sp->material2, diag);
    if (b < 0)
        return b;
    st->mat_a = a, st->mat_b = b;
    return 0;
}

static void friction(struct hs_scenario *s, struct hs__scen_step *st, bool start)
{
    struct hs_world *w = hs_bench_world(s->bench);
    if (start) {
        if (st->sp->t.link[0]) {
            st->mat_a = hs_world_link_material(w, st->body, st->link);
            st->mat_b = -1;
        }
        uint32_t n = hs_world_material_count(w);
        for (uint32_t m = 0; m < n; m++) {
            if (st->mat_b >= 0 && m != (uint32_t)st->mat_b)
                continue;
            st->saved_mu[m] = hs_world_pair_friction(w, (uint32_t)st->mat_a, m);
            hs_world_set_pair_friction(w, (uint32_t)st->mat_a, m, st->sp->value);
        }
        return;
    }
    uint32_t n = hs_world_material_count(w);
    for (uint32_t m = 0; m < n; m++)
        if (st->mat_b < 0 || m == (uint32_t)st->mat_b)
            hs_world_set_pair_friction(w, (uint32_t)st->mat_a, m, st->saved_mu[m]);
}

static void link_material(struct hs_scenario *s, struct hs__scen_step *st, bool start)
{
    struct hs_world *w = hs_bench_world(s->bench);
    if (start) {
        st->saved_material = hs_world_link_material(w, st->body, st->link);
        hs_world_set_link_material(w, st->body, st->link, (uint32_t)st->mat_a);
    } else if (st->saved_material >= 0) {
        hs_world_set_link_material(w, st->body, st->link, (uint32_t)st->saved_material);
    }
}

/* ---- the kinds: schema and ops (scen_kinds.h) ---- */
static void friction_commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)now_ns;
    if (st->active != st->was_active)
        friction(s, st, st->active);
}

static void material_commands(struct hs_scenario *s, struct hs__scen_step *st, int64_t now_ns)
{
    (void)now_ns;
    if (st->active != st->was_active)
        link_material(s, st, st->active);
}

static int friction_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                          const char *path)
{
    struct hs__scen_step_spec *st = obj;
    (void)seen;
    if (!st->t.link[0] == !(st->material[0] && st->material2[0]) ||
        (st->t.link[0] && (st->material[0] || st->material2[0])))
        return hs__cfg_err(c, node, "%s: name either a link, or material1 and material2", path);
    if (isnan(st->value))
        return hs__cfg_err(c, node, "%s: needs mu", path);
    return 0;
}

static const struct hs__cfg_field friction_f[] = {
    HS__SCEN_NAME("link", t.link, 0),
    HS__SCEN_NAME("model", t.model, 0),
    HS__SCEN_NAME("material1", material, 0),
    HS__SCEN_NAME("material2", material2, 0),
    HS__SCEN_DBL("mu", value, 0, INFINITY, HS__F_INF),
};

const struct hs__scen_kind_ops hs__scen_kind_friction = {
    .schema = HS__SCEN_SCHEMA(friction_f, friction_check),
    .bind = bind,
    .commands = friction_commands,
};

static const struct hs__cfg_field material_f[] = {
    HS__SCEN_NAME("link", t.link, HS__F_REQUIRED),
    HS__SCEN_NAME("model", t.model, 0),
    HS__SCEN_NAME("material", material, HS__F_REQUIRED),
};

const struct hs__scen_kind_ops hs__scen_kind_material = {
    .schema = HS__SCEN_SCHEMA(material_f, NULL),
    .bind = bind,
    .commands = material_commands,
};
