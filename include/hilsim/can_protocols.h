/* The CAN protocol registry: the one place a protocol is listed. Each line names a protocol
 * whose home is drivers/can/<name>/ (drivers/can/README.md says what the folder holds):
 *   X(name, NAME)  name: as written in can.nodes[].protocol and the node's section key;
 *                  NAME: its enum hs_cfg_can_protocol value is HS_CFG_PROTO_<NAME>.
 * From this list the config enum, the protocol names, the schema rows of the node sections and
 * both ops tables (src/bench/can/can_protocol.h for the CAN I/O module, src/config/cfg_can_proto.h
 * for the config) are generated, so adding a protocol is one line here plus its folder.
 * The order is the enum order; append new protocols at the end. */
#ifndef HILSIM_CAN_PROTOCOLS_H
#define HILSIM_CAN_PROTOCOLS_H

#define HS_CAN_PROTOCOLS(X)                                                                        \
    X(mit, MIT)                                                                                    \
    X(odrive, ODRIVE)                                                                              \
    X(dbc, DBC)                                                                                    \
    X(robstride, ROBSTRIDE)                                                                        \
    X(moteus, MOTEUS)                                                                              \
    X(cia402, CIA402)

#endif
