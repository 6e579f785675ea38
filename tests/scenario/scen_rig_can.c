#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <linux/can.h>
#include <sys/socket.h>

#include "../../src/bench/io_can.h"
#include "hilsim/can.h"
#include "hilsim/can_mit.h"
#include "scenario/scen_rig_can.h"

void rig_attach_can(struct scen_rig *r)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {
        .backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}, .tick_time_stamps = true};
    struct hs_bench_can *can;
    struct hs_diag d = {0};
    if (hs_bench_can_attach(r->bench, &o, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    r->peer_fd = sv[1];
}

void rig_peer_send(struct scen_rig *r, uint32_t id, const uint8_t *data, uint8_t len)
{
    struct can_frame f = {.can_id = id | (id > 0x7ff ? CAN_EFF_FLAG : 0), .len = len};
    memcpy(f.data, data, len);
    assert_int_equal(send(r->peer_fd, &f, sizeof f, 0), (ssize_t)sizeof f);
}

uint64_t rig_mit_board_tick(struct scen_rig *r, int *replies, uint64_t n)
{
    static const struct hs_mit_limits lim = {-12.5, 12.5, -50, 50, 0, 500, 0, 5, -18, 18};
    struct can_frame f = {.can_id = 1, .len = 8};
    if (r->tick == 0)
        hs_mit_pack_special(HS_MIT_ENTER, f.data);
    else
        hs_mit_pack_command(&lim, &(struct hs_mit_command){.p_rad = 0.3, .kp = 40, .kd = 1},
                            f.data);
    assert_int_equal(send(r->peer_fd, &f, sizeof f, 0), (ssize_t)sizeof f);
    uint64_t k = r->tick; /* the scenario tick this rig tick plays */
    assert_int_equal(rig_tick(r), 0);
    assert_true(k < n);
    struct canfd_frame in;
    while (recv(r->peer_fd, &in, sizeof in, MSG_DONTWAIT) > 0)
        if (in.can_id == 0 && in.data[0] == 1)
            replies[k]++;
    return k;
}
