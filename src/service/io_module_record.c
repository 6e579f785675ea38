/* Recording for `hilsim run --record DIR` and the config's record section (hilsim/record.h):
 * two registry entries, one before every other module and one after. The runner finishes the
 * recording after the safe stop and destroys it after the bench. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "hilsim/service/io_module.h"
#include "hilsim/service/runner.h"

#include "hilsim/log.h"
#include "hilsim/record.h"

/* <dir>/<bench>-<UTC>: a new folder per run, sortable by start time. */
static int run_folder(const struct hs_config *cfg, char *buf, size_t size, struct hs_diag *d)
{
    if (mkdir(cfg->record.dir, 0755) != 0 && errno != EEXIST)
        return hs_diag_set(d, -errno, cfg->record.dir, 0, 0, "record.dir: cannot create: %s",
                           strerror(errno));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    int n = snprintf(buf, size, "%s/%s-%s", cfg->record.dir, cfg->bench.name, stamp);
    return n > 0 && (size_t)n < size
               ? 0
               : hs_diag_set(d, -ENAMETOOLONG, cfg->record.dir, 0, 0, "record.dir: path too long");
}

/* First in the registry: the recorder exists before the CAN module opens its buses, so their
 * frames are tapped from the first. */
static int attach_begin(struct hs_runner *r, void **ret_state, struct hs_diag *d)
{
    const struct hs_cfg_record *c = &r->cfg->record;
    if (!r->o.record_dir && !c->enabled)
        return 0;
    char dir[1024];
    if (r->o.record_dir) {
        snprintf(dir, sizeof dir, "%s", r->o.record_dir);
    } else {
        int rc = run_folder(r->cfg, dir, sizeof dir, d);
        if (rc < 0)
            return rc;
    }
    struct hs_rec_opts o = {
        .dir = dir,
        .config_path = r->o.config,
        .scenario_path = r->o.scenario,
        .sets = r->o.sets,
        .nsets = r->o.nsets,
        .clock_mode = hs_clock_mode_name(r->clock_mode),
        .audit = &r->audit,
        .ring_items = c->ring_items,
        .ring_states = c->ring_states,
        .rotate_bytes = (uint64_t)(c->rotate_mib * 1048576.0),
        .rotate_s = c->rotate_s,
        .keep_segments = c->keep_segments,
        .no_compression = c->compression == HS_CFG_RECORD_NONE,
        .compression_level = (int)c->compression_level,
    };
    int rc = hs_rec_create(&o, r->bench, &r->rec, d);
    if (rc < 0)
        return rc;
    hs_rec_can_tap_install(r->rec);
    hs_log(HS_LOG_INFO, "recording to %s", hs_rec_dir(r->rec));
    *ret_state = r->rec;
    return 0;
}

/* Last in the registry: the recorder's tick half goes after every other module, as its inputs
 * phase must end the inputs phase (the instant a replay maps frames to ticks by). */
static int attach_end(struct hs_runner *r, void **ret_state, struct hs_diag *d)
{
    (void)ret_state; /* no hooks of its own: the first entry reports */
    if (!r->rec)
        return 0;
    hs_rec_can_tap_remove(r->rec);
    int rc = hs_rec_attach(r->rec, r->bench);
    if (rc < 0)
        return hs_diag_set(d, rc, NULL, 0, 0, "record: cannot attach to the bench: %s",
                           strerror(-rc));
    return 0;
}

static void status(const void *state, char *buf, size_t size)
{
    hs_rec_status(state, buf, size);
}

static void summary(const void *state, FILE *out)
{
    const struct hs_recorder *rec = state;
    struct hs_rec_stats s;
    hs_rec_stats(rec, &s);
    fprintf(out,
            "recording: %s: %llu ticks, %llu frames/commands/events, %.1f MiB (%.1f MiB "
            "uncompressed) in %u segment%s; dropped %llu states, %llu items%s%s\n",
            hs_rec_dir(rec), (unsigned long long)s.ticks, (unsigned long long)s.items,
            (double)s.bytes_written / 1048576.0, (double)s.bytes_raw / 1048576.0, s.segments,
            s.segments == 1 ? "" : "s", (unsigned long long)s.dropped_states,
            (unsigned long long)s.dropped_items,
            s.dropped_states || s.dropped_items ? " (ring full: the recording has gaps)" : "",
            s.write_error ? "; WRITE FAILED" : "");
}

const struct hs_service_io hs_service_io_record = {
    .name = "record",
    .attach = attach_begin,
    .status = status,
    .summary = summary,
};

const struct hs_service_io hs_service_io_record_tick = {
    .name = "record-tick",
    .attach = attach_end,
};
