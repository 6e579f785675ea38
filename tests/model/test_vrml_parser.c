/* Parser and PROTO handling: tree shape, DEF/USE sharing, PROTO defaults and IS, schema checks
 * (unknown fields, wrong types) with positions, and bounded nesting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "model_test_util.h"
#include "vrml_internal.h"

static struct hs__vdoc *parse_ok(const char *src)
{
    struct hs__vdoc *doc = NULL;
    struct hs_diag d = {0};
    int r = hs__vrml_parse(src, strlen(src), "p.wrl", &doc, &d);
    if (r < 0)
        fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.column, d.msg);
    assert_int_equal(r, 0);
    return doc;
}

static void parse_err(const char *src, int line, int column, const char *word)
{
    struct hs__vdoc *doc = NULL;
    struct hs_diag d = {0};
    int r = hs__vrml_parse(src, strlen(src), "p.wrl", &doc, &d);
    assert_true(r < 0);
    assert_null(doc);
    if (!strstr(d.msg, word) || d.line != line || (column && d.column != column))
        fprintf(stderr, "got %d:%d: %s\n", d.line, d.column, d.msg);
    assert_int_equal(d.line, line);
    if (column)
        assert_int_equal(d.column, column);
    assert_non_null(strstr(d.msg, word));
    assert_string_equal(d.file, "p.wrl");
}

static void test_tree_and_def_use_share_nodes(void **state)
{
    (void)state;
    struct hs__vdoc *doc =
        parse_ok("DEF G Group { children [ DEF S Shape { geometry Box { size 1 2 3 } } USE S ] }\n"
                 "Transform { translation 1 2 3 children USE G }");
    assert_int_equal(doc->nroots, 2);
    const struct hs__vnode *g = doc->roots[0];
    assert_string_equal(g->type, "Group");
    assert_string_equal(g->def, "G");
    assert_int_equal(g->nfields, 1);
    const struct hs__vvalue *ch = &g->fields[0].value;
    assert_int_equal(ch->kind, HS__VV_NODES);
    assert_int_equal(ch->n, 2);
    assert_ptr_equal(ch->nodes[0], ch->nodes[1]); /* USE is the same node */
    const struct hs__vnode *t = doc->roots[1];
    assert_ptr_equal(t->fields[1].value.nodes[0], g);
    assert_int_equal(t->fields[0].value.n, 3);
    assert_true(t->fields[0].value.items[2].num == 3.0);
    assert_int_equal(t->line, 2);
    hs__vrml_doc_free(doc);
}

static void test_proto_defaults_and_is(void **state)
{
    (void)state;
    struct hs__vdoc *doc =
        parse_ok("PROTO P [ exposedField SFFloat mass 2.5 exposedField SFVec3f offset 1 2 3\n"
                 "          field MFNode kids [ ] eventIn MFNode add ]\n"
                 "{ Transform { translation IS offset children IS kids } }\n"
                 "P { mass 7 }  P { }");
    assert_int_equal(doc->nroots, 2);
    const struct hs__vnode *a = doc->roots[0], *b = doc->roots[1];
    assert_non_null(a->proto);
    assert_int_equal(a->proto->nifaces, 4);
    assert_int_equal(a->proto->ifaces[0].type, HS__FT_SFFLOAT);
    assert_int_equal(a->proto->ifaces[3].kind, HS__IF_EVENTIN);
    const struct hs__venv *e;
    const struct hs__vvalue *v = hs__vfield_get(a, "mass", NULL, &e);
    assert_true(v->items[0].num == 7.0);
    v = hs__vfield_get(b, "mass", NULL, &e);
    assert_non_null(v);
    assert_true(v->items[0].num == 2.5); /* declared default honoured */
    /* IS in the body resolves against the instance, then the default. */
    const struct hs__vnode *body = a->proto->body[0];
    struct hs__venv env = {.inst = b};
    v = hs__vfield_get(body, "translation", &env, &e);
    assert_non_null(v);
    assert_true(v->items[1].num == 2.0);
    hs__vrml_doc_free(doc);
}

static void test_script_route_externproto_parse(void **state)
{
    (void)state;
    struct hs__vdoc *doc = parse_ok(
        "EXTERNPROTO E [ exposedField SFFloat x eventIn SFBool go ] [ \"e.wrl#E\" \"f.wrl\" ]\n"
        "DEF T TimeSensor { loop TRUE }\n"
        "Script { field SFFloat k 1 eventIn SFTime t url \"javascript: x\" }\n"
        "ROUTE T.fraction_changed TO X.set_y\n"
        "E { x 3 }");
    assert_int_equal(doc->nroots, 3);
    assert_true(doc->roots[2]->proto->external);
    hs__vrml_doc_free(doc);
}

static void test_errors(void **state)
{
    (void)state;
    parse_err("Group { children [ USE nothing ] }", 1, 24, "undefined");
    parse_err("Transform {\n  translation 1 2\n}", 2, 15, "SFVec3f");
    parse_err("Transform {\n  translaton 1 2 3\n}", 2, 3, "unknown field");
    parse_err("Box { size \"a\" 1 2 }", 1, 12, "number");
    parse_err("Group { children [ Shape { } ]", 1, 31, "'}'");
    parse_err("Group { children [ Shape { }", 1, 29, "']'");
    parse_err("Group {\n children [ Shape { } ]\n", 3, 1, "'}'");
    parse_err("PROTO P [ exposedField SFFloat m ] { }", 1, 34, "value");
    parse_err("PROTO P [ exposedField SFWhat m 1 ] { }", 1, 24, "field type");
    parse_err("PROTO P [ field SFFloat m 1 ] { Group { children IS nope } }", 1, 53, "no such");
    parse_err("PROTO P [ field SFFloat m 1 ] { } P { q 1 }", 1, 39, "not declared");
    parse_err("Group { children 1 }", 1, 18, "MFNode");
    parse_err("Group { children [ Shape { } 1 ] }", 1, 30, "node");
    parse_err("IndexedFaceSet { coordIndex [ 0 1 2.5 ] }", 1, 35, "integer");
    parse_err("Group { Group { } }", 1, 9, "unknown field");
    parse_err("Foo { bar Group }", 1, 17, "expected '{'");
    parse_err("Transform { translation 0 0 -nan }", 1, 29, "'-nan' is not finite");
    parse_err("Transform {\n rotation 0 1 0 inf }", 2, 17, "'inf' is not finite");
    parse_err("Segment { mass 1e999 }", 1, 16, "'1e999' is not finite");
    parse_err("PROTO P [ field SFVec3f t 0 nan 0 ] { }", 1, 29, "not finite");
    parse_err("#VRML V1.0 ascii\nSeparator { }", 1, 1, "VRML 1.0");
    parse_err("ROUTE a b", 1, 9, "'.'");
}

/* Visual-only fields take nan with one warning per field at the first such number; the
 * value reads as 0. A field given twice is a warning too; the last value wins. */
static void test_lenient_visual_nan_and_repeated_field(void **state)
{
    (void)state;
    struct hs__vdoc *doc = parse_ok("Shape { geometry IndexedFaceSet {\n"
                                    "  normal Normal { vector [ 0 0 1,\n -nan -nan NaN ] }\n"
                                    "  color Color { color [ 1 inf 0 ] } } }\n"
                                    "Transform { translation 1 2 3\n translation 4 5 6 }");
    assert_int_equal(doc->nwarnings, 3);
    assert_int_equal(doc->warnings[0].line, 3);
    assert_int_equal(doc->warnings[0].column, 2);
    assert_non_null(strstr(doc->warnings[0].msg, "'vector' of Normal: 3 non-finite"));
    assert_int_equal(doc->warnings[1].line, 4);
    assert_non_null(strstr(doc->warnings[1].msg, "'color' of Color: 1 non-finite"));
    assert_int_equal(doc->warnings[2].line, 6);
    assert_non_null(strstr(doc->warnings[2].msg, "given twice in Transform (first at line 5)"));
    const struct hs__vnode *ifs = doc->roots[0]->fields[0].value.nodes[0];
    const struct hs__vvalue *vec = &ifs->fields[0].value.nodes[0]->fields[0].value;
    assert_int_equal(vec->n, 6);
    for (int i = 3; i < 6; i++)
        assert_true(vec->items[i].num == 0.0);
    const struct hs__vnode *tr = doc->roots[1];
    assert_int_equal(tr->nfields, 1);
    assert_true(tr->fields[0].value.items[0].num == 4.0);
    hs__vrml_doc_free(doc);
}

/* Exporters write DEF names with '.' or a leading digit (JVRC's "R4A_door0.7"); Choreonoid
 * reads any run of non-space characters there, so hilsim reads them after DEF and USE. */
static void test_dotted_def_names(void **state)
{
    (void)state;
    struct hs__vdoc *doc =
        parse_ok("DEF door0.7 Transform { }\nDEF 2nd.part Group { children USE door0.7 }");
    assert_int_equal(doc->nroots, 2);
    assert_string_equal(doc->roots[0]->def, "door0.7");
    assert_string_equal(doc->roots[1]->def, "2nd.part");
    assert_ptr_equal(doc->roots[1]->fields[0].value.nodes[0], doc->roots[0]);
    hs__vrml_doc_free(doc);
    /* Elsewhere '.' still ends a name: a field name cannot take one. */
    parse_err("Transform { translation.x 1 }", 1, 24, "expected");
}

static void test_nesting_is_bounded(void **state)
{
    (void)state;
    size_t n = 100000;
    char *src = malloc(n * 20 + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (size_t)sprintf(src + k, "Group{children[");
    src[k] = '\0';
    struct hs__vdoc *doc = NULL;
    struct hs_diag d = {0};
    assert_true(hs__vrml_parse(src, k, "deep.wrl", &doc, &d) < 0);
    assert_non_null(strstr(d.msg, "nesting"));
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_and_def_use_share_nodes),
        cmocka_unit_test(test_proto_defaults_and_is),
        cmocka_unit_test(test_script_route_externproto_parse),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lenient_visual_nan_and_repeated_field),
        cmocka_unit_test(test_dotted_def_names),
        cmocka_unit_test(test_nesting_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
