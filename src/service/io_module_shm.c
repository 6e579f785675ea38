/* Serves the bench over shared memory when the config enables it (src/bench/io_shm.c), and
 * reports the module's counters at safe stop, next to the run's summary. */
#include <errno.h>
#include <stdio.h>

#include "hilsim/log.h"
#include "hilsim/shm_abi.h"
#include "hilsim/service/io_module.h"
#include "hilsim/io_shm.h"
#include "hilsim/service/runner.h"
#include "hilsim/shm_server.h"

static const char *client_status_name(uint32_t s)
{
    return s == HS_SHM_CLIENT_ACTIVE ? "active" : s == HS_SHM_CLIENT_LOST ? "lost" : "none";
}

/* A second I/O entry with only safe_stop: it runs after the shm module's own safe stop (modules
 * stop in attach order) and borrows the module, which the bench owns. */
static void report_stop(void *ctx, struct hs_bench *b)
{
    (void)b;
    struct hs_bench_shm_stats st;
    hs_bench_shm_stats(ctx, &st);
    hs_log(HS_LOG_INFO,
           "shm: %llu states published, %llu commands applied, %llu refused (mode not allowed), "
           "%llu invalid, %llu torn reads, %llu stale joint-ticks, %llu clients lost, %llu segment "
           "repairs; client %s",
           (unsigned long long)st.published, (unsigned long long)st.commands_applied,
           (unsigned long long)st.commands_refused, (unsigned long long)st.invalid_commands,
           (unsigned long long)st.torn_reads, (unsigned long long)st.stale_joint_ticks,
           (unsigned long long)st.lost_clients, (unsigned long long)st.segment_repairs,
           client_status_name(st.client_status));
}

static const struct hs_bench_io_ops report_ops = {.name = "shm-report", .safe_stop = report_stop};

static int attach(struct hs_runner *r, void **ret_state, struct hs_diag *d)
{
    if (!r->cfg->shm.enabled)
        return 0;
    /* The runner blocked SIGINT/SIGTERM before building anything, so from the moment the
     * segment exists a stop request waits for the supervisor, which removes it. */
    struct hs_bench_shm *shm;
    int rc = hs_bench_shm_attach(r->bench, &shm, d);
    if (rc == -EEXIST) {
        /* Name the config and the key that chose the segment, not only the segment. */
        char msg[HS_DIAG_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", d->msg);
        return hs_diag_set(d, rc, r->cfg->path, 0, 0, "bench.name '%s': %s", r->cfg->bench.name,
                           msg);
    }
    if (rc < 0)
        return rc;
    *ret_state = shm;
    if (hs_bench_shm_note(shm)[0])
        hs_log(HS_LOG_WARNING, "%s", hs_bench_shm_note(shm));
    if (hs_bench_add_io(r->bench, &report_ops, shm) < 0)
        hs_log(HS_LOG_WARNING, "shm: no I/O slot left for the shm counters report");
    else
        hs_log(HS_LOG_INFO, "shm: serving bench '%s' at /dev/shm%s%s", r->cfg->bench.name,
               HS_SHM_PATH_PREFIX, r->cfg->bench.name);
    return 0;
}

/* Clients waiting on the segment learn at once that the server is gone (ESHUTDOWN), not after
 * their own timeout; after the process dies the next server takes the segment over. */
static void emergency(struct hs_runner *r, void *state)
{
    (void)r;
    hs_bench_shm_mark_stopped(state);
}

const struct hs_service_io hs_service_io_shm = {
    .name = "shm",
    .attach = attach,
    .emergency = emergency,
};
