/* The recording's contacts, replayed on a thread of their own (src/view/view_rec_contacts.c),
 * read from this one while the replay runs (the case ThreadSanitizer is run on, see
 * scripts/test-all.sh): a recording of the standing biped (hilsim sim, offline, 1.5 s) is
 * replayed; every state the replay has reproduced has a sample taken at or before it and at most
 * 1/60 s of recorded time earlier; the biped stands on its 8 sole corners, whose vertical forces
 * carry its weight (29.9 kg as its model sums it) within 1 %, with the solver's health finite.
 * A replay stopped at once ends and frees everything (ASan); a recording whose robot model was
 * changed since the run (0.1 kg more on the WAIST) replays differently: from the state it first
 * differs at, no state has contacts (they would be another run's). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/model.h"
#include "hilsim/record.h"
#include "hilsim/view.h"
#include "view_rec_contacts.h"

static char dir[256];

static int record(void **state)
{
    (void)state;
    const char *hilsim = getenv("HILSIM"), *src = getenv("HS_SOURCE_DIR");
    if (!hilsim || !src)
        fail_msg("HILSIM and HS_SOURCE_DIR must be set (ctest sets them)");
    snprintf(dir, sizeof dir, "/tmp/hs-rc-%d", (int)getpid());
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && '%s' sim '%s/config/biped-stand.yaml' --duration 1.5 --record '%s' "
             ">/dev/null 2>&1",
             dir, hilsim, src, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int cleanup(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct hs_recording *open_rec(void)
{
    struct hs_recording *rec = NULL;
    struct hs_diag d = {0};
    if (hs_recording_open(dir, &rec, &d) < 0)
        fail_msg("%s: %s", dir, d.msg);
    return rec;
}

static double weight_n(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/models/biped.wrl", getenv("HS_SOURCE_DIR"));
    struct hs_model *m = NULL;
    struct hs_diag d = {0};
    if (hs_model_load(path, &m, &d) < 0)
        fail_msg("%s: %s", path, d.msg);
    double kg = 0;
    for (uint32_t i = 0; i < m->nlinks; i++)
        kg += m->links[i].mass;
    hs_model_free(m);
    return kg * 9.80665;
}

static void test_samples_while_replaying(void **state)
{
    (void)state;
    struct hs_recording *rec = open_rec();
    const double w = weight_n();
    const int64_t period = rec->nstates > 1 ? rec->now_ns[1] - rec->now_ns[0] : 1000000;
    struct hs__view_rc *rc = NULL;
    assert_int_equal(hs__view_rc_start(rec, &rc), 0);
    /* while it runs: whatever this thread reads is consistent (a sample at or before the state,
     * its points whole) */
    struct hs__view_rc_progress pr;
    uint32_t reads = 0, seen = 0;
    do {
        hs__view_rc_progress(rc, &pr);
        uint32_t ord = pr.replayed ? pr.replayed - 1 : 0;
        struct hs__view_rc_sample s;
        if (hs__view_rc_at(rc, ord, &s)) {
            assert_true(s.ord <= ord);
            assert_true(s.n <= HS_VIEW_CONTACTS_MAX);
            for (uint32_t k = 0; k < s.n; k++)
                assert_true(isfinite(s.points[k].f[2]));
            seen++;
        }
        reads++;
        struct timespec ms = {0, 200000};
        nanosleep(&ms, NULL);
    } while (!pr.done);
    print_message("%u reads while replaying, %u with contacts\n", reads, seen);
    assert_int_equal(pr.rc, 0);
    assert_int_equal(pr.diverged_ord, -1);
    assert_int_equal(pr.replayed, rec->nstates);
    /* after: every state has its sample, within 1/60 s of recorded time before it; standing
     * (after its first 0.5 s) the soles' eight corners carry the weight */
    uint32_t checked = 0;
    for (uint32_t ord = 0; ord < rec->nstates; ord++) {
        struct hs__view_rc_sample s;
        assert_true(hs__view_rc_at(rc, ord, &s));
        assert_true(s.ord <= ord);
        assert_true(rec->now_ns[ord] - rec->now_ns[s.ord] < 1000000000 / 60 + period);
        for (int k = 0; k < 3; k++)
            assert_true(isfinite(s.health[k]));
        if (rec->now_ns[ord] - rec->now_ns[0] < 500000000 || s.ord != ord)
            continue;
        double fz = 0;
        for (uint32_t k = 0; k < s.n; k++)
            fz += s.points[k].f[2];
        assert_int_equal(s.n, 8);
        assert_int_equal(s.dropped, 0);
        if (fabs(fz - w) > 0.01 * w)
            fail_msg("state %u: the contacts carry %.2f N, the weight is %.2f N", ord, fz, w);
        checked++;
    }
    print_message("%u samples checked against the weight %.1f N\n", checked, w);
    assert_true(checked > 50);
    hs__view_rc_stop(rc);
    hs_recording_free(rec);
}

static void test_stopped_at_once(void **state)
{
    (void)state;
    struct hs_recording *rec = open_rec();
    struct hs__view_rc *rc = NULL;
    assert_int_equal(hs__view_rc_start(rec, &rc), 0);
    hs__view_rc_stop(rc); /* returns once the replay thread has ended; ASan sees what is left */
    hs__view_rc_stop(NULL);
    hs_recording_free(rec);
}

static void test_changed_model_stops_the_contacts(void **state)
{
    (void)state;
    /* a copy of the bench (config and models) recorded, then the robot's model changed: the
     * WAIST 0.1 kg heavier */
    char tmp[300], cmd[4096];
    const char *src = getenv("HS_SOURCE_DIR");
    snprintf(tmp, sizeof tmp, "%s-changed", dir);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && mkdir -p '%s/config' '%s/models' && "
             "cp '%s/config/biped-stand.yaml' '%s/config/' && "
             "cp '%s/models/biped.wrl' '%s/models/floor.wrl' '%s/models/' && "
             "'%s' sim '%s/config/biped-stand.yaml' --duration 1 --record '%s/rec' >/dev/null 2>&1 "
             "&& sed -i '0,/mass 5.5/s//mass 5.6/' '%s/models/biped.wrl' && "
             "! cmp -s '%s/models/biped.wrl' '%s/models/biped.wrl'",
             tmp, tmp, tmp, src, tmp, src, src, tmp, getenv("HILSIM"), tmp, tmp, tmp, src, tmp);
    assert_int_equal(system(cmd), 0);
    char rdir[400];
    snprintf(rdir, sizeof rdir, "%s/rec", tmp);
    struct hs_recording *rec = NULL;
    struct hs_diag d = {0};
    if (hs_recording_open(rdir, &rec, &d) < 0)
        fail_msg("%s: %s", rdir, d.msg);
    struct hs__view_rc *rc = NULL;
    assert_int_equal(hs__view_rc_start(rec, &rc), 0);
    struct hs__view_rc_progress pr;
    do {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        hs__view_rc_progress(rc, &pr);
    } while (!pr.done);
    print_message("the changed model's replay differs from state %lld of %u\n",
                  (long long)pr.diverged_ord, rec->nstates);
    assert_int_equal(pr.rc, 0);
    assert_true(pr.diverged_ord >= 0 && pr.diverged_ord < (int64_t)rec->nstates);
    struct hs__view_rc_sample s;
    for (uint32_t ord = (uint32_t)pr.diverged_ord; ord < rec->nstates; ord++)
        assert_false(hs__view_rc_at(rc, ord, &s));
    hs__view_rc_stop(rc);
    hs_recording_free(rec);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_while_replaying),
        cmocka_unit_test(test_stopped_at_once),
        cmocka_unit_test(test_changed_model_stops_the_contacts),
    };
    return cmocka_run_group_tests(tests, record, cleanup);
}
