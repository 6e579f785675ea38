/* Lexer: token kinds, values, 1-based positions, comments, commas, strings and bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "vrml_internal.h"

struct lexfix {
    struct hs__arena arena;
    struct hs__vlexer lx;
    struct hs_diag diag;
};

static void start(struct lexfix *f, const char *src)
{
    memset(f, 0, sizeof *f);
    hs__vlex_init(&f->lx, src, strlen(src), "t.wrl", &f->arena, &f->diag);
}

static struct hs__vtoken next_ok(struct lexfix *f)
{
    struct hs__vtoken t;
    assert_int_equal(hs__vlex_next(&f->lx, &t), 0);
    return t;
}

static void test_tokens_and_positions(void **state)
{
    (void)state;
    struct lexfix f;
    start(&f, "#VRML V2.0 utf8\nDEF A Joint {\n  translation 0, -1.5e-1 .25 # c\n}\n"
              "ROUTE a.b TO c.d [ ]");
    struct hs__vtoken t = next_ok(&f);
    assert_int_equal(t.kind, HS__VT_ID);
    assert_string_equal(t.text, "DEF");
    assert_int_equal(t.line, 2);
    assert_int_equal(t.column, 1);
    t = next_ok(&f);
    assert_string_equal(t.text, "A");
    assert_int_equal(t.column, 5);
    t = next_ok(&f);
    assert_string_equal(t.text, "Joint");
    t = next_ok(&f);
    assert_int_equal(t.kind, HS__VT_LBRACE);
    assert_int_equal(t.column, 13);
    t = next_ok(&f);
    assert_string_equal(t.text, "translation");
    assert_int_equal(t.line, 3);
    assert_int_equal(t.column, 3);
    t = next_ok(&f);
    assert_int_equal(t.kind, HS__VT_NUM);
    assert_true(t.num == 0.0);
    t = next_ok(&f);
    assert_true(t.num == -0.15);
    assert_int_equal(t.column, 18);
    t = next_ok(&f);
    assert_true(t.num == 0.25);
    t = next_ok(&f);
    assert_int_equal(t.kind, HS__VT_RBRACE);
    assert_int_equal(t.line, 4);
    t = next_ok(&f);
    assert_string_equal(t.text, "ROUTE");
    t = next_ok(&f);
    assert_string_equal(t.text, "a");
    t = next_ok(&f);
    assert_int_equal(t.kind, HS__VT_DOT);
    t = next_ok(&f);
    assert_string_equal(t.text, "b");
    for (int i = 0; i < 4; i++)
        next_ok(&f);
    assert_int_equal(next_ok(&f).kind, HS__VT_LBRACK);
    assert_int_equal(next_ok(&f).kind, HS__VT_RBRACK);
    assert_int_equal(next_ok(&f).kind, HS__VT_EOF);
    hs__arena_free(&f.arena);
}

static void test_string_escapes_and_newlines(void **state)
{
    (void)state;
    struct lexfix f;
    start(&f, "\"a\\\"b\\\\c\nd\" x");
    struct hs__vtoken t = next_ok(&f);
    assert_int_equal(t.kind, HS__VT_STR);
    assert_string_equal(t.text, "a\"b\\c\nd");
    t = next_ok(&f);
    assert_int_equal(t.line, 2);
    assert_int_equal(t.column, 4);
    hs__arena_free(&f.arena);
}

static void test_hex_and_integer_numbers(void **state)
{
    (void)state;
    struct lexfix f;
    start(&f, "0x1F +3 1E3");
    assert_true(next_ok(&f).num == 31.0);
    assert_true(next_ok(&f).num == 3.0);
    assert_true(next_ok(&f).num == 1000.0);
    hs__arena_free(&f.arena);
}

static void expect_error(const char *src, int line, int column, const char *word)
{
    struct lexfix f;
    start(&f, src);
    struct hs__vtoken t;
    int r;
    do
        r = hs__vlex_next(&f.lx, &t);
    while (r == 0 && t.kind != HS__VT_EOF);
    assert_true(r < 0);
    assert_int_equal(f.diag.line, line);
    assert_int_equal(f.diag.column, column);
    assert_non_null(strstr(f.diag.msg, word));
    assert_string_equal(f.diag.file, "t.wrl");
    hs__arena_free(&f.arena);
}

/* Non-finite numbers are tokens: the parser decides by field whether they are an error. */
static void test_nonfinite_numbers_keep_their_text(void **state)
{
    (void)state;
    struct lexfix f;
    start(&f, "-inf\n 1e999 -nan 2");
    struct hs__vtoken t = next_ok(&f);
    assert_int_equal(t.kind, HS__VT_NUM);
    assert_true(t.nonfinite && isinf(t.num) && t.num < 0);
    assert_string_equal(t.text, "-inf");
    t = next_ok(&f);
    assert_true(t.nonfinite && isinf(t.num));
    assert_string_equal(t.text, "1e999");
    assert_int_equal(t.line, 2);
    assert_int_equal(t.column, 2);
    t = next_ok(&f);
    assert_true(t.nonfinite && isnan(t.num));
    assert_string_equal(t.text, "-nan");
    t = next_ok(&f);
    assert_false(t.nonfinite);
    assert_true(t.num == 2.0);
    hs__arena_free(&f.arena);
}

static void test_errors_name_position(void **state)
{
    (void)state;
    expect_error("a\n  \"open", 2, 3, "unterminated");
    expect_error("x 1.2.3", 1, 3, "malformed number");
    expect_error("ab\x01", 1, 3, "unexpected character");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_and_positions),
        cmocka_unit_test(test_string_escapes_and_newlines),
        cmocka_unit_test(test_nonfinite_numbers_keep_their_text),
        cmocka_unit_test(test_hex_and_integer_numbers),
        cmocka_unit_test(test_errors_name_position),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
