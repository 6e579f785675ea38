/* Internal to hs_model: the loader registry. Each file format is one module with a probe (does
 * this buffer look like mine?) and a loader; hs_model_load_buffer() picks one by content first,
 * then by the name's extension, and falls back to VRML (the historical format, whose errors are
 * the most helpful for a file that is neither). */
#ifndef HS_MODEL_FORMAT_H
#define HS_MODEL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "hilsim/model.h"

struct hs__model_format {
    const char *name;       /* "vrml", "urdf" */
    const char *const *ext; /* NULL-terminated list of extensions with the dot, lower case */
    /* true when the first bytes identify the format beyond doubt */
    bool (*probe)(const char *data, size_t size);
    int (*load)(const char *data, size_t size, const char *name, const char *base_path,
                const struct hs_model_options *opts, struct hs_model **ret_model,
                struct hs_diag *diag);
};

/* The VRML97 loader (model_load.c) and the URDF loader (urdf_load.c). */
int hs__vrml_load_buffer(const char *data, unsigned long size, const char *name,
                         const char *base_path, struct hs_model **ret_model, struct hs_diag *diag);
int hs__urdf_load_buffer(const char *data, size_t size, const char *name, const char *base_path,
                         const struct hs_model_options *opts, struct hs_model **ret_model,
                         struct hs_diag *diag);
/* hs_model_load_buffer with options (opts never NULL). */
/* model_inertia_check.c: appends a warning per link whose principal moments break the
 * triangle inequality (file:line and link named). 0 or -ENOMEM. init only. */
int hs__model_warn_inertia(struct hs_model *m);
int hs__model_load_buffer_opts(const char *data, size_t size, const char *name,
                               const char *base_path, const struct hs_model_options *opts,
                               struct hs_model **ret_model, struct hs_diag *diag);
bool hs__urdf_probe(const char *data, size_t size);

/* model_mesh_collision.c: hs_model_mesh_collision, reusing share's hulls (may be NULL) for
 * identical meshes; share must outlive m. */
int hs__model_mesh_collision_shared(struct hs_model *m, enum hs_mesh_approx how,
                                    const struct hs_model *share, struct hs_diag *diag);

#endif
