#include "hilsim/service/runner.h"

#include "hilsim/report_health.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hilsim/service/exit_codes.h"
#include "emergency.h"
#include "hilsim/service/io_module.h"
#include "hilsim/bounded_write.h"
#include "hilsim/log.h"
#include "hilsim/record.h"
#include "reload.h"
#include "hilsim/service/sync_clock.h"
#include "hilsim/rt/rt_clock.h"

/* ---- tick phases: the bench's, timed by the loop ----
 * Every phase gets the tick clock (now_ns): the wake in wall mode, simulated time in lockstep,
 * so every timeout of the plant and the I/O modules runs on it. */
static int ph_inputs(void *ctx, const struct hs_tick_info *t)
{
    hs_bench_set_planned(ctx, t->planned_ns);
    return hs_bench_inputs(ctx, t->now_ns);
}
static int ph_actuation(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_actuation(ctx, t->now_ns);
}
static int ph_physics(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_physics(ctx, t->now_ns, t->tick);
}
static int ph_sensors(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_sensors(ctx, t->now_ns, t->tick);
}
static int ph_outputs(void *ctx, const struct hs_tick_info *t)
{
    return hs_bench_outputs(ctx, t->now_ns, t->tick);
}
/* The lockstep gate: the bench's release sources (shm, or CAN: rt.clock.lockstep_source). */
static int gate_wait(void *ctx, uint64_t tick, int64_t deadline_ns)
{
    (void)tick;
    return hs_bench_wait_release(ctx, deadline_ns);
}
static void ph_safe_hold(void *ctx, const struct hs_tick_info *t)
{
    (void)t;
    hs_bench_enter_safe_hold(ctx);
}

static const struct hs_tick_ops bench_ops = {
    .inputs = ph_inputs,
    .actuation = ph_actuation,
    .physics = ph_physics,
    .sensors = ph_sensors,
    .outputs = ph_outputs,
    .on_safe_hold = ph_safe_hold,
};

static enum hs_overrun_policy policy_from_config(enum hs_cfg_overrun_policy p)
{
    return p == HS_CFG_OVERRUN_CATCH_UP ? HS_OVERRUN_CATCH_UP
           : p == HS_CFG_OVERRUN_STOP   ? HS_OVERRUN_STOP
                                        : HS_OVERRUN_SKIP;
}

static void fill_rt(struct hs_runner *r)
{
    const struct hs_cfg_rt *c = &r->cfg->rt;
    r->rt = HS_RT_OPTS_DEFAULT;
    r->rt.priority = r->o.no_rt ? 0 : c->priority;
    r->rt.cpu = c->cpu;
    r->rt.lock_memory = !r->o.no_rt && c->lock_memory;
    r->rt.hold_dma_latency = !r->o.no_rt && c->cpu_dma_latency;
    r->rt.require_rt = r->o.require_rt || c->require_rt;
    if (r->o.no_rt)
        r->rt.prefault_stack_kib = 256;
    r->tick = (struct hs_tick_config){
        .period_ns = (int64_t)c->period_ns,
        .policy = policy_from_config(c->overrun_policy),
        .leaky_inc = c->overrun_leaky.increment,
        .leaky_threshold = c->overrun_leaky.threshold,
        .leaky_action =
            c->overrun_leaky.action == HS_CFG_LEAKY_STOP ? HS_LEAKY_STOP : HS_LEAKY_SAFE_HOLD,
        .hist_range_ns = (int64_t)c->histogram_max_us * 1000,
        .no_trace = !r->cfg->trace.enabled,
    };
    r->clock_mode = r->o.clock_given ? r->o.clock_mode : c->clock.mode;
    r->tick.clock = (struct hs_tick_clock){
        .mode = r->clock_mode,
        .lockstep_timeout_ns = (int64_t)llround(c->clock.lockstep_timeout_s * 1e9),
        .on_timeout = c->clock.on_timeout,
    };
    if (r->o.duration_s > 0)
        r->tick.max_ticks = (uint64_t)llround(r->o.duration_s * 1e9 / (double)c->period_ns);
}

void hs__runner_signals(sigset_t *ret)
{
    sigemptyset(ret);
    sigaddset(ret, SIGINT);
    sigaddset(ret, SIGTERM);
    sigaddset(ret, SIGHUP);
    sigaddset(ret, SIGUSR1);
}

static void io_emergency(void *ctx)
{
    struct hs_runner_io *io = ctx;
    io->module->emergency(io->runner, io->state);
}

/* Attaches every registered I/O module the config asks for, in registry order, and registers
 * the emergency hooks of those attached. */
static int attach_io(struct hs_runner *r, struct hs_diag *d)
{
    for (uint32_t i = 0; i < hs_service_io_count; i++) {
        const struct hs_service_io *m = hs_service_io_modules[i];
        void *state = NULL;
        int rc = m->attach(r, &state, d);
        if (rc < 0)
            return rc;
        if (!state)
            continue;
        struct hs_runner_io *io = &r->io[r->nio++];
        *io = (struct hs_runner_io){.module = m, .state = state, .runner = r};
        if (m->emergency && hs__emergency_register(m->name, io_emergency, io) < 0)
            hs_log(HS_LOG_WARNING, "%s: no emergency stop slot left", m->name);
    }
    return 0;
}

uint64_t hs__runner_input_drops(const struct hs_runner *r)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < r->nio; i++)
        if (r->io[i].module->input_drops)
            n += r->io[i].module->input_drops(r->io[i].state);
    return n;
}

/* Warm-up: every phase runs for real (no sleeping) so caches, lazily bound symbols and ODE's
 * arenas are hot before the first measured tick. SIGINT/SIGTERM are blocked (the supervisor
 * does not exist yet), so a pending one is looked for every HS_RUNNER_WARMUP_CHECK ticks and
 * cuts the warm-up short; it stays pending for the supervisor, which stops the loop before its
 * first tick. Returns the ticks run.
 * The I/O modules are attached before the warm-up on purpose: their phases get warm too, and
 * the joints they claim are never driven by the demo controller with warm-up times (which run
 * ahead of the clock and would make its commands look fresh long after). The bench's
 * "warming up" flag keeps what the modules build inside the process meanwhile: no shm tick a
 * client would see run faster than real time, no CAN frame on a real bus (counted). */
static int warm_up(struct hs_runner *r, uint32_t *ret_done)
{
    uint32_t n = r->cfg->rt.warmup_ticks, k = 0;
    int64_t t0 = hs_rt_now_ns();
    /* Lockstep: simulated time goes on from the warm-up's last made-up time, however long the
     * warm-up took, so the demo trajectory's origin and every age are the same in every run. */
    hs_tick_loop_set_sim_start(r->loop, t0 + (int64_t)n * r->tick.period_ns);
    for (; k < n; k++) {
        if (k % HS_RUNNER_WARMUP_CHECK == 0) {
            sigset_t pending;
            sigpending(&pending);
            if (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM))
                break;
        }
        if (hs_bench_tick(r->bench, t0 + (int64_t)k * r->tick.period_ns, k) < 0 &&
            hs_bench_fault(r->bench)) {
            *ret_done = k;
            return -EFAULT;
        }
    }
    *ret_done = k;
    return 0;
}

int hs__runner_prepare(const struct hs_runner_opts *o, struct hs_runner *r)
{
    /* Blocked before anything is built: a SIGTERM during start-up (model loading, warm-up, a
     * segment just created) waits for the supervisor, which stops the loop at its first tick
     * and cleans up, instead of killing the process and leaving a stale shm segment. Threads
     * created later inherit the mask. */
    sigset_t sigs;
    hs__runner_signals(&sigs);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    memset(r, 0, sizeof *r);
    int erc = hs__emergency_install();
    if (erc < 0)
        hs_log(HS_LOG_WARNING, "no emergency stop on fatal signals: %s", strerror(-erc));
    r->o = *o;
    r->proc.dma_fd = -1;
    struct hs_diag d = {0};
    int rc;
    if ((rc = hs_config_load_sets(o->config, o->sets, o->nsets, &r->cfg, &d)) < 0) {
        hs_log_diag(&d);
        return rc == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
    }
    r->budgets = r->cfg->budgets;
    fill_rt(r);
    if (o->duration_s > 0 && r->tick.max_ticks == 0) {
        /* max_ticks 0 means "until stopped": a --duration that rounds to no tick is refused */
        hs_log(HS_LOG_ERR, "--duration %g s is shorter than half a tick (%.3f ms)", o->duration_s,
               (double)r->tick.period_ns / 1e6);
        return HS_EXIT_USAGE;
    }

    /* The audit comes first: with --require-rt a host that is not real-time capable is
     * refused before anything is built. */
    hs_rt_audit_collect(&r->audit, NULL, NULL);
    r->rt_capable = hs_rt_audit_rt_capable(&r->audit, r->rt_why, sizeof r->rt_why);
    if (!r->rt_capable && r->rt.require_rt) {
        hs_log(HS_LOG_ERR, "refusing to run: this host is not real-time capable (%s)", r->rt_why);
        return HS_EXIT_FAILURE;
    }
    if (!r->rt_capable)
        hs_log(HS_LOG_WARNING,
               "*** NOT A REAL-TIME HOST: %s. hilsim runs, but its timing does not qualify "
               "a bench (use --require-rt to refuse) ***",
               r->rt_why);

    if ((rc = hs_bench_create(r->cfg, &r->bench, &d)) < 0) {
        hs_log_diag(&d);
        return rc == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
    }
    for (uint32_t i = 0; i < r->cfg->nmodels; i++) /* what the loader tolerated, once */
        for (uint32_t k = 0; k < hs_bench_model(r->bench, i)->nwarnings; k++)
            hs_log(HS_LOG_WARNING, "%s", hs_bench_model(r->bench, i)->warnings[k]);
    for (uint32_t i = 0; i < hs_bench_warning_count(r->bench); i++)
        hs_log(HS_LOG_WARNING, "%s", hs_bench_warning(r->bench, i));
    hs_bench_set_clock_mode(r->bench, r->clock_mode);
    if ((rc = attach_io(r, &d)) < 0) {
        hs_log_diag(&d);
        return rc == -EINVAL ? HS_EXIT_USAGE : HS_EXIT_FAILURE;
    }
    if (hs_tick_loop_create(&r->tick, &r->rt, &bench_ops, r->bench, &r->loop, &d) < 0) {
        hs_log_diag(&d);
        return HS_EXIT_USAGE;
    }
    if (r->clock_mode == HS_CLOCK_LOCKSTEP) {
        if (hs_bench_release_sources(r->bench) == 0) {
            hs_log(HS_LOG_ERR,
                   "%s: rt.clock.mode lockstep: nothing can release the ticks (enable shm: a "
                   "local controller releases each tick; or rt.clock.sync.source can: the "
                   "bus's SYNC does; or rt.clock.lockstep_source can_commands: the CAN nodes' "
                   "commands do)",
                   r->cfg->path);
            return HS_EXIT_USAGE;
        }
        hs_tick_loop_set_gate(r->loop, &(struct hs_tick_gate){.wait = gate_wait, .ctx = r->bench});
    }
    if ((rc = hs__sync_clock_attach(r, &r->sync, &d)) < 0) {
        hs_log_diag(&d);
        return rc == -EINVAL ? HS_EXIT_USAGE : HS_EXIT_FAILURE;
    }
    /* mlockall after everything is allocated, so the whole working set is locked. */
    rc = hs_rt_setup_process(&r->rt, &r->proc, &r->proc_report);
    if (rc < 0) {
        hs_log(HS_LOG_ERR, "real-time process set-up refused: %s", strerror(-rc));
        return HS_EXIT_FAILURE;
    }
    if (r->rt.lock_memory && r->proc_report.mlockall.state == HS_RT_REFUSED)
        hs_log(HS_LOG_WARNING, "mlockall refused (%s): page faults may stall ticks",
               strerror(r->proc_report.mlockall.err));

    if (r->cfg->rt.warmup_ticks)
        hs_log(HS_LOG_INFO, "warming up: %u ticks (SIGINT/SIGTERM cut it short)",
               r->cfg->rt.warmup_ticks);
    uint32_t warm = 0;
    hs_bench_set_warming_up(r->bench, true);
    int wrc = warm_up(r, &warm);
    hs_bench_set_warming_up(r->bench, false);
    hs_world_health_reset(hs_bench_world(r->bench)); /* judge the run, not the landing */
    if (wrc < 0) {
        hs__log_ode_messages(hs_bench_world(r->bench), true);
        return hs__runner_plant_fault(r, "warm-up");
    }
    if (warm < r->cfg->rt.warmup_ticks) {
        r->stop_before_start = true;
        hs_log(HS_LOG_INFO, "stop requested during warm-up: cut at tick %u of %u", warm,
               r->cfg->rt.warmup_ticks);
    }
    return 0;
}

/* ---- supervisor thread: signals, log ring, status, watchdog ---- */
/* Who ends the run: the tick thread once its loop returned (STOPPING), or the supervisor when
 * the loop did not reach a tick boundary within the grace a second stop signal gives it
 * (ABANDONED). Exactly one of them wins the compare-and-swap from RUNNING. */
enum { PHASE_RUNNING, PHASE_STOPPING, PHASE_ABANDONED };

struct supervisor {
    struct hs_runner *r;
    sigset_t sigs;
    atomic_bool done;
    _Atomic int phase;
    int signals;
    int64_t abandon_at_ns; /* 0: no second signal yet */
};

/* The recording's event kind for an RT log record (the two enums are numbered apart: the
 * recording's is a file format, the ring's grows with the loop). */
static enum hs_rec_event_kind rec_event_kind(uint32_t kind)
{
    switch (kind) {
    case HS_RT_LOG_OVERRUN:
        return HS_REC_EV_OVERRUN;
    case HS_RT_LOG_SKIP:
        return HS_REC_EV_SKIP;
    case HS_RT_LOG_SAFE_HOLD:
        return HS_REC_EV_SAFE_HOLD;
    case HS_RT_LOG_STOP:
        return HS_REC_EV_STOP;
    case HS_RT_LOG_STALL:
        return HS_REC_EV_STALL;
    case HS_RT_LOG_LOCKSTEP:
    case HS_RT_LOG_SYNC_LOCKED:
    case HS_RT_LOG_SYNC_LOST:
        return HS_REC_EV_LOCKSTEP;
    default:
        return HS_REC_EV_NOTE;
    }
}

/* FINAL: the run is over, so the open second's held-back overruns and skips are printed too. */
static void drain_log(struct hs_runner *r, bool final)
{
    struct hs_rt_log_rec rec;
    char line[256];
    while (hs_rt_ring_pop(hs_tick_loop_log(r->loop), &rec) == 0) {
        if (r->rec)
            hs_rec_event(r->rec, rec_event_kind(rec.kind), rec.tick, rec.a, rec.b, rec.what);
        bool summary;
        bool as_is = hs__rt_log_summary_take(&r->log_summary, &rec, line, sizeof line, &summary);
        if (summary)
            hs_log(HS_LOG_WARNING, "%s", line);
        if (!as_is)
            continue;
        hs_rt_log_format(&rec, line, sizeof line);
        /* A stop on request or at the end of --duration is normal, not a warning. */
        bool normal = rec.kind == HS_RT_LOG_STALL || rec.kind == HS_RT_LOG_SYNC_LOCKED ||
                      (rec.kind == HS_RT_LOG_STOP && rec.b == 0 &&
                       (rec.a == HS_TICK_STOP_REQUESTED || rec.a == HS_TICK_STOP_MAX_TICKS));
        hs_log(normal ? HS_LOG_INFO : HS_LOG_WARNING, "%s", line);
    }
    if (final && hs__rt_log_summary_flush(&r->log_summary, line, sizeof line))
        hs_log(HS_LOG_WARNING, "%s", line);
}

static int64_t grace_ns(const struct hs_runner *r)
{
    int64_t g = 10 * r->tick.period_ns;
    return g > HS_RUNNER_SECOND_SIGNAL_GRACE_NS ? g : HS_RUNNER_SECOND_SIGNAL_GRACE_NS;
}

/* The loop is stuck inside a tick and a second stop signal came: stop the I/O without it (the
 * async-signal-safe stop frames), print what can be read while the loop thread still runs, and
 * end the process. */
static void abandon(struct supervisor *s)
{
    struct hs_runner *r = s->r;
    hs__notify("STOPPING=1");
    int hooks = hs__emergency_run();
    hs_log(HS_LOG_ERR,
           "the tick loop did not reach a tick boundary within %.0f ms of the second signal: "
           "emergency stop (%d I/O module%s) without it",
           (double)grace_ns(r) / 1e6, hooks, hooks == 1 ? "" : "s");
    drain_log(r, true);
    struct hs_tick_progress p;
    hs_tick_loop_progress(r->loop, &p);
    char line[400];
    int n = snprintf(line, sizeof line,
                     "stopped: abandoned inside a tick (second signal); ticks %llu, deadline "
                     "misses %llu, skipped periods %llu%s; worst tick %.1f us, worst wake %.1f us "
                     "(no per-phase table: the loop never returned)\n",
                     (unsigned long long)p.ticks, (unsigned long long)p.overruns,
                     (unsigned long long)p.missed_periods, p.safe_hold ? ", SAFE HOLD latched" : "",
                     (double)p.worst_tick_ns / 1e3, (double)p.worst_wake_ns / 1e3);
    /* bounded: a reader who stopped reading must not keep the process from ending */
    hs_write_bounded(STDOUT_FILENO, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1,
                     HS_LOG_WAIT_MS);
    _exit(HS_EXIT_FAILURE);
}

static void on_stop_signal(struct supervisor *s, int sig)
{
    const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    if (++s->signals == 1) {
        hs_log(HS_LOG_INFO, "%s: stopping at the next tick boundary", name);
        hs_tick_loop_request_stop(s->r->loop); /* STOPPING=1 follows when the loop ends */
        return;
    }
    if (atomic_load(&s->phase) != PHASE_RUNNING) {
        hs_log(HS_LOG_WARNING, "%s again: already stopping", name);
        return;
    }
    if (!s->abandon_at_ns) {
        hs_log(HS_LOG_WARNING,
               "%s again: the loop gets %.0f ms more to stop, then the I/O is stopped without it",
               name, (double)grace_ns(s->r) / 1e6);
        s->abandon_at_ns = hs_rt_now_ns() + grace_ns(s->r);
    }
}

static void *supervise(void *arg)
{
    struct supervisor *s = arg;
    struct hs_runner *r = s->r;
    pthread_setname_np(pthread_self(), "hs-supervise"); /* `ps -L`, `top -H` */
    unsigned long long wd_usec = hs__notify_watchdog_usec();
    int64_t next_status = 0, next_wd = 0;
    uint64_t wd_last_ticks = UINT64_MAX;
    const char *hook = getenv("HILSIM_TEST_HOOKS");
    bool hooks = hook && !strcmp(hook, "1");
    while (!atomic_load(&s->done)) {
        struct timespec to = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
        int sig = sigtimedwait(&s->sigs, NULL, &to);
        if (sig == SIGINT || sig == SIGTERM) {
            on_stop_signal(s, sig);
        } else if (sig == SIGHUP) {
            hs__notify("RELOADING=1");
            hs__runner_reload(r);
            hs__notify("READY=1");
        } else if (sig == SIGUSR1 && hooks) {
            /* Test hook: stall the RT loop once, to prove the watchdog notices. */
            const char *ms = getenv("HILSIM_TEST_STALL_MS");
            hs_tick_loop_inject_stall(r->loop, (ms ? atoll(ms) : 3000) * 1000000LL);
        }
        drain_log(r, false);
        hs__log_ode_messages(hs_bench_world(r->bench), false);
        int64_t now = hs_rt_now_ns();
        if (s->abandon_at_ns && now >= s->abandon_at_ns) {
            int expect = PHASE_RUNNING;
            if (atomic_compare_exchange_strong(&s->phase, &expect, PHASE_ABANDONED))
                abandon(s); /* does not return */
        }
        struct hs_tick_progress p;
        hs_tick_loop_progress(r->loop, &p);
        if (now >= next_status) {
            char io_status[256];
            io_status[0] = 0;
            for (uint32_t i = 0, n = 0; i < r->nio && n < sizeof io_status; i++) {
                const struct hs_runner_io *io = &r->io[i];
                if (io->module->supervise)
                    io->module->supervise(io->state, now);
                if (io->module->status) {
                    io->module->status(io->state, io_status + n, sizeof io_status - n);
                    n += strlen(io_status + n);
                }
            }
            char sync_status[160];
            hs__sync_clock_status_line(r->sync, sync_status, sizeof sync_status);
            hs__notify("STATUS=tick %llu, misses %llu (skipped periods %llu), worst tick %.1f us, "
                       "worst wake %.1f us%s%s%s",
                       (unsigned long long)p.ticks, (unsigned long long)p.overruns,
                       (unsigned long long)p.missed_periods, (double)p.worst_tick_ns / 1e3,
                       (double)p.worst_wake_ns / 1e3, p.safe_hold ? ", SAFE HOLD" : "",
                       p.waiting ? ", lockstep: waiting for the controller" : sync_status,
                       io_status);
            next_status = now + 1000000000LL;
        }
        /* WATCHDOG=1 only while the loop makes progress: a stalled loop stops the pings and
         * systemd restarts the service. */
        if (wd_usec && now >= next_wd) {
            /* Lockstep: a loop waiting for its controller is alive (its gate polls advance). */
            uint64_t alive = p.ticks + p.gate_polls;
            if (alive != wd_last_ticks)
                hs__notify("WATCHDOG=1");
            wd_last_ticks = alive;
            next_wd = now + (int64_t)wd_usec * 1000 / 2;
        }
    }
    drain_log(r, true);
    return NULL;
}

int hs__runner_run(struct hs_runner *r)
{
    static struct supervisor s; /* static: abandon() may _exit while this thread still runs */
    memset(&s, 0, sizeof s);
    s.r = r;
    atomic_init(&s.phase, PHASE_RUNNING);
    hs__runner_signals(&s.sigs); /* blocked since prepare: only the supervisor takes them */
    if (r->stop_before_start) {
        /* The warm-up was cut by a stop request, which the supervisor also logs: the loop
         * returns before its first tick, and the stop is the normal one. */
        hs_tick_loop_request_stop(r->loop);
    }
    pthread_t sup;
    if (pthread_create(&sup, NULL, supervise, &s) != 0) {
        hs_log(HS_LOG_ERR, "cannot start the supervisor thread");
        return HS_EXIT_FAILURE;
    }
    if (!r->stop_before_start) {
        hs__notify("READY=1\nSTATUS=running");
        hs_log(HS_LOG_INFO, "running bench '%s': period %.3f ms, %u joints, %u sensors",
               r->cfg->bench.name, (double)r->tick.period_ns / 1e6, hs_bench_joint_count(r->bench),
               hs_bench_sensor_count(r->bench));
    }
    r->loop_rc = hs_tick_loop_run(r->loop);
    int expect = PHASE_RUNNING;
    if (!atomic_compare_exchange_strong(&s.phase, &expect, PHASE_STOPPING))
        for (;;)
            pause(); /* the supervisor abandoned the loop and ends the process */
    hs__notify("STOPPING=1");
    int fault_rc = hs_bench_fault(r->bench) ? hs__runner_plant_fault(r, "the run") : 0;
    hs_bench_safe_stop(r->bench);
    hs_log(HS_LOG_INFO, "safe stop: %u joints set to their safe behaviour",
           hs_bench_joint_count(r->bench));
    atomic_store(&s.done, true);
    pthread_join(sup, NULL);
    if (r->rec) { /* after the safe stop's frames and the supervisor's last events */
        struct hs_tick_result res;
        hs_tick_loop_result(r->loop, &res);
        int wr = hs_rec_finish(r->rec, hs_tick_stop_reason_name(res.reason));
        if (wr < 0)
            hs_log(HS_LOG_ERR, "recording %s: write failed: %s", hs_rec_dir(r->rec), strerror(-wr));
    }
    hs__log_ode_messages(hs_bench_world(r->bench), true);
    hs_rt_audit_collect(&r->audit, NULL, hs_tick_loop_rt_report(r->loop));
    r->audit.report.mlockall = r->proc_report.mlockall;
    r->audit.report.dma_latency = r->proc_report.dma_latency;
    if (r->loop_rc == -EPERM) {
        hs_log(HS_LOG_ERR, "real-time set-up refused and required: %s", strerror(-r->loop_rc));
        return HS_EXIT_FAILURE;
    }
    if (fault_rc)
        return fault_rc;
    return r->loop_rc < 0 ? HS_EXIT_FAILURE : HS_EXIT_OK;
}

/* The clock mode and how fast simulated time went: in lockstep the real-time factor is what
 * the controller and the plant together reach. */
static void print_clock(const struct hs_runner *r, const struct hs_tick_result *res, FILE *out)
{
    double sim_s = (double)res->ticks * (double)r->tick.period_ns / 1e9;
    double run_s = (double)res->run_ns / 1e9;
    fprintf(out, "clock %s: %.3f s simulated in %.3f s, real-time factor %.2f",
            hs_clock_mode_name(r->tick.clock.mode), sim_s, run_s, run_s > 0 ? sim_s / run_s : 0.0);
    if (r->tick.clock.mode == HS_CLOCK_LOCKSTEP)
        fprintf(out, "; waited %.3f s for releases, %llu wait%s expired (on_timeout %s)",
                (double)res->wait_ns / 1e9, (unsigned long long)res->lockstep_timeouts,
                res->lockstep_timeouts == 1 ? "" : "s",
                hs_lockstep_expiry_name(r->tick.clock.on_timeout));
    fprintf(out, "\n");
}

void hs__runner_print_summary(struct hs_runner *r, FILE *out)
{
    static char buf[16384];
    struct hs_tick_result res;
    hs_tick_loop_result(r->loop, &res);
    hs_rt_audit_format_text(&r->audit, buf, sizeof buf);
    fprintf(out, "self-audit:\n%s\n", buf);
    hs_rt_stats_format_text(hs_tick_loop_stats(r->loop), buf, sizeof buf);
    fprintf(out, "%s", buf);
    fprintf(out, "stopped: %s; ticks %llu, deadline misses %llu, skipped periods %llu%s\n",
            hs_tick_stop_reason_name(res.reason), (unsigned long long)res.ticks,
            (unsigned long long)res.overruns, (unsigned long long)res.missed_periods,
            res.safe_hold ? ", SAFE HOLD latched" : "");
    print_clock(r, &res, out);
    hs__sync_clock_summary(r->sync, out);
    if (hs_bench_fault(r->bench)) {
        char why[512];
        hs_bench_fault_format(r->bench, why, sizeof why);
        fprintf(out, "plant fault: %s\n", why);
    }
    for (uint32_t i = 0; i < hs_bench_joint_count(r->bench); i++) {
        const struct hs_bench_joint *j = hs_bench_joint(r->bench, i);
        struct hs_plant_joint_counters c;
        hs_plant_joint_counters(j->plant, j->plant_joint, &c);
        if (c.stale_events || c.torque_saturations || c.current_saturations || c.invalid_commands)
            fprintf(out,
                    "joint %s: %llu stale-command fallbacks, %llu torque / %llu current "
                    "saturated ticks, %llu invalid commands\n",
                    j->name, (unsigned long long)c.stale_events,
                    (unsigned long long)c.torque_saturations,
                    (unsigned long long)c.current_saturations,
                    (unsigned long long)c.invalid_commands);
    }
    for (uint32_t i = 0; i < r->nio; i++)
        if (r->io[i].module->summary)
            r->io[i].module->summary(r->io[i].state, out);
    struct hs_world_health_summary health;
    hs_world_health_summary(hs_bench_world(r->bench), &health);
    hs_report_health_text(&health, buf, sizeof buf);
    fprintf(out, "%s", buf);
    if (hs_report_health_over_budget(&health))
        hs_log(HS_LOG_WARNING, "solver health over budget (physics.health) in some steps: the "
                               "contact forces and joint states there are not to be trusted; "
                               "see config/README.md, \"Contacts and solver health\"");
}

void hs__runner_cleanup(struct hs_runner *r)
{
    hs__emergency_clear(); /* before the modules the hooks point into are destroyed */
    hs_tick_loop_destroy(r->loop);
    hs__sync_clock_destroy(r->sync);
    hs_bench_destroy(r->bench);
    hs_rec_destroy(r->rec); /* after the bench: its CAN buses and module point into it */
    hs_rt_process_release(&r->proc);
    hs_config_free(r->cfg);
    memset(r, 0, sizeof *r);
}
