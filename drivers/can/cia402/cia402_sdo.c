/* SDO server (CiA 301 7.2.4.3): expedited and segmented download and upload.
 *
 * Command byte (byte 0) of client requests, upper three bits ccs:
 *   1 initiate download: bit 1 e (expedited), bit 0 s (size indicated), bits 3-2 n (bytes of
 *     bytes 4-7 that hold no data, when e and s); e = 0, s = 1: bytes 4-7 hold the size;
 *   0 download segment: bit 4 toggle, bits 3-1 n (bytes of 1-7 without data), bit 0 c (last);
 *   2 initiate upload; 3 upload segment: bit 4 toggle; 4 abort transfer.
 * Server responses: 0x60 initiate download, 0x20 | t << 4 download segment, 0x40 | e/s/n
 * initiate upload (0x43 | (4 - len) << 2 expedited, 0x41 + size segmented), t << 4 | n << 1 | c
 * upload segment, 0x80 + u32 abort code. Bytes 1-2 index (little-endian), byte 3 sub-index.
 * Block transfers (ccs 5, 6) are not supported: abort 0x05040001. Every SDO frame is 8 bytes
 * (CiA 301 7.2.4.3.3 onwards); shorter ones are counted as bad and not answered. */
#include <string.h>

#include "cia402/cia402_internal.h"

static void respond(struct hs_cia402_node *n, const uint8_t d[8])
{
    if (n->quiet) /* the reply thread answered this request already */
        return;
    hs__cia402_tx(n, 0x580u + n->cfg.node_id, d, 8);
}

static void abort_transfer(struct hs_cia402_node *n, uint16_t index, uint8_t sub, uint32_t code)
{
    uint8_t d[8] = {0x80, (uint8_t)index, (uint8_t)(index >> 8), sub};
    put_le(d + 4, code, 4);
    respond(n, d);
    n->sdo.state = 0;
}

void hs__cia402_sdo_reset(struct hs_cia402_node *n)
{
    memset(&n->sdo, 0, sizeof n->sdo);
}

/* The entry for a request, or an abort code. */
static int lookup(struct hs_cia402_node *n, uint16_t index, uint8_t sub, uint32_t *ret_abort)
{
    int i = hs__cia402_od_find_i(n, index, sub);
    if (i < 0)
        *ret_abort = hs__cia402_od_index_exists(n, index) ? HS_CIA402_ABORT_NO_SUB
                                                          : HS_CIA402_ABORT_NO_OBJECT;
    return i;
}

static uint32_t do_write(struct hs_cia402_node *n, int i, const uint8_t *data, uint32_t size)
{
    uint32_t r = hs__cia402_od_write(n, &n->od, i, data, size);
    if (r)
        return r;
    const struct hs_cia402_entry *e = &n->entries[i];
    /* PDO communication and mapping changes take effect at once */
    if (e->index >= 0x1400 && e->index < 0x1C00)
        hs__cia402_pdo_reset(n);
    return 0;
}

static void initiate_download(struct hs_cia402_node *n, const uint8_t *d, uint16_t index,
                              uint8_t sub)
{
    uint32_t ab = 0;
    int i = lookup(n, index, sub, &ab);
    if (i < 0) {
        abort_transfer(n, index, sub, ab);
        return;
    }
    const struct hs_cia402_entry *e = &n->entries[i];
    if (!(e->access & HS_CIA402_WO) || e->access == HS_CIA402_CONST) {
        abort_transfer(n, index, sub, HS_CIA402_ABORT_READ_ONLY);
        return;
    }
    bool expedited = d[0] & 0x02, sized = d[0] & 0x01;
    if (expedited) {
        /* size not indicated: the object's own size (at most the 4 data bytes) */
        uint32_t size = sized ? 4u - ((d[0] >> 2) & 3u) : (e->size < 4 ? e->size : 4u);
        uint32_t r = do_write(n, i, d + 4, size);
        if (r) {
            abort_transfer(n, index, sub, r);
            return;
        }
        uint8_t rsp[8] = {0x60, (uint8_t)index, (uint8_t)(index >> 8), sub};
        respond(n, rsp);
        return;
    }
    uint32_t size = sized ? get_le(d + 4, 4) : 0;
    if (!sized) {
        abort_transfer(n, index, sub, HS_CIA402_ABORT_COMMAND);
        return;
    }
    if (size > e->size || size > HS_CIA402_SDO_BUF) {
        abort_transfer(n, index, sub, HS_CIA402_ABORT_LENGTH_HIGH);
        return;
    }
    n->sdo.state = 1;
    n->sdo.toggle = 0;
    n->sdo.index = index, n->sdo.sub = sub, n->sdo.entry = (uint16_t)i;
    n->sdo.size = size, n->sdo.pos = 0;
    uint8_t rsp[8] = {0x60, (uint8_t)index, (uint8_t)(index >> 8), sub};
    respond(n, rsp);
}

static void download_segment(struct hs_cia402_node *n, const uint8_t *d)
{
    struct hs_cia402_sdo *s = &n->sdo;
    if (s->state != 1) {
        abort_transfer(n, 0, 0, HS_CIA402_ABORT_COMMAND);
        return;
    }
    uint8_t t = (d[0] >> 4) & 1;
    if (t != s->toggle) {
        abort_transfer(n, s->index, s->sub, HS_CIA402_ABORT_TOGGLE);
        return;
    }
    unsigned len = 7u - ((d[0] >> 1) & 7u);
    bool last = d[0] & 1;
    if (s->pos + len > s->size) {
        abort_transfer(n, s->index, s->sub, HS_CIA402_ABORT_LENGTH_HIGH);
        return;
    }
    memcpy(s->buf + s->pos, d + 1, len);
    s->pos += len;
    uint8_t rsp[8] = {(uint8_t)(0x20 | t << 4)};
    s->toggle ^= 1;
    if (!last) {
        respond(n, rsp);
        return;
    }
    if (s->pos != s->size) {
        abort_transfer(n, s->index, s->sub, HS_CIA402_ABORT_LENGTH_LOW);
        return;
    }
    uint32_t r = do_write(n, s->entry, s->buf, s->size);
    if (r) {
        abort_transfer(n, s->index, s->sub, r);
        return;
    }
    s->state = 0;
    respond(n, rsp);
}

static void initiate_upload(struct hs_cia402_node *n, uint16_t index, uint8_t sub)
{
    uint32_t ab = 0;
    int i = lookup(n, index, sub, &ab);
    if (i < 0) {
        abort_transfer(n, index, sub, ab);
        return;
    }
    const struct hs_cia402_entry *e = &n->entries[i];
    if (!(e->access & HS_CIA402_RO)) {
        abort_transfer(n, index, sub, HS_CIA402_ABORT_WRITE_ONLY);
        return;
    }
    uint8_t rsp[8] = {0, (uint8_t)index, (uint8_t)(index >> 8), sub};
    uint32_t size;
    if (e->type == 9) {
        const char *str = (const char *)&n->od + e->offset;
        size = (uint32_t)strnlen(str, e->size);
        memcpy(n->sdo.buf, str, size);
    } else {
        size = e->size;
        put_le(n->sdo.buf, hs__cia402_od_get(&n->od, e), size);
    }
    if (size <= 4 && size > 0) {
        rsp[0] = (uint8_t)(0x43 | (4 - size) << 2);
        memcpy(rsp + 4, n->sdo.buf, size);
        respond(n, rsp);
        return;
    }
    rsp[0] = 0x41;
    put_le(rsp + 4, size, 4);
    n->sdo.state = 2;
    n->sdo.toggle = 0;
    n->sdo.index = index, n->sdo.sub = sub, n->sdo.entry = (uint16_t)i;
    n->sdo.size = size, n->sdo.pos = 0;
    respond(n, rsp);
}

static void upload_segment(struct hs_cia402_node *n, const uint8_t *d)
{
    struct hs_cia402_sdo *s = &n->sdo;
    if (s->state != 2) {
        abort_transfer(n, 0, 0, HS_CIA402_ABORT_COMMAND);
        return;
    }
    uint8_t t = (d[0] >> 4) & 1;
    if (t != s->toggle) {
        abort_transfer(n, s->index, s->sub, HS_CIA402_ABORT_TOGGLE);
        return;
    }
    unsigned len = s->size - s->pos;
    if (len > 7)
        len = 7;
    bool last = s->pos + len == s->size;
    uint8_t rsp[8] = {(uint8_t)(t << 4 | (7 - len) << 1 | (last ? 1 : 0))};
    memcpy(rsp + 1, s->buf + s->pos, len);
    s->pos += len;
    s->toggle ^= 1;
    if (last)
        s->state = 0;
    respond(n, rsp);
}

void hs__cia402_sdo_frame(struct hs_cia402_node *n, const struct hs_can_frame *f)
{
    const uint8_t *d = f->data;
    uint16_t index = (uint16_t)(d[1] | d[2] << 8);
    uint8_t sub = d[3];
    switch (d[0] >> 5) {
    case 1:
        n->sdo.state = 0; /* a new initiate ends any transfer in progress */
        initiate_download(n, d, index, sub);
        break;
    case 0:
        download_segment(n, d);
        break;
    case 2:
        n->sdo.state = 0;
        initiate_upload(n, index, sub);
        break;
    case 3:
        upload_segment(n, d);
        break;
    case 4: /* the client aborts: no answer */
        n->sdo.state = 0;
        break;
    default:
        abort_transfer(n, index, sub, HS_CIA402_ABORT_COMMAND);
        break;
    }
}
