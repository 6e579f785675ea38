/* Internal to hs_model: the URDF loader (libxml2 tree in, hs_model out). */
#ifndef HS_URDF_INTERNAL_H
#define HS_URDF_INTERNAL_H

#include <libxml/tree.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hilsim/model.h"
#include "model_grow.h"
#include "model_material.h"

#define HS_URDF_MAX_LINKS 4096
#define HS_URDF_MAX_GEOMS 200000
#define HS_URDF_MAX_VERTICES (2u << 20)    /* over all meshes */
#define HS_URDF_MESH_FILE_MAX (512u << 20) /* bytes of one mesh file and what it references */
#define HS_URDF_MATERIAL_NAME_MAX 256

struct hs__urdf_named;

struct hs__urdf {
    const char *file; /* for messages */
    const char *dir;  /* directory of the file; NULL: mesh files refused (buffers, fuzzing) */
    struct hs_diag *diag;
    const struct hs_model_options *opts; /* never NULL */
    struct hs_model *m;                  /* being filled; freed with hs_model_free on failure */
    uint32_t geoms_cap, visuals_cap, warnings_cap;
    uint64_t vertices;
    bool obj_materials_said; /* the warning that OBJ materials are not used: once per model */
    /* Colours (urdf_material.c), with opts->visuals: the palette moves into hs_model.materials;
     * the <robot>-level definitions by name live for the load. */
    struct hs__palette palette;
    struct hs__urdf_named *named;
    uint32_t nnamed, named_cap;
    bool texture_said, palette_full_said;
};

/* Error naming file:line of node; returns a negative errno. */
int hs__urdf_err(struct hs__urdf *u, const xmlNode *n, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Warning naming file:line (kept in the model); returns 0 or -ENOMEM. */
int hs__urdf_warn(struct hs__urdf *u, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* First child element named name, or NULL. */
const xmlNode *hs__urdf_child(const xmlNode *n, const char *name);
bool hs__urdf_is(const xmlNode *n, const char *name);
/* Copies attribute into buf; "" and 0 when absent and not required. */
int hs__urdf_attr_str(struct hs__urdf *u, const xmlNode *n, const char *attr, bool required,
                      char *buf, size_t size);
/* One finite number; def when absent and not required. */
int hs__urdf_attr_num(struct hs__urdf *u, const xmlNode *n, const char *attr, bool required,
                      double def, double *ret);
/* count finite numbers separated by spaces; def (count values) when absent. */
int hs__urdf_attr_vec(struct hs__urdf *u, const xmlNode *n, const char *attr, int count,
                      const double *def, double *ret);
/* The <origin xyz rpy> child of n as a pose; identity when absent. */
int hs__urdf_origin(struct hs__urdf *u, const xmlNode *n, struct hs_pose *ret);
/* URDF roll-pitch-yaw (fixed axes x, y, z) to a row-major rotation matrix. */
void hs__urdf_rpy(const double rpy[3], double ret_R[9]);

/* Text content of an element as one finite number. */
int hs__urdf_text_num(struct hs__urdf *u, const xmlNode *n, double *ret);
/* Link surfaces (mu1, mu2, kp, kd) and what else <gazebo> says, as warnings (urdf_gazebo.c). */
int hs__urdf_gazebo(struct hs__urdf *u, const xmlNode *robot);
/* One <ros2_control> block: interfaces and limits onto the joints (urdf_ros2.c). */
int hs__urdf_ros2_control(struct hs__urdf *u, const xmlNode *rc);
/* After every block: a warning for each joint ros2_control leaves out (when there is one). */
int hs__urdf_ros2_unlisted(struct hs__urdf *u, const xmlNode *robot);
/* The link named ref (URDF link name, hs_link.segment_name) or joint, or -1. */
int hs__urdf_find_ref(const struct hs_model *m, const char *ref);

/* <collision> elements of link (model link index li) appended as geoms. */
int hs__urdf_collisions(struct hs__urdf *u, const xmlNode *link, int32_t li);
/* With opts->visuals: <visual> elements of link appended to hs_model.visuals; one that cannot
 * be read is a warning (returns < 0 only when out of memory). */
int hs__urdf_visuals(struct hs__urdf *u, const xmlNode *link);
/* <robot>-level <material> definitions (urdf_material.c); before any link. */
int hs__urdf_materials(struct hs__urdf *u, const xmlNode *robot);
/* The colour of a <visual> or <collision> element elem: *ret_material = 1 + palette index, 0
 * when it has none. < 0 for a bad rgba (file, line and attribute named) or no memory. */
int hs__urdf_material_of(struct hs__urdf *u, const xmlNode *elem, uint32_t *ret_material);
void hs__urdf_materials_free(struct hs__urdf *u);
/* package://, file:// or a relative/absolute path to an existing file. */
int hs__urdf_resolve(struct hs__urdf *u, const xmlNode *n, const char *uri, char *buf, size_t size);
/* IMU and force-torque sensors from <gazebo reference=...><sensor> (urdf_sensor.c). */
int hs__urdf_sensors(struct hs__urdf *u, const xmlNode *robot);
/* Triangles of a mesh file (assimp: STL, OBJ, COLLADA, ...) with its unit scale, times scale. */
int hs__urdf_mesh(struct hs__urdf *u, const xmlNode *n, const char *path, const double scale[3],
                  struct hs_mesh *ret);

/* What assimp may open while it imports one mesh (urdf_mesh_io.c): the mesh from data (its
 * bytes, read and checked; borrowed), and regular files inside its directory that it
 * references, within what is left of HS_URDF_MESH_FILE_MAX. */
struct aiFileIO;
struct hs__mesh_io {
    const char *path; /* the mesh as assimp is given it */
    const uint8_t *data;
    size_t len;
    size_t dirlen; /* of path's directory part, its '/' included (0: none) */
    size_t budget; /* bytes its references may still take */
    int dirfd;     /* the mesh's directory (O_PATH) */
    int err;       /* the first reference refused (-errno), 0 when none was */
    char why[512]; /* ... in words */
};
/* 0 and *ret_fio (valid while io is), or -errno (the directory cannot be opened). */
int hs__mesh_io_init(struct hs__mesh_io *io, const char *path, const uint8_t *data, size_t len,
                     struct aiFileIO *ret_fio);
void hs__mesh_io_fini(struct hs__mesh_io *io);

#endif
