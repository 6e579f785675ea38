/* The sensor kind registry: the one place a sensor kind is listed. Each line names a kind whose
 * home is one file, src/plant/sensors/sensor_<name>.c (src/plant/sensors/README.md says what
 * such a file holds):
 *   X(name, NAME, node)  name: the kind's short name (hilsim model --json, recordings, the shm
 *                        readings table, CSV notes); NAME: its enum hs_sensor_type value is
 *                        HS_SENSOR_<NAME>; node: the OpenHRP VRML97 node that declares one.
 * From this list the enum hs_sensor_type, the kind names, the VRML node dispatch of the model
 * loader and the plant's ops table (src/plant/sensor_ops.h) are generated, so a new kind is one
 * line here plus its file (and, if its node has fields the loader does not read yet, those
 * fields in src/model/model_sensor.c, since the model format is the loader's business).
 * The order is the enum order; append new kinds at the end. */
#ifndef HILSIM_SENSOR_KINDS_H
#define HILSIM_SENSOR_KINDS_H

#define HS_SENSOR_KINDS(X)                                                                         \
    X(accel, ACCEL, "AccelerationSensor")                                                          \
    X(gyro, GYRO, "Gyro")                                                                          \
    X(force, FORCE, "ForceSensor")                                                                 \
    X(vision, VISION, "VisionSensor")                                                              \
    X(range, RANGE, "RangeSensor")

#endif
