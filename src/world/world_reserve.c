/* ODE's memory for contacts, sized once at create for the worst step so that no step allocates.
 *
 * Two ODE arenas grow with the contact count and are kept, never shrunk, afterwards: the
 * contact joint group's obstack (dJointCreateContact allocates a new 16 KiB block when the
 * step's contacts outgrow the blocks it has) and the step's working memory (dWorldQuickStep and
 * dWorldStep reallocate it when a step has more constraint rows than any step before, by ODE's
 * reservation policy, dWorldSetStepMemoryReservationPolicy). A warm-up only grows them to what
 * its own pose touched: a robot that starts in the air, or falls later, outgrows them in the
 * tick (tests/bench/test_bench_nalloc.c shows it). So create counts the most contacts a step
 * can make, every geom pair that may touch at max_contacts points each, bounded by
 * HS__WORLD_CONTACTS_MAX; runs one sizing step with that many contacts (the step's own
 * collisions plus placeholder contacts joining every dynamic body into one island, full friction
 * rows each); and
 * restores the state. The near callback then never makes more contacts than that: extra points
 * are dropped and counted (hs_world_health_summary's contacts_dropped), not allocated for. */
#include <string.h>

#include "world_internal.h"

void hs__world_reserve_count(struct hs_world *w)
{
    int n = hs__world_ngeoms(w);
    uint64_t pairs = 0;
    uint64_t limit = HS__WORLD_CONTACTS_MAX / w->params.max_contacts + 1; /* enough to know */
    for (int i = 0; i < n && pairs < limit; i++) {
        dGeomID a = hs__world_geom(w, i);
        for (int j = i + 1; j < n && pairs < limit; j++) {
            dGeomID b = hs__world_geom(w, j);
            /* dSpaceCollide's own filter first: the category and collide bits. */
            if (!(dGeomGetCategoryBits(a) & dGeomGetCollideBits(b)) &&
                !(dGeomGetCategoryBits(b) & dGeomGetCollideBits(a)))
                continue;
            pairs += hs__world_may_touch(w, a, b);
        }
    }
    uint64_t cap = w->params.contactless ? 0 : pairs * w->params.max_contacts;
    /* The exact solver's sizing step is a dense LCP, cubic in the rows: 256 contacts (768 rows
     * and more) already cost it ~0.1 s, far beyond any tick, so that is its reserve. */
    uint64_t max = w->params.solver == HS_SOLVER_STANDARD ? HS__WORLD_CONTACTS_MAX_EXACT
                                                          : HS__WORLD_CONTACTS_MAX;
    w->contacts_cap = cap > max ? (uint32_t)max : (uint32_t)cap;
}

void hs__world_reserve_fill(struct hs_world *w)
{
    if (w->nall_bodies == 0)
        return;
    uint32_t n = w->nall_bodies;
    for (uint32_t k = 0; w->ncontacts < w->sizing_contacts; k++) {
        /* Body k to body k + 1: every body and every contact in one island, the largest a step
         * can meet (ODE sizes the step's memory for its largest island). */
        dBodyID b = w->all_bodies[k % n], b2 = n > 1 ? w->all_bodies[(k + 1) % n] : NULL;
        dContact c;
        memset(&c, 0, sizeof c);
        /* A contact at the body's centre that neither pushes nor pulls (zero depth, very soft)
         * but has the normal and both friction rows of a real one. */
        const dReal *p = dBodyGetPosition(b);
        for (int i = 0; i < 3; i++)
            c.geom.pos[i] = p[i];
        c.geom.normal[2] = 1;
        c.surface.mode = dContactApprox1 | dContactSoftERP | dContactSoftCFM;
        c.surface.mu = 1;
        c.surface.soft_erp = 0;
        c.surface.soft_cfm = 1;
        dJointID j = dJointCreateContact(w->world, w->contact_group, &c);
        dJointAttach(j, b, b2);
        w->ncontacts++;
    }
}
