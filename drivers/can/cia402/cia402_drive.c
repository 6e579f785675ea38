/* The CiA 402 power drive system state machine (CiA 402-2 section 6.3), run once per poll.
 *
 * Controlword commands (bits 7, 3, 2, 1, 0; x = either):
 *   shutdown 0 x 1 1 0 (transitions 2, 6, 8), switch on 0 0 1 1 1 (3), switch on + enable
 *   operation 0 1 1 1 1 (3 then 4 at once), disable voltage 0 x x 0 x (7, 9, 10, 12), quick
 *   stop 0 x 0 1 x (7, 10, 11), disable operation 0 0 1 1 1 (5), enable operation 0 1 1 1 1
 *   (4, 16), fault reset: rising edge of bit 7 (15).
 * Statusword (bits 6, 5, 3, 2, 1, 0): not ready 0 x 0 0 0 0, switch on disabled 1 x 0 0 0 0,
 *   ready to switch on 0 1 0 0 0 1, switched on 0 1 0 0 1 1, operation enabled 0 1 0 1 1 1,
 *   quick stop active 0 0 0 1 1 1, fault reaction active 0 x 1 1 1 1, fault 0 x 1 0 0 0; bit 4
 *   voltage enabled, bit 7 warning, bit 9 remote, bits 10-13 by mode, 11 internal limit.
 * (Beckhoff AMP8000 object 0x6040/0x6041 pages and ros2_canopen canopen_402_driver's
 * state/command tables state the same patterns.)
 * Quick stop option 0x605A (CiA 402-2 6.5.2): 0 disable the drive function at once; 1 stop on
 * the slow-down ramp 0x6084, 2 on the quick stop ramp 0x6085, 3 at the current limit, 4 at the
 * voltage limit, each then switch on disabled (12, automatic); 5-8 the same stops, then stay in
 * quick stop active holding the joint where it stopped, until disable voltage (12) or enable
 * operation (16). Fault reaction option 0x605E: 0 disable the drive function (motor free; the
 * reaction takes one drive cycle), 1-4 stop as above in fault reaction active, then fault with
 * the drive function off. Stopping actions: hs__cia402_stop_run (cia402_modes.c). */
#include <string.h>

#include "cia402/cia402_internal.h"

void hs__cia402_drive_reset(struct hs_cia402_node *n)
{
    n->state = HS_CIA402_NOT_READY_TO_SWITCH_ON;
    n->cw_prev = 0;
    n->mode_active = n->od.modes;
    n->fault_code = n->pending_fault = 0;
    n->zero_rad = 0;
    n->ferr_active = false;
    n->homing_done = n->homing_error = false;
    hs__cia402_output_off(n);
}

void hs_cia402_node_raise_fault(struct hs_cia402_node *node, uint16_t code)
{
    if (!node->pending_fault)
        node->pending_fault = code ? code : 0xFF00;
}

/* The ramp starts from the present speed, whatever the mode was doing. */
static void enter_quick_stop(struct hs_cia402_node *n)
{
    n->state = HS_CIA402_QUICK_STOP_ACTIVE;
    n->demand_rad = n->q_rad;
    n->demand_vel = n->dq_rad_s;
    n->stop_done = false;
}

/* The stopping action code (1-4) of a quick stop option 1-8. */
static unsigned qs_code(int16_t option)
{
    return option > 4 ? (unsigned)option - 4 : (unsigned)option;
}

void hs__cia402_drive_connection_lost(struct hs_cia402_node *n)
{
    if (n->state != HS_CIA402_OPERATION_ENABLED)
        return;
    switch (n->od.abort_connection_option) {
    case 1:
        if (!n->pending_fault)
            n->pending_fault = HS_CIA402_EMCY_HEARTBEAT;
        break;
    case 2:
        n->state = HS_CIA402_SWITCH_ON_DISABLED;
        hs__cia402_output_off(n);
        break;
    case 3:
        enter_quick_stop(n);
        break;
    default:
        break;
    }
}

static bool cmd_shutdown(uint16_t cw)
{
    return (cw & 0x87) == 0x06;
}
static bool cmd_switch_on(uint16_t cw)
{
    return (cw & 0x8F) == 0x07;
}
static bool cmd_enable(uint16_t cw)
{
    return (cw & 0x8F) == 0x0F;
}
static bool cmd_disable_voltage(uint16_t cw)
{
    return (cw & 0x82) == 0x00;
}
static bool cmd_quick_stop(uint16_t cw)
{
    return (cw & 0x86) == 0x02;
}

static void enter_enabled(struct hs_cia402_node *n)
{
    n->state = HS_CIA402_OPERATION_ENABLED;
    hs__cia402_mode_enter(n);
}

static void take_fault(struct hs_cia402_node *n)
{
    uint16_t code = n->pending_fault;
    n->pending_fault = 0;
    if (n->state == HS_CIA402_FAULT || n->state == HS_CIA402_FAULT_REACTION_ACTIVE)
        return;
    n->fault_code = code;
    n->od.error_code = code;
    /* the heartbeat event already sent its EMCY */
    if (code != HS_CIA402_EMCY_HEARTBEAT)
        hs__cia402_emcy(n, code,
                        (code & 0xFF00) == 0x8600 ? HS_CIA402_ERRREG_PROFILE
                                                  : HS_CIA402_ERRREG_MANUFACTURER);
    n->state = HS_CIA402_FAULT_REACTION_ACTIVE;
    if (n->od.fault_reaction_option == 0) {
        hs__cia402_output_off(n);
    } else { /* the reaction stops the joint from where it is, whatever was in progress */
        n->demand_rad = n->q_rad;
        n->demand_vel = n->dq_rad_s;
        n->stop_done = false;
    }
}

void hs__cia402_drive_cycle(struct hs_cia402_node *n, int64_t now_ns, double dt_s)
{
    uint16_t cw = n->od.controlword;
    bool reset_edge = (cw & 0x80) && !(n->cw_prev & 0x80);
    /* a fault found now: this cycle is the fault reaction (13); fault (14) at the next */
    bool reacting = n->pending_fault != 0;
    if (reacting)
        take_fault(n);
    /* the mode in effect follows 0x6060 (validated on write) */
    if (n->od.modes != n->mode_active) {
        n->mode_active = n->od.modes;
        if (n->state == HS_CIA402_OPERATION_ENABLED)
            hs__cia402_mode_enter(n);
    }
    n->od.modes_display = n->mode_active;
    switch (reacting ? HS_CIA402_STATE_MAX : n->state) {
    case HS_CIA402_NOT_READY_TO_SWITCH_ON:
        n->state = HS_CIA402_SWITCH_ON_DISABLED; /* 1: self-test done */
        break;
    case HS_CIA402_SWITCH_ON_DISABLED:
        if (cmd_shutdown(cw))
            n->state = HS_CIA402_READY_TO_SWITCH_ON; /* 2 */
        break;
    case HS_CIA402_READY_TO_SWITCH_ON:
        if (cmd_disable_voltage(cw) || cmd_quick_stop(cw))
            n->state = HS_CIA402_SWITCH_ON_DISABLED; /* 7 */
        else if (cmd_switch_on(cw))
            n->state = HS_CIA402_SWITCHED_ON; /* 3 */
        else if (cmd_enable(cw))
            enter_enabled(n); /* 3 + 4 */
        break;
    case HS_CIA402_SWITCHED_ON:
        if (cmd_disable_voltage(cw) || cmd_quick_stop(cw))
            n->state = HS_CIA402_SWITCH_ON_DISABLED; /* 10 */
        else if (cmd_shutdown(cw))
            n->state = HS_CIA402_READY_TO_SWITCH_ON; /* 6 */
        else if (cmd_enable(cw))
            enter_enabled(n); /* 4 */
        break;
    case HS_CIA402_OPERATION_ENABLED:
        if (cmd_disable_voltage(cw))
            n->state = HS_CIA402_SWITCH_ON_DISABLED; /* 9 */
        else if (cmd_quick_stop(cw))
            enter_quick_stop(n); /* 11 */
        else if (cmd_shutdown(cw))
            n->state = HS_CIA402_READY_TO_SWITCH_ON; /* 8 */
        else if (cmd_switch_on(cw))
            n->state = HS_CIA402_SWITCHED_ON; /* 5 */
        break;
    case HS_CIA402_QUICK_STOP_ACTIVE:
        if (cmd_disable_voltage(cw)) {
            n->state = HS_CIA402_SWITCH_ON_DISABLED; /* 12 */
        } else if (cmd_enable(cw) && n->od.quick_stop_option >= 5) {
            enter_enabled(n); /* 16 */
        }
        break;
    case HS_CIA402_FAULT_REACTION_ACTIVE:
        /* 14: the reaction (drive function off, or a stop that has ended) is complete */
        if (n->od.fault_reaction_option == 0 || n->stop_done) {
            n->state = HS_CIA402_FAULT;
            hs__cia402_output_off(n);
        }
        break;
    case HS_CIA402_FAULT:
        if (reset_edge) {
            n->state = HS_CIA402_SWITCH_ON_DISABLED; /* 15 */
            n->fault_code = 0;
            n->od.error_code = 0;
            n->ferr_active = false;
            hs__cia402_emcy_clear(n);
        }
        break;
    default:
        break;
    }
    switch (n->state) {
    case HS_CIA402_OPERATION_ENABLED:
        hs__cia402_mode_run(n, now_ns, dt_s);
        break;
    case HS_CIA402_QUICK_STOP_ACTIVE: {
        int16_t opt = n->od.quick_stop_option;
        bool stopped = opt == 0 || hs__cia402_stop_run(n, qs_code(opt), dt_s);
        if (stopped && opt < 5) {
            n->state = HS_CIA402_SWITCH_ON_DISABLED; /* 12, automatic */
            hs__cia402_output_off(n);
        }
        break;
    }
    case HS_CIA402_FAULT_REACTION_ACTIVE:
        if (n->od.fault_reaction_option == 0)
            hs__cia402_output_off(n);
        else
            hs__cia402_stop_run(n, (unsigned)n->od.fault_reaction_option, dt_s);
        break;
    default:
        hs__cia402_output_off(n);
        break;
    }
    if (n->pending_fault) /* a following error found by this cycle's mode */
        take_fault(n);
    n->cw_prev = cw;
    n->od.statusword = hs__cia402_statusword(n);
}

uint16_t hs__cia402_statusword(const struct hs_cia402_node *n)
{
    static const uint16_t pattern[HS_CIA402_STATE_MAX] = {
        [HS_CIA402_NOT_READY_TO_SWITCH_ON] = 0x0000, [HS_CIA402_SWITCH_ON_DISABLED] = 0x0040,
        [HS_CIA402_READY_TO_SWITCH_ON] = 0x0031,     [HS_CIA402_SWITCHED_ON] = 0x0033,
        [HS_CIA402_OPERATION_ENABLED] = 0x0037,      [HS_CIA402_QUICK_STOP_ACTIVE] = 0x0017,
        [HS_CIA402_FAULT_REACTION_ACTIVE] = 0x001F,  [HS_CIA402_FAULT] = 0x0008,
    };
    uint16_t sw = pattern[n->state < HS_CIA402_STATE_MAX ? n->state : 0];
    sw |= 1u << 9; /* remote: the controlword is obeyed */
    if (n->od.error_register && n->state != HS_CIA402_FAULT &&
        n->state != HS_CIA402_FAULT_REACTION_ACTIVE)
        sw |= 1u << 7; /* warning: a communication error was reported */
    if (n->state == HS_CIA402_OPERATION_ENABLED || n->state == HS_CIA402_QUICK_STOP_ACTIVE)
        sw |= hs__cia402_mode_status_bits(n);
    return sw;
}
