/* The sensor kind registry: the one place a sensor kind is declared. Each kind is one line of
 * HS_SENSOR_KINDS and one field list below it, and its home is one file,
 * src/plant/sensors/sensor_<name>.c (src/plant/sensors/README.md says what such a file holds):
 *   X(name, NAME, node, ROLE)
 *     name: the kind's short name (hilsim model --json, recordings, the shm readings table, CSV
 *           notes, the struct hs_sensor union member u.<name>, its file sensor_<name>.c);
 *     NAME: its enum hs_sensor_type value is HS_SENSOR_<NAME>;
 *     node: the OpenHRP VRML97 node that declares one;
 *     ROLE: what the kind stands for in the bench's fixed sections (enum hs_sensor_role below;
 *           NONE: the generic readings only).
 * From this list come the enum hs_sensor_type, the kind names and roles, the kind's members of
 * struct hs_sensor (hilsim/model.h), the VRML node dispatch, reader and schema rows of the model
 * loader, the plant's ops table (src/plant/sensor_ops.h) and the plant's source list (CMake reads
 * the X lines: cmake/HsSensorKinds.cmake), so a new kind is its line and its field list here plus
 * its file. The order is the enum order; append new kinds at the end. */
#ifndef HILSIM_SENSOR_KINDS_H
#define HILSIM_SENSOR_KINDS_H

#define HS_SENSOR_KINDS(X)                                                                         \
    X(accel, ACCEL, "AccelerationSensor", IMU_ACCEL)                                               \
    X(gyro, GYRO, "Gyro", IMU_GYRO)                                                                \
    X(force, FORCE, "ForceSensor", FT)                                                             \
    X(vision, VISION, "VisionSensor", NONE)                                                        \
    X(range, RANGE, "RangeSensor", NONE)

/* The sections of the bench that predate the generic readings (a kind's declared values, which
 * every kind reaches without a role) and are fixed by the config schema, the shm ABI and the DBC
 * quantities: which of them a kind feeds. The bench and config code look kinds up by role, never
 * by kind, so a second kind with a role (a high-range accelerometer) joins these sections
 * without a change there. */
enum hs_sensor_role {
    HS_SENSOR_ROLE_NONE,
    /* an IMU's accelerometer: sensors.imu.<name>.accel, the shm IMU section's accel_mps2, the
     * DBC quantities accel_x..z */
    HS_SENSOR_ROLE_IMU_ACCEL,
    /* an IMU's gyro: sensors.imu.<name>.gyro, gyro_rad_s, gyro_x..z */
    HS_SENSOR_ROLE_IMU_GYRO,
    /* a force-torque sensor: sensors.force.<name>, the shm F/T section, force_x..torque_z */
    HS_SENSOR_ROLE_FT,
    HS_SENSOR_ROLE_MAX
};

/* Each kind's own fields of its node: one list per line of HS_SENSOR_KINDS, named
 * HS_SENSOR_FIELDS_<name>(F, k), each entry
 *   F(k, field, TYPE, member, default)
 * field: the node's VRML field; member: the kind's member of struct hs_sensor (u.<name>.member),
 * declared by the entry; TYPE and default:
 *   VEC3    SFVec3f into a double[3]; the default X names HS__SENSOR_VEC3_X
 *   FLOAT   SFFloat into a double
 *   INT     SFInt32 into an int32_t
 *   STRING  SFString into a char[HS_SENSOR_STRING_MAX]; the default when absent or empty
 *   MAX     SFVec3f into the common member max (the range of the first channel; member: max)
 *   NAME    SFString, the node's name, read with the sensor's name (member: name)
 * MAX and NAME declare no member. The model's members (hilsim/model.h), its reader and defaults
 * (src/model/model_sensor.c) and the node's schema rows (src/model/vrml_schema.c) are generated
 * from these lists, so a kind's line without its list, or a default of the wrong type, does not
 * build. Units are SI, angles in rad. */
#define HS_SENSOR_STRING_MAX 16

/* VEC3 defaults, named: an entry's default is the name's suffix (the braces of a list would not
 * pass through the lists' macros) */
#define HS__SENSOR_VEC3_UNLIMITED                                                                  \
    {                                                                                              \
        -1, -1, -1                                                                                 \
    }

/* maxAcceleration m/s², -1 unlimited */
#define HS_SENSOR_FIELDS_accel(F, k) F(k, "maxAcceleration", MAX, max, UNLIMITED)
/* maxAngularVelocity rad/s, -1 unlimited */
#define HS_SENSOR_FIELDS_gyro(F, k) F(k, "maxAngularVelocity", MAX, max, UNLIMITED)
/* maxForce N, maxTorque N·m, -1 unlimited */
#define HS_SENSOR_FIELDS_force(F, k)                                                               \
    F(k, "maxForce", MAX, max, UNLIMITED)                                                          \
    F(k, "maxTorque", VEC3, max_torque, UNLIMITED)
/* a camera: field of view rad, clip distances m, frame rate Hz, image size px, image type */
#define HS_SENSOR_FIELDS_vision(F, k)                                                              \
    F(k, "fieldOfView", FLOAT, field_of_view, 0.785398)                                            \
    F(k, "frontClipDistance", FLOAT, front_clip, 0.01)                                             \
    F(k, "backClipDistance", FLOAT, back_clip, 10.0)                                               \
    F(k, "frameRate", FLOAT, frame_rate, 30)                                                       \
    F(k, "width", INT, width, 320)                                                                 \
    F(k, "height", INT, height, 240)                                                               \
    F(k, "type", STRING, vision_type, "NONE")                                                      \
    F(k, "name", NAME, name, "")
/* a scanner: scanAngle, scanStep rad; scanRate Hz; maxDistance, minDistance m (minDistance is
 * Choreonoid's addition to the OpenHRP node) */
#define HS_SENSOR_FIELDS_range(F, k)                                                               \
    F(k, "scanAngle", FLOAT, scan_angle, 3.14159)                                                  \
    F(k, "scanStep", FLOAT, scan_step, 0.1)                                                        \
    F(k, "scanRate", FLOAT, scan_rate, 10)                                                         \
    F(k, "maxDistance", FLOAT, max_distance, 10)                                                   \
    F(k, "minDistance", FLOAT, min_distance, 0)

#endif
