/* The DBC slips real files make (tests/can/dbc_lenient/, one construct per file, each modelled
 * on a file of the opendbc collection): each loads with exactly the expected warnings at the
 * expected line:column, and the database is what the writer meant. */
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

struct want {
    int line, column;
    const char *msg; /* substring */
};

static struct hs_dbc *load(const char *file, const struct want *w, unsigned n)
{
    const char *src = getenv("HS_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/can/dbc_lenient/%s", src ? src : ".", file);
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    if (hs_dbc_load_file(path, &dbc, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    for (unsigned i = 0; i < dbc->n_warnings; i++)
        print_message("  %s:%d:%d: %s\n", file, dbc->warnings[i].line, dbc->warnings[i].column,
                      dbc->warnings[i].msg);
    assert_int_equal(dbc->n_warnings, n);
    assert_int_equal(dbc->n_warnings_dropped, 0);
    for (unsigned i = 0; i < n; i++) {
        const struct hs_dbc_warning *g = &dbc->warnings[i];
        if (g->line != w[i].line || g->column != w[i].column || !strstr(g->msg, w[i].msg))
            fail_msg("%s warning %u: got %d:%d '%s', want %d:%d '%s'", file, i, g->line, g->column,
                     g->msg, w[i].line, w[i].column, w[i].msg);
    }
    return dbc;
}

#define LOAD(file, ...)                                                                            \
    ({                                                                                             \
        static const struct want w_[] = {__VA_ARGS__};                                             \
        load(file, w_, sizeof w_ / sizeof w_[0]);                                                  \
    })

static void test_multiline_node_list(void **state)
{
    (void)state;
    struct hs_dbc *dbc = load("multiline_bu.dbc", NULL, 0); /* valid DBC: no warning */
    assert_int_equal(dbc->n_nodes, 4);
    assert_string_equal(dbc->nodes[0], "NEO");
    assert_string_equal(dbc->nodes[3], "EPAS");
    assert_int_equal(dbc->n_messages, 1);
    hs_dbc_free(dbc);
}

static void test_comments_naming_unknown_things(void **state)
{
    (void)state;
    struct hs_dbc *dbc = LOAD("cm_unknown.dbc", {8, 13, "unknown signal Presure in message Brake"},
                              {9, 9, "CM_ SG_ refers to unknown message ID 999"},
                              {10, 9, "CM_ BO_ refers to unknown message ID 998"});
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 256, false);
    assert_string_equal(m->comment, "the brake");
    assert_string_equal(m->signals[0].comment, "kept");
    hs_dbc_free(dbc);
}

static void test_value_tables(void **state)
{
    (void)state;
    struct hs_dbc *dbc =
        LOAD("val_tables.dbc", {9, 10, "VAL_ refers to unknown signal Gera"},
             {10, 6, "VAL_ refers to unknown message ID 265"}, {11, 38, "VAL_ has no closing ';'"});
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 264, false);
    const struct hs_dbc_signal *t = hs_dbc_signal_by_name(m, "Torque");
    assert_string_equal(hs_dbc_value_text(t, -4096), "SNA");
    assert_string_equal(hs_dbc_value_text(t, -1), "minus one");
    const struct hs_dbc_signal *g = hs_dbc_signal_by_name(m, "Gear");
    assert_int_equal(g->n_values, 4);
    assert_string_equal(hs_dbc_value_text(g, 4), "D");
    assert_string_equal(g->comment, "after the unterminated VAL_"); /* next statement intact */
    /* raw -4096 in 13 signed bits at bit 0: 0x1000 */
    const uint8_t f[8] = {0x00, 0x10};
    double v;
    assert_int_equal(hs_dbc_signal_decode(t, f, 8, &v), 0);
    assert_true(v == -8192.0);
    hs_dbc_free(dbc);
}

static void test_attributes_naming_unknown_things(void **state)
{
    (void)state;
    struct hs_dbc *dbc = LOAD("ba_unknown.dbc", {10, 27, "BA_ refers to unknown message ID 301"},
                              {11, 32, "BA_ refers to unknown signal Whel in message Speed"});
    assert_int_equal(dbc->n_messages, 1);
    hs_dbc_free(dbc);
}

static void test_unflagged_extended_ids(void **state)
{
    (void)state;
    struct hs_dbc *dbc =
        LOAD("ext_unflagged.dbc", {5, 5, "above 0x7FF without the extended flag"},
             {7, 5, "1075054137 (0x40140639) of Broken does not fit a 29-bit CAN ID"});
    assert_int_equal(dbc->n_messages, 1);
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 13274, true);
    assert_non_null(m);
    assert_null(hs_dbc_find(dbc, 13274, false));
    assert_string_equal(m->comment, "found through the unflagged ID");
    assert_null(hs_dbc_find_by_name(dbc, "Broken"));
    hs_dbc_free(dbc);
}

static void test_bare_m_is_the_multiplexor(void **state)
{
    (void)state;
    struct hs_dbc *dbc = LOAD("bare_m.dbc", {5, 14, "bare multiplexer indicator 'm'"});
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 648, false);
    assert_int_equal(m->multiplexor, 0);
    assert_int_equal(m->signals[0].mux, HS_DBC_MULTIPLEXOR);
    /* Mp_Code = 2 (bits 6..7), bits 0..5 = 45: Getr_Code present, CAN_Vers not */
    const uint8_t f[8] = {0x80 | 45, 100};
    const struct hs_dbc_signal *getr = hs_dbc_signal_by_name(m, "Getr_Code");
    assert_true(hs_dbc_signal_present(m, getr, f, 8));
    assert_false(hs_dbc_signal_present(m, hs_dbc_signal_by_name(m, "CAN_Vers"), f, 8));
    double v;
    hs_dbc_signal_decode(getr, f, 8, &v);
    assert_true(v == 45);
    hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "Coolant"), f, 8, &v);
    assert_true(fabs(v - (100 * 0.75 - 48)) < 1e-12);
    hs_dbc_free(dbc);
}

static void test_comment_without_semicolon(void **state)
{
    (void)state;
    struct hs_dbc *dbc = LOAD("cm_no_semicolon.dbc", {7, 19, "CM_ has no closing ';'"});
    assert_string_equal(dbc->comment, "Front target");
    assert_int_equal(dbc->n_messages, 2); /* the BO_ right after the comment is not lost */
    assert_non_null(hs_dbc_find_by_name(dbc, "CLUSTER_F"));
    hs_dbc_free(dbc);
}

static void test_names_starting_with_digits(void **state)
{
    (void)state;
    struct hs_dbc *dbc = LOAD("digit_names.dbc", {4, 10, "message name '2017_5' starts with a"},
                              {5, 6, "signal name '0_COUNTER'"}, {6, 6, "signal name '64_BIT_LE'"});
    const struct hs_dbc_message *m = hs_dbc_find_by_name(dbc, "2017_5");
    assert_non_null(m);
    assert_int_equal(m->n_signals, 2);
    assert_non_null(hs_dbc_signal_by_name(m, "64_BIT_LE"));
    hs_dbc_free(dbc);
}

static void test_comment_forms_not_understood(void **state)
{
    (void)state;
    struct hs_dbc *dbc = LOAD("cm_odd_forms.dbc", {7, 13, "CM_ not understood (expected signal"},
                              {8, 5, "CM_ not understood"});
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 304, false);
    assert_string_equal(m->signals[0].comment, "kept");
    assert_null(m->comment);
    hs_dbc_free(dbc);
}

/* The genuine mistake: signals past the end of the message are left out, each named with its
 * line; references to them are dropped quietly; the signals that fit decode. */
static void test_signal_past_end_left_out(void **state)
{
    (void)state;
    struct hs_dbc *dbc =
        LOAD("signal_past_end.dbc",
             {7, 6,
              "signal LH1_Diagmode (start bit 16, 1 bits) needs 3 bytes but message "
              "Lenkhilfe_1 has 2: signal left out"},
             {8, 6, "signal LH1_Motorola (start bit 15, 16 bits) needs 3 bytes"});
    const struct hs_dbc_message *m = hs_dbc_find(dbc, 976, false);
    assert_int_equal(m->n_signals, 2);
    assert_null(hs_dbc_signal_by_name(m, "LH1_Diagmode"));
    assert_null(hs_dbc_signal_by_name(m, "LH1_Motorola"));
    const uint8_t f[2] = {0x0B, 0xA5};
    double v;
    assert_int_equal(hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "LH1_Zaehler"), f, 2, &v), 0);
    assert_true(v == 11);
    assert_int_equal(hs_dbc_signal_decode(hs_dbc_signal_by_name(m, "LH1_Status"), f, 2, &v), 0);
    assert_true(v == 0xA5);
    hs_dbc_free(dbc);
}

static void test_fd_lengths(void **state)
{
    (void)state;
    struct hs_dbc *dbc =
        LOAD("fd_lengths.dbc", {6, 19, "message Unmarked: length 16 taken as CAN FD"});
    assert_true(hs_dbc_find(dbc, 100, false)->fd);
    assert_true(hs_dbc_find(dbc, 101, false)->fd);
    assert_false(hs_dbc_find(dbc, 102, false)->fd);
    uint8_t f[64] = {0};
    f[63] = 0x5A;
    double v;
    assert_int_equal(hs_dbc_signal_decode(&hs_dbc_find(dbc, 100, false)->signals[0], f, 64, &v), 0);
    assert_true(v == 0x5A);
    hs_dbc_free(dbc);
}

/* Warnings beyond HS_DBC_WARNINGS_MAX are counted, not kept: a hostile file cannot make the
 * warning list grow without bound. */
static void test_warning_flood_is_bounded(void **state)
{
    (void)state;
    const unsigned n = HS_DBC_WARNINGS_MAX + 500;
    size_t cap = 64 + (size_t)n * 32;
    char *t = malloc(cap);
    size_t len = (size_t)snprintf(t, cap, "BO_ 1 A: 8 X\n");
    for (unsigned i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, "CM_ SG_ 1 s%u \"x\";\n", i);
    struct hs_dbc *dbc = NULL;
    struct hs_diag d;
    assert_int_equal(hs_dbc_load_buffer(t, len, "flood.dbc", &dbc, &d), 0);
    assert_int_equal(dbc->n_warnings, HS_DBC_WARNINGS_MAX);
    assert_int_equal(dbc->n_warnings_dropped, 500);
    assert_int_equal(dbc->warnings[0].line, 2);
    hs_dbc_free(dbc);
    free(t);
}

/* Not a regular file: refused before it is opened (a FIFO would block open(), /dev/zero would
 * never end). */
static void test_non_regular_files_refused(void **state)
{
    (void)state;
    const char *paths[] = {"/dev/zero", "/tmp", "/dev/null"};
    for (unsigned i = 0; i < 3; i++) {
        struct hs_dbc *dbc = (struct hs_dbc *)0x1;
        struct hs_diag d;
        assert_int_equal(hs_dbc_load_file(paths[i], &dbc, &d), -EINVAL);
        assert_non_null(strstr(d.msg, "not a DBC file"));
        assert_ptr_equal(dbc, (struct hs_dbc *)0x1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multiline_node_list),
        cmocka_unit_test(test_comments_naming_unknown_things),
        cmocka_unit_test(test_value_tables),
        cmocka_unit_test(test_attributes_naming_unknown_things),
        cmocka_unit_test(test_unflagged_extended_ids),
        cmocka_unit_test(test_bare_m_is_the_multiplexor),
        cmocka_unit_test(test_comment_without_semicolon),
        cmocka_unit_test(test_names_starting_with_digits),
        cmocka_unit_test(test_comment_forms_not_understood),
        cmocka_unit_test(test_signal_past_end_left_out),
        cmocka_unit_test(test_fd_lengths),
        cmocka_unit_test(test_warning_flood_is_bounded),
        cmocka_unit_test(test_non_regular_files_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
