/* physics.iterations and physics.iterations_min: without either, the world's adaptive default
 * (12, 8 while the scene is calm); `iterations` alone fixes the count every step, as it always
 * did (also given by --set); `iterations_min` sets the calm count; above `iterations` it is
 * refused at its line; the writer's output reads back the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/config.h"

#define HEAD                                                                                       \
    "bench: {name: iterations}\n"                                                                  \
    "models:\n"                                                                                    \
    "  - {name: arm, file: arm.wrl}\n"                                                             \
    "  - {name: floor, file: floor.wrl, static: true}\n"

static const struct hs_config *load(const char *text, const char *set, struct hs_diag *d)
{
    const struct hs_config *c = NULL;
    memset(d, 0, sizeof *d);
    if (hs_config_load_buffer_sets(text, strlen(text), "c.yaml", HS_CONFIG_TEST_DATA, &set,
                                   set ? 1 : 0, &c, d) < 0)
        return NULL;
    return c;
}

static void expect(const char *text, const char *set, uint32_t it, uint32_t it_min)
{
    struct hs_diag d;
    const struct hs_config *c = load(text, set, &d);
    if (!c)
        fail_msg("%s: %d:%d: %s", text, d.line, d.column, d.msg);
    assert_int_equal(c->physics.quick_iterations, it);
    assert_int_equal(c->physics.quick_iterations_min, it_min);
    /* what the writer prints reads back to the same counts */
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_int_equal(hs_config_write(c, f), 0);
    fclose(f);
    const struct hs_config *c2 = load(buf, NULL, &d);
    if (!c2)
        fail_msg("written config: %d:%d: %s\n%s", d.line, d.column, d.msg, buf);
    assert_int_equal(c2->physics.quick_iterations, it);
    assert_int_equal(c2->physics.quick_iterations_min, it_min);
    free(buf);
    hs_config_free(c2);
    hs_config_free(c);
}

static void test_counts(void **state)
{
    (void)state;
    expect(HEAD, NULL, 12, 8);                                    /* the default: adaptive */
    expect(HEAD "physics: {solver: quick}\n", NULL, 12, 8);       /* still the default */
    expect(HEAD "physics: {iterations: 8}\n", NULL, 8, 0);        /* fixed, as before */
    expect(HEAD "physics: {iterations: 30}\n", NULL, 30, 0);      /* fixed */
    expect(HEAD, "physics.iterations=16", 16, 0);                 /* fixed by a --set */
    expect(HEAD "physics: {iterations_min: 10}\n", NULL, 12, 10); /* calm count only */
    expect(HEAD "physics: {iterations: 20, iterations_min: 8}\n", NULL, 20, 8);
    expect(HEAD "physics: {iterations: 20, iterations_min: 0}\n", NULL, 20, 0);
    expect(HEAD "physics: {iterations: 16}\n", "physics.iterations_min=9", 16, 9);
}

static void test_min_above_count_is_refused(void **state)
{
    (void)state;
    struct hs_diag d;
    assert_null(load(HEAD "physics:\n  iterations: 6\n  iterations_min: 8\n", NULL, &d));
    assert_int_equal(d.line, 7);
    assert_non_null(strstr(d.msg, "iterations_min 8 is above iterations 6"));
    assert_null(load(HEAD "physics: {iterations_min: 13}\n", NULL, &d)); /* above the default */
    assert_non_null(strstr(d.msg, "iterations_min 13 is above iterations 12"));
    assert_null(load(HEAD "physics: {iterations_min: 1001}\n", NULL, &d)); /* out of range */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_min_above_count_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
