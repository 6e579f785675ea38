/* Overlaps at the initial state: a body that starts inside the floor or inside another body is
 * thrown apart by the contact solver on the first steps, at whatever speed the depth and the
 * contact ERP give; the bench warns about it instead of letting it happen silently. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "world_internal.h"

#define HS_OVERLAP_POINTS 16 /* contact points looked at per geom pair */

struct overlap_scan {
    struct hs_world *w;
    double min_depth;
    struct hs_world_overlap *out;
    uint32_t max, count;
    dContactGeom points[HS_OVERLAP_POINTS];
};

static bool movable(dBodyID b)
{
    return b && !dBodyIsKinematic(b);
}

static void record(struct overlap_scan *s, const struct hs__world_link *l1,
                   const struct hs__world_link *l2, double depth)
{
    /* Order the pair so a link pair has one entry whichever geom ODE hands over first. */
    if (l1->owner->index > l2->owner->index ||
        (l1->owner == l2->owner && l1->link_index > l2->link_index)) {
        const struct hs__world_link *t = l1;
        l1 = l2;
        l2 = t;
    }
    struct hs_world_overlap o = {l1->owner->index, l1->link_index, l2->owner->index, l2->link_index,
                                 depth};
    uint32_t kept = s->count < s->max ? s->count : s->max;
    for (uint32_t k = 0; k < kept; k++) {
        struct hs_world_overlap *e = &s->out[k];
        if (e->body1 == o.body1 && e->link1 == o.link1 && e->body2 == o.body2 &&
            e->link2 == o.link2) {
            e->depth_m = fmax(e->depth_m, depth);
            return;
        }
    }
    if (s->count < s->max)
        s->out[s->count] = o;
    s->count++;
}

static void scan_pair(void *data, dGeomID g1, dGeomID g2)
{
    struct overlap_scan *s = data;
    const struct hs__world_link *l1 = dGeomGetData(g1), *l2 = dGeomGetData(g2);
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    /* The contact callback's filter (world_contact.c), plus: two immovable pieces never
     * meet in the solver, so their overlap changes nothing. */
    if (b1 == b2 || !l1 || !l2 || (!movable(b1) && !movable(b2)))
        return;
    if (l1->owner == l2->owner && (!s->w->params.self_collision || hs__world_links_jointed(l1, l2)))
        return;
    if (l1->owner != l2->owner && b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact))
        return;
    int n = dCollide(g1, g2, HS_OVERLAP_POINTS, s->points, sizeof(dContactGeom));
    double depth = 0.0;
    for (int i = 0; i < n; i++)
        depth = fmax(depth, s->points[i].depth);
    if (n > 0 && depth > s->min_depth)
        record(s, l1, l2, depth);
}

int hs_world_overlaps(struct hs_world *w, double min_depth_m, struct hs_world_overlap *ret,
                      uint32_t max, uint32_t *ret_count)
{
    if (!w || (!ret && max) || !ret_count || !(min_depth_m >= 0))
        return -EINVAL;
    struct overlap_scan s = {.w = w, .min_depth = min_depth_m, .out = ret, .max = max};
    dSpaceCollide(w->space, &s, scan_pair);
    *ret_count = s.count;
    return 0;
}
