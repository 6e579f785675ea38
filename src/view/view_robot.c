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

/* Force sensors, drawn as arrows of what they read: their link and pose in it. */
static json_t *force_sensors(const struct hs_model *m, bool *bad)
{
    json_t *a = json_array();
    for (uint32_t k = 0; k < m->nsensors; k++) {
        const struct hs_sensor *sn = &m->sensors[k];
        if (sn->type != HS_SENSOR_FORCE || sn->link < 0)
            continue;
        json_t *o = json_object();
        hs__view_set(o, "name", hs__view_text(sn->name), bad);
        hs__view_set(o, "link", hs__view_text(m->links[sn->link].name), bad);
        hs__view_set(o, "p", hs__view_nums(sn->pose.p, 3, 1, HS_VIEW_DIGITS), bad);
        hs__view_set(o, "R", hs__view_nums(sn->pose.R, 9, 1, HS_VIEW_DIGITS), bad);
        hs__view_add(a, o, bad);
    }
    return a;
}

int hs_view_robot_export(const char *config, const char *dir, json_t **ret, char *err,
                         size_t errsize)
{
    *ret = NULL;
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    int r = hs_config_load(config, &cfg, &d);
    if (r < 0) {
        hs_diag_format(&d, err, errsize);
        return r;
    }
    bool bad = false;
    json_t *models = json_array();
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
        char urdf[64];
        snprintf(urdf, sizeof urdf, "robot/model-%u.urdf", i);
        json_t *o = json_object();
        hs__view_set(o, "name", hs__view_text(cm->name), &bad);
        hs__view_set(o, "urdf", json_string(urdf), &bad);
        hs__view_set(o, "static", json_boolean(cm->is_static), &bad);
        hs__view_set(o, "position", hs__view_nums(cm->position, 3, 1, HS_VIEW_DIGITS), &bad);
        hs__view_set(o, "rotation", hs__view_nums(cm->rotation, 4, 1, HS_VIEW_DIGITS), &bad);
        hs__view_set(o, "force_sensors", force_sensors(m, &bad), &bad);
        hs__view_add(models, o, &bad);
        hs_model_free(m);
    }
    hs_config_free(cfg);
    if (r == 0 && (bad || !models))
        r = -ENOMEM;
    if (r == 0)
        *ret = models;
    else
        json_decref(models);
    return r;
}
