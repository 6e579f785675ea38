/* The object dictionary: its entries (index, sub-index, type, access, PDO mapping, range) and
 * checked writes with CiA 301's abort codes.
 *
 * Rules taken from CiA 301 (as summarised by CANopenNode 301/CO_PDO.c's comments, the canopen
 * python library's pdo docs and vendor manuals, e.g. Festo CMMP "transmit_pdo_parameter can
 * only be written when the PDO is deactivated", Turck BL20 "procedure for altering PDO
 * mappings"):
 * - a PDO's COB-ID may change only while the PDO is not valid (bit 31 set), else 0x06090030;
 * - sub3 inhibit time may change only while the PDO is not valid;
 * - mapping entries may be written only while the PDO is not valid and sub0 is 0, else
 *   0x06010000 (unsupported access); an entry that names an object that cannot be mapped is
 *   0x06040041; setting sub0 to n checks the n entries' total length (> 64 bits: 0x06040042);
 * - 0x1003 sub0 accepts only 0 (clears the history), else 0x06090030. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cia402/cia402_internal.h"

#define OFF(field) ((uint32_t)offsetof(struct hs_cia402_od, field))

enum { T_I8 = 2, T_I16 = 3, T_I32 = 4, T_U8 = 5, T_U16 = 6, T_U32 = 7, T_STR = 9 };

static unsigned type_size(unsigned t)
{
    switch (t) {
    case T_I8:
    case T_U8:
        return 1;
    case T_I16:
    case T_U16:
        return 2;
    case T_I32:
    case T_U32:
        return 4;
    default:
        return 0;
    }
}

static void add(struct hs_cia402_node *n, uint16_t index, uint8_t sub, uint8_t type, uint8_t access,
                uint8_t pdo, uint8_t kind, uint32_t offset, int64_t min, int64_t max)
{
    struct hs_cia402_entry *e = &n->entries[n->n_entries++];
    e->index = index, e->sub = sub, e->type = type, e->access = access, e->pdo = pdo;
    e->kind = kind, e->offset = offset, e->min = min, e->max = max;
    e->size = (uint8_t)(type == T_STR ? HS_CIA402_STR_MAX - 1 : type_size(type));
}

#define U8R 0, 0xFF
#define U16R 0, 0xFFFF
#define U32R 0, 0xFFFFFFFFLL
#define I8R INT8_MIN, INT8_MAX
#define I16R INT16_MIN, INT16_MAX
#define I32R INT32_MIN, INT32_MAX

static int cmp_entry(const void *a, const void *b)
{
    const struct hs_cia402_entry *x = a, *y = b;
    uint32_t kx = (uint32_t)x->index << 8 | x->sub, ky = (uint32_t)y->index << 8 | y->sub;
    return kx < ky ? -1 : kx > ky;
}

static void add_pdos(struct hs_cia402_node *n, uint16_t comm, uint16_t map, bool tx)
{
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        uint32_t c = tx ? OFF(tpdo[p]) : OFF(rpdo[p]);
        uint32_t m = tx ? OFF(tpdo_map[p]) : OFF(rpdo_map[p]);
        const uint8_t RO = HS_CIA402_CONST, RW = HS_CIA402_RW;
        add(n, (uint16_t)(comm + p), 0, T_U8, RO, 0, K_PLAIN,
            c + (uint32_t)offsetof(struct hs_cia402_pdo_comm, n_sub), U8R);
        add(n, (uint16_t)(comm + p), 1, T_U32, RW, 0, K_PDO_COB,
            c + (uint32_t)offsetof(struct hs_cia402_pdo_comm, cob_id), U32R);
        add(n, (uint16_t)(comm + p), 2, T_U8, RW, 0, K_PDO_TYPE,
            c + (uint32_t)offsetof(struct hs_cia402_pdo_comm, type), U8R);
        if (tx)
            add(n, (uint16_t)(comm + p), 3, T_U16, RW, 0, K_PDO_INHIBIT,
                c + (uint32_t)offsetof(struct hs_cia402_pdo_comm, inhibit), U16R);
        add(n, (uint16_t)(comm + p), 5, T_U16, RW, 0, K_PLAIN,
            c + (uint32_t)offsetof(struct hs_cia402_pdo_comm, event_ms), U16R);
        if (tx)
            add(n, (uint16_t)(comm + p), 6, T_U8, RW, 0, K_PLAIN,
                c + (uint32_t)offsetof(struct hs_cia402_pdo_comm, sync_start), 0, 240);
        add(n, (uint16_t)(map + p), 0, T_U8, RW, 0, K_MAP_N,
            m + (uint32_t)offsetof(struct hs_cia402_pdo_map, n), 0, HS_CIA402_PDO_MAP_MAX);
        for (unsigned s = 0; s < HS_CIA402_PDO_MAP_MAX; s++)
            add(n, (uint16_t)(map + p), (uint8_t)(s + 1), T_U32, RW, 0, K_MAP_ENTRY,
                m + (uint32_t)(offsetof(struct hs_cia402_pdo_map, entry) + 4 * s), U32R);
    }
}

int hs__cia402_od_build(struct hs_cia402_node *n)
{
    const uint8_t RO = HS_CIA402_RO, RW = HS_CIA402_RW, C = HS_CIA402_CONST;
    const uint8_t R = PDO_R, T = PDO_T;
    n->n_entries = 0;
    /* communication profile area (CiA 301 7.5.2) */
    add(n, 0x1000, 0, T_U32, C, 0, K_PLAIN, OFF(device_type), U32R);
    add(n, 0x1001, 0, T_U8, RO, T, K_PLAIN, OFF(error_register), U8R);
    add(n, 0x1003, 0, T_U8, RW, 0, K_ERR_N, OFF(err_count), U8R);
    for (unsigned i = 0; i < HS_CIA402_ERR_HISTORY; i++)
        add(n, 0x1003, (uint8_t)(i + 1), T_U32, RO, 0, K_PLAIN, OFF(err_history[i]), U32R);
    add(n, 0x1005, 0, T_U32, RW, 0, K_COB_FIXED, OFF(cob_id_sync), U32R);
    add(n, 0x1006, 0, T_U32, RW, 0, K_PLAIN, OFF(cycle_period_us), U32R);
    add(n, 0x1008, 0, T_STR, C, 0, K_PLAIN, OFF(device_name), 0, 0);
    add(n, 0x1009, 0, T_STR, C, 0, K_PLAIN, OFF(hw_version), 0, 0);
    add(n, 0x100A, 0, T_STR, C, 0, K_PLAIN, OFF(sw_version), 0, 0);
    add(n, 0x1014, 0, T_U32, RW, 0, K_COB_FIXED, OFF(cob_id_emcy), U32R);
    add(n, 0x1015, 0, T_U16, RW, 0, K_PLAIN, OFF(emcy_inhibit), U16R);
    add(n, 0x1016, 0, T_U8, C, 0, K_PLAIN, OFF(hb_consumer_n), U8R);
    for (unsigned i = 0; i < HS_CIA402_HB_CONSUMERS; i++)
        add(n, 0x1016, (uint8_t)(i + 1), T_U32, RW, 0, K_HB_CONSUMER, OFF(hb_consumer[i]), 0,
            0x007FFFFF);
    add(n, 0x1017, 0, T_U16, RW, 0, K_PLAIN, OFF(hb_producer_ms), U16R);
    add(n, 0x1018, 0, T_U8, C, 0, K_PLAIN, OFF(identity_n), U8R);
    for (unsigned i = 0; i < 4; i++)
        add(n, 0x1018, (uint8_t)(i + 1), T_U32, RO, 0, K_PLAIN, OFF(identity[i]), U32R);
    add_pdos(n, 0x1400, 0x1600, false);
    add_pdos(n, 0x1800, 0x1A00, true);
    /* device profile area (CiA 402-2) */
    add(n, 0x6007, 0, T_I16, RW, 0, K_PLAIN, OFF(abort_connection_option), 0, 3);
    add(n, 0x603F, 0, T_U16, RO, T, K_PLAIN, OFF(error_code), U16R);
    add(n, 0x6040, 0, T_U16, RW, R, K_PLAIN, OFF(controlword), U16R);
    add(n, 0x6041, 0, T_U16, RO, T, K_PLAIN, OFF(statusword), U16R);
    /* every code CiA 402-2 defines; manufacturer codes (< 0) and reserved ones are refused */
    add(n, 0x605A, 0, T_I16, RW, 0, K_PLAIN, OFF(quick_stop_option), 0, 8);
    add(n, 0x605D, 0, T_I16, RW, 0, K_PLAIN, OFF(halt_option), 1, 4);
    add(n, 0x605E, 0, T_I16, RW, 0, K_PLAIN, OFF(fault_reaction_option), 0, 4);
    add(n, 0x6060, 0, T_I8, RW, R, K_MODES, OFF(modes), I8R);
    add(n, 0x6061, 0, T_I8, RO, T, K_PLAIN, OFF(modes_display), I8R);
    add(n, 0x6062, 0, T_I32, RO, T, K_PLAIN, OFF(position_demand), I32R);
    add(n, 0x6064, 0, T_I32, RO, T, K_PLAIN, OFF(position_actual), I32R);
    add(n, 0x6065, 0, T_U32, RW, R, K_PLAIN, OFF(following_error_window), U32R);
    add(n, 0x6066, 0, T_U16, RW, 0, K_PLAIN, OFF(following_error_timeout_ms), U16R);
    add(n, 0x6067, 0, T_U32, RW, R, K_PLAIN, OFF(position_window), U32R);
    add(n, 0x6068, 0, T_U16, RW, 0, K_PLAIN, OFF(position_window_ms), U16R);
    add(n, 0x606C, 0, T_I32, RO, T, K_PLAIN, OFF(velocity_actual), I32R);
    add(n, 0x606D, 0, T_U16, RW, 0, K_PLAIN, OFF(velocity_window), U16R);
    add(n, 0x606F, 0, T_U16, RW, 0, K_PLAIN, OFF(velocity_threshold), U16R);
    add(n, 0x6071, 0, T_I16, RW, R, K_PLAIN, OFF(target_torque), I16R);
    add(n, 0x6072, 0, T_U16, RW, R, K_PLAIN, OFF(max_torque), U16R);
    add(n, 0x6075, 0, T_U32, RO, 0, K_PLAIN, OFF(rated_current_ma), U32R);
    add(n, 0x6076, 0, T_U32, RO, 0, K_PLAIN, OFF(rated_torque_mnm), U32R);
    add(n, 0x6077, 0, T_I16, RO, T, K_PLAIN, OFF(torque_actual), I16R);
    add(n, 0x6078, 0, T_I16, RO, T, K_PLAIN, OFF(current_actual), I16R);
    add(n, 0x607A, 0, T_I32, RW, R, K_PLAIN, OFF(target_position), I32R);
    add(n, 0x607C, 0, T_I32, RW, R, K_PLAIN, OFF(home_offset), I32R);
    add(n, 0x607D, 0, T_U8, C, 0, K_PLAIN, OFF(sw_limit_n), U8R);
    add(n, 0x607D, 1, T_I32, RW, R, K_PLAIN, OFF(sw_limit[0]), I32R);
    add(n, 0x607D, 2, T_I32, RW, R, K_PLAIN, OFF(sw_limit[1]), I32R);
    add(n, 0x6081, 0, T_U32, RW, R, K_PLAIN, OFF(profile_velocity), U32R);
    add(n, 0x6083, 0, T_U32, RW, R, K_PLAIN, OFF(profile_acceleration), 1, 0xFFFFFFFFLL);
    add(n, 0x6084, 0, T_U32, RW, R, K_PLAIN, OFF(profile_deceleration), 1, 0xFFFFFFFFLL);
    add(n, 0x6085, 0, T_U32, RW, R, K_PLAIN, OFF(quick_stop_deceleration), 1, 0xFFFFFFFFLL);
    add(n, 0x6098, 0, T_I8, RW, R, K_PLAIN, OFF(homing_method), 35, 37);
    add(n, 0x60B1, 0, T_I32, RW, R, K_PLAIN, OFF(velocity_offset), I32R);
    add(n, 0x60B2, 0, T_I16, RW, R, K_PLAIN, OFF(torque_offset), I16R);
    add(n, 0x60C2, 0, T_U8, C, 0, K_PLAIN, OFF(interp_n), U8R);
    add(n, 0x60C2, 1, T_U8, RW, 0, K_PLAIN, OFF(interp_period), U8R);
    add(n, 0x60C2, 2, T_I8, RW, 0, K_PLAIN, OFF(interp_exponent), -128, 63);
    add(n, 0x60F4, 0, T_I32, RO, T, K_PLAIN, OFF(following_error_actual), I32R);
    add(n, 0x60FF, 0, T_I32, RW, R, K_PLAIN, OFF(target_velocity), I32R);
    add(n, 0x6502, 0, T_U32, C, 0, K_PLAIN, OFF(supported_modes), U32R);
    qsort(n->entries, n->n_entries, sizeof n->entries[0], cmp_entry);
    return 0;
}

int hs__cia402_od_find_i(const struct hs_cia402_node *n, uint16_t index, uint8_t sub)
{
    uint32_t key = (uint32_t)index << 8 | sub;
    unsigned lo = 0, hi = n->n_entries;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        const struct hs_cia402_entry *e = &n->entries[mid];
        uint32_t k = (uint32_t)e->index << 8 | e->sub;
        if (k == key)
            return (int)mid;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -ENOENT;
}

const struct hs_cia402_entry *hs_cia402_od_find(const struct hs_cia402_node *node, uint16_t index,
                                                uint8_t sub)
{
    int i = hs__cia402_od_find_i(node, index, sub);
    return i < 0 ? NULL : &node->entries[i];
}

bool hs__cia402_od_index_exists(const struct hs_cia402_node *n, uint16_t index)
{
    unsigned lo = 0, hi = n->n_entries;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        uint16_t k = n->entries[mid].index;
        if (k == index)
            return true;
        if (k < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

uint32_t hs__cia402_od_get(const struct hs_cia402_od *od, const struct hs_cia402_entry *e)
{
    const uint8_t *p = (const uint8_t *)od + e->offset;
    switch (e->size) {
    case 1:
        return *p;
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    default: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    }
}

void hs__cia402_od_set(struct hs_cia402_od *od, const struct hs_cia402_entry *e, uint32_t raw)
{
    uint8_t *p = (uint8_t *)od + e->offset;
    if (e->size == 1) {
        *p = (uint8_t)raw;
    } else if (e->size == 2) {
        uint16_t v = (uint16_t)raw;
        memcpy(p, &v, 2);
    } else {
        memcpy(p, &raw, 4);
    }
}

int64_t hs__cia402_od_value(const struct hs_cia402_entry *e, uint32_t raw)
{
    switch (e->type) {
    case T_I8:
        return (int8_t)raw;
    case T_I16:
        return (int16_t)raw;
    case T_I32:
        return (int32_t)raw;
    default:
        return raw;
    }
}

/* The PDO a communication or mapping entry belongs to. */
static bool pdo_of(uint16_t index, bool *tx, unsigned *p, bool *is_map)
{
    uint16_t base = index & 0xFE00, off = index & 0x01FF;
    if (off >= HS_CIA402_PDO_N)
        return false;
    *p = off;
    switch (base) {
    case 0x1400:
        *tx = false, *is_map = false;
        return true;
    case 0x1600:
        *tx = false, *is_map = true;
        return true;
    case 0x1800:
        *tx = true, *is_map = false;
        return true;
    case 0x1A00:
        *tx = true, *is_map = true;
        return true;
    default:
        return false;
    }
}

static bool dummy_entry(uint16_t index, unsigned bits)
{
    static const uint8_t dummy_bits[8] = {0, 0, 8, 16, 32, 8, 16, 32};
    return index >= 2 && index <= 7 && dummy_bits[index] == bits;
}

uint32_t hs__cia402_map_check(const struct hs_cia402_node *n, uint32_t map, unsigned dir)
{
    uint16_t index = (uint16_t)(map >> 16);
    uint8_t sub = (uint8_t)(map >> 8), bits = (uint8_t)map;
    if (dir == PDO_R && dummy_entry(index, bits) && sub == 0)
        return 0;
    int i = hs__cia402_od_find_i(n, index, sub);
    if (i < 0)
        return hs__cia402_od_index_exists(n, index) ? HS_CIA402_ABORT_NO_SUB
                                                    : HS_CIA402_ABORT_NO_OBJECT;
    const struct hs_cia402_entry *e = &n->entries[i];
    if (!(e->pdo & dir) || e->type == T_STR || (unsigned)e->size * 8 != bits)
        return HS_CIA402_ABORT_NOT_MAPPABLE;
    return 0;
}

unsigned hs__cia402_pdo_len(const struct hs_cia402_node *n, const struct hs_cia402_pdo_map *m)
{
    (void)n;
    unsigned bits = 0;
    for (unsigned k = 0; k < m->n && k < HS_CIA402_PDO_MAP_MAX; k++)
        bits += (uint8_t)m->entry[k];
    return (bits + 7) / 8;
}

/* CiA 301 7.3.5 table 43: CAN-IDs no PDO may use (NMT, SYNC-free low range, TIME, SDO,
 * LSS, NMT error control). */
static bool restricted_id(uint32_t id)
{
    return id <= 0x7F || (id >= 0x101 && id <= 0x180) || (id >= 0x581 && id <= 0x5FF) ||
           (id >= 0x601 && id <= 0x67F) || (id >= 0x6E0 && id <= 0x6FF) || id >= 0x701;
}

static uint32_t check_pdo(struct hs_cia402_node *n, struct hs_cia402_od *od,
                          const struct hs_cia402_entry *e, uint32_t v)
{
    bool tx, is_map;
    unsigned p;
    if (!pdo_of(e->index, &tx, &p, &is_map))
        return HS_CIA402_ABORT_VALUE;
    struct hs_cia402_pdo_comm *c = tx ? &od->tpdo[p] : &od->rpdo[p];
    struct hs_cia402_pdo_map *m = tx ? &od->tpdo_map[p] : &od->rpdo_map[p];
    bool valid = !(c->cob_id & 0x80000000u);
    unsigned dir = tx ? PDO_T : PDO_R;
    switch (e->kind) {
    case K_PDO_COB:
        /* 29-bit identifiers are not supported */
        if (v & 0x20000000u)
            return HS_CIA402_ABORT_VALUE;
        if (valid && !(v & 0x80000000u) && (v & 0x7FF) != (c->cob_id & 0x7FF))
            return HS_CIA402_ABORT_VALUE;
        if (restricted_id(v & 0x7FF))
            return HS_CIA402_ABORT_VALUE;
        if (!(v & 0x80000000u) && !valid) {
            /* enabling: every mapped entry must still be usable */
            for (unsigned k = 0; k < m->n; k++)
                if (hs__cia402_map_check(n, m->entry[k], dir))
                    return HS_CIA402_ABORT_INCOMPATIBLE;
        }
        return 0;
    case K_PDO_TYPE:
        if (v <= 240 || v == 254 || v == 255)
            return 0;
        return HS_CIA402_ABORT_VALUE;
    case K_PDO_INHIBIT:
        return valid ? HS_CIA402_ABORT_VALUE : 0;
    case K_MAP_N: {
        if (valid)
            return HS_CIA402_ABORT_UNSUPPORTED;
        if (v > HS_CIA402_PDO_MAP_MAX)
            return HS_CIA402_ABORT_VALUE;
        unsigned bits = 0;
        for (unsigned k = 0; k < v; k++) {
            uint32_t r = hs__cia402_map_check(n, m->entry[k], dir);
            if (r)
                return HS_CIA402_ABORT_NOT_MAPPABLE;
            bits += (uint8_t)m->entry[k];
        }
        return bits > 64 ? HS_CIA402_ABORT_PDO_LENGTH : 0;
    }
    case K_MAP_ENTRY: {
        if (valid || m->n != 0)
            return HS_CIA402_ABORT_UNSUPPORTED;
        uint32_t r = hs__cia402_map_check(n, v, dir);
        return r ? HS_CIA402_ABORT_NOT_MAPPABLE : 0;
    }
    default:
        return 0;
    }
}

static uint32_t check_kind(struct hs_cia402_node *n, struct hs_cia402_od *od,
                           const struct hs_cia402_entry *e, uint32_t v)
{
    switch (e->kind) {
    case K_ERR_N:
        return v == 0 ? 0 : HS_CIA402_ABORT_VALUE;
    case K_MODES: {
        int8_t m = (int8_t)v;
        if (m <= 0 || m > 31 || !(od->supported_modes & (1u << (m - 1))))
            return HS_CIA402_ABORT_VALUE;
        return 0;
    }
    case K_COB_FIXED:
        if (v & 0x60000000u || (v & 0x7FF) == 0)
            return HS_CIA402_ABORT_VALUE;
        return 0;
    case K_HB_CONSUMER: {
        /* two entries may not watch the same node with a time set (CiA 301 7.5.2.31) */
        uint8_t node = (uint8_t)(v >> 16);
        if ((v & 0xFFFF) == 0 || node == 0)
            return 0;
        for (unsigned i = 0; i < HS_CIA402_HB_CONSUMERS; i++) {
            uint32_t o = od->hb_consumer[i];
            if ((uint8_t *)&od->hb_consumer[i] != (uint8_t *)od + e->offset &&
                (uint8_t)(o >> 16) == node && (o & 0xFFFF))
                return HS_CIA402_ABORT_INCOMPATIBLE;
        }
        return 0;
    }
    case K_PDO_COB:
    case K_PDO_TYPE:
    case K_PDO_INHIBIT:
    case K_MAP_N:
    case K_MAP_ENTRY:
        return check_pdo(n, od, e, v);
    default:
        return 0;
    }
}

uint32_t hs__cia402_od_write(struct hs_cia402_node *n, struct hs_cia402_od *od, int i,
                             const uint8_t *data, uint32_t size)
{
    const struct hs_cia402_entry *e = &n->entries[i];
    if (!(e->access & HS_CIA402_WO) || e->access == HS_CIA402_CONST)
        return HS_CIA402_ABORT_READ_ONLY;
    if (e->type == T_STR) {
        if (size > e->size)
            return HS_CIA402_ABORT_LENGTH_HIGH;
        char *s = (char *)od + e->offset;
        memcpy(s, data, size);
        s[size] = 0;
        return 0;
    }
    if (size > e->size)
        return HS_CIA402_ABORT_LENGTH_HIGH;
    if (size < e->size)
        return HS_CIA402_ABORT_LENGTH_LOW;
    uint32_t raw = get_le(data, size);
    int64_t v = hs__cia402_od_value(e, raw);
    if (v > e->max)
        return HS_CIA402_ABORT_VALUE_HIGH;
    if (v < e->min)
        return HS_CIA402_ABORT_VALUE_LOW;
    uint32_t r = check_kind(n, od, e, raw);
    if (r)
        return r;
    hs__cia402_od_set(od, e, raw);
    return 0;
}
