/* hs_closest_name: the "did you mean" of config keys and names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/closest_name.h"

static void test_distance(void **state)
{
    (void)state;
    assert_int_equal(hs_name_distance("iterations", "iterations"), 0);
    assert_int_equal(hs_name_distance("iteratons", "iterations"), 1);  /* deletion */
    assert_int_equal(hs_name_distance("itreations", "iterations"), 1); /* swap */
    assert_int_equal(hs_name_distance("Step_S", "step_s"), 0);         /* case */
    assert_int_equal(hs_name_distance("", "abc"), 3);
    assert_int_equal(hs_name_distance("kitten", "sitting"), 3);
    char long_name[80];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    assert_true(hs_name_distance(long_name, "a") == SIZE_MAX);
}

static void test_closest(void **state)
{
    (void)state;
    static const char *const keys[] = {"step_s", "iterations", "solver", "sor_w"};
    size_t n = sizeof keys / sizeof keys[0];
    assert_string_equal(hs_closest_name("iteratons", keys, n, sizeof *keys), "iterations");
    assert_string_equal(hs_closest_name("solvr", keys, n, sizeof *keys), "solver");
    assert_null(hs_closest_name("colour", keys, n, sizeof *keys)); /* nothing near */
    assert_null(hs_closest_name("x", keys, 0, sizeof *keys));
    /* A table of structs whose first member is the name. */
    static const struct {
        const char *name;
        int value;
    } rows[] = {{"WAIST", 1}, {"R_KNEE", 2}, {"L_KNEE", 3}};
    assert_string_equal(hs_closest_name("R_KNE", rows, 3, sizeof rows[0]), "R_KNEE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_distance),
                                       cmocka_unit_test(test_closest)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
