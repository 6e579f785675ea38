/* The plant copy `ctl state` reads (ctl_state.c), private to the control stage. */
#ifndef HS_CTL_STATE_H
#define HS_CTL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/bench.h"

struct hs__ctl_state;
/* init only: allocates the copy for every link, joint and sensor value of the bench. */
int hs__ctl_state_create(struct hs_bench *b, struct hs__ctl_state **ret);
void hs__ctl_state_destroy(struct hs__ctl_state *s); /* accepts NULL */
struct hs_scenario;
/* Tick thread, readings phase. RT-safe: copies the plant when a read asked for it, and with it
 * scen (the scenario started live, NULL: none runs; scen_gen: scenarios started so far).
 * scen_ended: this is its last tick (its rows are kept for later copies). */
void hs__ctl_state_tick(struct hs__ctl_state *s, uint64_t tick, const struct hs_scenario *scen,
                        uint64_t scen_gen, bool scen_ended);
/* The reader's thread: scen (scenario number gen) after hs_scenario_finish, its verdict word
 * ("PASS", "FAIL", "ERROR"); shown by later reads instead of the tick's last copy of it. */
void hs__ctl_state_decided(struct hs__ctl_state *s, const struct hs_scenario *scen, uint64_t gen,
                           const char *verdict);
/* init only: the tick loop's phase window, taken with each copy (hs_ctl_stage_set_phase_source). */
struct hs_tick_window;
void hs__ctl_state_set_phase_source(struct hs__ctl_state *s,
                                    void (*take)(void *ctx, struct hs_tick_window *ret), void *ctx);
/* init only: the bench's CAN module (NULL: none), whose buses reads show (ctl_can.c). */
struct hs_bench_can;
void hs__ctl_state_set_can(struct hs__ctl_state *s, const struct hs_bench_can *can);
/* Any thread: how many requests the tick has answered (requests are numbered from 1). */
uint64_t hs__ctl_state_copies(const struct hs__ctl_state *s);
/* One reader thread at a time: see hs_ctl_stage_state. */
int hs__ctl_state_read(struct hs__ctl_state *s, int timeout_ms, bool json, char *buf, size_t size,
                       size_t *ret_need);
/* The copy the last read took, formatted again (no new copy: the tick does not touch it until
 * the next read asks): for a caller whose buffer was too small. */
int hs__ctl_state_again(const struct hs__ctl_state *s, bool json, char *buf, size_t size);
/* Pure: a row-major rotation as a unit quaternion (w, x, y, z; w >= 0) and as URDF roll, pitch,
 * yaw (R = Rz(yaw) Ry(pitch) Rx(roll)). */
void hs__ctl_rot_quat(const double R[9], double q[4]);
void hs__ctl_rot_rpy(const double R[9], double rpy[3]);

#endif
