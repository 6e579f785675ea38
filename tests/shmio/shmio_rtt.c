/* Not a ctest: the command round trip through a real `hilsim run`, as percentiles.
 *
 *   shmio_rtt HILSIM CONFIG [SAMPLES]     e.g. shmio_rtt build/hilsim config/arm2-shm.yaml 5000
 *
 * Runs HILSIM on a copy of CONFIG (bench name made unique, overrun bucket relaxed so a loaded
 * host's safe hold does not override the client) and attaches a lockstep client that commands
 * every joint in torque mode: a client-side PD whose torque is unique per write. For each write
 * it times (CLOCK_MONOTONIC, same clock as the server's publish stamp):
 *   write -> publish  the server's mono_ns of the first published state whose joint torques are
 *                     exactly the written ones (the command acted on the physics of that tick)
 *   write -> seen     when the client's read returned that state
 *   ticks             how many ticks after the one the client answered
 * Prints the percentiles and exits non-zero if hilsim failed or effects never showed. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hilsim/client.h"

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

static void print_pcts(const char *what, int64_t *v, size_t n, double scale, const char *unit)
{
    qsort(v, n, sizeof *v, cmp_i64);
    const double q[] = {0.5, 0.9, 0.99, 0.999};
    printf("%-16s", what);
    for (size_t i = 0; i < 4; i++)
        printf("  p%-5g %8.1f", q[i] * 100, (double)v[(size_t)(q[i] * (double)(n - 1))] * scale);
    printf("  max %8.1f %s (n %zu)\n", (double)v[n - 1] * scale, unit, n);
}

/* A copy of the config under a unique bench name, its model paths absolute, the overrun bucket
 * out of the way. Returns 0 or -1. */
static int write_config(const char *src, const char *bench, const char *out)
{
    FILE *f = fopen(src, "r");
    if (!f)
        return -1;
    char dir[PATH_MAX];
    if (!realpath(src, dir)) {
        fclose(f);
        return -1;
    }
    *strrchr(dir, '/') = 0;
    FILE *o = fopen(out, "w");
    if (!o) {
        fclose(f);
        return -1;
    }
    char line[1024];
    int rt = 0;
    while (fgets(line, sizeof line, f)) {
        char *p;
        if (!strncmp(line, "  name: ", 8) && !rt) {
            fprintf(o, "  name: %s\n", bench);
            rt = 1; /* only the bench's name, the first "  name:" */
        } else if ((p = strstr(line, "file: ../"))) {
            fprintf(o, "%.*sfile: %s/%s", (int)(p - line), line, dir, p + 6);
        } else {
            fputs(line, o);
            if (!strcmp(line, "rt:\n"))
                fputs("  overrun_leaky: {threshold: 1000000000}\n", o);
        }
    }
    fclose(f);
    return fclose(o) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s HILSIM CONFIG [SAMPLES]\n", argv[0]);
        return 2;
    }
    size_t samples = argc > 3 ? strtoul(argv[3], NULL, 10) : 5000;
    if (samples < 10)
        samples = 10;
    char bench[64], cfg[128];
    snprintf(bench, sizeof bench, "shmio-rtt%d", (int)getpid());
    snprintf(cfg, sizeof cfg, "/tmp/%s.yaml", bench);
    if (write_config(argv[2], bench, cfg) < 0) {
        fprintf(stderr, "shmio_rtt: cannot copy %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    pid_t hs = fork();
    char log[160];
    snprintf(log, sizeof log, "/tmp/%s.log", bench);
    if (hs == 0) {
        /* hilsim's summary and warnings go to a log, named if the run fails. */
        if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0)
            _exit(126);
        execl(argv[1], argv[1], "run", cfg, "--no-rt", (char *)NULL);
        _exit(127);
    }
    struct hs_client *c = NULL;
    char err[HS_CLIENT_ERRBUF_MIN];
    int r = -ENOENT;
    for (int i = 0; i < 1000 && (r == -ENOENT || r == -EAGAIN); i++) {
        if (waitpid(hs, NULL, WNOHANG) == hs) {
            fprintf(stderr, "shmio_rtt: hilsim exited early\n");
            unlink(cfg);
            return 1;
        }
        r = hs_client_attach(bench, &c, err, sizeof err);
        if (r < 0)
            nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    int rc = 1;
    int64_t *to_pub = calloc(samples, sizeof *to_pub), *to_seen = calloc(samples, sizeof *to_seen);
    int64_t *ticks = calloc(samples, sizeof *ticks);
    if (r < 0 || !to_pub || !to_seen || !ticks) {
        fprintf(stderr, "shmio_rtt: %s\n", r < 0 ? err : "out of memory");
        goto out;
    }
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    uint32_t n = info.joint_count;
    struct hs_shm_joint_state js[64];
    struct hs_client_command cmd[64];
    if (n == 0 || n > 64 || hs_client_claim(c, err, sizeof err) < 0) {
        fprintf(stderr, "shmio_rtt: %s\n", n == 0 || n > 64 ? "joint count" : err);
        goto out;
    }
    struct hs_client_state st = {.joints = js};
    double target[64];
    size_t got = 0, lost = 0;
    uint64_t serial = 0;
    for (int warm = 0; warm < 2; warm++)
        hs_client_wait_tick(c, 1000000000, NULL, NULL);
    hs_client_read_state(c, &st);
    for (uint32_t j = 0; j < n; j++)
        target[j] = js[j].q;
    while (got < samples && lost < samples) {
        if (hs_client_wait_tick(c, 1000000000, NULL, NULL) < 0 || hs_client_read_state(c, &st) < 0)
            break;
        uint64_t answered = st.tick;
        /* Client-side PD, made unique per write by a sub-micro-newton-metre serial offset. */
        serial++;
        for (uint32_t j = 0; j < n; j++)
            cmd[j] = (struct hs_client_command){.mode = HS_SHM_MODE_TORQUE,
                                                .tau_ff = 100.0 * (target[j] - js[j].q) -
                                                          5.0 * js[j].dq + 1e-9 * (double)serial};
        int64_t t_write = mono_ns();
        if (hs_client_write_commands(c, cmd, n) < 0)
            break;
        /* Wait for the state that shows the effect; give up after 50 ticks. */
        int found = 0;
        for (int k = 0; k < 50 && !found; k++) {
            if (hs_client_wait_tick(c, 1000000000, NULL, NULL) < 0)
                break;
            if (hs_client_read_state(c, &st) < 0)
                continue;
            int64_t t_seen = mono_ns();
            found = 1;
            for (uint32_t j = 0; j < n; j++)
                found &= js[j].tau == cmd[j].tau_ff;
            if (found) {
                to_pub[got] = st.mono_ns - t_write;
                to_seen[got] = t_seen - t_write;
                ticks[got] = (int64_t)(st.tick - answered);
                got++;
            }
        }
        lost += !found;
    }
    if (got < 10) {
        fprintf(stderr, "shmio_rtt: effects seen for %zu writes only (%zu lost)\n", got, lost);
        goto out;
    }
    printf("shmio_rtt: bench %s, %zu round trips (%zu writes without a visible effect), period "
           "%.3f ms\n",
           bench, got, lost, (double)info.tick_period_ns / 1e6);
    print_pcts("write->publish", to_pub, got, 1e-3, "us");
    print_pcts("write->seen", to_seen, got, 1e-3, "us");
    print_pcts("ticks later", ticks, got, 1.0, "ticks");
    printf("(a lockstep client writes just after a publish; the next tick consumes the command, "
           "so write->publish is one period plus that tick's work when nothing is missed)\n");
    rc = 0;
out:
    hs_client_detach(c);
    kill(hs, SIGTERM);
    int status = 0;
    waitpid(hs, &status, 0);
    unlink(cfg);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "shmio_rtt: hilsim ended with status 0x%x; its output: %s\n", status, log);
        rc = 1;
    } else {
        unlink(log);
    }
    free(to_pub);
    free(to_seen);
    free(ticks);
    return rc;
}
