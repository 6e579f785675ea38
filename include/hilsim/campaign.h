/* Test campaigns (src/campaign/README.md): a declared matrix of scenario runs, each a child
 * `hilsim sim|run --scenario` in lockstep with the controller under test, run in parallel,
 * sharded, resumed, and aggregated into one verdict a CI reads.
 *
 * Not real-time: the campaign is an orchestrator process that spawns benches. */
#ifndef HILSIM_CAMPAIGN_H
#define HILSIM_CAMPAIGN_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#define HS_CAMP_PARAMS_MAX 16
#define HS_CAMP_SETS_MAX 32
#define HS_CAMP_ARGV_MAX 32
#define HS_CAMP_VALUES_MAX 64
#define HS_CAMP_RUNS_MAX 1000000
#define HS_CAMP_FILE_MAX (1u << 20)
#define HS_CAMP_VALUE_LEN 64

enum hs_camp_kind {
    HS_CAMP_LIST,    /* an axis: the values given */
    HS_CAMP_RANGE,   /* an axis: from, to (inclusive), step */
    HS_CAMP_UNIFORM, /* a draw per run: uniform in [a, b) */
    HS_CAMP_NORMAL,  /* a draw per run: mean a, standard deviation b */
    HS_CAMP_CHOICE,  /* a draw per run: one of the values, equally likely */
};

enum hs_camp_record { HS_CAMP_RECORD_FAILURES, HS_CAMP_RECORD_ALL, HS_CAMP_RECORD_NONE };

struct hs_camp_param {
    char name[64];
    enum hs_camp_kind kind;
    int line;
    int nvalues; /* LIST, CHOICE; RANGE: the count the range gives */
    char values[HS_CAMP_VALUES_MAX][HS_CAMP_VALUE_LEN];
    double a, b, step;
};

struct hs_camp_set {
    char key[128];
    char value[256]; /* may hold ${param} */
    int line;
};

struct hs_campaign {
    char file[PATH_MAX];
    char name[64];
    char config[PATH_MAX];   /* resolved against the campaign file's folder */
    char scenario[PATH_MAX]; /* a template: ${param} substituted per run */
    char *scenario_text;     /* owned */
    int ncontroller;         /* 0: no controller (hilsim sim, its own PD hold) */
    char controller[HS_CAMP_ARGV_MAX][256];
    double time_limit_s;
    int runs_per_cell;
    uint64_t seed;
    enum hs_camp_record record;
    int nparams;
    struct hs_camp_param params[HS_CAMP_PARAMS_MAX];
    int nsets;
    struct hs_camp_set sets[HS_CAMP_SETS_MAX];
    int cells; /* product of the axes' sizes */
    int runs;  /* cells * runs_per_cell */
};

/* Loads FILE. 0, or a negative errno with the message (file:line: field: why) in err. */
int hs_campaign_load(struct hs_campaign *c, const char *file, char *err, size_t errlen);
/* The same from text already read (the fuzz target); name is used in messages. */
int hs_campaign_parse(struct hs_campaign *c, const char *name, const char *text, size_t len,
                      char *err, size_t errlen);
void hs_campaign_free(struct hs_campaign *c);

/* Run r's parameter values (strings, as substituted) and cell; deterministic in (seed, r). */
struct hs_camp_values {
    int cell, rep;
    uint64_t seed; /* the run's own seed, also ${seed} */
    char v[HS_CAMP_PARAMS_MAX][HS_CAMP_VALUE_LEN];
};
void hs_campaign_values(const struct hs_campaign *c, int run, struct hs_camp_values *out);

/* Substitutes ${name} in text into a new string (caller frees): a parameter, `seed` and `run`,
 * and the nextra names given (bench, examples...). NULL with the name in err when a
 * placeholder names nothing. */
char *hs_campaign_render(const struct hs_campaign *c, const struct hs_camp_values *v, int run,
                         const char *const *extra_names, const char *const *extra_values,
                         int nextra, const char *text, char *err, size_t errlen);

struct hs_camp_opts {
    const char *hilsim; /* this executable */
    const char *out;    /* output folder */
    int jobs;
    int shard_k, shard_n; /* 1-based; 1/1 by default */
    int quiet;
    int no_report; /* a shard of a shared folder: the merge job reports */
};

/* Runs every run of the shard not yet finished in out; writes out/runs/ID/run.json each, then
 * the aggregate. Exit status as `campaign report`'s, or 2 for bad input. */
int hs_campaign_run(const struct hs_campaign *c, const struct hs_camp_opts *o);

/* Aggregates the runs under dirs into outdir (junit.xml, summary.json, summary.txt) and prints
 * the summary to out. 0 all passed, 5 a run failed, 1 a run was an ERROR, 2 nothing to read. */
int hs_campaign_report(const char *const *dirs, int ndirs, const char *outdir, FILE *out);

/* Writes the sbatch array script and its merge job into outdir. */
int hs_campaign_slurm(const struct hs_campaign *c, const char *hilsim, int shards,
                      const char *outdir, char *err, size_t errlen);

#endif
