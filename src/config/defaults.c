/* Documented defaults (config/README.md lists the same values). */
#include <math.h>
#include <string.h>

#include "cfg_can_proto.h"

void hs__cfg_init_model(void *elem)
{
    struct hs_cfg_model *m = elem;
    memset(m, 0, sizeof *m);
    m->rotation[2] = 1; /* axis z, angle 0 */
    hs_pose_identity(&m->pose);
}

void hs__cfg_init_model_sensor(void *elem)
{
    struct hs_cfg_model_sensor *s = elem;
    memset(s, 0, sizeof *s);
    s->rotation[2] = 1; /* axis z, angle 0 */
}

void hs__cfg_init_bus(void *elem)
{
    struct hs_cfg_bus *b = elem;
    memset(b, 0, sizeof *b);
    b->bitrate_bps = 1000000;
    b->sample_point = 0.875;
    b->restart_ms = 100;
    b->send_queue_policy = HS_CFG_SEND_DROP;
    b->replies = HS_CFG_REPLIES_IMMEDIATE;
    b->reply_priority = 0;
    b->reply_cpu = -1;
}

void hs__cfg_init_node(void *elem)
{
    struct hs_cfg_node *n = elem;
    memset(n, 0, sizeof *n);
    /* every protocol's slot gets its defaults (its own <name>_config.c documents them) */
    for (int p = 0; p < HS_CFG_CAN_PROTOCOL_MAX; p++)
        hs__can_proto_cfgs[p]->defaults(n->proto[p].bytes);
}

void hs__cfg_init_imu(void *elem)
{
    memset(elem, 0, sizeof(struct hs_cfg_imu));
}

void hs_config_defaults(struct hs_config *ret_config)
{
    struct hs_config *c = ret_config;
    memset(c, 0, sizeof *c);
    hs_world_params_default(&c->physics);

    c->rt = (struct hs_cfg_rt){
        .period_ns = 1000000,
        .priority = 80,
        .cpu = -1,
        .lock_memory = true,
        .cpu_dma_latency = true,
        .require_rt = false,
        .overrun_policy = HS_CFG_OVERRUN_SKIP,
        .overrun_leaky = {.increment = 100,
                          .decrement = 1,
                          .threshold = 1000,
                          .action = HS_CFG_LEAKY_HOLD},
        .warmup_ticks = 1000,
        .histogram_max_us = 10000,
        .clock = {.mode = HS_CLOCK_WALL,
                  .lockstep_timeout_s = 1.0,
                  .on_timeout = HS_LOCKSTEP_HOLD,
                  .lockstep_source = HS_CFG_LOCKSTEP_AUTO,
                  .sync = {.source = HS_CFG_SYNC_NONE,
                           .can_id = 0x080,
                           .max_slew_ppm = 10000,
                           .lock_ticks = 16,
                           .timeout_periods = 10}},
    };

    c->budgets = (struct hs_cfg_budgets){
        .max_misses = 0,
        .tick_p9999_fraction_of_period = 0.6,
        .tick_max_fraction_of_period = 1.0,
        .wake_latency_p99_us = 100,
        .wake_latency_max_us = 500,
        .max_can_rx_drops = 0,
    };

    c->controller.type = HS_CFG_CONTROLLER_PD_HOLD;
    c->controller.defaults.kp = 100;
    c->controller.defaults.kd = 2;
    c->controller.trajectory.amplitude = 0.1;
    c->controller.trajectory.frequency_hz = 0.5;

    c->actuators.defaults = (struct hs_cfg_actuator){
        .modes = HS_CFG_MODE_BIT(HS_CFG_MODE_TORQUE) | HS_CFG_MODE_BIT(HS_CFG_MODE_CURRENT) |
                 HS_CFG_MODE_BIT(HS_CFG_MODE_VELOCITY) | HS_CFG_MODE_BIT(HS_CFG_MODE_POSITION),
        .torque_limit_nm = NAN, /* from the model (bench_plant_params.c) */
        .current_limit_a = INFINITY,
        .gear_ratio = NAN,
        .gear_efficiency = NAN,
        .rotor_inertia = NAN,
        .torque_const = NAN,
        .viscous_friction = 0,
        .coulomb_friction = 0,
        .velocity_limit = NAN,
        .velocity_gain = 1,
        .command_timeout_s = 0.1,
        .safe_behaviour = HS_CFG_SAFE_ZERO_TORQUE,
        .command_delay_ticks = 0,
        .source = HS_CFG_SOURCE_AUTO,
    };

    c->sensors.encoder_defaults = (struct hs_cfg_encoder){
        .counter_bits = 32,
        .zero_offset_counts = 0,
        .counts_per_rev = 0,
        .mode = HS_CFG_ENCODER_ABSOLUTE,
        .velocity_window_ticks = 1,
        .delay_ticks = 0,
    };
    c->sensors.noise_seed = 1;

    c->shm.mode = 0660;
    c->shm.client_timeout_s = 0.1;

    c->record.ring_items = 65536;
    c->record.ring_states = 4096;
    c->record.compression = HS_CFG_RECORD_ZSTD;
    c->record.compression_level = 3;
}
