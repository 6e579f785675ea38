/* Example lockstep controller: holds every joint of a bench with a PD at its first-tick position,
 * answering every tick exactly once, as fast as the machine allows, and reports what it reached.
 *
 *   hilsim run config/biped-shm.yaml --clock lockstep --duration 10 &
 *   lockstep_controller biped-shm --gains config/biped-shm.gains --ticks 10000 --log run.log
 *
 * Per cycle: wait_tick -> read_state -> write_commands -> step (hs_client_step releases the next
 * tick). On a bench that is not in lockstep it runs the same loop without step, which makes it the
 * wall-clock baseline of bench_lockstep.
 *
 * --log FILE writes one line per tick (tick, simulated time, the server's command echo, stale
 * joints, then q, dq, tau, encoder count per joint, IMU and F/T readings) with doubles in hex
 * (%a): two lockstep runs of the same bench give byte-identical logs. The server's publish time
 * (mono_ns) is left out on purpose: it is the one wall-clock value in a state.
 *
 * The summary's last line is machine-readable ("result: key value ..."): ticks seen, ticks
 * missed, ticks out of order, real-time factor (simulated over wall time between the first and
 * the last tick) and the round trip from step (or the command write, outside lockstep) to the
 * next state, median and p99 in ns. Exit 0 when every tick came exactly once, 1 otherwise. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hilsim/client.h"

struct opts {
    const char *bench, *gains, *log;
    long ticks, write_every;
    double timeout_s;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: lockstep_controller BENCH [--gains FILE] [--ticks N] [--log FILE] "
               "[--timeout S]\n"
               "  --gains FILE  lines 'JOINT KP KD' ('#' comments); others: kp 100, kd 2\n"
               "  --ticks N     ticks to answer (default 1000)\n"
               "  --log FILE    per-tick state log, byte-identical across lockstep runs\n"
               "  --timeout S   longest wait for a tick (default 10 s)\n"
               "  --write-every N  write commands on every N-th tick only, step on all (the\n"
               "                server's command timeout then runs out on simulated time)\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {{"gains", required_argument, 0, 'g'},
                                       {"ticks", required_argument, 0, 'n'},
                                       {"log", required_argument, 0, 'l'},
                                       {"timeout", required_argument, 0, 't'},
                                       {"help", no_argument, 0, 'h'},
                                       {"write-every", required_argument, 0, 'w'},
                                       {0, 0, 0, 0}};
    *o = (struct opts){.ticks = 1000, .timeout_s = 10, .write_every = 1};
    int c;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'g':
            o->gains = optarg;
            break;
        case 'n':
            o->ticks = strtol(optarg, NULL, 10);
            break;
        case 'l':
            o->log = optarg;
            break;
        case 't':
            o->timeout_s = strtod(optarg, NULL);
            break;
        case 'w':
            o->write_every = strtol(optarg, NULL, 10);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind != argc - 1 || o->ticks <= 0 || !(o->timeout_s > 0) || o->write_every <= 0) {
        usage(stderr);
        return -1;
    }
    o->bench = argv[optind];
    return 0;
}

/* Init only (stdio): "JOINT KP KD" lines. */
static int load_gains(struct hs_client *c, const char *path, double *kps, double *kds)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "lockstep_controller: %s: cannot open\n", path);
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
        if (got != 3 || !(p >= 0) || !(d >= 0) || hs_client_find_joint(c, name, &j) < 0) {
            fprintf(stderr,
                    "lockstep_controller: %s:%d: expected 'JOINT KP KD' for a joint of "
                    "the bench\n",
                    path, lineno);
            rc = -1;
        } else {
            kps[j] = p, kds[j] = d;
        }
    }
    fclose(f);
    return rc;
}

/* A server started together with us may not have created its segment yet. */
static int attach(const char *bench, double timeout_s, struct hs_client **ret)
{
    char err[HS_CLIENT_ERRBUF_MIN];
    int64_t until = mono_ns() + (int64_t)(timeout_s * 1e9);
    for (;;) {
        int r = hs_client_attach(bench, ret, err, sizeof err);
        if (r == 0)
            return 0;
        if ((r != -ENOENT && r != -EAGAIN) || mono_ns() > until) {
            fprintf(stderr, "lockstep_controller: %s\n", err);
            return r;
        }
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
}

static void log_tick(FILE *f, const struct hs_client_info *in, const struct hs_client_state *st)
{
    fprintf(f, "%llu %a %llu %u %u", (unsigned long long)st->tick, st->sim_time_s,
            (unsigned long long)st->command_seq, st->stale_joints, st->client_status);
    for (uint32_t j = 0; j < in->joint_count; j++) {
        const struct hs_shm_joint_state *s = &st->joints[j];
        fprintf(f, " %a %a %a %lld", s->q, s->dq, s->tau, (long long)s->encoder_count);
    }
    for (uint32_t k = 0; k < in->imu_count; k++)
        for (int i = 0; i < 3; i++)
            fprintf(f, " %a %a", st->imus[k].accel_mps2[i], st->imus[k].gyro_rad_s[i]);
    for (uint32_t k = 0; k < in->ft_count; k++)
        for (int i = 0; i < 3; i++)
            fprintf(f, " %a %a", st->fts[k].force_n[i], st->fts[k].torque_nm[i]);
    fputc('\n', f);
}

int main(int argc, char **argv)
{
    struct opts o;
    if (parse(argc, argv, &o) < 0)
        return 2;
    struct hs_client *c;
    if (attach(o.bench, o.timeout_s, &c) < 0)
        return 1;
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    const int lockstep = info.clock_mode == HS_SHM_CLOCK_LOCKSTEP;
    char err[HS_CLIENT_ERRBUF_MIN];
    if (hs_client_claim(c, err, sizeof err) < 0) {
        fprintf(stderr, "lockstep_controller: %s\n", err);
        hs_client_detach(c);
        return 1;
    }

    /* Everything the loop touches is allocated here. */
    uint32_t n = info.joint_count;
    size_t nn = n ? n : 1;
    double *kps = calloc(nn, sizeof *kps), *kds = calloc(nn, sizeof *kds);
    double *target = calloc(nn, sizeof *target);
    struct hs_client_command *cmds = calloc(nn, sizeof *cmds);
    struct hs_client_state st = {
        .joints = calloc(nn, sizeof *st.joints),
        .imus = calloc(info.imu_count ? info.imu_count : 1, sizeof *st.imus),
        .fts = calloc(info.ft_count ? info.ft_count : 1, sizeof *st.fts),
    };
    int64_t *rtt = calloc((size_t)o.ticks, sizeof *rtt);
    FILE *logf = o.log ? fopen(o.log, "w") : NULL;
    if (!kps || !kds || !target || !cmds || !st.joints || !st.imus || !st.fts || !rtt ||
        (o.log && !logf)) {
        fprintf(stderr, "lockstep_controller: out of memory or cannot write the log\n");
        return 1;
    }
    for (uint32_t j = 0; j < n; j++)
        kps[j] = 100, kds[j] = 2;
    if (o.gains && load_gains(c, o.gains, kps, kds) < 0)
        return 2;

    long seen = 0, out_of_order = 0, nrtt = 0;
    uint64_t missed = 0, prev_tick = 0;
    int64_t t_sent = 0, t_first = 0, t_last = 0;
    double sim_first = 0, sim_last = 0;
    int r = 0;
    while (seen < o.ticks) {
        uint64_t tick;
        uint32_t miss;
        r = hs_client_wait_tick(c, (int64_t)(o.timeout_s * 1e9), &tick, &miss);
        int64_t now = mono_ns();
        if (r < 0)
            break;
        if (t_sent)
            rtt[nrtt++] = now - t_sent;
        missed += miss;
        out_of_order += seen > 0 && tick != prev_tick + 1;
        prev_tick = tick;
        if ((r = hs_client_read_state(c, &st)) < 0)
            break;
        if (seen == 0) {
            t_first = now, sim_first = st.sim_time_s;
            for (uint32_t j = 0; j < n; j++)
                target[j] = st.joints[j].q;
        }
        t_last = now, sim_last = st.sim_time_s;
        seen++;
        if (logf)
            log_tick(logf, &info, &st);
        for (uint32_t j = 0; j < n; j++)
            cmds[j] = (struct hs_client_command){
                .mode = HS_SHM_MODE_POSITION_PD, .q = target[j], .kp = kps[j], .kd = kds[j]};
        if ((seen - 1) % o.write_every == 0 && (r = hs_client_write_commands(c, cmds, n)) < 0)
            break;
        /* The last tick too: a server whose run ends (--duration) waits for the answer to its
         * last tick before its safe stop publishes over it. */
        t_sent = mono_ns();
        if (lockstep && (r = hs_client_step(c)) < 0)
            break;
    }
    if (logf && fclose(logf) != 0) {
        fprintf(stderr, "lockstep_controller: %s: write failed\n", o.log);
        r = r < 0 ? r : -EIO;
    }
    qsort(rtt, (size_t)nrtt, sizeof *rtt, cmp_i64);
    double wall_s = (double)(t_last - t_first) / 1e9;
    double rtf = wall_s > 0 ? (sim_last - sim_first) / wall_s : 0;
    printf("lockstep_controller: bench %s (%s), %ld of %ld ticks answered", o.bench,
           lockstep ? "lockstep" : "not lockstep", seen, o.ticks);
    if (r < 0)
        printf(", stopped: %s", strerror(-r));
    printf("\nresult: ticks %ld missed %llu out_of_order %ld rtf %.3f rtt_median_ns %lld "
           "rtt_p99_ns %lld\n",
           seen, (unsigned long long)missed, out_of_order, rtf,
           (long long)(nrtt ? rtt[nrtt / 2] : 0), (long long)(nrtt ? rtt[nrtt * 99 / 100] : 0));
    hs_client_detach(c);
    free(kps), free(kds), free(target), free(cmds), free(rtt);
    free(st.joints), free(st.imus), free(st.fts);
    return seen == o.ticks && missed == 0 && out_of_order == 0 ? 0 : 1;
}
