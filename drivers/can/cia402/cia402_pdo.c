/* PDOs (CiA 301 7.2.2) and the SYNC consumer (7.2.5).
 *
 * RPDO: a frame on a valid RPDO's COB-ID in NMT operational. Shorter than its mapping: not
 * processed, EMCY 0x8210; longer: processed, EMCY 0x8220 (the codes CANopenNode uses for the
 * two cases); each EMCY once until a frame of the right length comes. Transmission type
 * 0..240: the data waits for the next SYNC; 254/255: written at once.
 * TPDO: type 1..240 sent at every n-th SYNC; type 0 at a SYNC when the mapped data changed
 * since it was last sent; 254/255 when the data changed (checked every poll) but not sooner than
 * the inhibit time (sub3, 100 us) after the last one, and at least every event timer period
 * (sub5, ms, 0: off). Values are sampled at SYNC for synchronous PDOs (the actual values of the
 * last poll) and at poll for event-driven ones. Mapped data is packed LSB first in mapping
 * order; objects here are whole bytes. */
#include <errno.h>
#include <string.h>

#include "cia402/cia402_internal.h"

/* The mapping's objects looked up once, when the mapping or the dictionary changed, so a PDO
 * costs no search per frame. */
static void resolve(const struct hs_cia402_node *n, const struct hs_cia402_pdo_map *m,
                    int16_t *entry)
{
    for (unsigned k = 0; k < HS_CIA402_PDO_MAP_MAX; k++) {
        int i = -1;
        if (k < m->n)
            i = hs__cia402_od_find_i(n, (uint16_t)(m->entry[k] >> 16), (uint8_t)(m->entry[k] >> 8));
        entry[k] = (int16_t)(i < 0 ? -1 : i);
    }
}

void hs__cia402_pdo_reset(struct hs_cia402_node *n)
{
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        memset(&n->rpdo[p], 0, sizeof n->rpdo[p]);
        n->rpdo[p].len = (uint8_t)hs__cia402_pdo_len(n, &n->od.rpdo_map[p]);
        resolve(n, &n->od.rpdo_map[p], n->rpdo[p].entry);
        memset(&n->tpdo[p], 0, sizeof n->tpdo[p]);
        n->tpdo[p].len = (uint8_t)hs__cia402_pdo_len(n, &n->od.tpdo_map[p]);
        resolve(n, &n->od.tpdo_map[p], n->tpdo[p].entry);
    }
}

static bool pdo_valid(const struct hs_cia402_pdo_comm *c, const struct hs_cia402_pdo_map *m)
{
    return !(c->cob_id & 0x80000000u) && m->n > 0;
}

/* Writes the mapped objects from data; values out of an object's range are ignored (a PDO has
 * no way to refuse them). */
static void rpdo_apply(struct hs_cia402_node *n, unsigned p, const uint8_t *data)
{
    const struct hs_cia402_pdo_map *m = &n->od.rpdo_map[p];
    unsigned pos = 0;
    for (unsigned k = 0; k < m->n; k++) {
        uint32_t map = m->entry[k];
        unsigned bytes = (uint8_t)map / 8u;
        int i = n->rpdo[p].entry[k];
        if (i >= 0 && pos + bytes <= 8) {
            const struct hs_cia402_entry *e = &n->entries[i];
            uint32_t raw = get_le(data + pos, bytes);
            int64_t v = hs__cia402_od_value(e, raw);
            if (v >= e->min && v <= e->max) {
                if (e->kind == K_MODES) {
                    int8_t mode = (int8_t)raw;
                    if (mode > 0 && mode < 32 && (n->od.supported_modes & (1u << (mode - 1))))
                        hs__cia402_od_set(&n->od, e, raw);
                } else {
                    hs__cia402_od_set(&n->od, e, raw);
                }
            }
        }
        pos += bytes;
    }
}

int hs__cia402_rpdo_frame(struct hs_cia402_node *n, const struct hs_can_frame *f)
{
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        const struct hs_cia402_pdo_comm *c = &n->od.rpdo[p];
        if (!pdo_valid(c, &n->od.rpdo_map[p]) || (c->cob_id & 0x7FF) != f->id)
            continue;
        struct hs_cia402_rpdo_rt *r = &n->rpdo[p];
        if (f->len < r->len) {
            if (!r->length_error)
                hs__cia402_emcy(n, HS_CIA402_EMCY_PDO_LENGTH, HS_CIA402_ERRREG_COMM);
            r->length_error = true;
            return -EBADMSG;
        }
        if (f->len > r->len) {
            if (!r->length_error)
                hs__cia402_emcy(n, HS_CIA402_EMCY_PDO_TOO_LONG, HS_CIA402_ERRREG_COMM);
            r->length_error = true;
        } else {
            r->length_error = false;
        }
        if (c->type <= 240) {
            memcpy(r->data, f->data, r->len);
            r->pending = true;
        } else {
            rpdo_apply(n, p, f->data);
        }
        return 0;
    }
    return -ENOENT;
}

static void tpdo_sample(struct hs_cia402_node *n, unsigned p, uint8_t *data)
{
    const struct hs_cia402_pdo_map *m = &n->od.tpdo_map[p];
    unsigned pos = 0;
    memset(data, 0, 8);
    for (unsigned k = 0; k < m->n; k++) {
        uint32_t map = m->entry[k];
        unsigned bytes = (uint8_t)map / 8u;
        int i = n->tpdo[p].entry[k];
        if (i >= 0 && pos + bytes <= 8)
            put_le(data + pos, hs__cia402_od_get(&n->od, &n->entries[i]), bytes);
        pos += bytes;
    }
}

static void tpdo_send(struct hs_cia402_node *n, unsigned p, const uint8_t *data, int64_t now_ns)
{
    struct hs_cia402_tpdo_rt *t = &n->tpdo[p];
    hs__cia402_tx(n, n->od.tpdo[p].cob_id & 0x7FF, data, t->len);
    memcpy(t->last, data, 8);
    t->sent_once = true;
    t->last_tx_ns = now_ns;
    int64_t ev = (int64_t)n->od.tpdo[p].event_ms * 1000000;
    t->event_due_ns = ev ? now_ns + ev : 0;
}

void hs__cia402_sync(struct hs_cia402_node *n, int64_t now_ns)
{
    n->syncs++;
    if (n->nmt != HS_CIA402_NMT_OPERATIONAL)
        return;
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        struct hs_cia402_rpdo_rt *r = &n->rpdo[p];
        if (r->pending && pdo_valid(&n->od.rpdo[p], &n->od.rpdo_map[p]))
            rpdo_apply(n, p, r->data);
        r->pending = false;
    }
    for (unsigned p = 0; p < HS_CIA402_PDO_N && !n->quiet; p++) {
        const struct hs_cia402_pdo_comm *c = &n->od.tpdo[p];
        if (!pdo_valid(c, &n->od.tpdo_map[p]) || c->type > 240)
            continue;
        struct hs_cia402_tpdo_rt *t = &n->tpdo[p];
        uint8_t data[8];
        tpdo_sample(n, p, data);
        if (c->type == 0) {
            if (!t->sent_once || memcmp(data, t->last, t->len))
                tpdo_send(n, p, data, now_ns);
            continue;
        }
        if (++t->sync_count >= c->type) {
            t->sync_count = 0;
            tpdo_send(n, p, data, now_ns);
        }
    }
}

void hs__cia402_tpdo_poll(struct hs_cia402_node *n, int64_t now_ns)
{
    if (n->nmt != HS_CIA402_NMT_OPERATIONAL)
        return;
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        const struct hs_cia402_pdo_comm *c = &n->od.tpdo[p];
        if (!pdo_valid(c, &n->od.tpdo_map[p]) || c->type < 254)
            continue;
        struct hs_cia402_tpdo_rt *t = &n->tpdo[p];
        int64_t inhibit = (int64_t)c->inhibit * 100000;
        if (t->sent_once && now_ns - t->last_tx_ns < inhibit)
            continue;
        uint8_t data[8];
        tpdo_sample(n, p, data);
        bool changed = !t->sent_once || memcmp(data, t->last, t->len);
        bool timer = t->event_due_ns && now_ns >= t->event_due_ns;
        if (changed || timer)
            tpdo_send(n, p, data, now_ns);
    }
}

bool hs__cia402_tpdo_rtr(struct hs_cia402_node *n, const struct hs_can_frame *f, int64_t now_ns)
{
    if (n->nmt != HS_CIA402_NMT_OPERATIONAL)
        return false;
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        const struct hs_cia402_pdo_comm *c = &n->od.tpdo[p];
        if (!pdo_valid(c, &n->od.tpdo_map[p]) || (c->cob_id & 0x40000000u) ||
            (c->cob_id & 0x7FF) != f->id)
            continue;
        if (!n->quiet) {
            uint8_t data[8];
            tpdo_sample(n, p, data);
            tpdo_send(n, p, data, now_ns);
        }
        return true;
    }
    return false;
}
