/* manifest.json: what a replay needs to rebuild the bench (the config copied beside it, where
 * its relative paths resolve, the models' hashes) and what an engineer needs to trust the
 * recording (version, commit, host audit, clock mode, drop counts). Written when recording
 * starts (complete: false), at each rotation, and at the end (complete: true), each time to a
 * temporary file renamed over the old one, so a crash leaves a readable manifest. */
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hilsim/report_json.h"
#include "hilsim/file_open.h"
#include "rec_internal.h"

#ifndef HS_GIT_COMMIT
#define HS_GIT_COMMIT "unknown"
#endif

/* The copies' first line (HS_REC_COPY_MARK): the run they belong to, for whoever finds one
 * outside its folder; the manifest's *_sha256 of the copy covers it. */
static int mark(const struct hs_recorder *rec, FILE *out, const char *what)
{
    char id[33];
    hs_rec_run_id_hex(rec, id);
    return fprintf(out, HS_REC_COPY_MARK "%s: %s (manifest.json says the rest)\n", id, what) < 0
               ? -EIO
               : 0;
}

/* The config as this build resolved it (every default filled in, paths absolute): a replay by a
 * later hilsim whose defaults changed still builds the bench this run had. */
static int write_resolved(struct hs_recorder *rec, const struct hs_config *cfg, const char *to)
{
    FILE *out = fopen(to, "wbx");
    if (!out)
        return -errno;
    int r = mark(rec, out, "the config as this run resolved it");
    if (r == 0)
        r = hs_config_write(cfg, out);
    if (fclose(out) != 0 && !r)
        r = -EIO;
    if (r == 0)
        r = hs__rec_sha256_file(to, rec->resolved_sha);
    return r;
}

/* The file as the run read it, after the run's mark (after a UTF-8 byte order mark, which must
 * stay first); the SHA-256 of what was read (ret_from_sha) and of what was written. */
static int copy_file(struct hs_recorder *rec, const char *from, const char *to, const char *what,
                     char ret_from_sha[65], char ret_to_sha[65])
{
    FILE *in;
    int rc = hs_fopen_regular(from, &in); /* a FIFO swapped in since the load must not hang */
    if (rc < 0)
        return rc;
    FILE *out = fopen(to, "wbx");
    if (!out) {
        int e = -errno;
        fclose(in);
        return e;
    }
    struct hs__sha256 hin;
    hs__rec_sha256_init(&hin);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, in);
    size_t bom = n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0;
    int r = 0;
    if (bom && fwrite(buf, 1, bom, out) != bom)
        r = -EIO;
    if (r == 0)
        r = mark(rec, out, what);
    if (r == 0 && n > bom && fwrite(buf + bom, 1, n - bom, out) != n - bom)
        r = -EIO;
    hs__rec_sha256_update(&hin, buf, n);
    while (r == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0) {
        hs__rec_sha256_update(&hin, buf, n);
        if (fwrite(buf, 1, n, out) != n)
            r = -EIO;
    }
    if (ferror(in))
        r = -EIO;
    fclose(in);
    if (fclose(out) != 0 && !r)
        r = -EIO;
    if (r == 0) {
        hs__rec_sha256_hex(&hin, ret_from_sha);
        r = hs__rec_sha256_file(to, ret_to_sha);
    }
    return r;
}

static json_t *file_entry(const char *path)
{
    char hex[65];
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(path));
    if (hs__rec_sha256_file(path, hex) == 0)
        json_object_set_new(o, "sha256", json_string(hex));
    return o;
}

/* A file the run read and copied: its path and its SHA-256 as it was copied (the file may
 * have changed since). */
static json_t *copied_entry(const char *path, const char *sha)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(path));
    if (sha[0])
        json_object_set_new(o, "sha256", json_string(sha));
    return o;
}

static json_t *signals(const struct hs_recorder *rec)
{
    json_t *s = json_object();
    json_t *j = json_array(), *se = json_array(), *b = json_array();
    for (uint32_t i = 0; i < rec->njoints; i++)
        json_array_append_new(j, json_string(hs_bench_joint(rec->bench, i)->name));
    for (uint32_t i = 0; i < rec->nsensors; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(rec->bench, i);
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(bs->name));
        json_object_set_new(o, "type", json_string(bs->layout.kind));
        json_object_set_new(o, "unit", json_string(bs->layout.unit ? bs->layout.unit : ""));
        /* the state record holds these values of this sensor, in this order */
        const struct hs_sensor *ms =
            &hs_bench_model(rec->bench, bs->body)->sensors[bs->model_sensor];
        json_t *f = json_array();
        for (uint32_t k = 0; k < bs->layout.nvalues; k++) {
            char name[HS_NAME_MAX];
            hs_sensor_value_name(ms, k, name, sizeof name);
            json_array_append_new(f, json_string(name));
        }
        json_object_set_new(o, "fields", f);
        json_array_append_new(se, o);
    }
    for (uint32_t i = 0; i < rec->nbodies; i++)
        json_array_append_new(b, json_string(rec->cfg->models[rec->bodies[i]].name));
    json_object_set_new(s, "joints", j);
    json_object_set_new(
        s, "joint_fields",
        json_pack("[sssssss]", "q", "dq", "tau", "current", "enc_pos", "enc_vel", "enc_count"));
    json_object_set_new(s, "sensors", se);
    json_object_set_new(s, "bodies", b);
    json_object_set_new(s, "body_fields",
                        json_pack("[sssssss]", "x", "y", "z", "qw", "qx", "qy", "qz"));
    return s;
}

static json_t *segments(const struct hs_recorder *rec)
{
    json_t *a = json_array();
    for (uint32_t s = rec->seg_first_deleted; s <= rec->segment; s++) {
        char name[256];
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(s));
        if (rec->seg_first_tick && rec->seg_first_tick[s] != UINT64_MAX)
            json_object_set_new(o, "first_tick", json_integer((json_int_t)rec->seg_first_tick[s]));
        if (rec->seg_first_ord && rec->seg_first_tick[s] != UINT64_MAX)
            json_object_set_new(o, "first_ord", json_integer((json_int_t)rec->seg_first_ord[s]));
        const uint64_t *sc = rec->seg_counts ? rec->seg_counts + (size_t)s * 6 : NULL;
        if (sc && sc[0] != UINT64_MAX) { /* closed: the counts that bound its files */
            json_object_set_new(o, "records",
                                json_pack("{s:I,s:I,s:I}", "state", (json_int_t)sc[0], "shm",
                                          (json_int_t)sc[1], "events", (json_int_t)sc[2]));
            json_object_set_new(o, "bytes",
                                json_pack("{s:I,s:I,s:I}", "state", (json_int_t)sc[3], "shm",
                                          (json_int_t)sc[4], "events", (json_int_t)sc[5]));
            json_t *cb = json_object(), *cs = json_object();
            for (uint32_t i = 0;
                 rec->seg_can_sha && i < rec->cfg->can.nbuses && i < HS__REC_MAX_BUSES; i++) {
                size_t at = (size_t)s * HS__REC_MAX_BUSES + i;
                const char *hex = rec->seg_can_sha + at * 65;
                if (!hex[0])
                    continue;
                const char *bus = rec->cfg->can.buses[i].name;
                json_object_set_new(cb, bus, json_integer((json_int_t)rec->seg_can_bytes[at]));
                json_object_set_new(cs, bus, json_string(hex));
            }
            if (json_object_size(cs)) {
                json_object_set_new(o, "can_bytes", cb);
                json_object_set_new(o, "can_sha256", cs);
            } else {
                json_decref(cb);
                json_decref(cs);
            }
        }
        hs__rec_seg_name(name, sizeof name, "state", s, "bin");
        json_object_set_new(o, "state", json_string(name));
        hs__rec_seg_name(name, sizeof name, "shm", s, "bin");
        json_object_set_new(o, "shm", json_string(name));
        hs__rec_seg_name(name, sizeof name, "events", s, "bin");
        json_object_set_new(o, "events", json_string(name));
        json_t *can = json_object();
        for (uint32_t i = 0; i < rec->cfg->can.nbuses && i < HS__REC_MAX_BUSES; i++) {
            char base[128];
            snprintf(base, sizeof base, "can-%s", rec->cfg->can.buses[i].name);
            hs__rec_seg_name(name, sizeof name, base, s, "log");
            json_object_set_new(can, rec->cfg->can.buses[i].name, json_string(name));
        }
        json_object_set_new(o, "can", can);
        json_array_append_new(a, o);
    }
    return a;
}

void hs__rec_manifest_free(struct hs_recorder *rec)
{
    json_decref(rec->signals_json);
    rec->signals_json = NULL;
    json_decref(rec->audit_json);
    rec->audit_json = NULL;
}

int hs__rec_write_manifest(struct hs_recorder *rec, bool final)
{
    const struct hs_config *cfg = rec->cfg;
    char path[4096], tmp[4096];
    json_t *m = json_object();
    json_object_set_new(m, "format", json_string("hilsim-recording"));
    json_object_set_new(m, "format_version", json_integer(HS__REC_VERSION));
    json_object_set_new(m, "hilsim_version",
                        json_string(rec->o.version ? rec->o.version : HS_VERSION));
    json_object_set_new(m, "hilsim_commit", json_string(HS_GIT_COMMIT));
    char id[33];
    hs_rec_run_id_hex(rec, id);
    json_object_set_new(m, "run_id", json_string(id));
    json_object_set_new(m, "compression",
                        rec->zctx
                            ? json_pack("{s:s,s:i}", "codec", "zstd", "level",
                                        rec->o.compression_level ? rec->o.compression_level : 3)
                            : json_pack("{s:s}", "codec", "none"));
    json_object_set_new(m, "bench", json_string(cfg->bench.name));
    json_object_set_new(m, "start_utc", json_string(rec->start_utc));
    json_object_set_new(m, "start_realtime_ns", json_integer(rec->start_real_ns));
    json_object_set_new(m, "clock_mode",
                        json_string(rec->o.clock_mode ? rec->o.clock_mode : "realtime"));
    json_object_set_new(m, "period_ns", json_integer((json_int_t)cfg->rt.period_ns));
    json_object_set_new(m, "warmup_ticks", json_integer(cfg->rt.warmup_ticks));
    json_object_set_new(m, "noise_seed", json_integer((json_int_t)cfg->sensors.noise_seed));

    /* The config as read, and where its relative paths resolve: a replay loads the copy with
     * that base, so it builds the bench the run had even if the original file changed. */
    json_t *c = json_object();
    if (rec->o.config_path) {
        snprintf(path, sizeof path, "%s/config.yaml", rec->dir);
        if (access(path, F_OK) != 0) {
            int r = copy_file(rec, rec->o.config_path, path, "the config file as the run read it",
                              rec->config_sha, rec->config_copy_sha);
            if (r < 0) {
                json_decref(m);
                json_decref(c);
                return r;
            }
        }
        json_object_set_new(c, "original", copied_entry(rec->o.config_path, rec->config_sha));
        json_object_set_new(c, "copy", json_string("config.yaml"));
        if (rec->config_copy_sha[0])
            json_object_set_new(c, "copy_sha256", json_string(rec->config_copy_sha));
    }
    snprintf(path, sizeof path, "%s/config-resolved.yaml", rec->dir);
    if (access(path, F_OK) != 0) {
        int r = write_resolved(rec, cfg, path);
        if (r < 0) {
            json_decref(m);
            json_decref(c);
            return r;
        }
    }
    json_object_set_new(c, "resolved", json_string("config-resolved.yaml"));
    if (rec->resolved_sha[0])
        json_object_set_new(c, "resolved_sha256", json_string(rec->resolved_sha));
    json_object_set_new(c, "base_dir", json_string(cfg->base_dir ? cfg->base_dir : ""));
    if (rec->o.nsets) { /* the run's --set overrides: config.yaml is the file as it was */
        json_t *sets = json_array();
        for (uint32_t i = 0; i < rec->o.nsets; i++)
            json_array_append_new(sets, json_string(rec->o.sets[i]));
        json_object_set_new(c, "sets", sets);
    }
    json_object_set_new(m, "config", c);
    /* The scenario the run played, copied as the config is: a replay plays it again. */
    if (rec->o.scenario_path) {
        snprintf(path, sizeof path, "%s/scenario.yaml", rec->dir);
        if (access(path, F_OK) != 0) {
            int r =
                copy_file(rec, rec->o.scenario_path, path, "the scenario file as the run read it",
                          rec->scenario_sha, rec->scenario_copy_sha);
            if (r < 0) {
                json_decref(m);
                return r;
            }
        }
        char *dir = strdup(rec->o.scenario_path);
        char *base = dir ? realpath(dirname(dir), NULL) : NULL;
        json_t *sc = json_object();
        json_object_set_new(sc, "original", copied_entry(rec->o.scenario_path, rec->scenario_sha));
        json_object_set_new(sc, "copy", json_string("scenario.yaml"));
        if (rec->scenario_copy_sha[0])
            json_object_set_new(sc, "copy_sha256", json_string(rec->scenario_copy_sha));
        json_object_set_new(sc, "base_dir", json_string(base ? base : ""));
        json_object_set_new(m, "scenario", sc);
        free(base);
        free(dir);
    }
    json_t *models = json_array();
    for (uint32_t i = 0; i < cfg->nmodels; i++) {
        json_t *o = file_entry(cfg->models[i].file);
        json_object_set_new(o, "name", json_string(cfg->models[i].name));
        json_array_append_new(models, o);
    }
    json_object_set_new(m, "models", models);
    json_t *buses = json_array();
    for (uint32_t i = 0; i < cfg->can.nbuses; i++)
        json_array_append_new(buses, json_pack("{s:s,s:s}", "name", cfg->can.buses[i].name,
                                               "interface", cfg->can.buses[i].interface));
    json_object_set_new(m, "can_buses", buses);
    if (rec->o.audit && !rec->audit_json) /* one JSON path: the report's (hilsim/report_json.h) */
        rec->audit_json = hs_report_audit_json(rec->o.audit);
    if (rec->audit_json)
        json_object_set(m, "host_audit", rec->audit_json);
    if (!rec->signals_json) /* the first write happens while the bench exists */
        rec->signals_json = signals(rec);
    json_object_set(m, "signals", rec->signals_json);
    json_object_set_new(m, "segments", segments(rec));
    json_object_set_new(m, "rotation",
                        json_pack("{s:I,s:f,s:i}", "bytes", (json_int_t)rec->o.rotate_bytes,
                                  "seconds", rec->o.rotate_s, "keep_segments",
                                  (int)rec->o.keep_segments));
    struct hs_rec_stats st;
    hs_rec_stats(rec, &st);
    json_object_set_new(m, "complete", json_boolean(final));
    json_object_set_new(m, "ticks", json_integer((json_int_t)st.ticks));
    json_object_set_new(m, "dropped",
                        json_pack("{s:I,s:I}", "states", (json_int_t)st.dropped_states, "items",
                                  (json_int_t)st.dropped_items));
    if (final) {
        json_object_set_new(m, "end_realtime_ns", json_integer(rec->end_real_ns));
        json_object_set_new(m, "stop_reason", json_string(rec->stop_reason));
        json_object_set_new(m, "bytes", json_integer((json_int_t)st.bytes_written));
        json_object_set_new(m, "bytes_uncompressed", json_integer((json_int_t)st.bytes_raw));
        if (st.write_error)
            json_object_set_new(m, "write_error", json_string(strerror(-st.write_error)));
    }
    snprintf(path, sizeof path, "%s/manifest.json", rec->dir);
    snprintf(tmp, sizeof tmp, "%s/.manifest.json.tmp", rec->dir);
    int r = json_dump_file(m, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) == 0 ? 0 : -EIO;
    json_decref(m);
    if (r == 0 && rename(tmp, path) != 0)
        r = -errno;
    return r;
}
