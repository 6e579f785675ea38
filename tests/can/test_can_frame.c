/* candump notation parse/format and frame validity. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/can.h"

static void test_parse_classic_extended_rtr_fd(void **state)
{
    (void)state;
    struct hs_can_frame f;
    assert_int_equal(hs_can_frame_parse("123#DEADbeef", &f), 0);
    assert_int_equal(f.id, 0x123);
    assert_int_equal(f.flags, 0);
    assert_int_equal(f.len, 4);
    assert_int_equal(f.data[3], 0xEF);
    assert_int_equal(hs_can_frame_parse("1ABCDE12#00.11", &f), 0);
    assert_int_equal(f.id, 0x1ABCDE12);
    assert_int_equal(f.flags, HS_CAN_FLAG_EXT);
    assert_int_equal(f.len, 2);
    assert_int_equal(hs_can_frame_parse("123#", &f), 0);
    assert_int_equal(f.len, 0);
    assert_int_equal(hs_can_frame_parse("7FF#R8", &f), 0);
    assert_int_equal(f.flags, HS_CAN_FLAG_RTR);
    assert_int_equal(f.len, 8);
    assert_int_equal(hs_can_frame_parse("123##1"
                                        "000102030405060708090A0B",
                                        &f),
                     0);
    assert_int_equal(f.flags, HS_CAN_FLAG_FD | HS_CAN_FLAG_BRS);
    assert_int_equal(f.len, 12);
    assert_int_equal(f.data[11], 0x0B);
}

static void test_parse_rejects_bad_text(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "12#00",                        /* 2 hex digits */
        "800#00",                       /* standard ID out of range */
        "3FFFFFFF#00",                  /* extended ID out of range (and 8 digits needed) */
        "123#001",                      /* odd nibble */
        "123#001122334455667788",       /* 9 bytes classic */
        "123##00011223344556677889900", /* FD length 11 */
        "123##4",                       /* unknown FD flag */
        "123#R9",                       /* RTR DLC > 8 */
        "123#XY",
        "",
        "#00",
        "123",
    };
    struct hs_can_frame f;
    memset(&f, 0x5A, sizeof f);
    struct hs_can_frame before = f;
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (hs_can_frame_parse(bad[i], &f) != -EINVAL)
            fail_msg("accepted '%s'", bad[i]);
        assert_memory_equal(&f, &before, sizeof f);
    }
}

static void test_format_round_trips(void **state)
{
    (void)state;
    static const char *const texts[] = {"123#DEADBEEF", "1ABCDE12#0011", "7FF#R8",
                                        "001##300112233445566778899AABB", "000#"};
    for (unsigned i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct hs_can_frame f;
        char buf[200];
        assert_int_equal(hs_can_frame_parse(texts[i], &f), 0);
        hs_can_frame_format(&f, buf, sizeof buf);
        assert_string_equal(buf, texts[i]);
    }
    assert_true(hs_can_fd_len_valid(48));
    assert_false(hs_can_fd_len_valid(47));
    assert_string_equal(hs_can_bus_state_name(HS_CAN_BUS_OFF), "bus-off");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_classic_extended_rtr_fd),
        cmocka_unit_test(test_parse_rejects_bad_text),
        cmocka_unit_test(test_format_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
