/* CiA 402 drives on the bench: one joint each, joint-side units (counts_per_rev per joint
 * revolution, torques per mille of the rated torque at the joint). The node may receive any
 * identifier (a master can move RPDOs anywhere by SDO), so it asks for no kernel filters.
 * Stop frame: the node's EMCY "device software" 0x6000 with the generic error bit, so a master
 * watching EMCY sees the drive go away. The cycle's command (CAN lockstep) is the SYNC.
 * With `replies: immediate` the bus's reply thread answers SDO requests, TPDO remote requests and
 * the synchronous TPDOs of each SYNC as they arrive (cia402_io.h); the tick applies the frames. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "can_protocol.h"
#include "cia402/cia402.h"
#include "cia402/cia402_io.h"
#include "cia402_config.h"
#include "cia402_from_cfg.h"

struct c4_port {
    struct hs_can_joint_port jp; /* first: the port */
    uint64_t syncs_at_poll;
    struct hs_cia402_node node;
    struct hs_cia402_io io; /* replies: immediate */
};

static int c4_build(struct hs_can_joint_port *jp, struct hs_bench *bench,
                    const struct hs_cfg_node *cn, struct hs_can_node **ret_node, struct hs_diag *nd,
                    struct hs_diag *d)
{
    struct c4_port *p = (struct c4_port *)jp;
    (void)bench;
    const struct hs_cfg_cia402 *s = hs_cfg_cia402(cn);
    struct hs_cia402_config cc;
    hs_cia402_config_from_cfg(&cc, cn);
    double kt = fabs(p->jp.kt * p->jp.gear * p->jp.eta);
    cc.torque_constant_nm_a = !isnan(s->torque_constant_nm_a) ? s->torque_constant_nm_a
                              : kt > 0                        ? kt
                                                              : cc.torque_constant_nm_a;
    int r = hs_cia402_node_init(&p->node, &cc, nd);
    if (r < 0)
        return r;
    if (s->eds) {
        r = hs_cia402_node_load_eds_file(&p->node, s->eds, NULL, d);
        if (r < 0)
            return r; /* the diag names the EDS file, line and column */
    }
    *ret_node = &p->node.base;
    return 0;
}

static const struct hs_can_joint_ops c4_joint = {
    .port_size = sizeof(struct c4_port),
    .motor_side = false,
    .build = c4_build,
};

static bool c4_filters(const struct hs_can_port *port, struct hs_can_config *cc)
{
    (void)port, (void)cc;
    return false;
}

static int c4_poll(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                   struct hs_can_frame *out, unsigned out_max)
{
    struct c4_port *p = (struct c4_port *)port;
    struct hs_can_joint_state js;
    p->syncs_at_poll = p->node.syncs;
    int k = hs_can_joint_port_poll(&p->jp, bench, now_ns, &js, out, out_max);
    if (port->replier)
        hs_cia402_io_publish(&p->io, &p->node);
    return k;
}

static void c4_publish(struct hs_can_port *port, const struct hs_bench *bench, int64_t now_ns)
{
    (void)bench, (void)now_ns;
    struct c4_port *p = (struct c4_port *)port;
    hs_cia402_io_publish(&p->io, &p->node);
}

static int c4_replier_add(struct hs_can_port *port, struct hs_can_replier *replier,
                          uint32_t *ret_slot, struct hs_diag *d)
{
    struct c4_port *p = (struct c4_port *)port;
    hs_cia402_io_init(&p->io, &p->node);
    int r = hs_can_replier_add_cia402(replier, &p->io, ret_slot);
    if (r < 0) {
        p->node.quiet = false; /* the tick answers after all */
        return hs_diag_set(d, r, NULL, 0, 0, "too many immediate nodes on one bus");
    }
    return 0;
}

static unsigned c4_tx_max(const struct hs_can_port *port)
{
    (void)port;
    return HS_CIA402_TXQ;
}

static int c4_stop_frame(const struct hs_can_port *port, const struct hs_bench *bench,
                         struct hs_can_frame *f)
{
    (void)bench;
    const struct c4_port *p = (const struct c4_port *)port;
    if (p->node.od.cob_id_emcy & 0x80000000u)
        return 0;
    memset(f, 0, sizeof *f);
    f->id = p->node.od.cob_id_emcy & 0x7FF;
    f->len = 8;
    f->data[0] = 0x00, f->data[1] = 0x60; /* 0x6000 device software */
    f->data[2] = (uint8_t)(p->node.od.error_register | 1);
    return 1;
}

static void c4_stop(struct hs_can_port *port)
{
    struct c4_port *p = (struct c4_port *)port;
    p->node.state = HS_CIA402_SWITCH_ON_DISABLED;
    p->node.base.cmd.enabled = false;
}

static int c4_command_heard(const struct hs_can_port *port)
{
    const struct c4_port *p = (const struct c4_port *)port;
    return p->node.syncs != p->syncs_at_poll;
}

/* Scenario hooks: a drive fault with its EMCY error code (0x603F), taken at the next poll
 * (fault reaction, then fault; cleared by the controlword's fault reset), and the power drive
 * system state. */
static const char *c4_fault_check(const struct hs_can_port *port, uint32_t code)
{
    (void)port;
    return code >= 1 && code <= 0xFFFF ? NULL : "a CiA 402 error code is 0x0001..0xFFFF";
}

static void c4_raise_fault(struct hs_can_port *port, uint32_t code, bool on)
{
    if (on)
        hs_cia402_node_raise_fault(&((struct c4_port *)port)->node, (uint16_t)code);
}

static const char *const c4_states[] = {
    [HS_CIA402_NOT_READY_TO_SWITCH_ON] = "not_ready_to_switch_on",
    [HS_CIA402_SWITCH_ON_DISABLED] = "switch_on_disabled",
    [HS_CIA402_READY_TO_SWITCH_ON] = "ready_to_switch_on",
    [HS_CIA402_SWITCHED_ON] = "switched_on",
    [HS_CIA402_OPERATION_ENABLED] = "operation_enabled",
    [HS_CIA402_QUICK_STOP_ACTIVE] = "quick_stop_active",
    [HS_CIA402_FAULT_REACTION_ACTIVE] = "fault_reaction_active",
    [HS_CIA402_FAULT] = "fault",
    [HS_CIA402_STATE_MAX] = NULL,
};

static const char *c4_state(const struct hs_can_port *port)
{
    enum hs_cia402_state st = hs_cia402_node_state(&((const struct c4_port *)port)->node);
    return (unsigned)st < HS_CIA402_STATE_MAX ? c4_states[st] : c4_states[0];
}

const struct hs_can_protocol hs_can_cia402_protocol = {
    .name = "cia402",
    .joint = &c4_joint,
    .create = hs_can_joint_port_create,
    .destroy = hs_can_joint_port_free,
    .filters = c4_filters,
    .tx_max = c4_tx_max,
    .poll = c4_poll,
    .stop_frame = c4_stop_frame,
    .replier_add = c4_replier_add,
    .replier_publish = c4_publish,
    .stop = c4_stop,
    .command_heard = c4_command_heard,
    .fault_check = c4_fault_check,
    .raise_fault = c4_raise_fault,
    .state_names = c4_states,
    .state = c4_state,
};
