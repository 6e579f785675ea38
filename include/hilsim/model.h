/* The body model: a plain C description of one robot or environment, loaded from an OpenHRP
 * VRML97 file. Nothing here knows about ODE. Units are SI (m, kg, rad, s, N, N·m).
 *
 * Ownership: hs_model_load() returns one heap block tree owned by the caller; every pointer
 * inside (links, geoms, mesh arrays, sensors, extra joints, warnings) is owned by the model and
 * lives until hs_model_free(). */
#ifndef HILSIM_MODEL_H
#define HILSIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "hilsim/diag.h"
#include "hilsim/pose.h"
#include "hilsim/sensor_kinds.h"

#define HS_NAME_MAX 64

enum hs_joint_type {
    HS_JOINT_FIXED,
    HS_JOINT_FREE,    /* 6-DoF root */
    HS_JOINT_ROTATE,  /* hinge about axis */
    HS_JOINT_SLIDE,   /* prismatic along axis */
    HS_JOINT_CRAWLER, /* "crawler" / "pseudoContinuousTrack": fixed, drives contact surface */
    HS_JOINT_TYPE_MAX
};

enum hs_geom_type {
    HS_GEOM_BOX,
    HS_GEOM_SPHERE,
    HS_GEOM_CYLINDER, /* VRML convention: axis along the geom's local Y */
    HS_GEOM_CONE,     /* VRML convention: axis along local Y, apex at +height/2 */
    HS_GEOM_MESH,
    HS_GEOM_TYPE_MAX
};

/* How mesh collision geometry is simulated (hs_model_options.mesh_approx, config
 * models[].mesh_collision), for every mesh source: VRML IndexedFaceSet and Extrusion (and
 * primitives tessellated because of a scale), URDF STL, OBJ, DAE. Convex (the first value) is
 * the default. src/model/README.md, "Mesh collision". */
enum hs_mesh_approx {
    HS_MESH_CONVEX, /* its convex hull (ODE convex geom); hs_mesh.hull */
    HS_MESH_EXACT,  /* the triangle mesh (ODE trimesh) */
    HS_MESH_BOX,    /* its bounding box in the mesh's frame (a box primitive, made at load) */
    HS_MESH_AUTO,   /* the world chooses: exact for scenery and small or poorly fitting
                       meshes, convex otherwise (src/world/world_geom.c) */
    HS_MESH_APPROX_MAX
};

/* A convex hull: its faces as ODE's convex geom reads them (dCreateConvex: planes, points,
 * polygons, about an origin inside the hull) and as triangles. Points are about centre (the
 * mean of the hull's points), given in the mesh's frame: the hull sits at the mesh's pose
 * moved by centre. */
struct hs_hull {
    double centre[3];
    double *planes; /* 4 * nplanes: outward unit normal n and d, n.x = d on the face */
    uint32_t nplanes;
    double *points; /* 3 * npoints */
    uint32_t npoints;
    uint32_t *polygons; /* per plane: vertex count, then that many point indices,
                           counter-clockwise seen from outside */
    uint32_t npolygon_words;
    uint32_t *triangles; /* 3 * ntriangles: the polygons fanned into triangles, counter-clockwise
                            seen from outside (what the world gives ODE: a trimesh) */
    uint32_t ntriangles;
    double tolerance_m;    /* facets within this of coplanar were merged (HS_HULL_TOLERANCE_REL
                              of the mesh's bounding-box diagonal): mesh vertices may lie up to
                              about this far outside the hull's faces */
    double volume_m3;      /* of the hull */
    double mesh_volume_m3; /* enclosed by the mesh (0 for an open or flat one) */
};

struct hs_mesh {
    double *vertices; /* 3 * nvertices, in the geom frame (hs_geom.pose) */
    uint32_t nvertices;
    uint32_t *indices; /* 3 * ntriangles, counter-clockwise seen from outside when ccw is TRUE */
    uint32_t ntriangles;
    enum hs_mesh_approx collision; /* convex, exact or auto (box meshes became boxes) */
    const struct hs_hull *hull;    /* convex and auto: owned by the model (hs_model.hulls), one
                                      per distinct mesh; NULL: no hull (the world keeps the
                                      trimesh) */
};

/* How a shape looks (VRML Appearance/Material, URDF <material>): only viewers read it (the web
 * view, through the URDF export); nothing simulates it. */
struct hs_material {
    float rgba[4]; /* diffuse colour and opacity, each 0..1 (VRML: 1 - transparency) */
};

struct hs_geom {
    enum hs_geom_type type;
    /* 1 + index into hs_model.materials; 0: no colour given (a viewer draws its default). It
     * sits in what was padding after type: a geom is no larger for it. */
    uint32_t material;
    struct hs_pose pose; /* geom frame in the link frame */
    union {
        struct {
            double size[3];
        } box;
        struct {
            double radius;
        } sphere;
        struct {
            double radius, height;
        } cylinder;
        struct {
            double bottom_radius, height;
        } cone;
        struct hs_mesh mesh;
    } u;
};

/* ros2_control interfaces (hardware_interface's names: position, velocity, effort). */
enum hs_iface { HS_IFACE_POSITION, HS_IFACE_VELOCITY, HS_IFACE_EFFORT, HS_IFACE_MAX };
#define HS_IFACE_BIT(i) (1u << (i))
#define HS_SURFACE_MU1 1u
#define HS_SURFACE_MU2 2u
#define HS_SURFACE_KP 4u
#define HS_SURFACE_KD 8u

struct hs_link {
    char name[HS_NAME_MAX];         /* the Joint's name field (DEF name if name is empty) */
    char segment_name[HS_NAME_MAX]; /* first Segment's name or DEF name, "" if none */
    int32_t parent; /* index into hs_model.links, -1 for the root; parents come first */
    enum hs_joint_type joint_type;
    int32_t joint_id;        /* jointId, -1 when unactuated */
    struct hs_pose origin;   /* link frame in the parent's link frame at zero joint position */
    double axis[3];          /* unit vector in the link frame (rotate, slide, crawler) */
    double ulimit, llimit;   /* position limits, rad or m; +INFINITY / -INFINITY when absent */
    double uvlimit, lvlimit; /* velocity limits, rad/s or m/s; ±INFINITY when absent */
    double gear_ratio;       /* default 1 */
    double gear_efficiency;  /* default 1 */
    double rotor_inertia;    /* kg·m², motor side; default 0 */
    double rotor_resistor;   /* ohm; default 0 */
    double torque_const;     /* N·m/A, motor side; default 1 */
    double encoder_pulse;    /* counts per motor revolution; default 1 */
    double climit;           /* A, motor current limit (first value of climit); +INFINITY when
                              * absent. gear_ratio, gear_efficiency, torque_const and
                              * encoder_pulse written as 0 mean "not given": default, warning */
    double effort_max;       /* joint-side torque/force limit, N·m or N; 0 = none given (URDF
                                limit effort; VRML has no such field) */
    double damping;          /* viscous friction, N·m·s/rad or N·s/m; URDF dynamics damping */
    double friction;         /* Coulomb friction, N·m or N; URDF dynamics friction */
    double mass;             /* kg, all Segments combined */
    double com[3];           /* centre of mass in the link frame */
    double inertia[9];       /* about the centre of mass, link-frame axes, row-major */
    /* Mimic (URDF <mimic>): when mimics, q = mimic_multiplier * q(links[mimic_of]) +
     * mimic_offset, enforced by the world as a joint motor on this joint
     * (src/world/world_mimic.c). A zeroed hs_link is independent. */
    bool mimics;
    int32_t mimic_of;
    double mimic_multiplier, mimic_offset;
    /* Contact surface of this link's geoms (Gazebo <mu1> <mu2> <kp> <kd> on the link), each used
     * only when its HS_SURFACE_* bit is in surface_given (else the world's contact parameters
     * apply). mu1, mu2: Coulomb coefficients along the two friction directions; kp N/m and
     * kd N·s/m: contact stiffness and damping. */
    uint32_t surface_given;
    double mu1, mu2, contact_kp, contact_kd;
    /* ros2_control: HS_IFACE_BIT() sets of the joint's command and state interfaces; 0 when the
     * file has no <ros2_control> entry for it. */
    uint32_t command_interfaces, state_interfaces;
    uint32_t geom_first, geom_count;     /* slice of hs_model.geoms */
    uint32_t visual_first, visual_count; /* slice of hs_model.visuals (0 when none) */
    int32_t source_line;                 /* line of the Joint node, for messages */
    int32_t source_column;               /* column of the Joint node's type name */
    const char *source_file; /* file of the Joint node (the model's path or an Inlined file);
                              * owned by the model */
};

/* One value per line of the registry (hilsim/sensor_kinds.h), in its order. */
enum hs_sensor_type {
#define HS_SENSOR_ENUM(name, NAME, node, role) HS_SENSOR_##NAME,
    HS_SENSOR_KINDS(HS_SENSOR_ENUM)
#undef HS_SENSOR_ENUM
        HS_SENSOR_TYPE_MAX
};

/* Each kind's own members, struct hs_sensor_<name>, generated from its field list
 * (HS_SENSOR_FIELDS_<name> in hilsim/sensor_kinds.h, which says each one's field, unit and
 * default); a kind whose fields all go to the common part has none. */
#define HS__SENSOR_MEMBER_VEC3(m) double m[3];
#define HS__SENSOR_MEMBER_FLOAT(m) double m;
#define HS__SENSOR_MEMBER_INT(m) int32_t m;
#define HS__SENSOR_MEMBER_STRING(m) char m[HS_SENSOR_STRING_MAX];
#define HS__SENSOR_MEMBER_MAX(m)
#define HS__SENSOR_MEMBER_NAME(m)
#define HS__SENSOR_MEMBER(k, field, TYPE, m, d) HS__SENSOR_MEMBER_##TYPE(m)
#define HS__SENSOR_STRUCT(name, NAME, node, role)                                                  \
    struct hs_sensor_##name {                                                                      \
        HS_SENSOR_FIELDS_##name(HS__SENSOR_MEMBER, name)                                           \
    };
HS_SENSOR_KINDS(HS__SENSOR_STRUCT)
#undef HS__SENSOR_STRUCT

struct hs_sensor {
    char name[HS_NAME_MAX]; /* DEF name (sensors have no name field in OpenHRP) */
    enum hs_sensor_type type;
    int32_t sensor_id;   /* sensorId, -1 if absent */
    int32_t link;        /* index into hs_model.links */
    struct hs_pose pose; /* sensor frame in the link frame */
    /* The range of the first channel (accel: maxAcceleration; gyro: maxAngularVelocity; force:
     * maxForce). -1 = unlimited, and for a kind without one. */
    double max[3];
    /* The kind's own fields: u.<name> of the kind given by type (u.force.max_torque, ...). */
    union {
#define HS__SENSOR_UNION(name, NAME, node, role) struct hs_sensor_##name name;
        HS_SENSOR_KINDS(HS__SENSOR_UNION)
#undef HS__SENSOR_UNION
    } u;
};

enum hs_extra_joint_type { HS_EXTRA_BALL, HS_EXTRA_PISTON, HS_EXTRA_TYPE_MAX };

struct hs_extra_joint {
    char name[HS_NAME_MAX];
    enum hs_extra_joint_type type;
    int32_t link1, link2; /* indices into hs_model.links */
    double pos1[3];       /* connection point in link1's frame */
    double pos2[3];       /* connection point in link2's frame */
    double axis[3];       /* piston axis in link1's frame (unit) */
};

struct hs_model {
    char name[HS_NAME_MAX]; /* Humanoid name, or the file's base name */
    char *path;             /* file it was loaded from */
    struct hs_link *links;
    uint32_t nlinks;
    struct hs_geom *geoms;
    uint32_t ngeoms;
    struct hs_sensor *sensors;
    uint32_t nsensors;
    struct hs_extra_joint *extra_joints;
    uint32_t nextra_joints;
    uint32_t njoint_ids; /* max jointId + 1 (0 when none) */
    char **warnings;     /* "file:line:column: text", e.g. gaps in jointId; the CLI prints them */
    uint32_t nwarnings;
    char **source_files; /* Inlined files that hold Joints (hs_link.source_file) */
    uint32_t nsource_files;
    struct hs_hull *hulls; /* hs_mesh.hull points here; identical meshes share one */
    uint32_t nhulls;
    /* What a URDF's <visual> elements draw, in the link frame, grouped by link: loaded only with
     * hs_model_options.visuals (the web view); nothing simulates or collides them. */
    struct hs_geom *visuals;
    uint32_t nvisuals;
    /* The distinct colours of geoms and visuals (hs_geom.material), each once: a VRML Shape's
     * Material (always read: a few bytes per colour), a URDF <visual>'s <material> (read with
     * hs_model_options.visuals, as the visuals are). */
    struct hs_material *materials;
    uint32_t nmaterials;
};

/* A package:// location: package name is the directory dir; name NULL or "": dir is a
 * directory holding packages (as a ROS_PACKAGE_PATH entry). */
struct hs_model_package {
    const char *name;
    const char *dir;
};

struct hs_model_options {
    /* package://NAME/... lookups before $HS_PACKAGE_PATH and $ROS_PACKAGE_PATH. Borrowed for
     * the call. */
    const struct hs_model_package *packages;
    uint32_t npackages;
    enum hs_mesh_approx mesh_approx;
    /* Borrowed, may be NULL: a model loaded before (two config entries loading one file) whose
     * hulls are reused for identical meshes instead of running qhull again; it must outlive the
     * model loaded with it (the bench frees its models together). */
    const struct hs_model *hull_source;
    /* Also read a URDF's <visual> geometry into hs_model.visuals (meshes through the same
     * confined reads as collision meshes) and the colours of its <visual>s and <collision>s
     * (<material>, hs_model.materials). A visual whose geometry cannot be read is a warning, not
     * an error: it only changes what a viewer draws; a bad colour value is an error naming file,
     * line and attribute. The bench leaves it off. */
    bool visuals;
};

/* init only: allocates. On failure *ret_model is untouched, nothing leaks, and diag names
 * file:line:column and what was expected. */
int hs_model_load(const char *path, struct hs_model **ret_model, struct hs_diag *diag);
/* Same with options (NULL: the defaults hs_model_load uses). */
int hs_model_load_opts(const char *path, const struct hs_model_options *opts,
                       struct hs_model **ret_model, struct hs_diag *diag);
/* Same, from a buffer; base_path resolves Inline URLs (may be NULL: Inline is then an error). */
int hs_model_load_buffer(const char *data, unsigned long size, const char *name,
                         const char *base_path, struct hs_model **ret_model, struct hs_diag *diag);
void hs_model_free(struct hs_model *model); /* accepts NULL */
/* init only. Writes the model as URDF (src/model/urdf_write.c): links, joints (mimic too),
 * inertials, collision geometry (and visual geometry, hs_model.visuals, as <visual>), each with
 * its colour (hs_model.materials as <robot>-level <material>s, named by each element); accel, gyro
 * and force sensors, link surfaces and ros2_control interfaces as the loader reads them back;
 * meshes as binary STL in PATH-without-extension_meshes/. *ret_lost (may be NULL) counts what URDF
 * cannot hold and was left out: vision and range sensors, extra joints, crawler joints (written
 * fixed), cones. Of the motor fields only the gear ratio (a <transmission>) and the current limit
 * (as the effort it allows) are written. */
int hs_model_write_urdf(const struct hs_model *model, const char *path, uint32_t *ret_lost,
                        struct hs_diag *diag);
/* The format hs_model_load_buffer() would choose ("vrml" or "urdf"): by content (#VRML, an XML
 * <robot>), then by the name's extension, else "vrml". */
const char *hs_model_format_of(const char *data, unsigned long size, const char *name);
/* URDF package://PKG/... is looked up in hs_model_options.package_paths, then the directories
 * of this environment variable (colon-separated), then of ROS_PACKAGE_PATH, then among the
 * model file's ancestors. */
#define HS_PACKAGE_PATH_ENV "HS_PACKAGE_PATH"

/* Hulls whose volume exceeds the mesh's by more than this factor are a poor fit: the model
 * warns, naming the link, and auto keeps such a mesh exact. */
#define HS_HULL_POOR_FIT_RATIO 1.5
/* Hull simplification: facets whose centrums are within this fraction of the mesh's bounding-box
 * diagonal of their neighbours' planes merge (0.1 mm on a 10 cm foot). */
#define HS_HULL_TOLERANCE_REL 1e-3
/* init only: allocates. Applies how (an hs_mesh_approx) to every mesh geom of the model: box
 * meshes become box primitives, convex and auto ones get their hull (computed once per
 * distinct mesh content), poorly fitting hulls warn. The loaders call it with the option's
 * value; a model built by hand may call it too. -ENOMEM, or -EINVAL with diag for a mesh qhull
 * cannot hull. */
int hs_model_mesh_collision(struct hs_model *model, enum hs_mesh_approx how, struct hs_diag *diag);
/* The option's name ("convex", "exact", "box", "auto"; "?" out of range). */
const char *hs_mesh_approx_name(enum hs_mesh_approx a);

/* Lookup helpers (any thread, no allocation). Return index or -ENOENT. */
int hs_model_find_link(const struct hs_model *model, const char *name);
int hs_model_link_of_joint_id(const struct hs_model *model, int32_t joint_id);
/* The sensor of that type and name (the one find-sensor-by-name of the tree): its index in
 * model->sensors, or -ENOENT (also for an empty name). */
int hs_model_find_sensor(const struct hs_model *model, const char *name, enum hs_sensor_type type);
/* The same for the first sensor of that name whose kind has that role (the config's sensors.imu
 * and sensors.force name sensors by role). */
int hs_model_find_sensor_role(const struct hs_model *model, const char *name,
                              enum hs_sensor_role role);
/* Sets sensor->type and every field of that kind's node (its list in hilsim/sensor_kinds.h) to
 * its default, max to -1 (unlimited) for a kind without one; leaves name, sensor_id, link and
 * pose. For sensors made without a node (URDF, the config's models[].sensors, tests). */
void hs_sensor_kind_defaults(struct hs_sensor *sensor, enum hs_sensor_type type);
double hs_model_total_mass(const struct hs_model *model);

const char *hs_joint_type_name(enum hs_joint_type t);
const char *hs_sensor_type_name(enum hs_sensor_type t); /* registry name: "accel", ... "?" */
const char *hs_sensor_type_node(enum hs_sensor_type t); /* OpenHRP node: "Gyro", ... "?" */
/* The kind's role (hilsim/sensor_kinds.h); HS_SENSOR_ROLE_NONE out of range. */
enum hs_sensor_role hs_sensor_type_role(enum hs_sensor_type t);

#endif
