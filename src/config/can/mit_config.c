/* The config side of MIT nodes: the mit section's keys, defaults and checks, and the ID a node
 * owns. Compiled into hs_config (see drivers/can/README.md). */
#include "mit_config.h"

#include "cfg_can_proto.h"
#include "cfg_schema.h"
#include "mit/mit_defaults.h"

static const char *const reply_names[] = {"current", "torque", NULL};
static const char *const format_names[] = {"mini_cheetah", "ak", NULL};

#define MI struct hs_cfg_mit
static const struct hs__cfg_field mit_f[] = {
    DBL("p_min", MI, p_min, -1e4, 1e4, 0),
    DBL("p_max", MI, p_max, -1e4, 1e4, 0),
    DBL("v_min", MI, v_min, -1e4, 1e4, 0),
    DBL("v_max", MI, v_max, -1e4, 1e4, 0),
    DBL("kp_max", MI, kp_max, 0, 1e5, HS__F_MIN_OPEN),
    DBL("kd_max", MI, kd_max, 0, 1e4, HS__F_MIN_OPEN),
    DBL("t_min", MI, t_min, -1e5, 1e5, 0),
    DBL("t_max", MI, t_max, -1e5, 1e5, 0),
    DBL("i_min", MI, i_min, -1e4, 1e4, 0),
    DBL("i_max", MI, i_max, -1e4, 1e4, 0),
    ENUM("reply", MI, reply, reply_names),
    F_("reply_id", HS__K_U32, MI, reply_id, .min = 0, .max = 0x7ff, .flags = HS__F_HEX),
    DBL("timeout_s", MI, timeout_s, 0, 10, 0),
    ENUM("reply_format", MI, reply_format, format_names),
    DBL("temperature_c", MI, temperature_c, -128, 127, 0),
};
#undef MI

static int mit_check(struct hs__ctx *c, void *obj, uint64_t seen, yaml_node_t *node,
                     const char *path)
{
    (void)seen;
    const struct hs_cfg_mit *m = obj;
    const struct {
        const char *key;
        double lo, hi;
    } pairs[] = {{"p", m->p_min, m->p_max},
                 {"v", m->v_min, m->v_max},
                 {"t", m->t_min, m->t_max},
                 {"i", m->i_min, m->i_max}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (!(pairs[i].lo < pairs[i].hi)) {
            char key[8];
            hs__cfg_pathf(key, sizeof key, "%s_max", pairs[i].key);
            return hs__cfg_err(c, hs__cfg_node_or(c, node, key),
                               "%s.%s: %g must be above %s_min %g", path, key, pairs[i].hi,
                               pairs[i].key, pairs[i].lo);
        }
    return 0;
}
TABLE(hs__can_mit_section, mit_f, mit_check);

static void mit_defaults(void *section)
{
    *(struct hs_cfg_mit *)section = (struct hs_cfg_mit){
        .p_min = HS_MIT_DEFAULT_P_MIN,
        .p_max = HS_MIT_DEFAULT_P_MAX,
        .v_min = HS_MIT_DEFAULT_V_MIN,
        .v_max = HS_MIT_DEFAULT_V_MAX,
        .kp_max = HS_MIT_DEFAULT_KP_MAX,
        .kd_max = HS_MIT_DEFAULT_KD_MAX,
        .t_min = HS_MIT_DEFAULT_T_MIN,
        .t_max = HS_MIT_DEFAULT_T_MAX,
        .i_min = HS_MIT_DEFAULT_I_MIN,
        .i_max = HS_MIT_DEFAULT_I_MAX,
        .reply = HS_MIT_DEFAULT_REPLY_CURRENT ? HS_CFG_MIT_REPLY_CURRENT : HS_CFG_MIT_REPLY_TORQUE,
        .reply_id = 0,
        .timeout_s = HS_MIT_DEFAULT_TIMEOUT_S,
        .reply_format = HS_CFG_MIT_FORMAT_MINI_CHEETAH,
        .temperature_c = HS_MIT_DEFAULT_TEMPERATURE_C,
    };
}

/* Commands arrive on the motor ID itself (11-bit). */
static unsigned mit_claims(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    out[0] = (struct hs_cfg_can_claim){.id = n->id, .mask = 0x7FF, .ext = false};
    return 1;
}

/* Replies go to the master's ID, the node's id in data[0]. */
static unsigned mit_replies(const struct hs_cfg_node *n, struct hs_cfg_can_claim *out)
{
    const struct hs_cfg_mit *m = hs_cfg_mit(n);
    out[0] = (struct hs_cfg_can_claim){.id = m->reply_id, .mask = 0x7FF, .ext = false};
    return 1;
}

const struct hs__can_proto_cfg hs__can_mit_cfg = {
    .section = &hs__can_mit_section,
    .section_size = sizeof(struct hs_cfg_mit),
    .defaults = mit_defaults,
    .single_joint = true,
    .id_min = 0,
    .id_max = 0xFF, /* the reply's first byte carries it */
    .claims = mit_claims,
    .replies = mit_replies,
};
