#include "sim_csv.h"
#include "hilsim/pose.h"

#include <math.h>

void hs__sim_csv_header(FILE *out, struct hs_bench *b)
{
    const struct hs_config *cfg = hs_bench_config(b);
    fprintf(out, "time_s"); /* the column names: docs/recording.md, "CSV columns" */
    for (uint32_t i = 0; i < hs_bench_joint_count(b); i++) {
        const char *n = hs_bench_joint(b, i)->name;
        fprintf(out, ",%s.q,%s.dq,%s.tau,%s.encoder_count", n, n, n, n);
    }
    for (uint32_t m = 0; m < cfg->nmodels; m++)
        if (!cfg->models[m].is_static) {
            const char *n = cfg->models[m].name;
            fprintf(out, ",%s.x,%s.y,%s.z,%s.qw,%s.qx,%s.qy,%s.qz", n, n, n, n, n, n, n);
        }
    /* Sensor columns as each kind's ops name its values (plant.h, hs_sensor_value_name). */
    for (uint32_t s = 0; s < hs_bench_sensor_count(b); s++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, s);
        const struct hs_sensor *ms = &hs_bench_model(b, bs->body)->sensors[bs->model_sensor];
        for (uint32_t k = 0; k < bs->layout.nvalues; k++) {
            char field[16];
            hs_sensor_value_name(ms, k, field, sizeof field);
            fprintf(out, ",%s.%s", bs->name, field);
        }
    }
    fprintf(out, "\n");
}

void hs__sim_csv_row(FILE *out, struct hs_bench *b, double t_s)
{
    const struct hs_config *cfg = hs_bench_config(b);
    fprintf(out, "%.9g", t_s);
    for (uint32_t i = 0; i < hs_bench_joint_count(b); i++) {
        const struct hs_joint_reading *r = hs_bench_joint_reading(b, i);
        fprintf(out, ",%.9g,%.9g,%.9g,%llu", r->q, r->dq, r->torque,
                (unsigned long long)r->encoder_count);
    }
    for (uint32_t m = 0; m < cfg->nmodels; m++)
        if (!cfg->models[m].is_static) {
            struct hs_pose p;
            double q[4];
            hs_world_link_pose(hs_bench_world(b), m, 0, &p);
            hs_rot_to_quat(p.R, q);
            fprintf(out, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", p.p[0], p.p[1], p.p[2], q[0], q[1],
                    q[2], q[3]);
        }
    for (uint32_t s = 0; s < hs_bench_sensor_count(b); s++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, s);
        for (uint32_t k = 0; k < bs->layout.nvalues; k++)
            fprintf(out, ",%.9g", bs->values[k]);
    }
    fprintf(out, "\n");
}
