/* --set KEY=VALUE (hs_config_load_buffer_sets): a set replaces a key of the file or adds one
 * the file left to its default, list elements by index, values as YAML; it passes the same
 * checks as the file (an error names the set, not a line of the file); a key reached through a
 * YAML alias changes that path only. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/config.h"

#define HEAD                                                                                       \
    "bench: {name: sets}\n"                                                                        \
    "models:\n"                                                                                    \
    "  - {name: arm, file: arm.wrl, initial: {joints: {J1: {q: 0.1}}}}\n"                          \
    "  - {name: floor, file: floor.wrl, static: true}\n"

static const struct hs_config *load(const char *text, const char *const *sets, uint32_t n,
                                    struct hs_diag *d)
{
    const struct hs_config *c = NULL;
    memset(d, 0, sizeof *d);
    if (hs_config_load_buffer_sets(text, strlen(text), "c.yaml", HS_CONFIG_TEST_DATA, sets, n, &c,
                                   d) < 0)
        return NULL;
    return c;
}

static void test_replace_and_add(void **state)
{
    (void)state;
    struct hs_diag d;
    static const char *const sets[] = {
        "physics.step_s=0.002",              /* in the file: replaced */
        "rt.period_ns=2000000",              /* (the rule step_s x substeps = period) */
        "physics.gravity=[0, 0, -3.71]",     /* not in the file: added, a list value */
        "controller.defaults.kp=50",         /* a whole missing section: added */
        "models[0].pose.position=[1, 2, 3]", /* a list element, bracket form */
        "models.0.initial.joints.J1.dq=0.5", /* beside the file's q */
        "models.0.initial.joints.J2.q=-0.25" /* a new keyed entry */
    };
    const struct hs_config *c =
        load(HEAD "physics: {step_s: 0.001}\n", sets, sizeof sets / sizeof *sets, &d);
    if (!c)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    assert_true(c->physics.step_s == 0.002);
    assert_true(c->physics.gravity[2] == -3.71 && c->physics.gravity[0] == 0);
    assert_true(c->controller.defaults.kp == 50);
    assert_true(c->models[0].position[0] == 1 && c->models[0].position[2] == 3);
    assert_int_equal(c->models[0].initial_count, 2);
    const struct hs_cfg_initial_joint *j1 = &c->initial_joints[c->models[0].initial_first];
    assert_string_equal(j1->joint, "J1");
    assert_true(j1->q == 0.1 && j1->dq == 0.5);
    assert_true(j1[1].q == -0.25);
    hs_config_free(c);
    /* a later set of the same key wins; %.17g text reads back the same double */
    static const char *const twice[] = {"physics.friction=0.3", "physics.friction=0.1"};
    c = load(HEAD, twice, 2, &d);
    assert_non_null(c);
    assert_true(c->physics.friction == 0.1);
    hs_config_free(c);
    char exact[64];
    snprintf(exact, sizeof exact, "physics.friction=%.17g", 0.1 + 0.2);
    const char *e = exact;
    c = load(HEAD, &e, 1, &d);
    assert_non_null(c);
    assert_true(c->physics.friction == 0.1 + 0.2);
    hs_config_free(c);
}

static void expect_error(const char *text, const char *set, const char *msg_part)
{
    struct hs_diag d;
    const struct hs_config *c = load(text, &set, 1, &d);
    assert_null(c);
    print_message("%s: %s: %s\n", set, d.file, d.msg);
    assert_string_equal(d.file, "--set");
    assert_int_equal(d.line, 0);
    if (!strstr(d.msg, msg_part))
        fail_msg("'%s' not in '%s'", msg_part, d.msg);
}

static void test_errors_name_the_set(void **state)
{
    (void)state;
    expect_error(HEAD, "physics.frictio=0.3", "physics.frictio=0.3: physics: unknown key");
    expect_error(HEAD, "physics.friction=abc", "physics.friction=abc: physics.friction");
    expect_error(HEAD, "physics.step_s=0.5", "physics.step_s=0.5: physics.step_s: 0.5 out of");
    /* a cross-field rule broken by the set is the set's too */
    expect_error(HEAD, "physics.step_s=0.002", "physics.step_s=0.002: physics.step_s: 0.002 s");
    expect_error(HEAD "physics: {step_s: 0.001}\n", "physics.step_s.x=1",
                 "physics.step_s is not a mapping");
    expect_error(HEAD, "models.5.pose.position=[0, 0, 0]", "models.5: not an index");
    expect_error(HEAD, "physics.friction=[1", "the value is not YAML");
    expect_error(HEAD, "physics", "expected KEY=VALUE");
    expect_error(HEAD, "=1", "expected KEY=VALUE");
    /* a good file's own error is still its own */
    struct hs_diag d;
    const char *ok = "physics.friction=0.3";
    assert_null(load(HEAD "physics: {step_s: 0.5}\n", &ok, 1, &d));
    assert_string_equal(d.file, "c.yaml");
    assert_int_equal(d.line, 5);
}

/* An alias shares one node between two paths: the set changes the path it names only. */
static void test_alias_changes_one_path(void **state)
{
    (void)state;
    struct hs_diag d;
    const char *set = "controller.joints.J2.kp=7";
    const struct hs_config *c = load(HEAD "controller:\n"
                                          "  joints:\n"
                                          "    J1: &g {kp: 50, kd: 1}\n"
                                          "    J2: *g\n",
                                     &set, 1, &d);
    if (!c)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    assert_true(hs_config_gains(c, "J1")->kp == 50);
    assert_true(hs_config_gains(c, "J2")->kp == 7);
    assert_true(hs_config_gains(c, "J2")->kd == 1);
    hs_config_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replace_and_add),
        cmocka_unit_test(test_errors_name_the_set),
        cmocka_unit_test(test_alias_changes_one_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
