/* The physics contact keys: materials, contact_materials, the physical/expert contact choice,
 * health budgets; errors name file:line:column; the writer's output reads back equal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/config.h"

#define HEAD                                                                                       \
    "bench: {name: contact}\n"                                                                     \
    "models:\n"                                                                                    \
    "  - {name: arm, file: arm.wrl}\n"                                                             \
    "  - {name: floor, file: floor.wrl, static: true}\n"

static const struct hs_config *load(const char *text, struct hs_diag *d)
{
    const struct hs_config *c = NULL;
    memset(d, 0, sizeof *d);
    if (hs_config_load_buffer(text, strlen(text), "c.yaml", HS_CONFIG_TEST_DATA, &c, d) < 0)
        return NULL;
    return c;
}

static void test_materials_parse(void **state)
{
    (void)state;
    struct hs_diag d;
    const struct hs_config *c =
        load(HEAD "physics:\n"
                  "  contact_stiffness_n_m: 3.0e6\n"
                  "  materials:\n"
                  "    floor: {material: ground}\n"
                  "    HAND: {material: sole}\n"
                  "  contact_materials:\n"
                  "    - {material1: sole, material2: ground, stiffness_n_m: 5e5, friction: .inf}\n"
                  "    - {material1: default, material2: ground, restitution: 0.5}\n"
                  "  health: {max_penetration_m: 0.002, max_force_jump_ratio: .inf}\n",
             &d);
    if (!c)
        fail_msg("%d:%d: %s", d.line, d.column, d.msg);
    const struct hs_world_params *p = &c->physics;
    assert_true(p->contact_stiffness_n_m == 3e6);
    assert_int_equal(p->nlink_materials, 2);
    assert_string_equal(p->link_materials[1].name, "HAND");
    assert_string_equal(p->link_materials[1].material, "sole");
    assert_int_equal(p->link_materials[1].src.line, 9);
    assert_int_equal(p->ncontact_materials, 2);
    const struct hs_world_contact_material *cm = &p->contact_materials[0];
    assert_true(cm->stiffness_n_m == 5e5 && isinf(cm->friction));
    assert_true(cm->damping_n_s_m == 5e3); /* an entry's keys default to the default contact's */
    assert_true(p->contact_materials[1].restitution == 0.5);
    assert_true(p->contact_materials[1].stiffness_n_m == 2e6);
    assert_true(p->health.max_penetration_m == 0.002 && isinf(p->health.max_force_jump_ratio));
    assert_true(p->health.max_joint_error_m == 0.001);

    /* The writer prints what reads back to the same physics. */
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_int_equal(hs_config_write(c, f), 0);
    fclose(f);
    const struct hs_config *c2 = load(buf, &d);
    if (!c2)
        fail_msg("written config: %d:%d: %s\n%s", d.line, d.column, d.msg, buf);
    const struct hs_world_params *q = &c2->physics;
    assert_true(q->contact_stiffness_n_m == p->contact_stiffness_n_m);
    assert_int_equal(q->nlink_materials, 2);
    assert_int_equal(q->ncontact_materials, 2);
    assert_string_equal(q->contact_materials[0].material1, "sole");
    assert_true(isinf(q->contact_materials[0].friction));
    assert_true(q->health.max_penetration_m == 0.002);
    free(buf);
    hs_config_free(c2);
    hs_config_free(c);
}

static void test_expert_contact(void **state)
{
    (void)state;
    struct hs_diag d;
    const struct hs_config *c = load(HEAD "physics: {contact_cfm: 1e-3}\n", &d);
    assert_non_null(c);
    assert_true(c->physics.contact_stiffness_n_m == 0); /* selects the per-point terms */
    assert_true(c->physics.contact_cfm == 1e-3 && c->physics.contact_erp == 0.2);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_int_equal(hs_config_write(c, f), 0);
    fclose(f);
    assert_null(strstr(buf, "contact_stiffness_n_m"));
    const struct hs_config *c2 = load(buf, &d);
    assert_non_null(c2);
    assert_true(c2->physics.contact_stiffness_n_m == 0 && c2->physics.contact_cfm == 1e-3);
    free(buf);
    hs_config_free(c2);
    hs_config_free(c);
}

static void test_errors_name_the_place(void **state)
{
    (void)state;
    struct hs_diag d;
    assert_null(load(HEAD "physics: {contact_erp: 0.5, contact_damping_n_s_m: 100}\n", &d));
    assert_int_equal(d.line, 5);
    assert_non_null(strstr(d.msg, "not both"));

    assert_null(load(HEAD "physics:\n"
                          "  materials: {floor: {material: ground}}\n"
                          "  contact_materials:\n"
                          "    - {material1: ground, material2: granite}\n",
                     &d));
    assert_int_equal(d.line, 8);
    assert_non_null(strstr(d.msg, "'granite' is given to no link"));

    assert_null(load(HEAD "physics:\n  contact_materials: [{material1: default}]\n", &d));
    assert_non_null(strstr(d.msg, "material2"));

    assert_null(load(HEAD "physics: {contact_stiffness_n_m: 0}\n", &d));
    assert_int_equal(d.line, 5);

    assert_null(load(HEAD "physics: {health: {max_joint_error_m: 0}}\n", &d));
    assert_int_equal(d.line, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_materials_parse),
        cmocka_unit_test(test_expert_contact),
        cmocka_unit_test(test_errors_name_the_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
