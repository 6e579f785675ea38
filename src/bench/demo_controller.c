#include <math.h>

#include "bench_internal.h"

/* The built-in controller stands in for the boards until CAN or shm drive a joint: an MIT-form
 * PD to the initial position, plus a sine on one joint for the trajectory type. It writes
 * through the same command slots as the real sources, so the motor model, staleness and
 * delays apply to it too. */
void hs__bench_demo_controller(struct hs_bench *b, int64_t now_ns)
{
    const struct hs_cfg_controller *c = &b->cfg->controller;
    if (c->type == HS_CFG_CONTROLLER_NONE)
        return;
    double t = (double)(now_ns - b->start_ns) * 1e-9;
    for (uint32_t i = 0; i < b->njoints; i++) {
        struct hs_bench_joint *j = &b->joints[i];
        if (j->source != HS_CFG_SOURCE_CONTROLLER || j->external)
            continue;
        struct hs_joint_command *cmd = j->cmd;
        cmd->mode = HS_JOINT_MODE_POSITION;
        cmd->q = j->q0;
        cmd->dq = 0;
        cmd->kp = j->kp;
        cmd->kd = j->kd;
        cmd->tau_ff = 0;
        if ((int)i == b->trajectory_joint) {
            double w = 2 * M_PI * c->trajectory.frequency_hz;
            cmd->q += c->trajectory.amplitude * sin(w * t);
            cmd->dq = c->trajectory.amplitude * w * cos(w * t);
        }
        cmd->rx_time_ns = now_ns;
        cmd->seq++;
    }
}
