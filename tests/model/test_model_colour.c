/* Colours of shapes (hs_model.materials, hs_geom.material): the URDF <material> reader (inline
 * <color>, names defined at <robot> level, textures noted, bad rgba refused with file, line and
 * attribute), the VRML Material reader (diffuseColor, transparency, DEF/USE of a Material and of
 * an Appearance, values outside 0..1 warned of at the number and clamped), and hs_model_write_urdf
 * writing them so that loading the export gives the same colours back. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/model.h"

static char dir[] = "/tmp/hs_colourXXXXXX";

static void write_file(const char *name, const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Loads with the view's options (visuals and colours) or the bench's (none). */
static int load(const char *path, bool visuals, struct hs_model **ret, struct hs_diag *d)
{
    struct hs_model_options o = {.visuals = visuals};
    memset(d, 0, sizeof *d);
    *ret = NULL;
    int r = hs_model_load_opts(path, &o, ret, d);
    if (r)
        print_message("%s:%d:%d: %s\n", d->file, d->line, d->column, d->msg);
    return r;
}

/* The colour of a geom: NULL when it has none. */
static const float *colour(const struct hs_model *m, const struct hs_geom *g)
{
    if (!g->material)
        return NULL;
    assert_true(g->material <= m->nmaterials);
    return m->materials[g->material - 1].rgba;
}

static void assert_rgba(const float *c, double r, double g, double b, double a)
{
    assert_non_null(c);
    const double want[4] = {r, g, b, a};
    for (int k = 0; k < 4; k++)
        if (fabs(c[k] - want[k]) > 1e-6) {
            print_error("rgba[%d] is %g, expected %g\n", k, c[k], want[k]);
            fail();
        }
}

static bool warned(const struct hs_model *m, const char *words)
{
    for (uint32_t i = 0; i < m->nwarnings; i++)
        if (strstr(m->warnings[i], words))
            return true;
    return false;
}

/* A geom is no larger for its colour: the index fills the padding after its type. */
static void test_geom_size(void **state)
{
    (void)state;
    assert_int_equal(offsetof(struct hs_geom, material), sizeof(enum hs_geom_type));
    assert_int_equal(offsetof(struct hs_geom, pose), 8);
}

static const char urdf_robot[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"paint\">\n"
    "  <material name=\"signal_red\"><color rgba=\"0.8 0.1 0.1 1\"/></material>\n" /* line 3 */
    "  <material name=\"glass\"><color rgba=\"0.2 0.4 0.9 0.5\"/></material>\n"
    "  <material name=\"wood\"><texture filename=\"wood.png\"/></material>\n"
    "  <link name=\"a\">\n"
    "    <inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\"/></inertial>\n"
    "    <collision><geometry><box size=\"1 1 1\"/></geometry></collision>\n"
    "    <visual><geometry><box size=\"1 1 1\"/></geometry>\n"
    "      <material name=\"signal_red\"/></visual>\n"
    "    <visual><geometry><sphere radius=\"0.2\"/></geometry>\n"
    "      <material name=\"lime\"><color rgba=\"0.5 1 0 1\"/></material></visual>\n"
    "    <visual><geometry><cylinder radius=\"0.1\" length=\"0.4\"/></geometry>\n"
    "      <material name=\"glass\"/></visual>\n"
    "    <visual><geometry><sphere radius=\"0.1\"/></geometry></visual>\n"
    "    <visual><geometry><sphere radius=\"0.3\"/></geometry>\n"
    "      <material name=\"wood\"/></visual>\n"
    "    <visual><geometry><sphere radius=\"0.4\"/></geometry>\n"
    "      <material name=\"nowhere\"/></visual>\n"
    "    <visual><geometry><box size=\"2 2 2\"/></geometry>\n"
    "      <material><color rgba=\"0.8 0.1 0.1 1\"/></material></visual>\n"
    "  </link>\n"
    "</robot>\n";

static void test_urdf_colours(void **state)
{
    (void)state;
    char p[PATH_MAX];
    write_file("paint.urdf", urdf_robot, p, sizeof p);
    struct hs_model *m;
    struct hs_diag d;
    assert_int_equal(load(p, false, &m, &d), 0); /* the bench: no visuals, no colours */
    assert_int_equal(m->nmaterials, 0);
    assert_int_equal(m->geoms[0].material, 0);
    assert_false(warned(m, "texture"));
    hs_model_free(m);

    assert_int_equal(load(p, true, &m, &d), 0);
    assert_int_equal(m->nvisuals, 7);
    assert_int_equal(m->geoms[0].material, 0);                /* a <collision> without <material> */
    assert_rgba(colour(m, &m->visuals[0]), 0.8, 0.1, 0.1, 1); /* named at <robot> level */
    assert_rgba(colour(m, &m->visuals[1]), 0.5, 1, 0, 1);     /* inline */
    assert_rgba(colour(m, &m->visuals[2]), 0.2, 0.4, 0.9, 0.5);
    assert_null(colour(m, &m->visuals[3])); /* none: the viewer's default */
    assert_null(colour(m, &m->visuals[4])); /* a texture only: noted, not drawn */
    assert_true(warned(m, "<visual> not drawn with its texture (\"wood.png\")"));
    assert_null(colour(m, &m->visuals[5])); /* a name defined nowhere */
    assert_true(warned(m, "material 'nowhere' is not defined"));
    /* One colour, one entry: the inline red is the named red. */
    assert_int_equal(m->visuals[6].material, m->visuals[0].material);
    assert_int_equal(m->nmaterials, 3);
    hs_model_free(m);
}

static void expect_urdf_error(const char *color_element, const char *words)
{
    char text[2048], p[PATH_MAX];
    snprintf(
        text, sizeof text,
        "<robot name=\"bad\">\n"
        "  <link name=\"a\">\n"
        "    <inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\"/></inertial>\n"
        "    <collision><geometry><box size=\"1 1 1\"/></geometry></collision>\n"
        "    <visual><geometry><box size=\"1 1 1\"/></geometry>\n"
        "      <material name=\"m\">\n"
        "        %s\n" /* line 7 */
        "      </material></visual>\n"
        "  </link>\n"
        "</robot>\n",
        color_element);
    write_file("bad.urdf", text, p, sizeof p);
    struct hs_model *m;
    struct hs_diag d;
    assert_int_equal(load(p, true, &m, &d), -EINVAL);
    assert_null(m);
    assert_string_equal(d.file, p);
    assert_int_equal(d.line, 7);
    if (!strstr(d.msg, "<color>") || !strstr(d.msg, "'rgba'") || !strstr(d.msg, words)) {
        print_error("message \"%s\" lacks <color>, 'rgba' or \"%s\"\n", d.msg, words);
        fail();
    }
    assert_int_equal(load(p, false, &m, &d), 0); /* the bench reads no colour */
    hs_model_free(m);
}

static void test_urdf_bad_colours(void **state)
{
    (void)state;
    expect_urdf_error("<color rgba=\"1 0 0\"/>", "needs 4 finite numbers");
    expect_urdf_error("<color rgba=\"1 0 0 1 1\"/>", "needs 4 numbers");
    expect_urdf_error("<color rgba=\"1 0 red 1\"/>", "needs 4 finite numbers");
    expect_urdf_error("<color rgba=\"1 0 nan 1\"/>", "needs 4 finite numbers");
    expect_urdf_error("<color rgba=\"1.5 0 0 1\"/>", "1.5 is outside 0..1");
    expect_urdf_error("<color rgba=\"1 0 0 -0.2\"/>", "-0.2 is outside 0..1");
    expect_urdf_error("<color/>", "missing attribute");

    /* At <robot> level too, at the definition's line. */
    char p[PATH_MAX];
    write_file("bad_robot.urdf",
               "<robot name=\"bad\">\n"
               "  <material name=\"m\"><color rgba=\"2 0 0 1\"/></material>\n"
               "  <link name=\"a\"/>\n"
               "</robot>\n",
               p, sizeof p);
    struct hs_model *m;
    struct hs_diag d;
    assert_int_equal(load(p, true, &m, &d), -EINVAL);
    assert_int_equal(d.line, 2);
    assert_non_null(strstr(d.msg, "2 is outside 0..1"));
}

static void test_vrml_colours(void **state)
{
    (void)state;
    static const char wrl[] =
        "#VRML V2.0 utf8\n"
        "DEF R Humanoid { humanoidBody [ DEF BASE Joint { jointType \"free\" children [\n"
        "  DEF S Segment { mass 1 momentsOfInertia [1 0 0 0 1 0 0 0 1] children [\n"
        "    Shape { appearance Appearance { material DEF RED Material {\n"
        "      diffuseColor 1 0 0 transparency 0.25 } }\n"
        "      geometry Box { size 0.1 0.1 0.1 } }\n"
        "    Shape { appearance Appearance { material USE RED } geometry Sphere { radius 0.1 } }\n"
        "    Shape { appearance DEF GREEN_LOOK Appearance { material Material {\n"
        "      diffuseColor 0 0.5 0 } } geometry Box { size 0.2 0.2 0.2 } }\n"
        "    Shape { appearance USE GREEN_LOOK geometry Cylinder { radius 0.1 height 0.2 } }\n"
        "    Shape { geometry Box { size 0.3 0.3 0.3 } }\n"
        "    Shape { appearance Appearance { } geometry Box { size 0.4 0.4 0.4 } }\n"
        "    Shape { appearance Appearance { material Material { } }\n"
        "      geometry Box { size 0.5 0.5 0.5 } }\n"
        "    Shape { appearance Appearance { material Material { diffuseColor 0 0.5 0 } }\n"
        "      geometry IndexedFaceSet { coord Coordinate { point [0 0 0, 1 0 0, 0 1 0, 0 0 1] }\n"
        "        coordIndex [0 2 1 -1, 0 1 3 -1, 0 3 2 -1, 1 2 3 -1] } }\n"
        "  ] }\n"
        "] } ] }\n";
    struct hs_model *m = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_model_load_buffer(wrl, sizeof wrl - 1, "paint.wrl", NULL, &m, &d), 0);
    assert_int_equal(m->ngeoms, 8);
    assert_rgba(colour(m, &m->geoms[0]), 1, 0, 0, 0.75);          /* alpha = 1 - transparency */
    assert_int_equal(m->geoms[1].material, m->geoms[0].material); /* USE of the Material */
    assert_rgba(colour(m, &m->geoms[2]), 0, 0.5, 0, 1);
    assert_int_equal(m->geoms[3].material, m->geoms[2].material); /* USE of the Appearance */
    assert_null(colour(m, &m->geoms[4]));                         /* no appearance */
    assert_null(colour(m, &m->geoms[5]));                         /* no Material */
    assert_rgba(colour(m, &m->geoms[6]), 0.8, 0.8, 0.8, 1);       /* VRML97's defaults */
    assert_int_equal(m->geoms[7].type, HS_GEOM_MESH);
    assert_int_equal(m->geoms[7].material, m->geoms[2].material); /* same colour, one entry */
    assert_int_equal(m->nmaterials, 3);
    hs_model_free(m);
}

/* A one-Shape robot whose Material's fields are `material` (on line 4), loaded as bad.wrl. */
static int load_material(const char *material, struct hs_model **m, struct hs_diag *d)
{
    char wrl[1024];
    int n = snprintf(wrl, sizeof wrl,
                     "#VRML V2.0 utf8\n"
                     "DEF R Humanoid { humanoidBody [ DEF BASE Joint { jointType \"free\"\n"
                     "  children Shape { appearance Appearance { material Material {\n"
                     "%s\n" /* line 4 */
                     "  } } geometry Box { } } } ] }\n",
                     material);
    memset(d, 0, sizeof *d);
    return hs_model_load_buffer(wrl, (unsigned long)n, "bad.wrl", NULL, m, d);
}

static void expect_vrml_error(const char *material, int column, const char *words)
{
    struct hs_model *m = NULL;
    struct hs_diag d;
    assert_int_equal(load_material(material, &m, &d), -EINVAL);
    assert_null(m);
    assert_string_equal(d.file, "bad.wrl");
    assert_int_equal(d.line, 4);
    if (column)
        assert_int_equal(d.column, column);
    if (!strstr(d.msg, words)) {
        print_error("message \"%s\" lacks \"%s\"\n", d.msg, words);
        fail();
    }
}

/* A colour outside 0..1 loads (the bench never uses it) with a warning at the number, drawn
 * clamped as a renderer would. */
static void expect_vrml_warning(const char *material, const char *at, const char *words,
                                const float rgba[4])
{
    struct hs_model *m = NULL;
    struct hs_diag d;
    assert_int_equal(load_material(material, &m, &d), 0);
    bool said = false;
    for (uint32_t k = 0; k < m->nwarnings; k++)
        said |= strstr(m->warnings[k], at) == m->warnings[k] && strstr(m->warnings[k], words);
    if (!said) {
        print_error("no warning \"%s ... %s\" (%u warnings)\n", at, words, m->nwarnings);
        fail();
    }
    assert_int_equal(m->nmaterials, 1);
    assert_memory_equal(m->materials[0].rgba, rgba, sizeof(float[4]));
    hs_model_free(m);
}

static void test_vrml_bad_colours(void **state)
{
    (void)state;
    expect_vrml_warning("diffuseColor 0 1.2 0", "bad.wrl:4:16: ",
                        "field 'diffuseColor' of Material: 1.2 is outside 0..1: drawn as 1",
                        (const float[4]){0, 1, 0, 1});
    expect_vrml_warning("diffuseColor -1 0 0", "bad.wrl:4:14: ",
                        "field 'diffuseColor' of Material: -1 is outside 0..1: drawn as 0",
                        (const float[4]){0, 0, 0, 1});
    expect_vrml_warning("diffuseColor 0.5 0.5 0.5 transparency 1.5", "bad.wrl:4:39: ",
                        "field 'transparency' of Material: 1.5 is outside 0..1: drawn as 1",
                        (const float[4]){0.5f, 0.5f, 0.5f, 0});
    expect_vrml_error("diffuseColor 1 0", 0, "diffuseColor"); /* the type check's own words */
}

/* Written as URDF and read back (as the view's page gets it): the same colours on the same
 * shapes, none where there was none. */
static void test_round_trip(void **state)
{
    (void)state;
    char p[PATH_MAX], out[PATH_MAX];
    write_file("paint.urdf", urdf_robot, p, sizeof p);
    struct hs_model *m, *back;
    struct hs_diag d;
    assert_int_equal(load(p, true, &m, &d), 0);
    snprintf(out, sizeof out, "%s/paint_out.urdf", dir);
    assert_int_equal(hs_model_write_urdf(m, out, NULL, &d), 0);
    assert_int_equal(load(out, true, &back, &d), 0);
    assert_int_equal(back->nvisuals, m->nvisuals);
    assert_int_equal(back->ngeoms, m->ngeoms);
    assert_int_equal(back->nmaterials, m->nmaterials);
    for (uint32_t i = 0; i < m->nvisuals; i++) {
        const float *a = colour(m, &m->visuals[i]), *b = colour(back, &back->visuals[i]);
        assert_int_equal(a == NULL, b == NULL);
        if (a)
            assert_memory_equal(a, b, 4 * sizeof *a); /* exact */
    }
    assert_int_equal(back->geoms[0].material, 0);
    hs_model_free(back);
    hs_model_free(m);

    /* A VRML model's colours are on its collision shapes, which are what the page draws. */
    static const char wrl[] = "#VRML V2.0 utf8\n"
                              "DEF R Humanoid { humanoidBody [ DEF BASE Joint { jointType "
                              "\"free\" children [\n"
                              "  Shape { appearance Appearance { material Material {\n"
                              "    diffuseColor 0.9 0.05 0.1 transparency 0.3 } }\n"
                              "    geometry Box { size 0.1 0.2 0.3 } }\n"
                              "  Shape { geometry Sphere { radius 0.1 } }\n"
                              "] } ] }\n";
    write_file("paint.wrl", wrl, p, sizeof p);
    assert_int_equal(load(p, false, &m, &d), 0);
    assert_rgba(colour(m, &m->geoms[0]), 0.9, 0.05, 0.1, 0.7);
    snprintf(out, sizeof out, "%s/paint_wrl.urdf", dir);
    assert_int_equal(hs_model_write_urdf(m, out, NULL, &d), 0);
    assert_int_equal(load(out, true, &back, &d), 0);
    assert_int_equal(back->ngeoms, 2);
    assert_memory_equal(colour(back, &back->geoms[0]), colour(m, &m->geoms[0]), 4 * sizeof(float));
    assert_null(colour(back, &back->geoms[1]));
    hs_model_free(back);
    assert_int_equal(load(out, false, &back, &d), 0); /* the bench: the same shapes, no colour */
    assert_int_equal(back->ngeoms, 2);
    assert_int_equal(back->nmaterials, 0);
    hs_model_free(back);
    hs_model_free(m);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geom_size),        cmocka_unit_test(test_urdf_colours),
        cmocka_unit_test(test_urdf_bad_colours), cmocka_unit_test(test_vrml_colours),
        cmocka_unit_test(test_vrml_bad_colours), cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
