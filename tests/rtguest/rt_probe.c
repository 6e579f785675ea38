/* rt_probe [PRIORITY]: asks the kernel for what hilsim's RT thread relies on (SCHED_FIFO at
 * PRIORITY, default 80; all memory locked; absolute sleeps on CLOCK_MONOTONIC), reads back what
 * was granted and prints one line per request. Exits 1 if any request is refused or not honoured,
 * 2 on bad usage. Meant to run inside the PREEMPT_RT guest (tests/rtguest); it asserts no timing.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static int parse_priority(const char *text, int *ret_prio)
{
    char *end = NULL;
    long prio;

    errno = 0;
    prio = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0')
        return -EINVAL;
    if (prio < sched_get_priority_min(SCHED_FIFO) || prio > sched_get_priority_max(SCHED_FIFO))
        return -ERANGE;
    *ret_prio = (int)prio;
    return 0;
}

static int probe_fifo(int prio)
{
    struct sched_param want = {.sched_priority = prio};
    struct sched_param got = {0};
    int policy;

    if (sched_setscheduler(0, SCHED_FIFO, &want) != 0) {
        printf("sched_fifo: refused priority %d: %s\n", prio, strerror(errno));
        return -1;
    }
    policy = sched_getscheduler(0);
    if (policy != SCHED_FIFO || sched_getparam(0, &got) != 0 || got.sched_priority != prio) {
        printf("sched_fifo: accepted but reads back policy %d priority %d\n", policy,
               got.sched_priority);
        return -1;
    }
    printf("sched_fifo: granted, priority %d\n", prio);
    return 0;
}

/* VmLck from /proc/self/status, in kB; -1 when it cannot be read. */
static long locked_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *status = fopen("/proc/self/status", "r");

    if (status == NULL)
        return -1;
    while (fgets(line, sizeof line, status) != NULL) {
        if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
            break;
    }
    fclose(status);
    return kb;
}

static int probe_mlockall(void)
{
    long kb;

    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
        printf("mlockall: refused: %s\n", strerror(errno));
        return -1;
    }
    kb = locked_kb();
    if (kb <= 0) {
        printf("mlockall: accepted but VmLck is %ld kB\n", kb);
        return -1;
    }
    printf("mlockall: granted, %ld kB locked\n", kb);
    return 0;
}

/* A few 1 ms absolute sleeps, as the tick loop does. Only that they return in order is checked. */
static int probe_abs_sleep(void)
{
    struct timespec next;
    struct timespec now;
    int rc;

    if (clock_gettime(CLOCK_MONOTONIC, &next) != 0) {
        printf("clock_nanosleep: clock_gettime failed: %s\n", strerror(errno));
        return -1;
    }
    for (int i = 0; i < 10; i++) {
        next.tv_nsec += 1000000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        if (rc != 0) {
            printf("clock_nanosleep: failed: %s\n", strerror(rc));
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec < next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec < next.tv_nsec)) {
            printf("clock_nanosleep: woke before its deadline\n");
            return -1;
        }
    }
    printf("clock_nanosleep: 10 absolute 1 ms sleeps returned after their deadlines\n");
    return 0;
}

int main(int argc, char **argv)
{
    int prio = 80;
    int failed = 0;

    if (argc > 2 || (argc == 2 && parse_priority(argv[1], &prio) != 0)) {
        fprintf(stderr, "usage: %s [SCHED_FIFO priority 1..99]\n", argv[0]);
        return 2;
    }
    failed |= probe_fifo(prio) != 0;
    failed |= probe_mlockall() != 0;
    failed |= probe_abs_sleep() != 0;
    return failed ? 1 : 0;
}
