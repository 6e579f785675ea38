/* Solver health: what each step tells about how far the solver is from a converged, consistent
 * answer, measured for a few flops per body and contact:
 *   - penetration: the deepest contact point the collider found (a soft contact sinks by design,
 *     load / stiffness; much more means the contact is too soft or the solver gave up);
 *   - joint error: how far apart the two bodies' anchors of a hinge or ball joint are (a joint
 *     row the iterative solver left unconverged shows here first);
 *   - contact force jump: the largest change of one link's total contact force from the step
 *     before (ODE's contact feedback), the tick-to-tick noise a force sensor would pass on.
 * Each goes into a fixed log histogram (no allocation per step) and is compared with its budget. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "world_internal.h"

/* contacts per step whose force is summed and kept; beyond, not counted */
#define FEEDBACK_CAP HS_WORLD_CONTACT_FORCES_MAX
#define BINS_PER_DECADE 20
#define BIN0 1e-9

int hs__world_health_init(struct hs_world *w)
{
    uint32_t nlinks = 0, njoints = 0;
    for (uint32_t b = 0; b < w->nbodies; b++) {
        const struct hs__world_body *wb = &w->bodies[b];
        nlinks += wb->model->nlinks;
        njoints += wb->model->nlinks + 2 * wb->model->nextra_joints;
    }
    w->feedback_cap = FEEDBACK_CAP;
    w->feedback = calloc(FEEDBACK_CAP, sizeof *w->feedback);
    w->feedback_link = calloc(2 * FEEDBACK_CAP, sizeof *w->feedback_link);
    w->contact_pts = calloc(FEEDBACK_CAP, sizeof *w->contact_pts);
    w->dyn_links = calloc(nlinks + 1, sizeof *w->dyn_links);
    w->anchored = calloc(njoints + 1, sizeof *w->anchored);
    if (!w->feedback || !w->feedback_link || !w->contact_pts || !w->dyn_links || !w->anchored)
        return -ENOMEM;
    double mass = 0;
    for (uint32_t b = 0; b < w->nbodies; b++) {
        struct hs__world_body *wb = &w->bodies[b];
        for (uint32_t i = 0; i < wb->model->nlinks; i++) {
            struct hs__world_link *l = &wb->links[i];
            if (!l->body)
                continue;
            w->dyn_links[w->ndyn_links++] = l;
            if (l->joint && dJointGetType(l->joint) == dJointTypeHinge)
                w->anchored[w->nanchored++] = l->joint;
        }
        for (uint32_t e = 0; wb->extra_joints && e < 2 * wb->model->nextra_joints; e++)
            if (wb->extra_joints[e] && dJointGetType(wb->extra_joints[e]) == dJointTypeBall)
                w->anchored[w->nanchored++] = wb->extra_joints[e];
    }
    for (uint32_t i = 0; i < w->nall_bodies; i++) {
        dMass m;
        dBodyGetMass(w->all_bodies[i], &m);
        mass += m.mass;
    }
    const double *g = w->params.gravity;
    w->weight_n = mass * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    return 0;
}

void hs__world_health_free(struct hs_world *w)
{
    free(w->feedback);
    free(w->feedback_link);
    free(w->contact_pts);
    free(w->dyn_links);
    free(w->anchored);
}

static uint32_t bin_of(double v)
{
    if (!(v > BIN0)) /* also NaN: the divergence guard reports those */
        return 0;
    double b = 1 + floor(BINS_PER_DECADE * log10(v / BIN0));
    return b >= HS__HEALTH_BINS - 1 ? HS__HEALTH_BINS - 1 : (uint32_t)b;
}

static void record(struct hs__world_health_hist *h, double v, double budget)
{
    h->bins[bin_of(v)]++;
    if (v > h->max)
        h->max = v;
    h->over += v > budget;
}

static double dist3(const dReal *a, const dReal *b)
{
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

void hs__world_health_update(struct hs_world *w)
{
    for (uint32_t i = 0; i < w->ndyn_links; i++) {
        struct hs__world_link *l = w->dyn_links[i];
        memcpy(l->cforce_prev, l->cforce, sizeof l->cforce);
        memset(l->cforce, 0, sizeof l->cforce);
    }
    for (uint32_t k = 0; k < w->nfeedback; k++) {
        struct hs__world_link *l1 = w->feedback_link[2 * k], *l2 = w->feedback_link[2 * k + 1];
        for (int a = 0; a < 3; a++) {
            if (l1)
                l1->cforce[a] += w->feedback[k].f1[a];
            if (l2)
                l2->cforce[a] += w->feedback[k].f2[a];
        }
    }
    w->nfeedback_last = w->nfeedback; /* their forces stay readable until the next step */
    w->nfeedback = 0;
    double jump = 0;
    if (w->health_have_prev)
        for (uint32_t i = 0; i < w->ndyn_links; i++) {
            const struct hs__world_link *l = w->dyn_links[i];
            double dx = l->cforce[0] - l->cforce_prev[0], dy = l->cforce[1] - l->cforce_prev[1],
                   dz = l->cforce[2] - l->cforce_prev[2];
            double d = sqrt(dx * dx + dy * dy + dz * dz);
            jump = d > jump ? d : jump;
        }
    w->health_have_prev = true;
    double err = 0;
    for (uint32_t i = 0; i < w->nanchored; i++) {
        dVector3 a, b;
        if (dJointGetType(w->anchored[i]) == dJointTypeHinge) {
            dJointGetHingeAnchor(w->anchored[i], a);
            dJointGetHingeAnchor2(w->anchored[i], b);
        } else {
            dJointGetBallAnchor(w->anchored[i], a);
            dJointGetBallAnchor2(w->anchored[i], b);
        }
        double d = dist3(a, b);
        err = d > err ? d : err;
    }
    const struct hs_world_health_budget *bu = &w->params.health;
    w->health_last = (struct hs_world_health_sample){
        .penetration_m = w->step_depth, .joint_error_m = err, .force_jump_n = jump};
    record(&w->health_hist[0], w->step_depth, bu->max_penetration_m);
    record(&w->health_hist[1], err, bu->max_joint_error_m);
    record(&w->health_hist[2], jump, bu->max_force_jump_ratio * w->weight_n);
    w->health_steps++;
    w->iterations_sum += w->params.solver == HS_SOLVER_QUICK
                             ? (w->iterations ? w->iterations : w->params.quick_iterations)
                             : 0;
}

uint32_t hs_world_contacts(const struct hs_world *w, struct hs_world_contact *ret, uint32_t max)
{
    uint32_t n = w->nfeedback_last < max ? w->nfeedback_last : max;
    for (uint32_t k = 0; k < n; k++) {
        const struct hs__world_contact_pt *c = &w->contact_pts[k];
        struct hs_world_contact *r = &ret[k];
        r->body = c->on->owner->index;
        r->link = c->on->link_index;
        r->other_body = c->other->owner->index;
        r->other_link = c->other->link_index;
        for (int a = 0; a < 3; a++) {
            r->position_m[a] = c->pos[a];
            r->normal[a] = c->normal[a];
            r->force_n[a] = w->feedback[k].f1[a];
        }
    }
    return n;
}

void hs_world_health_last(const struct hs_world *w, struct hs_world_health_sample *ret)
{
    *ret = w->health_last;
}

static double percentile(const struct hs__world_health_hist *h, uint64_t n, double q)
{
    if (!n)
        return 0;
    uint64_t k = (uint64_t)ceil(q * (double)n), acc = 0;
    k = k ? k : 1;
    for (uint32_t i = 0; i < HS__HEALTH_BINS; i++) {
        acc += h->bins[i];
        if (acc >= k) {
            if (i == 0)
                return 0; /* at or below 1 nm / 1 nN: nothing to speak of */
            double edge = BIN0 * pow(10.0, (double)i / BINS_PER_DECADE);
            return edge < h->max ? edge : h->max;
        }
    }
    return h->max;
}

static void stat(const struct hs__world_health_hist *h, uint64_t n, double budget,
                 struct hs_world_health_stat *ret)
{
    *ret = (struct hs_world_health_stat){.p50 = percentile(h, n, 0.5),
                                         .p99 = percentile(h, n, 0.99),
                                         .max = h->max,
                                         .over_budget = h->over,
                                         .budget = budget};
}

static const char *class_name(int c)
{
    static const char *const names[HS__PAIR_CLASSES] = {
        "sphere", "box",    "capsule",   "cylinder", "plane",
        "ray",    "convex", "transform", "trimesh",  "heightfield"};
    return names[c];
}

/* The costliest classes first (insertion into the summary's short list). */
static void pair_costs(const struct hs_world *w, struct hs_world_health_summary *ret)
{
    for (int a = 0; a < HS__PAIR_CLASSES; a++)
        for (int b = a; b < HS__PAIR_CLASSES; b++) {
            const struct hs__world_pair_acc *acc = &w->pair_acc[a][b];
            if (!acc->calls)
                continue;
            double t = (double)acc->ns * 1e-9;
            uint32_t at = ret->npair_costs;
            while (at > 0 && ret->pair_costs[at - 1].total_s < t)
                at--;
            if (at >= HS_WORLD_PAIR_COSTS_MAX)
                continue;
            uint32_t n = ret->npair_costs < HS_WORLD_PAIR_COSTS_MAX ? ret->npair_costs + 1
                                                                    : HS_WORLD_PAIR_COSTS_MAX;
            memmove(&ret->pair_costs[at + 1], &ret->pair_costs[at],
                    (n - 1 - at) * sizeof ret->pair_costs[0]);
            struct hs_world_pair_cost *c = &ret->pair_costs[at];
            snprintf(c->name, sizeof c->name, "%s-%s", class_name(a), class_name(b));
            c->calls = acc->calls;
            c->total_s = t;
            ret->npair_costs = n;
        }
}

void hs_world_health_summary(const struct hs_world *w, struct hs_world_health_summary *ret)
{
    const struct hs_world_health_budget *bu = &w->params.health;
    memset(ret, 0, sizeof *ret);
    ret->steps = w->health_steps;
    ret->weight_n = w->weight_n;
    stat(&w->health_hist[0], w->health_steps, bu->max_penetration_m, &ret->penetration_m);
    stat(&w->health_hist[1], w->health_steps, bu->max_joint_error_m, &ret->joint_error_m);
    stat(&w->health_hist[2], w->health_steps, bu->max_force_jump_ratio * w->weight_n,
         &ret->force_jump_n);
    ret->contacts_reserved = w->contacts_cap;
    ret->quick_iterations_mean =
        w->health_steps ? (double)w->iterations_sum / (double)w->health_steps : 0;
    ret->contacts_dropped = w->contacts_dropped;
    pair_costs(w, ret);
}

void hs_world_health_reset(struct hs_world *w)
{
    memset(w->health_hist, 0, sizeof w->health_hist);
    w->health_steps = 0;
    w->iterations_sum = 0;
    w->contacts_dropped = 0;
    memset(w->pair_acc, 0, sizeof w->pair_acc);
}
