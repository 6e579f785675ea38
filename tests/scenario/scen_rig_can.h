/* The CAN side of the scenario rig (scen_rig.h): the bench's CAN module on a socketpair bus,
 * whose other end (r->peer_fd) plays the boards. */
#ifndef HS_TEST_SCEN_RIG_CAN_H
#define HS_TEST_SCEN_RIG_CAN_H

#include <stdint.h>

#include "scenario/scen_rig.h"

/* For rig_before_scenario: attaches the CAN module (tick time stamps) and sets r->peer_fd. */
void rig_attach_can(struct scen_rig *r);
/* Sends one classic frame from the boards' end (an id above 0x7ff goes as 29-bit). */
void rig_peer_send(struct scen_rig *r, uint32_t id, const uint8_t *data, uint8_t len);

/* One tick of the boards' side of an MIT node (id 1, reply_id 0): motor-mode entry on the
 * first tick, then a PD command holding SHOULDER at 0.3 rad; the tick; the node's replies
 * heard after it counted in replies[k], k being the scenario tick it played (k < n). Returns
 * k. */
uint64_t rig_mit_board_tick(struct scen_rig *r, int *replies, uint64_t n);

#endif
