/* The bench side of a CiA 402 node's config: the drive library's config (drivers/can/cia402)
 * from a config node (src/config/can/cia402_config.h), shared by the bench's binding and
 * `hilsim can eds` so the EDS written is the dictionary the bench runs. */
#ifndef HS_BENCH_CIA402_FROM_CFG_H
#define HS_BENCH_CIA402_FROM_CFG_H

#include "cia402/cia402.h"
#include "hilsim/config.h"

/* init only: cfg from a config's can.nodes[] entry of protocol cia402 (its cia402 section and
 * id); the torque constant stays the library default when the section leaves it to the joint. */
void hs_cia402_config_from_cfg(struct hs_cia402_config *cfg, const struct hs_cfg_node *node);

#endif
