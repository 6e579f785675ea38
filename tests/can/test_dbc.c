/* DBC parser and signal codec: the real ODrive DBC (skipped without HS_SHARED_DIR), frames
 * computed by hand for Intel/Motorola/signed/float/multiplexed signals, and error reports. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/can_dbc.h"

static struct hs_dbc *load(const char *text)
{
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    int r = hs_dbc_load_buffer(text, strlen(text), "t.dbc", &dbc, &d);
    if (r < 0)
        fail_msg("unexpected error: %s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    return dbc;
}

static struct hs_dbc *load_odrive(void)
{
    const char *dir = getenv("HS_SHARED_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/can/odrive-cansimple.dbc", dir ? dir : "");
    FILE *f = dir ? fopen(path, "r") : NULL;
    if (!f)
        return NULL;
    fclose(f);
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    if (hs_dbc_load_file(path, &dbc, &d) < 0)
        fail_msg("%s:%d: %s", d.file, d.line, d.msg);
    return dbc;
}

static void test_odrive_dbc_parses_as_documented(void **state)
{
    (void)state;
    struct hs_dbc *dbc = load_odrive();
    if (!dbc)
        skip();
    assert_int_equal(dbc->n_messages, 21);
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 12, false);
    assert_non_null(m);
    assert_string_equal(m->name, "Set_Input_Pos");
    assert_int_equal(m->length, 8);
    const struct hs_dbc_signal *t = hs_dbc_signal_by_name(m, "Torque_FF");
    assert_non_null(t);
    assert_int_equal(t->start_bit, 48);
    assert_int_equal(t->length, 16);
    assert_int_equal(t->byte_order, HS_DBC_INTEL);
    assert_true(t->is_signed);
    assert_true(t->factor == 0.001);
    assert_int_equal(hs_dbc_signal_by_name(m, "Input_Pos")->value_type, HS_DBC_FLOAT32);
    assert_int_equal(hs_dbc_find(dbc, 16, false)->n_signals, 0); /* Start_Anticogging */
    assert_null(hs_dbc_find(dbc, 2, false));                     /* Estop: not in this DBC */
    hs_dbc_free(dbc);
}

/* Frames built from the protocol facts: little-endian, IEEE floats, int16 x 0.001. */
static void test_odrive_frames_decode_by_hand(void **state)
{
    (void)state;
    struct hs_dbc *dbc = load_odrive();
    if (!dbc)
        skip();
    /* Set_Input_Pos: pos 1.5 rev (0x3FC00000), vel_ff -2.000 (-2000 = 0xF830),
     * torque_ff 0.5 (500 = 0x01F4) */
    const uint8_t pos[8] = {0x00, 0x00, 0xC0, 0x3F, 0x30, 0xF8, 0xF4, 0x01};
    const struct hs_dbc_message *m = hs_dbc_find_by_name(dbc, "Set_Input_Pos");
    double v;
    assert_int_equal(hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "Input_Pos"), pos, 8, &v), 0);
    assert_true(v == 1.5);
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "Vel_FF"), pos, 8, &v);
    assert_true(fabs(v + 2.0) < 1e-12);
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "Torque_FF"), pos, 8, &v);
    assert_true(fabs(v - 0.5) < 1e-12);
    /* Heartbeat: axis error 0x800 (watchdog), state 8 (closed loop) */
    const uint8_t hb[8] = {0x00, 0x08, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00};
    m = hs_dbc_find(dbc, 1, false);
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "Axis_Error"), hb, 8, &v);
    assert_true(v == 2048);
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "Axis_State"), hb, 8, &v);
    assert_true(v == 8);
    /* encoding gives the same bytes */
    uint8_t out[8] = {0};
    m = hs_dbc_find_by_name(dbc, "Set_Input_Pos");
    assert_int_equal(hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "Input_Pos"), 1.5, out, 8), 0);
    assert_int_equal(hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "Vel_FF"), -2.0, out, 8), 0);
    assert_int_equal(hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "Torque_FF"), 0.5, out, 8), 0);
    assert_memory_equal(out, pos, 8);
    hs_dbc_free(dbc);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

/* Every signal of every message: random in-range raw values survive encode -> decode, and
 * writing one signal leaves the others' bits alone. */
static void test_odrive_every_signal_round_trips(void **state)
{
    (void)state;
    struct hs_dbc *dbc = load_odrive();
    if (!dbc)
        skip();
    uint64_t seed = 42;
    unsigned checked = 0;
    for (unsigned i = 0; i < dbc->n_messages; i++) {
        const struct hs_dbc_message *m = &dbc->messages[i];
        for (int trial = 0; trial < 50; trial++) {
            uint8_t data[64];
            double want[16];
            for (unsigned k = 0; k < 64; k++)
                data[k] = (uint8_t)lcg(&seed);
            for (unsigned k = 0; k < m->n_signals && k < 16; k++) {
                const struct hs_dbc_signal *s = &m->signals[k];
                if (s->value_type == HS_DBC_FLOAT32)
                    want[k] = (double)(float)((int64_t)(lcg(&seed) % 2000001) - 1000000) / 64.0;
                else if (s->is_signed)
                    want[k] =
                        ((int64_t)(lcg(&seed) % (1u << 15)) - (1 << 14)) * s->factor + s->offset;
                else
                    want[k] = (double)(lcg(&seed) % (1u << 15)) * s->factor + s->offset;
                assert_int_equal(hs_dbc_signal_encode(s, want[k], data, m->length), 0);
            }
            for (unsigned k = 0; k < m->n_signals && k < 16; k++) {
                double got;
                assert_int_equal(hs_dbc_signal_decode(&m->signals[k], data, m->length, &got), 0);
                assert_true(fabs(got - want[k]) <= 1e-9 * (1 + fabs(want[k])));
                checked++;
            }
        }
    }
    assert_true(checked >= 50 * 29); /* 29 signals in the DBC */
    hs_dbc_free(dbc);
}

static const char *const bits_dbc =
    "VERSION \"1.0\"\n"
    "NS_ :\n\tCM_\n\tBA_DEF_\n\n"
    "BS_:\n"
    "BU_: ECU Tester\n"
    "BO_ 256 Bits: 8 ECU\n"
    " SG_ M16 : 7|16@0+ (1,0) [0|65535] \"\" Tester\n"
    " SG_ M12 : 19|12@0+ (1,0) [0|4095] \"\" Tester,ECU\n"
    " SG_ M10 : 44|10@0+ (1,0) [0|0] \"\" Tester\n"
    " SG_ S8M : 63|8@0- (1,0) [0|0] \"\" Tester\n"
    "BO_ 257 Intel: 8 ECU\n"
    " SG_ I12 : 4|12@1+ (1,0) [0|0] \"\" Tester\n"
    " SG_ S12 : 16|12@1- (0.5,-3) [-1027|1020.5] \"rad/s\" Tester\n"
    " SG_ F32 : 32|32@1- (2,1) [0|0] \"N.m\" Tester\n"
    "BO_ 2147483948 Ext64: 8 ECU\n"
    " SG_ D64 : 0|64@1- (1,0) [0|0] \"\" Tester\n"
    "BO_ 258 Muxed: 8 ECU\n"
    " SG_ Sel M : 0|8@1+ (1,0) [0|0] \"\" Tester\n"
    " SG_ A m0 : 8|16@1+ (0.1,0) [0|0] \"V\" Tester\n"
    " SG_ B m1 : 8|16@1- (1,0) [0|0] \"A\" Tester\n"
    " SG_ Always : 56|8@1+ (1,0) [0|0] \"\" Tester\n"
    "BA_DEF_ SG_ \"GenSigStartValue\" INT 0 10000; BA_ \"GenMsgCycleTime\" BO_ 256 100;\n"
    "CM_ \"network; with a semicolon\";\n"
    "CM_ BO_ 256 \"first line\nsecond line\";\n"
    "CM_ SG_ 257 S12 \"signed \\\"12\\\" bits\";\n"
    "SIG_VALTYPE_ 257 F32 : 1;\n"
    "SIG_VALTYPE_ 2147483948 D64 : 2;\n"
    "VAL_ 258 Sel 0 \"volts\" 1 \"amps\" ;\n"
    "VAL_TABLE_ T 1 \"x\" 0 \"y\";\n";

static void test_motorola_bits_against_hand_computed_frames(void **state)
{
    (void)state;
    struct hs_dbc *dbc = load(bits_dbc);
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 256, false);
    uint8_t d[8] = {0};
    /* M16 @ 7: MSB in byte0 bit7 -> 0x1234 is bytes 12 34 */
    assert_int_equal(hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "M16"), 0x1234, d, 8), 0);
    /* M12 @ 19 (byte2 bit3): byte2 bits 3..0 = high nibble, byte3 = low byte: 0xABC */
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "M12"), 0xABC, d, 8);
    /* M10 @ 44 (byte5 bit4): byte5 bits 4..0 = 10101, byte6 bits 7..3 = 10011 */
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "M10"), 0x2B3, d, 8);
    /* S8M @ 63: byte7 whole, signed */
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "S8M"), -128, d, 8);
    const uint8_t want[8] = {0x12, 0x34, 0x0A, 0xBC, 0x00, 0x15, 0x98, 0x80};
    assert_memory_equal(d, want, 8);
    double v;
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "M10"), want, 8, &v);
    assert_true(v == 0x2B3);
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "S8M"), want, 8, &v);
    assert_true(v == -128);
    const struct hs_dbc_signal *m10 = hs_dbc_signal_by_name(m, "M10");
    assert_int_equal(m10->msb_pos, 44);
    assert_int_equal(m10->lsb_pos, 51);
    hs_dbc_free(dbc);
}

static void test_intel_signed_and_float_signals(void **state)
{
    (void)state;
    struct hs_dbc *dbc = load(bits_dbc);
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 257, false);
    uint8_t d[8] = {0};
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "I12"), 0xABC, d, 8);
    /* S12 (0.5, -3): -4 -> raw (-4 + 3) / 0.5 = -2 = 0xFFE over 12 bits at bit 16 */
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "S12"), -4.0, d, 8);
    /* F32 float (2, 1): 7 -> raw float 3.0 = 0x40400000 */
    hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "F32"), 7.0, d, 8);
    const uint8_t want[8] = {0xC0, 0xAB, 0xFE, 0x0F, 0x00, 0x00, 0x40, 0x40};
    assert_memory_equal(d, want, 8);
    double v;
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "S12"), want, 8, &v);
    assert_true(v == -4.0);
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "F32"), want, 8, &v);
    assert_true(v == 7.0);
    /* the most negative raw value */
    const uint8_t minv[8] = {0, 0, 0x00, 0x08, 0, 0, 0, 0};
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "S12"), minv, 8, &v);
    assert_true(v == -2048 * 0.5 - 3);
    /* saturation is reported, the saturated value written */
    uint8_t s[8] = {0};
    assert_int_equal(hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "I12"), 5000, s, 8), -ERANGE);
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "I12"), s, 8, &v);
    assert_true(v == 4095);
    assert_int_equal(hs_dbc_signal_encode(hs_dbc_signal_by_name(m, "I12"), NAN, s, 8), -EDOM);
    /* too short a payload */
    assert_int_equal(hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "F32"), want, 7, &v), -ERANGE);
    /* extended id, double */
    const struct hs_dbc_message *e = hs_dbc_find(dbc, 0x12C, true);
    assert_non_null(e);
    assert_null(hs_dbc_find(dbc, 0x12C, false));
    const struct hs_dbc_signal *d64 = hs_dbc_signal_by_name(e, "D64");
    assert_int_equal(d64->value_type, HS_DBC_FLOAT64);
    hs_dbc_signal_encode(d64, M_PI, d, 8);
    hs_dbc_signal_decode(d64, d, 8, &v);
    assert_true(v == M_PI);
    hs_dbc_free(dbc);
}

static void test_multiplexing_values_and_comments(void **state)
{
    (void)state;
    struct hs_dbc *dbc = load(bits_dbc);
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 258, false);
    assert_int_equal(m->multiplexor, 0);
    const struct hs_dbc_signal *a = hs_dbc_signal_by_name(m, "A");
    const struct hs_dbc_signal *b = hs_dbc_signal_by_name(m, "B");
    assert_int_equal(a->mux, HS_DBC_MULTIPLEXED);
    assert_int_equal(b->mux_value, 1);
    const uint8_t f0[8] = {0, 0x10, 0x27, 0, 0, 0, 0, 9};
    const uint8_t f1[8] = {1, 0xFF, 0xFF, 0, 0, 0, 0, 9};
    assert_true(hs_dbc_signal_present(m, a, f0, 8));
    assert_false(hs_dbc_signal_present(m, b, f0, 8));
    assert_true(hs_dbc_signal_present(m, b, f1, 8));
    assert_true(hs_dbc_signal_present(m, hs_dbc_signal_by_name(m, "Always"), f1, 8));
    double v;
    hs_dbc_signal_decode(a, f0, 8, &v);
    assert_true(fabs(v - 1000.0) < 1e-9);
    hs_dbc_signal_decode(b, f1, 8, &v);
    assert_true(v == -1);
    assert_string_equal(hs_dbc_value_text(&m->signals[0], 1), "amps");
    assert_null(hs_dbc_value_text(&m->signals[0], 2));
    assert_string_equal(dbc->comment, "network; with a semicolon");
    assert_string_equal(hs_dbc_find(dbc, 256, false)->comment, "first line\nsecond line");
    const struct hs_dbc_message *i = hs_dbc_find(dbc, 257, false);
    assert_string_equal(hs_dbc_signal_by_name(i, "S12")->comment, "signed \"12\" bits");
    assert_string_equal(hs_dbc_signal_by_name(i, "S12")->unit, "rad/s");
    assert_int_equal(dbc->n_nodes, 2);
    assert_int_equal(hs_dbc_signal_by_name(hs_dbc_find(dbc, 256, false), "M12")->n_receivers, 2);
    assert_string_equal(dbc->version, "1.0");
    hs_dbc_free(dbc);
}

static void test_bad_input_names_file_line_and_leaves_nothing(void **state)
{
    (void)state;
    /* column: where the offending token starts (0: the error names a whole statement) */
    static const struct {
        const char *text;
        int line, column;
        const char *msg;
    } cases[] = {
        {"BO_ 1 A: 8 X\n SG_ s : 0|8@2+ (1,0) [0|0] \"\" X\n", 2, 14, "byte order"},
        {"BO_ 1 A: 8 X\n SG_ s : 0|8@1+ (1,0) [0|0 \"\" X\n", 2, 28, "']'"},
        {"BO_ 1 A: 8 X\n\n SG_ s : 0|0@1+ (1,0) [0|0] \"\" X\n", 3, 12, "length 0"},
        {"BO_ 1 A: 8 X\n SG_ s : 7|8@1+ (0,0) [0|0] \"\" X\n", 2, 18, "factor 0"},
        {"VERSION \"x\"\nFOO_ 1;\n", 2, 1, "unknown keyword 'FOO_'"},
        {"VERSION \"x\nBO_ 1 A: 8 X\n", 1, 9, "unterminated string"},
        {" SG_ s : 0|8@1+ (1,0) [0|0] \"\" X\n", 1, 5, "SG_ before any BO_"},
        {"BO_ 1 A: 8 X\n SG_ s : 0|8@1+ (1,0) [0|0] \"\" X\nSIG_VALTYPE_ 1 s : 1;\n", 3, 20,
         "a float needs 32"},
        {"BO_ 1 A: 8 X\nBO_ 1 B: 8 X\n", 2, 5, "defined twice (first at line 1)"},
        {"BO_ 1 A: 8 X\n SG_ s m3 : 0|8@1+ (1,0) [0|0] \"\" X\n", 1, 0, "no multiplexor"},
        {"BO_ 1 A: 9 X\n", 1, 10, "length 9 is not a CAN frame length"},
        {"BO_ 1 A: 65 X\n", 1, 10, "message length 65"},
        {"BO_ 1 A: 13 X\n", 1, 10, "(0..8; CAN FD 12, 16, 20, 24, 32, 48, 64)"},
        {"BA_DEF_ BO_ \"x\" INT 0 1\n", 1, 0, "no closing ';'"},
        {"BO_ 1 A: 8 X\n SG_ s m1M : 0|8@1+ (1,0) [0|0] \"\" X\n", 2, 8, "extended multiplexing"},
        {"BO_ 1 A: 8 X\n SG_ s : 0|32@1+ (1,0) [0|0] \"\" X\nSIG_VALTYPE_ 1 s : 4;\n", 3, 20,
         "SIG_VALTYPE_ type"},
        {"BO_ 1 A: 8 X\n SG_ s : 0|8@1+ (1,0) [0|0] \"\" X\n SG_ s : 8|8@1+ (1,0) [0|0] \"\" X\n",
         3, 6, "defined twice in message A (first at line 2)"},
        /* strict where it matters: an FD length on a message the file says is classic */
        {"BO_ 1 A: 64 X\nBA_DEF_ BO_ \"VFrameFormat\" ENUM \"StandardCAN\",\"ExtendedCAN\";\n"
         "BA_DEF_DEF_ \"VFrameFormat\" \"StandardCAN\";\n",
         1, 10, "length 64 needs CAN FD but VFrameFormat says classic"},
        {"BO_ 1 A: 16 X\nBA_ \"VFrameFormat\" BO_ 1 0;\n", 1, 10, "needs CAN FD"},
        {"BO_ 1 A: 8 X\n SG_ s : 0|65@1+ (1,0) [0|0] \"\" X\n", 2, 12, "signal length"},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hs_dbc *dbc = (struct hs_dbc *)0x1;
        struct hs_diag d;
        memset(&d, 0, sizeof d);
        int r = hs_dbc_load_buffer(cases[i].text, strlen(cases[i].text), "bad.dbc", &dbc, &d);
        if (r != -EINVAL || d.line != cases[i].line || d.column != cases[i].column ||
            !strstr(d.msg, cases[i].msg))
            fail_msg("case %u: r=%d %s:%d:%d: %s", i, r, d.file, d.line, d.column, d.msg);
        assert_string_equal(d.file, "bad.dbc");
        assert_ptr_equal(dbc, (struct hs_dbc *)0x1);
    }
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    assert_int_equal(hs_dbc_load_file("/nonexistent/x.dbc", &dbc, &d), -ENOENT);
    assert_null(dbc);
    hs_dbc_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odrive_dbc_parses_as_documented),
        cmocka_unit_test(test_odrive_frames_decode_by_hand),
        cmocka_unit_test(test_odrive_every_signal_round_trips),
        cmocka_unit_test(test_motorola_bits_against_hand_computed_frames),
        cmocka_unit_test(test_intel_signed_and_float_signals),
        cmocka_unit_test(test_multiplexing_values_and_comments),
        cmocka_unit_test(test_bad_input_names_file_line_and_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
