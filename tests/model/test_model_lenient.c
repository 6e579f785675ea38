/* Every file in tests/model/lenient/ must load, with exactly the warnings its header lines
 * give: "# warn: LINE:COLUMN WORDS" ('_' in WORDS stands for a space). A warning matches when
 * it starts with "<path>:LINE:COLUMN: " and contains WORDS. Then the values that the lenient
 * readings chose are checked on the loaded models. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "model_test_util.h"

#define MAX_EXPECT 16

static struct hs_model *load_dir_file(const char *name, char *path, size_t size)
{
    const char *dir = getenv("HS_MODEL_LENIENT_DIR");
    assert_non_null(dir);
    snprintf(path, size, "%s/%s", dir, name);
    struct hs_model *m = NULL;
    struct hs_diag d = {0};
    int r = hs_model_load(path, &m, &d);
    if (r < 0)
        fprintf(stderr, "%s: refused: %s:%d:%d: %s\n", name, d.file, d.line, d.column, d.msg);
    assert_int_equal(r, 0);
    return m;
}

static void check_file(const char *name, int *count)
{
    char path[4096];
    struct hs_model *m = load_dir_file(name, path, sizeof path);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    uint32_t nexpect = 0;
    bool matched[MAX_EXPECT * 4] = {0};
    while (fgets(line, sizeof line, f)) {
        int l, c;
        char words[400];
        if (sscanf(line, "# warn: %d:%d %399s", &l, &c, words) != 3)
            break;
        for (char *p = words; *p; p++)
            if (*p == '_')
                *p = ' ';
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "%s:%d:%d: ", path, l, c);
        bool found = false;
        for (uint32_t i = 0; i < m->nwarnings && !found; i++)
            if (!strncmp(m->warnings[i], prefix, strlen(prefix)) && strstr(m->warnings[i], words) &&
                i < sizeof matched && !matched[i])
                found = matched[i] = true;
        if (!found) {
            fprintf(stderr, "%s: no warning \"%s%s\"; got %u:\n", name, prefix, words,
                    m->nwarnings);
            for (uint32_t i = 0; i < m->nwarnings; i++)
                fprintf(stderr, "  %s\n", m->warnings[i]);
        }
        assert_true(found);
        nexpect++;
    }
    fclose(f);
    assert_true(nexpect > 0);
    if (m->nwarnings != nexpect)
        for (uint32_t i = 0; i < m->nwarnings; i++)
            fprintf(stderr, "%s: %s\n", name, m->warnings[i]);
    assert_int_equal(m->nwarnings, nexpect); /* nothing unexpected either */
    hs_model_free(m);
    (*count)++;
}

static void test_lenient_corpus(void **state)
{
    (void)state;
    const char *dir = getenv("HS_MODEL_LENIENT_DIR");
    assert_non_null(dir);
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    struct dirent *e;
    int count = 0;
    while ((e = readdir(dd)))
        if (strstr(e->d_name, ".wrl"))
            check_file(e->d_name, &count);
    closedir(dd);
    assert_true(count >= 5);
}

/* gearRatio 0 and friends read as the defaults: the actuator model gets a real motor. */
static void test_motor_zero_values_are_defaults(void **state)
{
    (void)state;
    char path[4096];
    struct hs_model *m = load_dir_file("motor_zero_means_default.wrl", path, sizeof path);
    int arm = hs_model_find_link(m, "ARM");
    assert_true(arm >= 0);
    const struct hs_link *l = &m->links[arm];
    assert_true(l->gear_ratio == 1.0);
    assert_true(l->torque_const == 1.0);
    assert_true(l->encoder_pulse == 1.0);
    assert_true(isinf(l->climit) && l->climit > 0);
    assert_true(l->gear_efficiency == 1.0); /* absent */
    hs_model_free(m);
}

/* climit keeps its first value; a negative gearRatio is a reversing gear and is kept. */
static void test_climit_and_reversing_gear(void **state)
{
    (void)state;
    struct hs_model *m = NULL;
    struct hs_diag d;
    assert_int_equal(load_src("Joint { jointType \"fixed\" children Joint { jointType \"rotate\"\n"
                              " name \"A\" climit [ 2.5 3 ] gearRatio -50 } }",
                              &m, &d),
                     0);
    assert_true(m->links[1].climit == 2.5);
    assert_true(m->links[1].gear_ratio == -50.0);
    hs_model_free(m);
}

/* An axis written with huge components still normalises (no overflow to a zero axis). */
static void test_huge_axis_normalises(void **state)
{
    (void)state;
    struct hs_model *m = NULL;
    struct hs_diag d;
    assert_int_equal(load_src("Joint { jointType \"fixed\" children Joint { jointType \"rotate\"\n"
                              " jointAxis 1e200 0 -1e200 } }",
                              &m, &d),
                     0);
    assert_near(m->links[1].axis[0], sqrt(0.5), 1e-12);
    assert_near(m->links[1].axis[2], -sqrt(0.5), 1e-12);
    hs_model_free(m);
}

/* OpenHRP reads fields in order: the second rotation is the one that counts. */
static void test_repeated_field_last_wins(void **state)
{
    (void)state;
    char path[4096];
    struct hs_model *m = load_dir_file("repeated_field.wrl", path, sizeof path);
    int s = hs_model_find_link(m, "SENSOR");
    assert_true(s >= 0);
    /* rotation 0 0 -1 pi/2: R = Rz(-90deg), row-major R[0][1] = sin(90deg) = 1 */
    assert_near(m->links[s].origin.R[1], 1, 1e-6);
    hs_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lenient_corpus),
        cmocka_unit_test(test_motor_zero_values_are_defaults),
        cmocka_unit_test(test_climit_and_reversing_gear),
        cmocka_unit_test(test_repeated_field_last_wins),
        cmocka_unit_test(test_huge_axis_normalises),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
