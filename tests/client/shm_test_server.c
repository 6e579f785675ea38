/* A small stand-alone bench server for the Python bindings test and the examples:
 *
 *   shm_test_server BENCH TICKS PERIOD_US
 *
 * Three joints ("J0", "RARM_ELBOW" rad, "SLIDER" m), an IMU "IMU" and a force sensor "FT_R".
 * Each joint is a unit inertia with a constant -1 N m load, driven by the shm commands (PD,
 * torque, velocity; anything stale or absent gives zero torque). Prints "ready" when clients can
 * attach and a summary line per joint at the end. TICKS 0 runs until SIGTERM or SIGINT (tests
 * under load stop it when their clients are done instead of guessing a tick count).
 * HS_TEST_BENCH_FLAGS (a number) is published as the state's bench_flags. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hilsim/shm_server.h"

#define NJ 3

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double command_torque(const struct hs_shm_joint_input *in, double q, double dq)
{
    const struct hs_shm_joint_command *c = &in->cmd;
    if (in->status != HS_SHM_CMD_FRESH && in->status != HS_SHM_CMD_HELD)
        return 0;
    switch (c->mode) {
    case HS_SHM_MODE_TORQUE:
        return c->tau_ff;
    case HS_SHM_MODE_VELOCITY:
        return c->kd * (c->dq - dq) + c->tau_ff;
    case HS_SHM_MODE_POSITION_PD:
        return c->kp * (c->q - q) + c->kd * (c->dq - dq) + c->tau_ff;
    default:
        return 0;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s BENCH TICKS PERIOD_US\n", argv[0]);
        return 2;
    }
    long ticks = strtol(argv[2], NULL, 10);
    long period_ns = strtol(argv[3], NULL, 10) * 1000;
    const struct hs_shm_joint_desc joints[NJ] = {
        {"J0", "rad"}, {"RARM_ELBOW", "rad"}, {"SLIDER", "m"}};
    const struct hs_shm_sensor_desc sensors[2] = {{"IMU", HS_SHM_KIND_IMU},
                                                  {"FT_R", HS_SHM_KIND_FORCE}};
    const struct hs_shm_layout layout = {.joints = joints,
                                         .joint_count = NJ,
                                         .sensors = sensors,
                                         .sensor_count = 2,
                                         .tick_period_ns = (uint64_t)period_ns,
                                         /* Generous: a client starved for a few
                                          * hundred ms on a loaded host (the Python tests under
                                          * stress-ng) is slow, not gone; no test here judges
                                          * the timeouts themselves. */
                                         .command_timeout_ns = (uint64_t)period_ns * 5000,
                                         .client_timeout_ns = (uint64_t)period_ns * 10000};
    struct hs_shm_server *s;
    struct hs_diag d;
    int r = hs_shm_server_create(argv[1], &layout, NULL, 0, &s, &d);
    if (r < 0) {
        fprintf(stderr, "shm_test_server: %s\n", d.msg);
        return 1;
    }
    const char *flags = getenv("HS_TEST_BENCH_FLAGS");
    if (flags)
        hs_shm_server_set_bench_flags(s, strtoull(flags, NULL, 0));
    double q[NJ] = {0.1, 0.2, 0.3}, dq[NJ] = {0}, dt = (double)period_ns * 1e-9;
    long fresh[NJ] = {0}, live[NJ] = {0};
    struct hs_shm_command_report rep = {0};
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(s);
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("ready %s\n", argv[1]);
    fflush(stdout);

    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (long tick = 1; (ticks == 0 || tick <= ticks) && !stop_requested; tick++) {
        next.tv_nsec += period_ns;
        while (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        int64_t now = (int64_t)next.tv_sec * 1000000000 + next.tv_nsec;
        hs_shm_server_read_commands(s, now, &rep);
        struct hs_shm_joint_state *js = hs_shm_server_joints(s);
        for (int j = 0; j < NJ; j++) {
            double tau = command_torque(&in[j], q[j], dq[j]);
            fresh[j] += in[j].status == HS_SHM_CMD_FRESH;
            live[j] += in[j].status == HS_SHM_CMD_FRESH || in[j].status == HS_SHM_CMD_HELD;
            dq[j] += (tau - 1.0) * dt; /* unit inertia, constant -1 N m load */
            q[j] += dq[j] * dt;
            js[j] = (struct hs_shm_joint_state){.q = q[j],
                                                .dq = dq[j],
                                                .tau = tau,
                                                .current_a = tau / 0.1,
                                                .encoder_count = llround(q[j] * 4096 / (2 * M_PI))};
        }
        struct hs_shm_imu_state *imu = hs_shm_server_imus(s);
        *imu = (struct hs_shm_imu_state){.accel_mps2 = {0, 0, 9.81}, .gyro_rad_s = {0, 0, 0.5}};
        struct hs_shm_ft_state *ft = hs_shm_server_fts(s);
        *ft = (struct hs_shm_ft_state){.force_n = {1, 2, (double)tick}, .torque_nm = {0, 0, -1}};
        hs_shm_server_publish(s, (uint64_t)tick, (double)tick * dt, now);
    }
    for (int j = 0; j < NJ; j++)
        printf("joint %s mode %u q %.6f target %.6f kp %.3f seq %llu fresh %ld live %ld\n",
               joints[j].name, in[j].cmd.mode, q[j], in[j].cmd.q, in[j].cmd.kp,
               (unsigned long long)in[j].cmd.seq, fresh[j], live[j]);
    printf("client status %u lost %llu torn %llu\n", rep.client_status,
           (unsigned long long)rep.lost_total, (unsigned long long)rep.torn_total);
    hs_shm_server_destroy(s);
    return 0;
}
