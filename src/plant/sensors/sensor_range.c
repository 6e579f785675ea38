/* RangeSensor (OpenHRP): a scanning range finder. Home of the kind (hilsim/sensor_kinds.h).
 *
 * Geometry, as the OpenHRP model format defines it: the sensor looks along its frame's -Z and
 * scans in its X-Z plane. Rays sit at multiples of scanStep in both directions from 0 within
 * scanAngle: n = 2 floor(scanAngle / 2 / scanStep) + 1 rays (1 when scanAngle or scanStep is
 * 0), ray k at angle a_k = (k - (n - 1) / 2) scanStep, direction (-sin a_k, 0, -cos a_k) in the
 * sensor frame (a turn by a_k about the sensor's +Y). The reading is n distances in m, ray 0
 * first (layout param: first angle, step, minDistance, maxDistance).
 *
 * Values (after ROS REP 117, so a client can tell "nothing there" from a number): the distance
 * along the ray to the nearest geom of the world within maxDistance; +inf when nothing is
 * within maxDistance; -inf when the nearest hit is closer than minDistance (Choreonoid's field;
 * 0 when the model has none). Geoms of the sensor's own link are not seen (the ray starts
 * inside it); other links of the robot are, as a real scanner sees its own feet, also those
 * merged into the same ODE body. A sensor on a fixed root sees that link's static geoms too.
 *
 * Cost bounded per tick: a scan takes d = round(tick rate / scanRate) ticks (at least 1) and
 * each tick casts the next ceil(n / d) rays, as a real scanner sweeps; the finished scan is
 * held and published (samples + 1) on the scan's last tick, so the tick does the same bounded
 * work every time. Rays are precomputed and one ODE ray geom (outside the world's space, so the
 * physics never collides it) is reused: no allocation in the tick. ODE: dSpaceCollide2 of the
 * ray against the world's space, then dCollide per candidate (the ray's contact depth is the
 * distance from its start). The first scan is taken whole at create, so the reading is valid
 * from the first tick. Delay: delay_ticks on the scan as on every sensor; no noise model yet.
 * Scenario sensor faults act on the published scan per beam (hs_plant_sensor_values_edit);
 * a dropout reads +inf, the kind's "no return". */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plant_internal.h"

struct range_state {
    dGeomID ray;
    dSpaceID space;
    /* The sensor's own link's geoms are skipped, by link rather than by ODE body: a link merged
     * into its parent's body (src/world/world_merge.c) shares that body with links a scanner
     * does see. A fixed root's own static geoms are seen, as before merging. */
    bool skip_own;
    uint32_t body, link;
    uint32_t nrays, chunk, divider;
    double min_m, max_m;
    double *dir;                /* nrays x 3, sensor frame */
    double *scan;               /* the scan being measured */
    double *held;               /* the last finished scan */
    double *pub;                /* held after the delay line: the published values */
    double best;                /* nearest hit of the ray being cast */
    struct hs_delay_line delay; /* of held (nrays doubles) */
};

static uint32_t ray_count(const struct hs_sensor *ms)
{
    if (!(ms->u.range.scan_angle > 0) || !(ms->u.range.scan_step > 0))
        return 1;
    double half = ms->u.range.scan_angle / 2 / ms->u.range.scan_step;
    return 2 * (uint32_t)floor(half + 1e-9) + 1;
}

static uint32_t nvalues(const struct hs_sensor *ms)
{
    return ray_count(ms);
}

static void params(const struct hs_sensor *ms, double ret[4])
{
    uint32_t n = ray_count(ms);
    double step = n > 1 ? ms->u.range.scan_step : 0;
    ret[0] = -(double)(n - 1) / 2 * step; /* n is odd: the middle ray is straight ahead */
    ret[1] = step;
    ret[2] = ms->u.range.min_distance;
    ret[3] = ms->u.range.max_distance;
}

static void near_hit(void *data, dGeomID o1, dGeomID o2)
{
    struct range_state *st = data;
    dGeomID other = o1 == st->ray ? o2 : o1;
    if (dGeomIsSpace(other)) {
        dSpaceCollide2(st->ray, other, st, near_hit);
        return;
    }
    if (st->skip_own && hs_world_geom_of_link(other, st->body, st->link))
        return;
    dContactGeom c;
    if (dCollide(st->ray, other, 1, &c, sizeof c) > 0 && c.depth < st->best)
        st->best = c.depth;
}

/* Casts rays [from, to) from the sensor's current pose into st->scan. */
static void cast(struct hs_plant *pl, struct hs__plant_sensor *s, struct range_state *st,
                 uint32_t from, uint32_t to)
{
    double R[9], p[3];
    hs__plant_sensor_frame(pl, s, R, p);
    for (uint32_t k = from; k < to; k++) {
        const double *d = &st->dir[3 * k];
        double w[3];
        for (int i = 0; i < 3; i++)
            w[i] = R[3 * i] * d[0] + R[3 * i + 1] * d[1] + R[3 * i + 2] * d[2];
        dGeomRaySet(st->ray, p[0], p[1], p[2], w[0], w[1], w[2]);
        st->best = INFINITY;
        dSpaceCollide2(st->ray, (dGeomID)st->space, st, near_hit);
        double v = st->best;
        if (v > st->max_m)
            v = INFINITY;
        else if (v < st->min_m)
            v = -INFINITY;
        st->scan[k] = v;
    }
}

static void destroy(struct hs__plant_sensor *s)
{
    struct range_state *st = s->state;
    if (!st)
        return;
    if (st->ray)
        dGeomDestroy(st->ray);
    hs_delay_line_free(&st->delay);
    free(st->dir);
    free(st->scan);
    free(st->held);
    free(st->pub);
    free(st);
    s->state = NULL;
}

static int init(struct hs_plant *pl, struct hs__plant_sensor *s)
{
    const struct hs_sensor *ms = &pl->model->sensors[s - pl->sensors];
    struct range_state *st = calloc(1, sizeof *st);
    if (!st)
        return -ENOMEM;
    s->state = st;
    uint32_t n = ray_count(ms);
    double prm[4];
    params(ms, prm);
    st->nrays = n;
    st->min_m = ms->u.range.min_distance;
    st->max_m = ms->u.range.max_distance > 0 ? ms->u.range.max_distance : INFINITY;
    double tick_s = (double)pl->tick_ns * 1e-9;
    double d = ms->u.range.scan_rate > 0 ? round(1.0 / (ms->u.range.scan_rate * tick_s)) : 1;
    st->divider = d >= 1 ? (d < 1e9 ? (uint32_t)d : 1000000000u) : 1;
    st->chunk = (n + st->divider - 1) / st->divider;
    st->dir = calloc(3 * (size_t)n, sizeof *st->dir);
    st->scan = calloc(n, sizeof *st->scan);
    st->held = calloc(n, sizeof *st->held);
    st->pub = calloc(n, sizeof *st->pub);
    st->space = (dSpaceID)hs_world_ode_space(pl->world);
    st->skip_own =
        s->body != NULL || hs_world_link_body_link(pl->world, pl->body, s->link) != s->link;
    st->body = pl->body;
    st->link = s->link;
    st->ray = dCreateRay(0, isfinite(st->max_m) ? st->max_m : 1e6);
    if (!st->dir || !st->scan || !st->held || !st->pub || !st->ray)
        return -ENOMEM;
    for (uint32_t k = 0; k < n; k++) {
        double a = prm[0] + k * prm[1];
        st->dir[3 * k] = -sin(a);
        st->dir[3 * k + 1] = 0;
        st->dir[3 * k + 2] = -cos(a);
    }
    cast(pl, s, st, 0, n);
    for (uint32_t k = 0; k < n; k++)
        st->held[k] = st->pub[k] = st->scan[k];
    int r = hs_delay_line_init(&st->delay, n * sizeof(double), s->p.delay_ticks, st->held);
    if (r)
        return r;
    s->values = st->pub;
    s->active = true;
    return 0;
}

static void update(struct hs_plant *pl, struct hs__plant_sensor *s, const struct hs__sense_tick *t)
{
    struct range_state *st = s->state;
    uint32_t pos = (uint32_t)(t->tick % st->divider);
    uint32_t from = pos * st->chunk, to = from + st->chunk;
    if (to > st->nrays)
        to = st->nrays;
    if (from < to)
        cast(pl, s, st, from, to);
    if (pos == st->divider - 1) {
        for (uint32_t k = 0; k < st->nrays; k++)
            st->held[k] = st->scan[k];
        s->held.samples++;
        s->held.time_ns = t->now_ns;
        s->last_sample_time_s = t->now_s;
    }
    hs__plant_sensor_publish(s);
    memcpy(st->pub, hs_delay_line_push(&st->delay, st->held), st->nrays * sizeof *st->pub);
}

const struct hs__sensor_ops hs__sensor_ops_range = {
    .unit = "m",
    .group = 1,
    .fields = NULL,
    .simulated = true,
    .no_return = INFINITY, /* nothing within maxDistance: the kind's +inf (REP 117) */
    .one_sided = true,
    .nvalues = nvalues,
    .params = params,
    .init = init,
    .update = update,
    .destroy = destroy,
};
