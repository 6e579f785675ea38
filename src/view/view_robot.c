/* The bench's models for the page: each written as URDF (hs_model_write_urdf, the same export as
 * hilsim model --urdf) into the view's file directory, where urdf-loader fetches it. Its meshes
 * are the triangles the model holds, written there as STL; a URDF's <visual> geometry is loaded
 * too (the bench never loads it), so the page draws what the robot looks like. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/config.h"
#include "hilsim/diag.h"
#include "hilsim/model.h"
#include "view_internal.h"

int hs_view_robot_export(const char *config, const char *dir, struct hs_view_buf *out, char *err,
                         size_t errsize)
{
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    int r = hs_config_load(config, &cfg, &d);
    if (r < 0) {
        hs_diag_format(&d, err, errsize);
        return r;
    }
    hs_view_buf_printf(out, "[");
    uint32_t written = 0;
    for (uint32_t i = 0; i < cfg->nmodels && r == 0; i++) {
        const struct hs_cfg_model *cm = &cfg->models[i];
        struct hs_model_package pk[HS_CFG_MAX_PACKAGES];
        struct hs_model_options opts;
        struct hs_model *m = NULL;
        hs_config_model_options(cfg, i, pk, &opts);
        opts.visuals = true; /* a URDF's <visual> meshes: what the robot looks like */
        char path[4096];
        uint32_t lost = 0;
        snprintf(path, sizeof path, "%s/model-%u.urdf", dir, i);
        if ((r = hs_model_load_opts(cm->file, &opts, &m, &d)) < 0 ||
            (r = hs_model_write_urdf(m, path, &lost, &d)) < 0) {
            hs_diag_format(&d, err, errsize);
            hs_model_free(m);
            break;
        }
        /* The bench says the model's other warnings; the visuals are the view's alone. */
        for (uint32_t k = 0; k < m->nwarnings; k++)
            if (strstr(m->warnings[k], "<visual> not drawn"))
                fprintf(stderr, "hilsim view: %s\n", m->warnings[k]);
        hs_view_buf_printf(out, "%s{\"name\":", written++ ? "," : "");
        hs_view_buf_str(out, cm->name);
        hs_view_buf_printf(out, ",\"urdf\":\"robot/model-%u.urdf\",\"static\":%s,\"position\":", i,
                           cm->is_static ? "true" : "false");
        hs_view_buf_doubles(out, cm->position, 3, 1);
        hs_view_buf_printf(out, ",\"rotation\":");
        hs_view_buf_doubles(out, cm->rotation, 4, 1);
        /* Force sensors, drawn as arrows of what they read: their link and pose in it. */
        hs_view_buf_printf(out, ",\"force_sensors\":[");
        for (uint32_t k = 0, n = 0; k < m->nsensors; k++) {
            const struct hs_sensor *sn = &m->sensors[k];
            if (sn->type != HS_SENSOR_FORCE || sn->link < 0)
                continue;
            hs_view_buf_printf(out, "%s{\"name\":", n++ ? "," : "");
            hs_view_buf_str(out, sn->name);
            hs_view_buf_printf(out, ",\"link\":");
            hs_view_buf_str(out, m->links[sn->link].name);
            hs_view_buf_printf(out, ",\"p\":");
            hs_view_buf_doubles(out, sn->pose.p, 3, 1);
            hs_view_buf_printf(out, ",\"R\":");
            hs_view_buf_doubles(out, sn->pose.R, 9, 1);
            hs_view_buf_printf(out, "}");
        }
        hs_view_buf_printf(out, "]}");
        hs_model_free(m);
    }
    hs_view_buf_printf(out, "]");
    hs_config_free(cfg);
    if (r == 0 && out->oom)
        r = -ENOMEM;
    return r;
}
