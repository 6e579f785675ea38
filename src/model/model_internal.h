/* Internal to hs_model: the builder that turns VRML node trees into an hs_model, and the math
 * it needs (affine transforms, inertia combination, geometry, polygon triangulation). */
#ifndef HS_MODEL_INTERNAL_H
#define HS_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/model.h"
#include "model_grow.h"
#include "model_material.h"
#include "vrml_internal.h"

#define HS_MODEL_MAX_LINKS 4096
#define HS_MODEL_MAX_GEOMS 200000
#define HS_MODEL_MAX_VERTICES (2u << 20) /* over all meshes */
#define HS_MODEL_MAX_VISITS 4000000      /* node visits: USE can multiply a small file */
#define HS_MODEL_MAX_INLINE_DEPTH 16
#define HS_MODEL_MAX_POLYGON 4096

/* ---- affine transforms: x_parent = A x + p (A need not be a rotation) ---- */
struct hs__affine {
    double A[9]; /* row-major */
    double p[3];
};
void hs__affine_identity(struct hs__affine *ret);
void hs__affine_mul(const struct hs__affine *a, const struct hs__affine *b, struct hs__affine *ret);
void hs__affine_apply(const struct hs__affine *a, const double v[3], double ret[3]);
/* VRML Transform T*C*R*SR*S*-SR*-C, split into the rigid part T*C*R*-C and the scale part
 * C*SR*S*-SR*-C, so that full = rigid * scale. rot and scale_orient are axis-angle (4). */
void hs__affine_vrml(const double translation[3], const double rot[4], const double center[3],
                     const double scale[3], const double scale_orient[4],
                     struct hs__affine *ret_rigid, struct hs__affine *ret_scale);
bool hs__affine_is_rigid(const struct hs__affine *a);
double hs__det3(const double A[9]);
void hs__affine_to_pose(const struct hs__affine *a, struct hs_pose *ret);

/* ---- mass properties ---- */
struct hs__mass {
    double mass;
    double com[3];
    double inertia[9]; /* about com */
};
/* acc += (m, com, inertia about com), all in the same frame; parallel-axis theorem. */
void hs__mass_add(struct hs__mass *acc, double m, const double com[3], const double inertia[9]);
/* inertia expressed in a frame rotated by R: R I R^T. */
void hs__inertia_rotate(const double R[9], const double I[9], double ret[9]);

/* ---- polygon triangulation ---- */
/* Ear clipping of one planar polygon (indices into verts) in its own plane. Writes up to
 * 3*(n-2) indices; returns the triangle count (0 for a degenerate polygon). */
uint32_t hs__triangulate(const double *verts, const uint32_t *poly, uint32_t n, uint32_t *ret_tris);

/* ---- mesh collision (model_hull.c, model_mesh_collision.c) ---- */
/* The mesh's convex hull into *ret (owned by the caller: hs__hull_free). -EINVAL with qhull's
 * reason in err when the points span no volume, -ENOMEM. */
int hs__hull_of_mesh(const struct hs_mesh *m, struct hs_hull *ret, char *err, size_t errsize);
void hs__hull_free(struct hs_hull *h);
/* The mesh geom becomes its bounding box in its own frame (frees the mesh arrays). */
void hs__mesh_to_box(struct hs_geom *g);
/* Frees the model's hulls and clears every hs_mesh.hull. */
void hs__model_free_hulls(struct hs_model *m);

/* ---- builder ---- */
struct hs__link_acc {
    struct hs_link link;
    struct hs__mass mass;
    const char *file; /* the Joint node's file and column, for messages (link.source_line) */
    int column;
};

struct hs__geom_acc {
    struct hs_geom geom;
    int32_t link;
};

struct hs__extra_acc {
    struct hs_extra_joint ej;
    char link1[HS_NAME_MAX], link2[HS_NAME_MAX];
    char file[HS_DIAG_FILE_MAX];
    int line, column;
};

struct hs__builder {
    struct hs_diag *diag;
    struct hs__link_acc *links;
    uint32_t nlinks, links_cap;
    struct hs__geom_acc *geoms;
    uint32_t ngeoms, geoms_cap;
    struct hs_sensor *sensors;
    uint32_t nsensors, sensors_cap;
    struct hs__extra_acc *extras;
    uint32_t nextras, extras_cap;
    char **warnings;
    uint32_t nwarnings, warnings_cap;
    struct hs__vdoc **docs; /* every parsed file, freed with the builder */
    uint32_t ndocs, docs_cap;
    char *inline_stack[HS_MODEL_MAX_INLINE_DEPTH + 1]; /* realpaths of files being walked */
    int ninline;
    char name[HS_NAME_MAX];
    bool have_humanoid, warned_loose_shape, warned_palette_full;
    uint64_t visits, vertices;
    struct hs__palette palette; /* the Shapes' colours (model_appearance.c) */
    uint32_t shape_material;    /* the colour of the Shape being built: its geoms take it */
};

struct hs__bctx {
    int32_t link;        /* current link, -1 outside any Joint */
    struct hs__affine M; /* current frame in the link frame (world frame outside Joints) */
    const struct hs__venv *env;
    const char *dir; /* directory for Inline URLs; NULL: Inline refused */
    int depth;
};

/* A model's default name: the file name up to its first dot (VRML and URDF alike). */
void hs__model_name_from_path(const char *path, char *buf, size_t size);
/* Adds "file:line:column: msg" to the model's warnings (line or column 0: left out). */
int hs__builder_warn(struct hs__builder *b, const char *file, int line, int column, const char *fmt,
                     ...) __attribute__((format(printf, 5, 6)));
/* Takes over the warnings the parser recorded for one file. */
int hs__builder_warn_doc(struct hs__builder *b, const struct hs__vdoc *doc);
void hs__builder_free(struct hs__builder *b);

int hs__build_visit(struct hs__builder *b, const struct hs__vnode *node,
                    const struct hs__bctx *ctx);
int hs__build_children(struct hs__builder *b, const struct hs__vnode *node, const char *field,
                       const struct hs__bctx *ctx);
int hs__build_shape(struct hs__builder *b, const struct hs__vnode *shape,
                    const struct hs__bctx *ctx);
/* The Shape's appearance Appearance { material Material { diffuseColor transparency } } into the
 * palette: *ret_material = 1 + its index, 0 when the Shape names no Material. A colour or
 * transparency outside 0..1 is an error at the number. */
int hs__build_appearance(struct hs__builder *b, const struct hs__vnode *shape,
                         const struct hs__venv *env, uint32_t *ret_material);
/* Extrusion swept into a mesh in the shape frame; *ret_nt = 0 (and NULL arrays allowed to be
 * freed) when it has nothing to sweep. */
int hs__build_extrusion(struct hs__builder *b, const struct hs__vnode *n,
                        const struct hs__venv *env, const struct hs__bctx *ctx, double **ret_v,
                        uint32_t *ret_nv, uint32_t **ret_t, uint32_t *ret_nt);
int hs__build_inline(struct hs__builder *b, const struct hs__vnode *node,
                     const struct hs__bctx *ctx);
int hs__build_joint(struct hs__builder *b, const struct hs__vnode *node,
                    const struct hs__bctx *ctx);
int hs__build_segment(struct hs__builder *b, const struct hs__vnode *node,
                      const struct hs__bctx *ctx);
int hs__build_sensor(struct hs__builder *b, const struct hs__vnode *node, enum hs_sensor_type type,
                     const struct hs__bctx *ctx);
int hs__build_extra_joint(struct hs__builder *b, const struct hs__vnode *node,
                          const struct hs__bctx *ctx);
/* Transform fields of a Transform-like node, split as in hs__affine_vrml. */
int hs__read_transform(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                       struct hs__affine *ret_rigid, struct hs__affine *ret_scale);
/* Walks parsed roots, then checks and packs the result. */
int hs__build_model(struct hs__builder *b, const struct hs__vdoc *doc, const char *dir,
                    const char *path, struct hs_model **ret_model);
/* Reads a whole file (size-limited) into a NUL-terminated heap buffer. */
int hs__read_file(const char *path, char **ret_data, size_t *ret_size, struct hs_diag *diag,
                  const char *from_file, int from_line, int from_column);

/* ---- typed field access (defaults when the field is absent) ---- */
int hs__get_float(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                  const char *name, double def, double *ret);
int hs__get_int(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                const char *name, int32_t def, int32_t *ret);
int hs__get_bool(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                 const char *name, bool def, bool *ret);
int hs__get_vec3(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                 const char *name, const double def[3], double ret[3]);
int hs__get_rotation(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                     const char *name, double ret[4]);
/* Copies an SFString into buf; "" when absent. Error if it does not fit. */
int hs__get_string(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                   const char *name, char *buf, size_t size);
/* Numeric list (MFFloat, MFInt32, MFVec3f, ...): items point into the tree. */
int hs__get_numbers(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                    const char *name, enum hs__vftype type, const struct hs__vvalue **ret_value);
/* Node list of an SFNode/MFNode field; *ret_n = 0 when absent or NULL. */
int hs__get_nodes(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                  const char *name, struct hs__vnode *const **ret_nodes, uint32_t *ret_n,
                  const struct hs__venv **ret_env);
/* The 'name' of a node if given, else its DEF name, else "". */
int hs__node_name(struct hs__builder *b, const struct hs__vnode *n, const struct hs__venv *env,
                  bool has_name_field, char *buf, size_t size);

#endif
