#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hilsim/delay_line.h"

static void test_delay_of_three_ticks(void **state)
{
    (void)state;
    struct hs_delay_line dl;
    int32_t init = -1;
    assert_int_equal(hs_delay_line_init(&dl, sizeof(int32_t), 3, &init), 0);
    for (int32_t i = 0; i < 20; i++) {
        int32_t out = *(const int32_t *)hs_delay_line_push(&dl, &i);
        assert_int_equal(out, i < 3 ? -1 : i - 3);
    }
    hs_delay_line_free(&dl);
    hs_delay_line_free(&dl);
    hs_delay_line_free(NULL);
}

static void test_zero_delay_passes_through(void **state)
{
    (void)state;
    struct hs_delay_line dl;
    assert_int_equal(hs_delay_line_init(&dl, sizeof(double[2]), 0, NULL), 0);
    double in[2] = {1.5, 2.5};
    const double *out = hs_delay_line_push(&dl, in);
    assert_true(out[0] == 1.5 && out[1] == 2.5);
    hs_delay_line_free(&dl);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    struct hs_delay_line dl;
    assert_int_equal(hs_delay_line_init(&dl, 0, 1, NULL), -22);
    assert_int_equal(hs_delay_line_init(&dl, 4, HS_DELAY_TICKS_MAX + 1, NULL), -22);
    assert_null(dl.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delay_of_three_ticks),
        cmocka_unit_test(test_zero_delay_passes_through),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
