/* The boards' end of a bench's CAN module on a socketpair bus (the unit-test double of
 * SocketCAN), for tests that tick a bench in process (tests/scenario, tests/ctl): attach it,
 * and play an MIT board (node id 1, reply_id 0) that holds its joint. */
#ifndef HS_TEST_CAN_BOARDS_H
#define HS_TEST_CAN_BOARDS_H

#include <stdbool.h>

#include "hilsim/bench.h"

/* Attaches the bench's CAN module (tick time stamps) on a socketpair bus; returns the boards'
 * end, for the caller to close. Fails the test on error. */
int can_boards_attach(struct hs_bench *bench);
/* The same, with the module's handle (owned by the bench) in *ret_can. */
struct hs_bench_can;
int can_boards_attach_module(struct hs_bench *bench, struct hs_bench_can **ret_can);
/* Sends the MIT board's frame for one tick: motor-mode entry when enter, else a PD command
 * holding 0.3 rad (kp 40, kd 1). */
void can_boards_mit_command(int peer, bool enter);
/* Reads every frame waiting at the boards' end; returns how many were node 1's replies. */
int can_boards_mit_replies(int peer);

#endif
