#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "scen_rig.h"

void (*rig_before_scenario)(struct scen_rig *r);

static char *expand(const char *yaml)
{
    const char *src = getenv("HS_SOURCE_DIR");
    assert_non_null(src);
    size_t n = strlen(yaml) + 1;
    for (const char *p = strstr(yaml, "@SRC@"); p; p = strstr(p + 1, "@SRC@"))
        n += strlen(src);
    char *out = malloc(n), *o = out;
    assert_non_null(out);
    for (const char *p = yaml; *p;) {
        if (!strncmp(p, "@SRC@", 5)) {
            o += sprintf(o, "%s", src);
            p += 5;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    return out;
}

static int load(struct scen_rig *r, const char *bench_yaml, const char *scen_yaml,
                struct hs_diag *d)
{
    memset(r, 0, sizeof *r);
    char *b = expand(bench_yaml);
    dRandSetSeed(1); /* the physics repeats (plant.h) */
    int rc = hs_config_load_buffer(b, strlen(b), "bench.yaml", NULL, &r->cfg, d);
    free(b);
    if (rc < 0)
        return rc;
    if ((rc = hs_bench_create(r->cfg, &r->bench, d)) < 0)
        return rc;
    if (rig_before_scenario)
        rig_before_scenario(r);
    struct hs_scenario_spec *spec = NULL;
    rc = hs_scenario_parse(scen_yaml, strlen(scen_yaml), "scen.yaml", NULL, &spec, d);
    if (rc < 0)
        return rc;
    rc = hs_scenario_compile(spec, r->bench, &r->scen, d);
    hs_scenario_spec_free(spec);
    if (rc < 0)
        return rc;
    return hs_scenario_attach(r->scen, r->bench);
}

void rig_open(struct scen_rig *r, const char *bench_yaml, const char *scen_yaml)
{
    struct hs_diag d = {0};
    int rc = load(r, bench_yaml, scen_yaml, &d);
    if (rc < 0) {
        char msg[512];
        hs_diag_format(&d, msg, sizeof msg);
        fail_msg("rig_open: %s", msg);
    }
    hs_bench_sensors(r->bench, 0, 0); /* as hilsim sim: readings before the first tick */
}

int rig_tick(struct scen_rig *r)
{
    r->tick++;
    return hs_bench_tick(r->bench, (int64_t)r->tick * hs_bench_tick_period_ns(r->bench), r->tick);
}

void rig_run(struct scen_rig *r)
{
    while (!hs_scenario_done(r->scen))
        assert_int_equal(rig_tick(r), 0);
    hs_scenario_finish(r->scen);
}

void rig_close(struct scen_rig *r)
{
    hs_bench_destroy(r->bench);
    hs_config_free(r->cfg);
    memset(r, 0, sizeof *r);
}

int rig_try(const char *bench_yaml, const char *scen_yaml, char *msg, size_t size)
{
    struct scen_rig r;
    struct hs_diag d = {0};
    int rc = load(&r, bench_yaml, scen_yaml, &d);
    msg[0] = 0;
    if (rc < 0)
        hs_diag_format(&d, msg, size);
    /* a scenario that compiled but did not attach is ours to free */
    if (rc < 0 && r.scen)
        hs_scenario_destroy(r.scen);
    hs_bench_destroy(r.bench);
    hs_config_free(r.cfg);
    return rc;
}

void rig_expect_error(const char *bench_yaml, const char *scen_yaml, const char *want)
{
    char msg[512];
    assert_true(rig_try(bench_yaml, scen_yaml, msg, sizeof msg) < 0);
    print_message("%s\n", msg);
    if (!strstr(msg, want))
        fail_msg("expected '%s' in '%s'", want, msg);
}
