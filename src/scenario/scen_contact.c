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

/* friction: the Coulomb mu of a link's material against every material, or of a pair;
 * material: what the link is made of from now on */
struct friction_spec {
    double mu;
    char material1[HS_NAME_MAX], material2[HS_NAME_MAX];
};
struct material_spec {
    char material[HS_NAME_MAX];
};
/* the materials acted on and what was there before */
struct contact_state {
    int32_t a, b; /* friction: the pair (b -1: a against every material); material: a */
    int32_t saved_material;
    double saved_mu[HS_WORLD_MATERIALS_MAX + 1];
};
HS__SCEN_OWN_FITS(struct friction_spec);
HS__SCEN_OWN_FITS(struct material_spec);
HS__SCEN_OWN_FITS(struct contact_state);

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

static int material_bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    struct contact_state *o = HS__SCEN_OWN(struct contact_state, st);
    o->a = o->b = -1;
    o->saved_material = -1;
    int m = material(s, st->sp, HS__SCEN_OWN(const struct material_spec, st->sp)->material, diag);
    if (m < 0)
        return m;
    o->a = m;
    return 0;
}

static int friction_bind(struct hs_scenario *s, struct hs__scen_step *st, struct hs_diag *diag)
{
    const struct hs__scen_step_spec *sp = st->sp;
    const struct friction_spec *f = HS__SCEN_OWN(const struct friction_spec, sp);
    struct contact_state *o = HS__SCEN_OWN(struct contact_state, st);
    o->a = o->b = -1;
    o->saved_material = -1;
    if (sp->t.link[0])
        return 0; /* the link's material is read when the step starts */
    int a = material(s, sp, f->material1, diag);
    if (a < 0)
        return a;
    int b = material(s, sp, f->material2, diag);
    if (b < 0)
        return b;
    o->a = a, o->b = b;
    return 0;
}

static void friction(struct hs_scenario *s, struct hs__scen_step *st, bool start)
{
    struct hs_world *w = hs_bench_world(s->bench);
    struct contact_state *o = HS__SCEN_OWN(struct contact_state, st);
    if (start) {
        if (st->sp->t.link[0]) {
            o->a = hs_world_link_material(w, st->body, st->link);
            o->b = -1;
        }
        double mu = HS__SCEN_OWN(const struct friction_spec, st->sp)->mu;
        uint32_t n = hs_world_material_count(w);
        for (uint32_t m = 0; m < n; m++) {
            if (o->b >= 0 && m != (uint32_t)o->b)
                continue;
            o->saved_mu[m] = hs_world_pair_friction(w, (uint32_t)o->a, m);
            hs_world_set_pair_friction(w, (uint32_t)o->a, m, mu);
        }
        return;
    }
    uint32_t n = hs_world_material_count(w);
    for (uint32_t m = 0; m < n; m++)
        if (o->b < 0 || m == (uint32_t)o->b)
            hs_world_set_pair_friction(w, (uint32_t)o->a, m, o->saved_mu[m]);
}

static void link_material(struct hs_scenario *s, struct hs__scen_step *st, bool start)
{
    struct hs_world *w = hs_bench_world(s->bench);
    struct contact_state *o = HS__SCEN_OWN(struct contact_state, st);
    if (start) {
        o->saved_material = hs_world_link_material(w, st->body, st->link);
        hs_world_set_link_material(w, st->body, st->link, (uint32_t)o->a);
    } else if (o->saved_material >= 0) {
        hs_world_set_link_material(w, st->body, st->link, (uint32_t)o->saved_material);
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

static const struct hs__cfg_field friction_f[] = {
    HS__SCEN_NAME("link", t.link, 0),
    HS__SCEN_NAME("model", t.model, 0),
    HS__SCEN_OWN_NAME(struct friction_spec, "material1", material1, 0),
    HS__SCEN_OWN_NAME(struct friction_spec, "material2", material2, 0),
    HS__SCEN_OWN_FS(struct friction_spec, "mu", HS__K_DOUBLE, mu, .min = 0, .max = INFINITY,
                    .flags = HS__F_INF),
};
static const struct friction_spec friction_defaults = {.mu = NAN};

static int friction_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                          const char *path)
{
    struct hs__scen_step_spec *st = obj;
    HS__SCEN_OWN_DEFAULTS(st, friction_f, seen, &friction_defaults);
    const struct friction_spec *f = HS__SCEN_OWN(const struct friction_spec, st);
    if (!st->t.link[0] == !(f->material1[0] && f->material2[0]) ||
        (st->t.link[0] && (f->material1[0] || f->material2[0])))
        return hs__cfg_err(c, node, "%s: name either a link, or material1 and material2", path);
    if (isnan(f->mu))
        return hs__cfg_err(c, node, "%s: needs mu", path);
    return 0;
}

const struct hs__scen_kind_ops hs__scen_kind_friction = {
    .schema = HS__SCEN_SCHEMA(friction_f, friction_check),
    .bind = friction_bind,
    .commands = friction_commands,
};

static const struct hs__cfg_field material_f[] = {
    HS__SCEN_NAME("link", t.link, HS__F_REQUIRED),
    HS__SCEN_NAME("model", t.model, 0),
    HS__SCEN_OWN_NAME(struct material_spec, "material", material, HS__F_REQUIRED),
};

const struct hs__scen_kind_ops hs__scen_kind_material = {
    .schema = HS__SCEN_SCHEMA(material_f, NULL),
    .bind = material_bind,
    .commands = material_commands,
};
