#ifndef HS_BENCH_INTERNAL_H
#define HS_BENCH_INTERNAL_H

#include "hilsim/bench.h"

/* The tick calls inputs and outputs through these, never through a NULL op: hs_bench_add_io
 * puts no-ops where a module has none, as the bench keeps a compact array of the plants that
 * exist. One rule: the tick makes no NULL checks. */
struct hs_bench_io {
    const struct hs_bench_io_ops *ops;
    void *ctx;
    int (*inputs)(void *ctx, struct hs_bench *b, int64_t now_ns);
    int (*outputs)(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick);
};

struct hs_bench {
    const struct hs_config *cfg;
    uint32_t nmodels;
    struct hs_model *models[HS_CFG_MAX_MODELS];
    struct hs_plant *plants[HS_CFG_MAX_MODELS];      /* NULL for static models */
    struct hs_plant *live_plants[HS_CFG_MAX_MODELS]; /* the non-NULL plants, for the tick */
    uint32_t nlive_plants;
    struct hs_world *world;
    struct hs_bench_joint *joints;
    uint32_t njoints;
    struct hs_bench_sensor *sensors;
    uint32_t nsensors;
    struct hs_bench_io io[HS_BENCH_MAX_IO];
    uint32_t nio;
    int64_t period_ns;
    int64_t start_ns; /* first actuation's now_ns: the demo trajectory's time origin */
    bool started;
    bool safe_hold;       /* rt:w; set once, read by the tick */
    bool stopped;         /* safe_stop ran */
    int fault_rc;         /* rt:w; 0, or the world's fault: the bench is latched */
    int trajectory_joint; /* bench joint index, -1 none */
};

/* bench_plant_params.c: config -> plant parameters for one model. init only: allocates. */
int hs__bench_plant_params(const struct hs_config *cfg, const struct hs_model *model,
                           struct hs_plant_params *ret_params, struct hs_diag *diag);
/* bench_tick.c: the no-op inputs and outputs of modules that have none. RT-safe. */
int hs__bench_io_no_inputs(void *ctx, struct hs_bench *b, int64_t now_ns);
int hs__bench_io_no_outputs(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick);
/* demo_controller.c: RT-safe. Writes the controller-sourced joints' command slots. */
void hs__bench_demo_controller(struct hs_bench *b, int64_t now_ns);

#endif
