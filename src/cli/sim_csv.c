#include "sim_csv.h"

#include <math.h>

static void pose_quat(const double R[9], double q[4])
{
    /* Shepperd's method: pick the largest diagonal term to stay well conditioned. */
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s,
        q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = sqrt(1.0 + R[0] - R[4] - R[8]) * 2;
        q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s,
        q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = sqrt(1.0 + R[4] - R[0] - R[8]) * 2;
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s,
        q[3] = (R[5] + R[7]) / s;
    } else {
        double s = sqrt(1.0 + R[8] - R[0] - R[4]) * 2;
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s,
        q[3] = 0.25 * s;
    }
}

void hs__sim_csv_header(FILE *out, struct hs_bench *b)
{
    const struct hs_config *cfg = hs_bench_config(b);
    fprintf(out, "t");
    for (uint32_t i = 0; i < hs_bench_joint_count(b); i++) {
        const char *n = hs_bench_joint(b, i)->name;
        fprintf(out, ",%s.q,%s.dq,%s.tau,%s.enc", n, n, n, n);
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
            pose_quat(p.R, q);
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
