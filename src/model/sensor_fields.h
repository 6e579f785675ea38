/* Each sensor kind's own fields of its OpenHRP node: one list per line of the sensor kind
 * registry (hilsim/sensor_kinds.h), named HS__SENSOR_FIELDS_<name>, each entry
 *   F(field, TYPE, member, default)
 * field: the node's field; member: where it goes in struct hs_sensor (hilsim/model.h); TYPE and
 * default: VEC3 (SFVec3f, a double[3]; the default X names HS__SENSOR_VEC3_X), FLOAT (SFFloat, a
 * double), INT (SFInt32, an int32_t), STRING (SFString into a char array; the default when it is
 * absent or empty), NAME (SFString, declared only: the node's name, read with the sensor's name).
 * The reader (model_sensor.c, in list order) and the node's VRML schema rows (vrml_schema.c) are
 * generated from these lists, so a new kind's registry line without its list does not build. */
#ifndef HS_MODEL_SENSOR_FIELDS_H
#define HS_MODEL_SENSOR_FIELDS_H

/* VEC3 defaults, named: an entry's default is the name's suffix (the braces of a list would not
 * pass through the lists' macros) */
#define HS__SENSOR_VEC3_UNLIMITED                                                                  \
    {                                                                                              \
        -1, -1, -1                                                                                 \
    }

#define HS__SENSOR_FIELDS_accel(F) F("maxAcceleration", VEC3, max, UNLIMITED)
#define HS__SENSOR_FIELDS_gyro(F) F("maxAngularVelocity", VEC3, max, UNLIMITED)
#define HS__SENSOR_FIELDS_force(F)                                                                 \
    F("maxForce", VEC3, max, UNLIMITED)                                                            \
    F("maxTorque", VEC3, max_torque, UNLIMITED)
#define HS__SENSOR_FIELDS_vision(F)                                                                \
    F("fieldOfView", FLOAT, field_of_view, 0.785398)                                               \
    F("frontClipDistance", FLOAT, front_clip, 0.01)                                                \
    F("backClipDistance", FLOAT, back_clip, 10.0)                                                  \
    F("frameRate", FLOAT, frame_rate, 30)                                                          \
    F("width", INT, width, 320)                                                                    \
    F("height", INT, height, 240)                                                                  \
    F("type", STRING, vision_type, "NONE")                                                         \
    F("name", NAME, name, "")
/* minDistance is Choreonoid's addition to the OpenHRP node */
#define HS__SENSOR_FIELDS_range(F)                                                                 \
    F("scanAngle", FLOAT, scan_angle, 3.14159)                                                     \
    F("scanStep", FLOAT, scan_step, 0.1)                                                           \
    F("scanRate", FLOAT, scan_rate, 10)                                                            \
    F("maxDistance", FLOAT, max_distance, 10)                                                      \
    F("minDistance", FLOAT, min_distance, 0)

#endif
