/* Internal interfaces between the CiA 402 node's files. */
#ifndef HS_CIA402_INTERNAL_H
#define HS_CIA402_INTERNAL_H

#include "cia402/cia402.h"

/* Write checks beyond type and range (cia402_od.c). */
enum cia402_kind {
    K_PLAIN = 0,
    K_PDO_COB,
    K_PDO_TYPE,
    K_PDO_INHIBIT,
    K_MAP_N,
    K_MAP_ENTRY,
    K_ERR_N,
    K_HB_CONSUMER,
    K_MODES,
    K_COB_FIXED, /* SYNC / EMCY COB-ID: 11-bit only, bit 30 (producer) refused */
};

enum { PDO_R = 1, PDO_T = 2 };

static inline void put_le(uint8_t *p, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get_le(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

/* cia402_od.c */
int hs__cia402_od_build(struct hs_cia402_node *n);
int hs__cia402_od_find_i(const struct hs_cia402_node *n, uint16_t index, uint8_t sub);
bool hs__cia402_od_index_exists(const struct hs_cia402_node *n, uint16_t index);
uint32_t hs__cia402_od_get(const struct hs_cia402_od *od, const struct hs_cia402_entry *e);
void hs__cia402_od_set(struct hs_cia402_od *od, const struct hs_cia402_entry *e, uint32_t raw);
int64_t hs__cia402_od_value(const struct hs_cia402_entry *e, uint32_t raw);
/* Checked write of raw (size bytes) to entry i, as the SDO server does: returns 0 or an abort
 * code. Used by SDO, by the config's PDOs at init and by the EDS loader (od = od_def). */
uint32_t hs__cia402_od_write(struct hs_cia402_node *n, struct hs_cia402_od *od, int i,
                             const uint8_t *data, uint32_t size);
/* A mapping entry's object, or an abort code: the entry exists, is mappable in that direction
 * (PDO_R / PDO_T) and its length in bits matches. Dummy entries (0x0002-0x0007) map in RPDOs. */
uint32_t hs__cia402_map_check(const struct hs_cia402_node *n, uint32_t map, unsigned dir);
/* The PDO's mapped length in bytes from od (0 when a mapping entry is unusable). */
unsigned hs__cia402_pdo_len(const struct hs_cia402_node *n, const struct hs_cia402_pdo_map *m);

/* cia402_sdo.c */
void hs__cia402_sdo_frame(struct hs_cia402_node *n, const struct hs_can_frame *f);
void hs__cia402_sdo_reset(struct hs_cia402_node *n);

/* cia402_nmt.c */
void hs__cia402_tx(struct hs_cia402_node *n, uint32_t id, const uint8_t *data, unsigned len);
void hs__cia402_nmt_command(struct hs_cia402_node *n, uint8_t cs, int64_t now_ns);
void hs__cia402_heartbeat_rx(struct hs_cia402_node *n, uint8_t node_id, uint8_t state,
                             int64_t now_ns);
void hs__cia402_comm_poll(struct hs_cia402_node *n, int64_t now_ns);
void hs__cia402_emcy(struct hs_cia402_node *n, uint16_t code, uint8_t reg_bits);
void hs__cia402_emcy_clear(struct hs_cia402_node *n);
void hs__cia402_reset_comm(struct hs_cia402_node *n);

/* cia402_pdo.c */
void hs__cia402_pdo_reset(struct hs_cia402_node *n);
/* 0: an RPDO of this node took f; -ENOENT: not an RPDO id; -EBADMSG: wrong length. */
int hs__cia402_rpdo_frame(struct hs_cia402_node *n, const struct hs_can_frame *f);
void hs__cia402_sync(struct hs_cia402_node *n, int64_t now_ns);
void hs__cia402_tpdo_poll(struct hs_cia402_node *n, int64_t now_ns);
/* A remote request for one of the node's TPDOs (valid, RTR allowed: COB-ID bit 30 clear, NMT
 * operational): answered with the present values unless the node is quiet. false: not one. */
bool hs__cia402_tpdo_rtr(struct hs_cia402_node *n, const struct hs_can_frame *f, int64_t now_ns);

/* cia402_drive.c */
void hs__cia402_drive_reset(struct hs_cia402_node *n);
void hs__cia402_drive_cycle(struct hs_cia402_node *n, int64_t now_ns, double dt_s);
void hs__cia402_drive_connection_lost(struct hs_cia402_node *n);
uint16_t hs__cia402_statusword(const struct hs_cia402_node *n);

/* cia402_modes.c */
double hs__cia402_counts_to_rad(const struct hs_cia402_node *n, double counts);
double hs__cia402_rad_to_counts(const struct hs_cia402_node *n, double rad);
void hs__cia402_mode_enter(struct hs_cia402_node *n);
void hs__cia402_mode_run(struct hs_cia402_node *n, int64_t now_ns, double dt_s);
bool hs__cia402_stop_run(struct hs_cia402_node *n, unsigned code, double dt_s);
void hs__cia402_output_off(struct hs_cia402_node *n);
uint16_t hs__cia402_mode_status_bits(const struct hs_cia402_node *n);

#endif
