/* The real-time run shared by `hilsim run` and `hilsim bench`: config -> bench -> I/O ->
 * self-audit -> warm-up -> the tick loop on the calling thread, with a supervisor thread for
 * signals, the RT log ring, SIGHUP reloads and systemd notifications. */
#ifndef HS_CLI_RUNNER_H
#define HS_CLI_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "rt/rt_audit.h"
#include "rt/tick_loop.h"

struct hs_runner_opts {
    const char *config;
    double duration_s; /* 0: until SIGINT/SIGTERM */
    bool require_rt;   /* also settable in the config (rt.require_rt) */
    bool no_rt;        /* ask for no real-time privileges at all (tests, laptops) */
    const char *scenario, *junit, *result_json; /* --scenario and its verdict files */
};

struct hs_bench_can;
struct hs_scenario;

struct hs_runner {
    struct hs_runner_opts o;
    const struct hs_config *cfg;
    struct hs_bench *bench;
    struct hs_tick_loop *loop;
    struct hs_rt_opts rt;
    struct hs_tick_config tick;
    struct hs_rt_process proc;
    struct hs_rt_report proc_report;
    struct hs_rt_audit audit;      /* at start; refreshed with the thread report after the run */
    struct hs_cfg_budgets budgets; /* SIGHUP may change them */
    struct hs_bench_can *can; /* the CAN module when the bench has nodes (owned by the bench) */
    bool rt_capable;
    char rt_why[256];
    int loop_rc;
    bool stop_before_start;       /* a stop signal cut the warm-up: the loop runs no tick */
    struct hs_scenario *scenario; /* --scenario (owned by the bench), or NULL */
};

/* Warm-up ticks between two looks for a pending SIGINT/SIGTERM (a sigpending call). */
#define HS_RUNNER_WARMUP_CHECK 64
/* A second SIGINT/SIGTERM gives the loop this long (or 10 periods, if longer) to reach a tick
 * boundary; then the I/O modules' emergency stop runs without it and the process exits 1. */
#define HS_RUNNER_SECOND_SIGNAL_GRACE_NS 500000000LL

/* The signals the supervisor handles (SIGINT, SIGTERM, SIGHUP, SIGUSR1); prepare blocks them. */
void hs__runner_signals(sigset_t *ret);
/* Returns 0 or an exit code (HS_EXIT_USAGE for bad input, HS_EXIT_FAILURE otherwise), having
 * reported the error once. */
int hs__runner_prepare(const struct hs_runner_opts *o, struct hs_runner *r);
/* Runs the loop until the duration or a signal; then safe stop. 0 or an exit code. */
int hs__runner_run(struct hs_runner *r);
void hs__runner_print_summary(struct hs_runner *r, FILE *out);
/* After a plant fault (warm-up or loop): logs its one-line cause, runs the safe stop and
 * returns HS_EXIT_PLANT_FAULT. */
int hs__runner_plant_fault(struct hs_runner *r, const char *when);
/* Logs ODE's messages that are due (rate limit: 1st, 10th, 100th, ... report of each); with
 * summary, one line per distinct message with its count. The stepping thread, or the
 * supervisor (which reads only the world's atomics). */
void hs__log_ode_messages(struct hs_world *w, bool summary);
void hs__runner_cleanup(struct hs_runner *r);

/* notify.c: sd_notify when built with libsystemd and NOTIFY_SOCKET is set; else nothing. */
void hs__notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Watchdog interval in µs from WATCHDOG_USEC (0 when not requested). */
unsigned long long hs__notify_watchdog_usec(void);

/* io_attach.c: attaches the CAN and shm I/O modules the config asks for. init only. Each
 * returns 0 (nothing to do, or attached) or a negative errno with d set. */
int hs__attach_io(struct hs_runner *r, struct hs_diag *d);
int hs__attach_can(struct hs_runner *r, struct hs_diag *d); /* io_attach_can.c */
/* io_attach_can.c: one line per bus and node and the MIT latency; accepts NULL. Not RT. */
void hs__can_print_summary(const struct hs_bench_can *can, FILE *out);
/* Supervisor thread, about once a second: polls the CAN controllers over netlink (state, error
 * counters, bus-off restart policy) and logs changes. Accepts NULL. */
void hs__can_link_poll(struct hs_bench_can *can, int64_t now_ns);
/* "; can0 error-active, ..." for STATUS= (empty without CAN). Any thread. */
void hs__can_status(const struct hs_bench_can *can, char *buf, size_t size);
/* Frames the kernel dropped on every bus (SO_RXQ_OVFL); 0 without CAN. */
uint64_t hs__can_rx_drops(const struct hs_bench_can *can);
int hs__attach_shm(struct hs_runner *r, struct hs_diag *d); /* io_attach_shm.c */

#endif
