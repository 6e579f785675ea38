/* The protocol registry's contract, for every registered protocol: both ops tables are there
 * under the same name, the config ops are complete, every key of the protocol's section is
 * documented in its README, and each protocol's node defaults are the config's defaults. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "can_protocol.h"
#include "cfg_can_proto.h"
#include "hilsim/can_mit.h"
#include "hilsim/can_odrive.h"
#include "cia402/cia402.h"
#include "cia402_config.h"
#include "dbc_config.h"
#include "mit_config.h"
#include "moteus/moteus.h"
#include "moteus_config.h"
#include "odrive_config.h"
#include "robstride/robstride.h"
#include "robstride_config.h"

static void test_every_protocol_registered_twice_by_one_name(void **state)
{
    (void)state;
    for (int p = 0; p < HS_CFG_CAN_PROTOCOL_MAX; p++) {
        const struct hs_can_protocol *io = hs_can_protocol_get((enum hs_cfg_can_protocol)p);
        const struct hs__can_proto_cfg *cf = hs__can_proto_cfgs[p];
        assert_non_null(io);
        assert_non_null(cf);
        assert_string_equal(io->name, hs_cfg_can_protocol_name((enum hs_cfg_can_protocol)p));
        assert_non_null(io->create);
        /* the shared bind skeleton needs the protocol's node builder */
        if (io->create == hs_can_joint_port_create) {
            assert_non_null(io->joint);
            assert_non_null(io->joint->build);
            assert_true(io->joint->port_size >= sizeof(struct hs_can_joint_port));
            assert_true(io->destroy == hs_can_joint_port_free);
        }
        assert_non_null(io->destroy);
        assert_non_null(io->poll);
        assert_true(!io->replier_add == !io->replier_publish);
        assert_non_null(cf->section);
        assert_true(cf->section->nfields > 0);
        assert_true(cf->section_size > 0 && cf->section_size <= HS_CFG_PROTO_SECTION_MAX);
        assert_non_null(cf->defaults);
        assert_non_null(cf->claims);
        /* a node's joints come from `joint` or from its section, never neither */
        assert_true(cf->single_joint != (cf->joint_at != NULL));
        if (cf->single_joint)
            assert_true(cf->id_min <= cf->id_max && cf->id_max <= 0x7FF);
    }
    assert_null(hs_can_protocol_get(HS_CFG_CAN_PROTOCOL_MAX));
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* The section keys are documented where the protocol lives: `key` in its README's tables. */
static void test_every_section_key_documented(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    if (!src)
        skip();
    for (int p = 0; p < HS_CFG_CAN_PROTOCOL_MAX; p++) {
        const char *name = hs_cfg_can_protocol_name((enum hs_cfg_can_protocol)p);
        char path[512], want[96];
        snprintf(path, sizeof path, "%s/drivers/can/%s/README.md", src, name);
        const char *doc = slurp(path);
        if (!doc)
            fail_msg("%s: missing", path);
        const struct hs__cfg_table *t = hs__can_proto_cfgs[p]->section;
        for (uint32_t i = 0; i < t->nfields; i++) {
            if (t->fields[i].kind == HS__K_RENAMED) /* an old name, refused */
                continue;
            snprintf(want, sizeof want, "`%s`", t->fields[i].key);
            if (!strstr(doc, want))
                fail_msg("%s: key %s of can.nodes[].%s is not documented", path, t->fields[i].key,
                         name);
        }
    }
}

/* The MIT timeout once read 0 in the node and 0.1 s in the config: one source now. */
static void mit_defaults_agree(void)
{
    union hs_cfg_proto_section sec;
    hs__can_proto_cfgs[HS_CFG_PROTO_MIT]->defaults(sec.bytes);
    const struct hs_cfg_mit *c = (const struct hs_cfg_mit *)(const void *)sec.bytes;
    struct hs_mit_config n;
    hs_mit_config_init(&n, 1, 0);
    assert_true(n.timeout_ns == (int64_t)(c->timeout_s * 1e9 + 0.5));
    assert_true(c->timeout_s > 0);
    assert_true(n.limits.p_min == c->p_min && n.limits.p_max == c->p_max);
    assert_true(n.limits.v_min == c->v_min && n.limits.v_max == c->v_max);
    assert_true(n.limits.kp_max == c->kp_max && n.limits.kd_max == c->kd_max);
    assert_true(n.limits.t_min == c->t_min && n.limits.t_max == c->t_max);
    assert_true(n.i_min == c->i_min && n.i_max == c->i_max);
    assert_int_equal(n.reply_current, c->reply == HS_CFG_MIT_REPLY_CURRENT);
    assert_int_equal(n.reply_ak, c->reply_format == HS_CFG_MIT_FORMAT_AK);
    assert_true(n.temperature_c == c->temperature_c);
}

static void odrive_defaults_agree(void)
{
    union hs_cfg_proto_section sec;
    hs__can_proto_cfgs[HS_CFG_PROTO_ODRIVE]->defaults(sec.bytes);
    const struct hs_cfg_odrive *c = (const struct hs_cfg_odrive *)(const void *)sec.bytes;
    struct hs_odrive_config n;
    hs_odrive_config_init(&n, 1);
    assert_true(n.heartbeat_period_ns == (int64_t)(c->heartbeat_period_s * 1e9 + 0.5));
    assert_true(n.encoder_period_ns == (int64_t)(c->encoder_period_s * 1e9 + 0.5));
    assert_true(n.watchdog_timeout_ns == (int64_t)(c->watchdog_timeout_s * 1e9 + 0.5));
    assert_true(n.pos_gain == c->pos_gain && n.vel_gain_nm_s_turn == c->vel_gain_nm_s_turn);
    assert_true(n.vel_integrator_gain_nm_turn == c->vel_integrator_gain_nm_turn);
    assert_true(n.vel_limit_turn_s == c->vel_limit_turn_s);
    assert_true(n.vel_limit_tolerance == c->vel_limit_tolerance);
    assert_int_equal(n.enable_vel_limit, c->enable_vel_limit);
    assert_int_equal(n.enable_torque_mode_vel_limit, c->enable_torque_mode_vel_limit);
}

static void robstride_defaults_agree(void)
{
    union hs_cfg_proto_section sec;
    hs__can_proto_cfgs[HS_CFG_PROTO_ROBSTRIDE]->defaults(sec.bytes);
    const struct hs_cfg_robstride *c = (const struct hs_cfg_robstride *)(const void *)sec.bytes;
    struct hs_rs_config n;
    hs_rs_config_init(&n, (enum hs_rs_model)c->model, 1);
    assert_int_equal(n.model, c->model);
    assert_int_equal(n.host_id, c->host_id);
    assert_true(n.timeout_ns == (int64_t)(c->timeout_s * 1e9 + 0.5));
    assert_true(n.vbus_v == c->vbus_v && n.temp_c == c->temperature_c);
    /* the packing ranges and the torque constant: NAN in the config, the model's in the node */
    assert_true(isnan(c->p_max) && isnan(c->t_max) && isnan(c->torque_constant_nm_a));
}

/* moteus: hs_mt_config_init() and the config's defaults come from moteus_defaults.h. */
static bool same(double a, double b)
{
    return a == b || (a != a && b != b); /* NAN: "none" on both sides */
}

static void moteus_defaults_agree(void)
{
    union hs_cfg_proto_section sec;
    hs__can_proto_cfgs[HS_CFG_PROTO_MOTEUS]->defaults(sec.bytes);
    const struct hs_cfg_moteus *c = (const struct hs_cfg_moteus *)(const void *)sec.bytes;
    struct hs_mt_config n;
    hs_mt_config_init(&n, 1);
    assert_true(n.kp_nm_rev == c->kp_nm_rev && n.kd_nm_s_rev == c->kd_nm_s_rev);
    assert_true(n.max_torque_nm == c->max_torque_nm);
    assert_true(n.default_timeout_ns == (int64_t)(c->default_timeout_s * 1e9 + 0.5));
    assert_true(same(n.default_velocity_limit_rev_s, c->default_velocity_limit_rev_s));
    assert_true(same(n.default_accel_limit_rev_s2, c->default_accel_limit_rev_s2));
    assert_true(n.max_velocity_rev_s == c->max_velocity_rev_s);
    assert_true(n.voltage_v == c->voltage_v && n.temperature_c == c->temperature_c);
    /* the config leaves Kt to the joint (NAN); the node's own default is a number */
    assert_true(c->torque_constant_nm_a != c->torque_constant_nm_a);
    assert_true(n.torque_constant_nm_a > 0);
}

/* cia402_defaults.h is the one source: a config section with no keys is the library's drive. */
static void cia402_defaults_agree(void)
{
    union hs_cfg_proto_section sec;
    hs__can_proto_cfgs[HS_CFG_PROTO_CIA402]->defaults(sec.bytes);
    const struct hs_cfg_cia402 *c = (const struct hs_cfg_cia402 *)(const void *)sec.bytes;
    struct hs_cia402_config n;
    hs_cia402_config_init(&n, 1);
    assert_int_equal(n.counts_per_rev, c->counts_per_rev);
    assert_true(n.rated_torque_nm == c->rated_torque_nm);
    assert_true(n.rated_current_a == c->rated_current_a);
    assert_true(isnan(c->torque_constant_nm_a) && n.torque_constant_nm_a > 0);
    assert_true(n.max_torque_permille == c->max_torque_permille);
    assert_true(n.position_kp_nm_rad == c->position_kp_nm_rad);
    assert_true(n.velocity_kd_nm_s_rad == c->velocity_kd_nm_s_rad);
    assert_true(n.velocity_ki_nm_rad == c->velocity_ki_nm_rad && c->velocity_ki_nm_rad > 0);
    assert_int_equal(n.heartbeat_ms, c->heartbeat_ms);
    assert_int_equal(n.boot_time_ms, c->boot_time_ms);
    assert_int_equal(n.following_error_window_counts, c->following_error_window_counts);
    assert_int_equal(n.following_error_timeout_ms, c->following_error_timeout_ms);
    assert_null(c->eds);
}

/* dbc: the node is what its DBC file says; the section's only defaults are "no file, no
 * bindings, no offset", and the node takes nothing the config does not give it. */
static void dbc_defaults_agree(void)
{
    union hs_cfg_proto_section sec;
    memset(&sec, 0xa5, sizeof sec);
    hs__can_proto_cfgs[HS_CFG_PROTO_DBC]->defaults(sec.bytes);
    const struct hs_cfg_dbc *c = (const struct hs_cfg_dbc *)(const void *)sec.bytes;
    assert_null(c->file);
    assert_int_equal(c->id_offset, 0);
    assert_int_equal(c->binding_count, 0);
    assert_int_equal(c->tx_count, 0);
}

/* One check per registered protocol, indexed by the registry: a protocol added to
 * hilsim/can_protocols.h without its <name>_defaults_agree() here does not compile. */
#define CHECK(name, NAME) [HS_CFG_PROTO_##NAME] = name##_defaults_agree,
static void (*const defaults_agree[HS_CFG_CAN_PROTOCOL_MAX])(void) = {HS_CAN_PROTOCOLS(CHECK)};
#undef CHECK

/* Config-side defaults (the section a node with no keys gets) equal the node-side defaults (the
 * protocol library's *_config_init), for every protocol: both read <name>_defaults.h. */
static void test_every_protocol_node_defaults_are_the_config_defaults(void **state)
{
    (void)state;
    for (int p = 0; p < HS_CFG_CAN_PROTOCOL_MAX; p++) {
        print_message("%s\n", hs_cfg_can_protocol_name((enum hs_cfg_can_protocol)p));
        assert_non_null(defaults_agree[p]);
        defaults_agree[p]();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_protocol_registered_twice_by_one_name),
        cmocka_unit_test(test_every_section_key_documented),
        cmocka_unit_test(test_every_protocol_node_defaults_are_the_config_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
