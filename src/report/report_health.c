/* Solver health figures for the run summary and the reports (include/hilsim/report_health.h). */
#include "hilsim/report_health.h"

#include <stdio.h>

#include "hilsim/report_json.h"

static const char *const names[3] = {"penetration", "joint error", "contact force jump"};
static const char *const keys[3] = {"penetration_m", "joint_error_m", "contact_force_jump_n"};

static const struct hs_world_health_stat *stat_of(const struct hs_world_health_summary *h, int i)
{
    return i == 0 ? &h->penetration_m : i == 1 ? &h->joint_error_m : &h->force_jump_n;
}

int hs_report_health_text(const struct hs_world_health_summary *h, char *buf, size_t size)
{
    /* Lengths in mm, forces in N: the units a test engineer reads them in. */
    static const double scale[3] = {1e3, 1e3, 1};
    static const char *const unit[3] = {"mm", "mm", "N"};
    size_t n = 0;
    int w = snprintf(buf, size,
                     "solver health over %llu physics steps (contact force jump budget: %.3g %% "
                     "of the weight, %.1f N)\n  %-20s %10s %10s %10s %10s %12s\n",
                     (unsigned long long)h->steps,
                     h->weight_n > 0 ? 100 * h->force_jump_n.budget / h->weight_n : 0, h->weight_n,
                     "", "p50", "p99", "max", "budget", "steps over");
    if (w < 0)
        return w;
    n += (size_t)w;
    for (int i = 0; i < 3; i++) {
        const struct hs_world_health_stat *s = stat_of(h, i);
        w = snprintf(buf + (n < size ? n : size), n < size ? size - n : 0,
                     "  %-20s %10.4g %10.4g %10.4g %10.4g %12llu  [%s]%s\n", names[i],
                     s->p50 * scale[i], s->p99 * scale[i], s->max * scale[i], s->budget * scale[i],
                     (unsigned long long)s->over_budget, unit[i],
                     s->over_budget ? "  OVER BUDGET" : "");
        if (w < 0)
            return w;
        n += (size_t)w;
    }
    /* Where the collision time went: a slow model says which shapes make it slow. */
    for (uint32_t i = 0; i < h->npair_costs && h->steps; i++) {
        const struct hs_world_pair_cost *c = &h->pair_costs[i];
        w = snprintf(buf + (n < size ? n : size), n < size ? size - n : 0,
                     "  %s%-20s %10.4g us/step over %.4g tests/step\n",
                     i == 0 ? "collision " : "          ", c->name,
                     1e6 * c->total_s / (double)h->steps, (double)c->calls / (double)h->steps);
        if (w < 0)
            return w;
        n += (size_t)w;
    }
    if (h->contacts_dropped) {
        w = snprintf(buf + (n < size ? n : size), n < size ? size - n : 0,
                     "  contacts dropped: %llu (a step found more than the %u reserved)  OVER "
                     "BUDGET\n",
                     (unsigned long long)h->contacts_dropped, h->contacts_reserved);
        if (w < 0)
            return w;
        n += (size_t)w;
    }
    return (int)n;
}

json_t *hs_report_health_json(const struct hs_world_health_summary *h)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "steps", json_integer((json_int_t)h->steps));
    bad |= json_object_set_new(o, "weight_n", json_real(hs_report_round(h->weight_n, 3)));
    for (int i = 0; i < 3; i++) {
        const struct hs_world_health_stat *s = stat_of(h, i);
        json_t *e = json_object();
        if (!e) {
            bad = 1;
            break;
        }
        /* Metres to 0.1 µm, newtons to 1 mN: finer than the bins carry. */
        int d = i < 2 ? 7 : 3;
        bad |= json_object_set_new(e, "p50", json_real(hs_report_round(s->p50, d)));
        bad |= json_object_set_new(e, "p99", json_real(hs_report_round(s->p99, d)));
        bad |= json_object_set_new(e, "max", json_real(hs_report_round(s->max, d)));
        bad |= json_object_set_new(e, "budget", json_real(hs_report_round(s->budget, d)));
        bad |=
            json_object_set_new(e, "steps_over_budget", json_integer((json_int_t)s->over_budget));
        bad |= json_object_set_new(o, keys[i], e);
    }
    bad |= json_object_set_new(o, "contacts_reserved", json_integer(h->contacts_reserved));
    bad |=
        json_object_set_new(o, "contacts_dropped", json_integer((json_int_t)h->contacts_dropped));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

bool hs_report_health_over_budget(const struct hs_world_health_summary *h)
{
    return h->penetration_m.over_budget || h->joint_error_m.over_budget ||
           h->force_jump_n.over_budget || h->contacts_dropped;
}
