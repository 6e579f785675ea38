/* The real-time run shared by `hilsim run` and `hilsim bench`: config -> bench -> I/O ->
 * self-audit -> warm-up -> the tick loop on the calling thread, with a supervisor thread for
 * signals, the RT log ring, SIGHUP reloads and systemd notifications. */
#ifndef HS_SERVICE_RUNNER_H
#define HS_SERVICE_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/service/io_module.h"
#include "hilsim/rt/rt_audit.h"
#include "hilsim/rt/tick_loop.h"
#include "hilsim/service/rt_log_summary.h"

struct hs_recorder;

#define HS_RUNNER_MAX_SETS 64

struct hs_runner_opts {
    const char *config;
    double duration_s; /* 0: until SIGINT/SIGTERM */
    bool require_rt;   /* also settable in the config (rt.require_rt) */
    bool no_rt;        /* ask for no real-time privileges at all (tests, laptops) */
    const char *scenario, *junit, *result_json; /* --scenario and its verdict files */
    /* --clock: overrides rt.clock.mode when set (clock_given). */
    bool clock_given;
    enum hs_clock_mode clock_mode;
    const char *record_dir; /* --record DIR (hilsim/record.h), NULL: the config decides */
    /* --set KEY=VALUE overrides of the config (hs_config_load_sets; a reload keeps them) */
    const char *sets[HS_RUNNER_MAX_SETS];
    uint32_t nsets;
};

/* An attached I/O module: its registry entry and its handle (owned by the bench). */
struct hs_runner_io {
    const struct hs_service_io *module;
    void *state;
    struct hs_runner *runner;
};

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
    struct hs_runner_io io[HS_SERVICE_IO_MAX]; /* the attached I/O modules, in registry order */
    uint32_t nio;
    bool rt_capable;
    char rt_why[256];
    int loop_rc;
    bool stop_before_start;        /* a stop signal cut the warm-up: the loop runs no tick */
    enum hs_clock_mode clock_mode; /* in effect: rt.clock.mode or --clock */
    struct hs__sync_clock *sync;   /* sync mode's discipline (sync_clock.h), else NULL */
    struct hs_recorder *rec;       /* NULL unless recording (io_module_record.c); after the bench */
    struct hs_scenario *scenario;  /* --scenario (owned by the bench), or NULL */
    struct hs__rt_log_summary log_summary; /* the supervisor's: overruns and skips per second */
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

/* After the loop: inputs the attached I/O modules lost before reading them (kernel receive
 * queue overflows), for the timing validation's verdict. */
uint64_t hs__runner_input_drops(const struct hs_runner *r);

#endif
