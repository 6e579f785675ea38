/* The short commands (push, fault sensor ..., fault actuator ...) as the scenario steps they
 * stand for, so every live change goes through the scenario's binding and code: one home for
 * each action, whichever way it was asked for. */
#include <errno.h>
#include <stdio.h>

#include "hilsim/ctl.h"

int hs_ctl_step_text(const struct hs_ctl_cmd *c, const struct hs_bench *b, char *buf, size_t size)
{
    const char *joint = c->joint < hs_bench_joint_count(b) ? hs_bench_joint(b, c->joint)->name : "";
    int n;
    switch (c->kind) {
    case HS_CTL_PUSH: {
        const struct hs_model *m = hs_bench_model(b, c->body);
        if (!m || c->link >= m->nlinks)
            return -EINVAL;
        n = snprintf(buf, size,
                     "{push: {model: %s, link: %s, force_n: [%.17g, %.17g, %.17g]}, "
                     "duration_s: %.17g}",
                     hs_bench_config(b)->models[c->body].name, m->links[c->link].name,
                     c->force_n[0], c->force_n[1], c->force_n[2], c->value);
        break;
    }
    case HS_CTL_SENSOR_STUCK:
        n = snprintf(buf, size, "{sensor_fault: {kind: stuck, joint: %s}}", joint);
        break;
    case HS_CTL_SENSOR_OFFSET:
        n = snprintf(buf, size, "{sensor_fault: {kind: offset, joint: %s, value: %.17g}}", joint,
                     c->value);
        break;
    case HS_CTL_ACT_DERATE:
        n = snprintf(buf, size, "{actuator_fault: {kind: derate, joint: %s, value: %.17g}}", joint,
                     c->value);
        break;
    case HS_CTL_ACT_NO_RESPONSE:
        n = snprintf(buf, size, "{actuator_fault: {kind: no_response, joint: %s}}", joint);
        break;
    default:
        return -EINVAL;
    }
    if (!joint[0] && c->kind != HS_CTL_PUSH)
        return -EINVAL;
    return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : n;
}
