/* Not a ctest: lockstep against the wall clock, side by side in one run.
 *
 *   bench_lockstep HILSIM CONTROLLER CONFIG GAINS [SECONDS] [ROUNDS]
 *   e.g. build/tests/shmio/bench_lockstep build/hilsim build/examples/lockstep_controller \
 *            config/biped-shm.yaml config/biped-shm.gains 5 3
 *
 * Each round runs `HILSIM run CONFIG --no-rt --clock MODE --duration SECONDS` once with
 * --clock wall and once with --clock lockstep, each with CONTROLLER (examples/lockstep_controller)
 * holding every joint, and reads the controller's result line:
 *   rtf   simulated time over wall time between the controller's first and last tick;
 *   rtt   from the controller's step (lockstep) or command write (wall) to the next state it
 *         sees: in lockstep the whole round trip of one tick (release, wake, physics, publish,
 *         client wake-up), in wall mode the rest of the period.
 * Rounds alternate the modes so a change in the machine's load hits both; the table prints each
 * round and the median over rounds. Exit 1 if a run failed or lockstep missed a tick (wall
 * mode's misses are a figure: the controller attaches after the first ticks, and a busy machine
 * delays it). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct result {
    long ticks, missed, out_of_order;
    double rtf;
    long long rtt_median_ns, rtt_p99_ns;
};

static pid_t spawn(char *const argv[], int out_fd)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(out_fd >= 0 ? out_fd : null, 1);
        dup2(null, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static int wait_ok(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* One run of the bench in mode; 0 with *ret, or -1. */
static int run_mode(char **a, const char *mode, double seconds, struct result *ret)
{
    const char *hilsim = a[1], *controller = a[2], *config = a[3], *gains = a[4];
    char dur[32], ticks[32], bench[128];
    snprintf(dur, sizeof dur, "%.3f", seconds);
    snprintf(ticks, sizeof ticks, "%ld", (long)(seconds * 1000 + 0.5));
    /* The bench name is the config file's bench.name; the controller needs it. */
    FILE *f = fopen(config, "r");
    char line[512];
    bench[0] = 0;
    int in_bench = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "bench:", 6))
            in_bench = 1;
        else if (in_bench && sscanf(line, "  name: %127s", bench) == 1)
            break;
    }
    if (f)
        fclose(f);
    if (!bench[0]) {
        fprintf(stderr, "bench_lockstep: %s: no bench.name\n", config);
        return -1;
    }
    char *srv[] = {(char *)hilsim, "run",     (char *)config,
                   "--no-rt",      "--clock", (char *)mode,
                   "--duration",   dur,       NULL};
    pid_t s = spawn(srv, -1);
    int fd[2];
    if (pipe(fd) < 0)
        return -1;
    char *ctl[] = {(char *)controller, bench, "--gains", (char *)gains, "--ticks", ticks,
                   "--timeout",        "30",  NULL};
    pid_t c = spawn(ctl, fd[1]);
    close(fd[1]);
    FILE *out = fdopen(fd[0], "r");
    int got = 0;
    while (out && fgets(line, sizeof line, out))
        got |= sscanf(line,
                      "result: ticks %ld missed %ld out_of_order %ld rtf %lf rtt_median_ns %lld "
                      "rtt_p99_ns %lld",
                      &ret->ticks, &ret->missed, &ret->out_of_order, &ret->rtf, &ret->rtt_median_ns,
                      &ret->rtt_p99_ns) == 6;
    if (out)
        fclose(out);
    /* In wall mode the controller attaches after the first ticks and may miss some on a busy
     * machine; the server's end then stops it (-ESHUTDOWN): its figures still count. */
    int wall = !strcmp(mode, "wall");
    int cok = wait_ok(c) || (wall && got);
    if (!cok)
        kill(s, SIGTERM);
    int sok = wait_ok(s);
    if (!got || !cok || !sok) {
        fprintf(stderr, "bench_lockstep: %s run failed (controller %s, hilsim %s)\n", mode,
                cok ? "ok" : "failed", sok ? "ok" : "failed");
        return -1;
    }
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s HILSIM CONTROLLER CONFIG GAINS [SECONDS] [ROUNDS]\n", argv[0]);
        return 2;
    }
    double seconds = argc > 5 ? atof(argv[5]) : 5;
    int rounds = argc > 6 ? atoi(argv[6]) : 3;
    if (!(seconds > 0) || rounds < 1 || rounds > 20) {
        fprintf(stderr, "bench_lockstep: SECONDS > 0 and ROUNDS 1..20\n");
        return 2;
    }
    static const char *const modes[2] = {"wall", "lockstep"};
    double rtf[2][20], rtt[2][20], p99[2][20];
    int bad = 0;
    printf("%-6s %-9s %8s %7s %12s %12s %7s\n", "round", "clock", "ticks", "rtf", "rtt med us",
           "rtt p99 us", "missed");
    for (int r = 0; r < rounds; r++)
        for (int m = 0; m < 2; m++) {
            struct result res = {0};
            if (run_mode(argv, modes[m], seconds, &res) < 0)
                return 1;
            bad |= m == 1 && (res.missed || res.out_of_order); /* lockstep must not miss */
            rtf[m][r] = res.rtf;
            rtt[m][r] = (double)res.rtt_median_ns / 1e3;
            p99[m][r] = (double)res.rtt_p99_ns / 1e3;
            printf("%-6d %-9s %8ld %7.2f %12.1f %12.1f %7ld\n", r + 1, modes[m], res.ticks, res.rtf,
                   rtt[m][r], p99[m][r], res.missed);
            fflush(stdout);
        }
    double w_rtf = median(rtf[0], rounds), l_rtf = median(rtf[1], rounds);
    double w_rtt = median(rtt[0], rounds), l_rtt = median(rtt[1], rounds);
    printf("median over %d rounds: wall rtf %.2f, rtt %.1f us | lockstep rtf %.2f, rtt %.1f us "
           "| lockstep/wall rtf x%.2f\n",
           rounds, w_rtf, w_rtt, l_rtf, l_rtt, w_rtf > 0 ? l_rtf / w_rtf : 0);
    return bad ? 1 : 0;
}
