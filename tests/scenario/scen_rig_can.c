#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <linux/can.h>
#include <sys/socket.h>

#include "bench/can_boards.h"
#include "scenario/scen_rig_can.h"

void rig_attach_can(struct scen_rig *r)
{
    r->peer_fd = can_boards_attach(r->bench);
}

void rig_peer_send(struct scen_rig *r, uint32_t id, const uint8_t *data, uint8_t len)
{
    struct can_frame f = {.can_id = id | (id > 0x7ff ? CAN_EFF_FLAG : 0), .len = len};
    memcpy(f.data, data, len);
    assert_int_equal(send(r->peer_fd, &f, sizeof f, 0), (ssize_t)sizeof f);
}

uint64_t rig_mit_board_tick(struct scen_rig *r, int *replies, uint64_t n)
{
    can_boards_mit_command(r->peer_fd, r->tick == 0);
    uint64_t k = r->tick; /* the scenario tick this rig tick plays */
    assert_int_equal(rig_tick(r), 0);
    assert_true(k < n);
    replies[k] += can_boards_mit_replies(r->peer_fd);
    return k;
}
