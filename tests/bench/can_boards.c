#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <linux/can.h>
#include <sys/socket.h>

#include "hilsim/io_can.h"
#include "bench/can_boards.h"
#include "hilsim/can.h"
#include "hilsim/can_mit.h"

int can_boards_attach(struct hs_bench *bench)
{
    struct hs_bench_can *can;
    return can_boards_attach_module(bench, &can);
}

int can_boards_attach_module(struct hs_bench *bench, struct hs_bench_can **ret_can)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    struct hs_bench_can_opts o = {
        .backend = &hs_can_socketpair_ops, .socketpair_fd = {sv[0]}, .tick_time_stamps = true};
    struct hs_bench_can *can;
    struct hs_diag d = {0};
    if (hs_bench_can_attach(bench, &o, &can, &d) < 0)
        fail_msg("can: %s", d.msg);
    *ret_can = can;
    return sv[1];
}

void can_boards_mit_command(int peer, bool enter)
{
    static const struct hs_mit_limits lim = {-12.5, 12.5, -50, 50, 0, 500, 0, 5, -18, 18};
    struct can_frame f = {.can_id = 1, .len = 8};
    if (enter)
        hs_mit_pack_special(HS_MIT_ENTER, f.data);
    else
        hs_mit_pack_command(&lim, &(struct hs_mit_command){.p_rad = 0.3, .kp = 40, .kd = 1},
                            f.data);
    assert_int_equal(send(peer, &f, sizeof f, 0), (ssize_t)sizeof f);
}

int can_boards_mit_replies(int peer)
{
    int n = 0;
    struct canfd_frame in;
    while (recv(peer, &in, sizeof in, MSG_DONTWAIT) > 0)
        n += in.can_id == 0 && in.data[0] == 1;
    return n;
}
