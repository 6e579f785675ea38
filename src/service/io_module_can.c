/* Serves the bench over CAN when the config has CAN nodes (src/bench/io_can.c), and reports the
 * module's counters at safe stop, next to the run's summary. */
#include <errno.h>
#include <stdio.h>

#include "hilsim/log.h"
#include "hilsim/io_can.h"
#include "hilsim/service/io_module.h"
#include "hilsim/service/runner.h"

/* One line per bus, per node and for the MIT latency, for the summary and the safe-stop log. */

typedef void (*line_fn)(void *arg, const char *line);

static void each_line(const struct hs_bench_can *can, line_fn fn, void *arg)
{
    char line[512];
    if (hs_bench_can_warmup_frames_held(can)) {
        snprintf(line, sizeof line,
                 "can: %llu frames of the warm-up ticks held back from the buses",
                 (unsigned long long)hs_bench_can_warmup_frames_held(can));
        fn(arg, line);
    }
    for (uint32_t i = 0; i < hs_bench_can_bus_count(can); i++) {
        struct hs_bench_can_bus_stats s;
        if (hs_bench_can_bus_stats(can, i, &s) < 0)
            continue;
        snprintf(line, sizeof line,
                 "can bus %s (%s): %s, rx %llu frames, tx %llu, unclaimed %llu, bad %llu, "
                 "kernel rx drops %llu, tx dropped %llu, tx replaced %llu, tx errors %llu, "
                 "error frames %llu, bus-off %llu, rx-capped ticks %llu",
                 s.name, s.iface, hs_can_bus_state_name(s.state.bus),
                 (unsigned long long)s.state.rx_frames, (unsigned long long)s.state.tx_frames,
                 (unsigned long long)s.unclaimed, (unsigned long long)s.state.rx_bad,
                 (unsigned long long)s.state.rx_dropped_kernel,
                 (unsigned long long)s.state.tx_dropped, (unsigned long long)s.state.tx_replaced,
                 (unsigned long long)s.state.tx_errors + (unsigned long long)s.send_errors,
                 (unsigned long long)s.err_frames, (unsigned long long)s.state.bus_off_events,
                 (unsigned long long)s.rx_capped_ticks);
        fn(arg, line);
        if (s.relay_drops) {
            snprintf(line, sizeof line,
                     "can bus %s: %llu frames lost between the reply thread and the tick", s.name,
                     (unsigned long long)s.relay_drops);
            fn(arg, line);
        }
        struct hs_can_state link;
        if (hs_bench_can_link_view(can, i, &link) == 0 && link.link_mgmt == HS_CAN_LINK_MGMT_OK) {
            snprintf(line, sizeof line,
                     "can bus %s controller (netlink): %s, TEC %u, REC %u, bus-off %llu, "
                     "restarts %llu",
                     s.name, hs_can_bus_state_name(link.bus), link.tx_err_count, link.rx_err_count,
                     (unsigned long long)link.bus_off_events, (unsigned long long)link.restarts);
            fn(arg, line);
        }
    }
    for (uint32_t i = 0; i < hs_bench_can_node_count(can); i++) {
        struct hs_bench_can_node_stats s;
        if (hs_bench_can_node_stats(can, i, &s) < 0)
            continue;
        snprintf(line, sizeof line,
                 "can node %s (%s, joint %s): %llu frames ok, %llu bad, %llu unsupported, "
                 "%llu timeouts, %llu sent, %llu tx overflow",
                 s.name, s.protocol, s.joint, (unsigned long long)s.node.frames_ok,
                 (unsigned long long)s.node.frames_bad, (unsigned long long)s.node.frames_unknown,
                 (unsigned long long)s.node.timeouts, (unsigned long long)s.node.tx_frames,
                 (unsigned long long)s.node.tx_overflow);
        fn(arg, line);
    }
    double p50, p99, pmax;
    uint64_t n = hs_bench_can_latency_us(can, 50, &p50);
    if (n && hs_bench_can_latency_us(can, 99, &p99) && hs_bench_can_latency_us(can, 100, &pmax) &&
        hs_bench_can_latency_in_ticks(can)) {
        /* simulated time: replies leave with a tick, so the figure is in ticks (0: the tick
         * that applied the command), not a wall-clock latency */
        snprintf(line, sizeof line,
                 "can: MIT command-to-reply latency over %llu node-ticks, in ticks of simulated "
                 "time (lockstep; 0: the reply left with the tick that applied the command): p50 "
                 "%.0f, p99 %.0f, max %.0f ticks",
                 (unsigned long long)n, p50, p99, pmax);
        fn(arg, line);
    } else if (n && hs_bench_can_latency_us(can, 99, &p99) &&
               hs_bench_can_latency_us(can, 100, &pmax)) {
        snprintf(
            line, sizeof line,
            "can: MIT command-to-reply latency over %llu node-ticks: p50 %.0f us, p99 %.0f us, "
            "max %.0f us",
            (unsigned long long)n, p50, p99, pmax);
        fn(arg, line);
    }
}

static void log_line(void *arg, const char *line)
{
    (void)arg;
    hs_log(HS_LOG_INFO, "%s", line);
}

static void print_line(void *arg, const char *line)
{
    fprintf(arg, "%s\n", line);
}

static void summary(const void *state, FILE *out)
{
    const struct hs_bench_can *can = state;
    if (can)
        each_line(can, print_line, out);
}

/* A second I/O entry with only safe_stop: it runs after the CAN module's own safe stop (modules
 * stop in attach order) and borrows the module, which the bench owns. */
static void report_stop(void *ctx, struct hs_bench *b)
{
    (void)b;
    each_line(ctx, log_line, NULL);
}

static const struct hs_bench_io_ops report_ops = {.name = "can-report", .safe_stop = report_stop};

static int attach(struct hs_runner *r, void **ret_state, struct hs_diag *d)
{
    if (r->cfg->can.nnodes == 0)
        return 0;
    struct hs_bench_can *can;
    /* Lockstep runs on simulated time: frames are stamped with the tick's clock, or a node's
     * timeout would compare a wall-clock receive time with simulated time. */
    struct hs_bench_can_opts lockstep = {.tick_time_stamps = true};
    int rc = hs_bench_can_attach(r->bench, r->clock_mode == HS_CLOCK_LOCKSTEP ? &lockstep : NULL,
                                 &can, d);
    if (rc < 0)
        return rc;
    *ret_state = can;
    if (hs_bench_add_io(r->bench, &report_ops, can) < 0)
        hs_log(HS_LOG_WARNING, "can: no I/O slot left for the CAN counters report");
    for (uint32_t i = 0; i < r->cfg->can.nbuses; i++)
        hs_log(HS_LOG_INFO, "can: bus %s on %s", r->cfg->can.buses[i].name,
               r->cfg->can.buses[i].interface);
    return 0;
}

static uint64_t input_drops(const void *state)
{
    const struct hs_bench_can *can = state;
    uint64_t n = 0;
    for (uint32_t i = 0; can && i < hs_bench_can_bus_count(can); i++) {
        struct hs_bench_can_bus_stats s;
        if (hs_bench_can_bus_stats(can, i, &s) == 0)
            n += s.state.rx_dropped_kernel;
    }
    return n;
}

static void status(const void *state, char *buf, size_t size)
{
    const struct hs_bench_can *can = state;
    size_t n = 0;
    buf[0] = 0;
    const char *name;
    enum hs_can_bus_state st;
    uint64_t drops;
    for (uint32_t i = 0; can && hs_bench_can_bus_live(can, i, &name, &st, &drops) == 0; i++) {
        int w =
            snprintf(buf + n, size - n, "%s %s %s", i ? "," : ";", name, hs_can_bus_state_name(st));
        if (w < 0 || (size_t)w >= size - n)
            break;
        if (drops) {
            int d = snprintf(buf + n + (size_t)w, size - n - (size_t)w, " (%llu dropped)",
                             (unsigned long long)drops);
            if (d < 0 || (size_t)d >= size - n - (size_t)w)
                break;
            w += d;
        }
        /* A real controller: its own view through libsocketcan (supervise, same thread). */
        struct hs_can_state link;
        if (hs_bench_can_link_view(can, i, &link) == 0 && link.link_mgmt == HS_CAN_LINK_MGMT_OK) {
            int d = snprintf(buf + n + (size_t)w, size - n - (size_t)w,
                             " (controller %s, TEC %u, REC %u, restarts %llu)",
                             hs_can_bus_state_name(link.bus), link.tx_err_count, link.rx_err_count,
                             (unsigned long long)link.restarts);
            if (d < 0 || (size_t)d >= size - n - (size_t)w)
                break;
            w += d;
        }
        n += (size_t)w;
    }
}

static void supervise(void *state, int64_t now_ns)
{
    struct hs_bench_can *can = state;
    /* Supervisor thread only, so a plain static is this function's own memory. */
    static enum hs_can_bus_state last[HS_CFG_MAX_BUSES];
    static uint64_t last_restarts[HS_CFG_MAX_BUSES];
    if (!can || hs_bench_can_link_poll(can, now_ns) == 0)
        return;
    struct hs_can_state st;
    for (uint32_t i = 0; i < HS_CFG_MAX_BUSES && hs_bench_can_link_view(can, i, &st) == 0; i++) {
        if (st.link_mgmt != HS_CAN_LINK_MGMT_OK)
            continue;
        const char *name;
        enum hs_can_bus_state live;
        uint64_t drops;
        hs_bench_can_bus_live(can, i, &name, &live, &drops);
        if (st.bus != last[i])
            hs_log(st.bus == HS_CAN_BUS_OFF || st.bus == HS_CAN_BUS_ERROR_PASSIVE ? HS_LOG_WARNING
                                                                                  : HS_LOG_INFO,
                   "can: bus %s is %s (controller TEC %u, REC %u)", name,
                   hs_can_bus_state_name(st.bus), st.tx_err_count, st.rx_err_count);
        if (st.restarts != last_restarts[i])
            hs_log(HS_LOG_WARNING, "can: bus %s restarted after bus-off (%llu restarts)", name,
                   (unsigned long long)st.restarts);
        last[i] = st.bus;
        last_restarts[i] = st.restarts;
    }
}

static void emergency(struct hs_runner *r, void *state)
{
    hs_bench_can_emergency_stop(state, r->bench);
}

const struct hs_service_io hs_service_io_can = {
    .name = "can",
    .attach = attach,
    .emergency = emergency,
    .supervise = supervise,
    .status = status,
    .summary = summary,
    .input_drops = input_drops,
};
