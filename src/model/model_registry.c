/* The loader registry: hs_model_load_buffer() chooses the format module by content, then by the
 * file name's extension. Adding a format (SDF, MJCF) is one more entry here. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model_format.h"

static bool vrml_probe(const char *data, size_t size)
{
    return size >= 5 && memcmp(data, "#VRML", 5) == 0;
}

static int vrml_load(const char *data, size_t size, const char *name, const char *base_path,
                     const struct hs_model_options *opts, struct hs_model **ret_model,
                     struct hs_diag *diag)
{
    (void)opts; /* VRML has no packages; mesh_collision applies after any loader */
    return hs__vrml_load_buffer(data, (unsigned long)size, name, base_path, ret_model, diag);
}

static const char *const vrml_ext[] = {".wrl", ".vrml", NULL};
static const char *const urdf_ext[] = {".urdf", ".xacro", ".xml", NULL};

static const struct hs__model_format formats[] = {
    {"vrml", vrml_ext, vrml_probe, vrml_load},
    {"urdf", urdf_ext, hs__urdf_probe, hs__urdf_load_buffer},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static bool has_ext(const char *name, const char *const *ext)
{
    const char *dot = name ? strrchr(name, '.') : NULL;
    if (!dot || strchr(dot, '/'))
        return false;
    for (; *ext; ext++)
        if (strcasecmp(dot, *ext) == 0)
            return true;
    return false;
}

static const struct hs__model_format *choose(const char *data, size_t size, const char *name)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (formats[i].probe(data, size))
            return &formats[i];
    for (size_t i = 0; i < NFORMATS; i++)
        if (has_ext(name, formats[i].ext))
            return &formats[i];
    return &formats[0];
}

const char *hs_model_format_of(const char *data, unsigned long size, const char *name)
{
    return choose(data, (size_t)size, name)->name;
}

int hs__model_load_buffer_opts(const char *data, size_t size, const char *name,
                               const char *base_path, const struct hs_model_options *opts,
                               struct hs_model **ret_model, struct hs_diag *diag)
{
    struct hs_model *m = NULL;
    int r = choose(data, size, name)->load(data, size, name, base_path, opts, &m, diag);
    if (r < 0)
        return r;
    r = hs__model_mesh_collision_shared(m, opts->mesh_approx, opts->hull_source, diag);
    if (r < 0) {
        hs_model_free(m);
        return r;
    }
    if ((r = hs__model_warn_inertia(m)) < 0) {
        hs_model_free(m);
        return hs_diag_set(diag, r, name ? name : "", 0, 0, "out of memory");
    }
    *ret_model = m;
    return 0;
}

int hs_model_load_buffer(const char *data, unsigned long size, const char *name,
                         const char *base_path, struct hs_model **ret_model, struct hs_diag *diag)
{
    static const struct hs_model_options none = {0};
    return hs__model_load_buffer_opts(data, (size_t)size, name, base_path, &none, ret_model, diag);
}
