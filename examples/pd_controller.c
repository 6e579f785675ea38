/* Example local controller: attach to a bench, take the commands, run a PD hold on every joint in
 * lockstep with the simulator, and print what it achieved.
 *
 *   pd_controller BENCH [TICKS] [KP] [KD]
 *
 * The hold target is each joint's position at the first tick. On a bench in lockstep
 * (`hilsim run --clock lockstep`) it releases every tick after writing its commands
 * (hs_client_step), so the bench runs as fast as both sides can go. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hilsim/client.h"

/* A humanoid's hips and wrists need gains decades apart: per-joint gains come from a file of
 * "JOINT KP KD" lines ('#' starts a comment). Init only (stdio). */
static int load_gains(struct hs_client *c, const char *path, double *kps, double *kds)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "pd_controller: %s: cannot open\n", path);
        return -1;
    }
    char line[256], name[128];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        double p, d;
        uint32_t j;
        int got = sscanf(line, "%127s %lf %lf", name, &p, &d);
        if (got <= 0)
            continue;
        if (got != 3 || !(p >= 0) || !(d >= 0)) {
            fprintf(stderr, "pd_controller: %s:%d: expected 'JOINT KP KD' with KP, KD >= 0\n", path,
                    lineno);
            rc = -1;
        } else if (hs_client_find_joint(c, name, &j) < 0) {
            fprintf(stderr, "pd_controller: %s:%d: the bench has no joint %s\n", path, lineno,
                    name);
            rc = -1;
        } else {
            kps[j] = p, kds[j] = d;
        }
    }
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    /* --help is not a bench name: a new user's first try (issue 31). */
    bool help = argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
    if (argc < 2 || help || argv[1][0] == '-') {
        fprintf(help ? stdout : stderr,
                "usage: %s BENCH [TICKS] [KP] [KD] [GAINS_FILE]\n"
                "Holds every joint of bench BENCH (a running `hilsim run`) at its first-tick\n"
                "position with a PD (KP N*m/rad, KD N*m*s/rad; default 50 and 1) for TICKS ticks\n"
                "(default 1000), in lockstep when the bench runs --clock lockstep.\n"
                "GAINS_FILE: lines 'JOINT KP KD' for joints that need their own gains\n",
                argv[0]);
        return help ? 0 : 2;
    }
    long ticks = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
    double kp = argc > 3 ? strtod(argv[3], NULL) : 50.0;
    double kd = argc > 4 ? strtod(argv[4], NULL) : 1.0;

    char err[HS_CLIENT_ERRBUF_MIN];
    struct hs_client *c;
    int r;
    /* A segment that exists but is still being filled (-EAGAIN) is a server starting up: give
     * it a moment rather than failing a script that started both together. */
    for (int tries = 0;; tries++) {
        r = hs_client_attach(argv[1], &c, err, sizeof err);
        if (r != -EAGAIN || tries >= 200)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    if (r < 0) {
        fprintf(stderr, "pd_controller: %s\n", err);
        return 1;
    }
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    if ((r = hs_client_claim(c, err, sizeof err)) < 0) {
        fprintf(stderr, "pd_controller: %s\n", err);
        hs_client_detach(c);
        return 1;
    }

    /* Everything the loop touches is allocated here. */
    uint32_t n = info.joint_count;
    double *kps = calloc(n ? n : 1, sizeof *kps), *kds = calloc(n ? n : 1, sizeof *kds);
    if (!kps || !kds) {
        fprintf(stderr, "pd_controller: out of memory\n");
        return 1;
    }
    for (uint32_t j = 0; j < n; j++)
        kps[j] = kp, kds[j] = kd;
    if (argc > 5 && load_gains(c, argv[5], kps, kds) < 0) {
        hs_client_detach(c);
        return 2;
    }
    struct hs_shm_joint_state *joints = calloc(n ? n : 1, sizeof *joints);
    struct hs_client_command *cmds = calloc(n ? n : 1, sizeof *cmds);
    double *target = calloc(n ? n : 1, sizeof *target);
    double *max_err = calloc(n ? n : 1, sizeof *max_err);
    if (!joints || !cmds || !target || !max_err) {
        fprintf(stderr, "pd_controller: out of memory\n");
        return 1;
    }
    struct hs_client_state st = {.joints = joints};
    int64_t timeout_ns = (int64_t)info.tick_period_ns * 100;
    long done = 0, timeouts = 0, quiet = 0, stale_ticks = 0, echoed = 0;
    uint64_t prev_seq = 0;
    int have_target = 0, got_tick = 0;

    while (done < ticks) {
        r = hs_client_wait_tick(c, timeout_ns, NULL, NULL);
        if (r == -ETIMEDOUT) {
            /* Eleven waits in a row without a tick (1.1 s at 1 kHz): the bench is gone. Counted
             * over the whole run instead, a loaded host's rare stalls ended a long run early.
             * Before the first tick the bench is still starting up (its world, its mlockall),
             * which on a loaded host can take seconds: it gets a minute. */
            timeouts += got_tick;
            if (++quiet > (got_tick ? 10 : 600))
                break;
            continue;
        }
        if (r == -ESHUTDOWN) {
            /* The bench stopped: the waits just before it were its teardown (summary, safe
             * stop), not ticks it failed to give us while it ran. */
            timeouts -= quiet;
            break;
        }
        quiet = 0;
        if (r < 0)
            break;
        got_tick = 1;
        if (hs_client_read_state(c, &st) < 0)
            continue;
        stale_ticks += st.stale_joints > 0;
        /* Our previous command was consumed before this state was published: the loop closed
         * within one tick. */
        echoed += prev_seq != 0 && st.command_seq >= prev_seq;
        for (uint32_t j = 0; j < n; j++) {
            if (!have_target)
                target[j] = joints[j].q;
            double e = fabs(joints[j].q - target[j]);
            if (e > max_err[j])
                max_err[j] = e;
            cmds[j] = (struct hs_client_command){
                .mode = HS_SHM_MODE_POSITION_PD, .q = target[j], .kp = kps[j], .kd = kds[j]};
        }
        have_target = 1;
        r = hs_client_write_commands(c, cmds, n);
        if (r == -ENOTCONN) /* we stalled and the server gave up on us: take the commands back */
            r = hs_client_claim(c, NULL, 0) < 0 ? r : hs_client_write_commands(c, cmds, n);
        if (r < 0)
            break;
        prev_seq = hs_client_last_command_seq(c);
        if (info.clock_mode == HS_SHM_CLOCK_LOCKSTEP && (r = hs_client_step(c)) < 0)
            break;
        done++;
    }

    printf("pd_controller: bench %s, %ld ticks held (%llu missed, %ld timeouts), kp %.3g kd "
           "%.3g%s%s%s\n",
           argv[1], done, (unsigned long long)hs_client_missed_ticks(c), timeouts, kp, kd,
           argc > 5 ? " (per-joint gains from " : "", argc > 5 ? argv[5] : "", argc > 5 ? ")" : "");
    if (r < 0)
        printf("  stopped: %s\n", strerror(-r));
    printf("  %ld of %ld commands in effect by the next state read, %ld ticks with a stale "
           "joint, client status %s\n",
           echoed, done > 0 ? done - 1 : 0, stale_ticks,
           st.client_status == HS_SHM_CLIENT_ACTIVE ? "active"
           : st.client_status == HS_SHM_CLIENT_LOST ? "lost"
                                                    : "none");
    for (uint32_t j = 0; j < n; j++)
        printf("  %-24s target %+.6f %s  final %+.6f  final |error| %.6f  max |error| %.6f\n",
               hs_client_joint_name(c, j), target[j], hs_client_joint_unit(c, j), joints[j].q,
               fabs(joints[j].q - target[j]), max_err[j]);
    hs_client_detach(c);
    free(joints);
    free(cmds);
    free(target);
    free(max_err);
    return done > 0 ? 0 : 1;
}
