/* Example joint-level controller that closes its loops itself: it reads each joint's reported
 * position (what the robot's encoders say, faults and all), differentiates it as a board
 * differentiates encoder counts, and sends torques:
 *
 *   tau = KP (q0 - q_reported) - KD dq_estimated      (torque mode, the drive adds nothing)
 *
 * with q0 the first reported position. An encoder fault therefore reaches this loop, where it
 * never reaches examples/pd_controller: that one sends position set points that the drive
 * closes on the true state, as a real drive's own position loop would (scenarios/README.md,
 * "Which controller can a sensor fault reach?").
 *
 *   torque_controller BENCH [TICKS] [KP] [KD]
 *
 * In lockstep (`hilsim run --clock lockstep`) it releases every tick after its commands. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hilsim/client.h"

static void usage(FILE *f, const char *argv0)
{
    fprintf(f,
            "usage: %s BENCH [TICKS] [KP] [KD]\n"
            "Holds every joint of bench BENCH at its first reported position with a PD it\n"
            "closes itself on the reported (encoder) position, sending torques: KP N*m/rad\n"
            "(default 300), KD N*m*s/rad (default 6) on the position differentiated tick to\n"
            "tick, for TICKS ticks (default 1000), in lockstep when the bench runs\n"
            "--clock lockstep. Sensor faults reach this loop (see examples/pd_controller).\n",
            argv0);
}

int main(int argc, char **argv)
{
    bool help = argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
    if (argc < 2 || help || argv[1][0] == '-') {
        usage(help ? stdout : stderr, argv[0]);
        return help ? 0 : 2;
    }
    long ticks = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
    double kp = argc > 3 ? strtod(argv[3], NULL) : 300.0;
    double kd = argc > 4 ? strtod(argv[4], NULL) : 6.0;
    if (ticks <= 0 || !(kp >= 0) || !(kd >= 0) || !isfinite(kp) || !isfinite(kd)) {
        usage(stderr, argv[0]);
        return 2;
    }

    char err[HS_CLIENT_ERRBUF_MIN];
    struct hs_client *c;
    int r;
    /* A segment still being filled (-EAGAIN) is a server starting up: give it a moment. */
    for (int tries = 0;; tries++) {
        r = hs_client_attach(argv[1], &c, err, sizeof err);
        if (r != -EAGAIN || tries >= 200)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    if (r < 0) {
        fprintf(stderr, "torque_controller: %s\n", err);
        return 1;
    }
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    if ((r = hs_client_claim(c, err, sizeof err)) < 0) {
        fprintf(stderr, "torque_controller: %s\n", err);
        hs_client_detach(c);
        return 1;
    }

    /* Everything the loop touches is allocated here. */
    uint32_t n = info.joint_count ? info.joint_count : 1;
    struct hs_shm_joint_state *joints = calloc(n, sizeof *joints);
    struct hs_client_command *cmds = calloc(n, sizeof *cmds);
    double *target = calloc(n, sizeof *target), *prev = calloc(n, sizeof *prev);
    double *max_err = calloc(n, sizeof *max_err);
    if (!joints || !cmds || !target || !prev || !max_err) {
        fprintf(stderr, "torque_controller: out of memory\n");
        return 1;
    }
    struct hs_client_state st = {.joints = joints};
    const double dt = (double)info.tick_period_ns * 1e-9;
    int64_t timeout_ns = (int64_t)info.tick_period_ns * 100;
    long done = 0, timeouts = 0;
    uint64_t prev_tick = 0;
    bool started = false;

    while (done < ticks) {
        r = hs_client_wait_tick(c, timeout_ns, NULL, NULL);
        if (r == -ETIMEDOUT) {
            if (++timeouts > 10)
                break;
            continue;
        }
        if (r < 0)
            break;
        if (hs_client_read_state(c, &st) < 0)
            continue;
        /* Ticks missed between two reads stretch the difference quotient's interval. */
        double h = started && st.tick > prev_tick ? dt * (double)(st.tick - prev_tick) : dt;
        for (uint32_t j = 0; j < info.joint_count; j++) {
            double q = joints[j].q;
            if (!started)
                target[j] = prev[j] = q;
            double dq = (q - prev[j]) / h, e = target[j] - q;
            prev[j] = q;
            if (fabs(e) > max_err[j])
                max_err[j] = fabs(e);
            cmds[j] =
                (struct hs_client_command){.mode = HS_SHM_MODE_TORQUE, .tau_ff = kp * e - kd * dq};
        }
        started = true;
        prev_tick = st.tick;
        r = hs_client_write_commands(c, cmds, info.joint_count);
        if (r == -ENOTCONN) /* we stalled and the server gave up on us: take the commands back */
            r = hs_client_claim(c, NULL, 0) < 0
                    ? r
                    : hs_client_write_commands(c, cmds, info.joint_count);
        if (r < 0)
            break;
        if (info.clock_mode == HS_SHM_CLOCK_LOCKSTEP && (r = hs_client_step(c)) < 0)
            break;
        done++;
    }

    printf("torque_controller: bench %s, %ld ticks held (%llu missed, %ld timeouts), kp %.3g kd "
           "%.3g on the reported positions\n",
           argv[1], done, (unsigned long long)hs_client_missed_ticks(c), timeouts, kp, kd);
    if (r < 0)
        printf("  stopped: %s\n", strerror(-r));
    for (uint32_t j = 0; j < info.joint_count; j++)
        printf("  %-24s target %+.6f %s  reported %+.6f  max |reported error| %.6f\n",
               hs_client_joint_name(c, j), target[j], hs_client_joint_unit(c, j), joints[j].q,
               max_err[j]);
    hs_client_detach(c);
    free(joints);
    free(cmds);
    free(target);
    free(prev);
    free(max_err);
    return done > 0 ? 0 : 1;
}
