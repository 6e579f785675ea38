/* CiA 402 drive node: NMT, heartbeat, SDO (expedited, segmented, aborts), PDO mapping by SDO,
 * SYNC timing, the power state machine's transitions and statusword patterns, modes, faults
 * with EMCY, the heartbeat consumer. Every request frame is written out byte by byte from
 * CiA 301 / CiA 402 in this file (command specifiers, COB-IDs, little-endian fields) and
 * replies are decoded here too, so the test does not trust the codec it checks. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cia402/cia402.h"

#define NODE 3
#define MS 1000000LL
#define TWO_PI 6.283185307179586
#define CPR 131072.0 /* the default counts per revolution */

struct rig {
    struct hs_cia402_node node;
    struct hs_can_joint_state js;
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[64];
    int n_out;
    int64_t t;
};

static struct rig *rig_new(void)
{
    static struct rig r;
    memset(&r, 0, sizeof r);
    struct hs_cia402_config cfg;
    hs_cia402_config_init(&cfg, NODE);
    struct hs_diag d;
    assert_int_equal(hs_cia402_node_init(&r.node, &cfg, &d), 0);
    return &r;
}

static int send(struct rig *r, uint32_t id, unsigned len, const uint8_t *data)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = id, f.len = (uint8_t)len;
    if (len)
        memcpy(f.data, data, len);
    return hs_can_node_on_frame(&r->node.base, &f, r->t);
}

static void tick(struct rig *r)
{
    r->t += MS;
    r->n_out = hs_can_node_poll(&r->node.base, r->t, &r->js, &r->cmd, r->out, 64);
    assert_true(r->n_out >= 0);
}

static const struct hs_can_frame *find(const struct rig *r, uint32_t id)
{
    for (int i = 0; i < r->n_out; i++)
        if (r->out[i].id == id)
            return &r->out[i];
    return NULL;
}

static int count(const struct rig *r, uint32_t id)
{
    int k = 0;
    for (int i = 0; i < r->n_out; i++)
        k += r->out[i].id == id;
    return k;
}

static uint32_t le(const uint8_t *p, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static void nmt(struct rig *r, uint8_t cs, uint8_t node)
{
    const uint8_t d[2] = {cs, node};
    /* addressed to all: the node lets the other nodes on the bus see it too */
    assert_int_equal(send(r, 0x000, 2, d), node == 0 ? HS_CAN_NODE_BROADCAST : 0);
}

static void sync_(struct rig *r)
{
    assert_int_equal(send(r, 0x080, 0, NULL), HS_CAN_NODE_BROADCAST);
}

/* Expedited download (CiA 301 7.2.4.3.3): ccs = 1, e = 1, s = 1, n = 4 - len. Returns the
 * abort code, 0 for the 0x60 confirmation. */
static uint32_t sdo_write(struct rig *r, uint16_t index, uint8_t sub, uint32_t v, unsigned len)
{
    uint8_t d[8] = {(uint8_t)(0x23 | (4 - len) << 2), (uint8_t)index, (uint8_t)(index >> 8), sub};
    for (unsigned i = 0; i < len; i++)
        d[4 + i] = (uint8_t)(v >> (8 * i));
    assert_int_equal(send(r, 0x600 + NODE, 8, d), 0);
    tick(r);
    const struct hs_can_frame *f = find(r, 0x580 + NODE);
    assert_non_null(f);
    assert_int_equal(f->len, 8);
    assert_int_equal(le(f->data + 1, 2), index);
    assert_int_equal(f->data[3], sub);
    if (f->data[0] == 0x80)
        return le(f->data + 4, 4);
    assert_int_equal(f->data[0], 0x60);
    return 0;
}

/* Expedited upload: ccs = 2; the answer 0x43 | (4 - len) << 2 carries the value. *ret_len is
 * the size the server indicated. Returns the abort code or 0. */
static uint32_t sdo_read(struct rig *r, uint16_t index, uint8_t sub, uint32_t *ret,
                         unsigned *ret_len)
{
    uint8_t d[8] = {0x40, (uint8_t)index, (uint8_t)(index >> 8), sub};
    assert_int_equal(send(r, 0x600 + NODE, 8, d), 0);
    tick(r);
    const struct hs_can_frame *f = find(r, 0x580 + NODE);
    assert_non_null(f);
    assert_int_equal(le(f->data + 1, 2), index);
    if (f->data[0] == 0x80)
        return le(f->data + 4, 4);
    assert_int_equal(f->data[0] & 0xF3, 0x43);
    unsigned n = 4 - ((f->data[0] >> 2) & 3);
    *ret = le(f->data + 4, n);
    if (ret_len)
        *ret_len = n;
    return 0;
}

static uint32_t rd(struct rig *r, uint16_t index, uint8_t sub)
{
    uint32_t v = 0;
    assert_int_equal(sdo_read(r, index, sub, &v, NULL), 0);
    return v;
}

static uint16_t statusword(struct rig *r)
{
    return (uint16_t)rd(r, 0x6041, 0);
}

static void cw(struct rig *r, uint16_t v)
{
    assert_int_equal(sdo_write(r, 0x6040, 0, v, 2), 0);
    tick(r); /* the drive cycle that follows the write */
}

/* Booted, pre-operational, the boot-up message consumed. */
static struct rig *booted(void)
{
    struct rig *r = rig_new();
    tick(r);
    return r;
}

/* CiA 402 statusword patterns (mask, value) per state. */
static const struct {
    uint16_t mask, value;
} PAT[] = {
    [HS_CIA402_NOT_READY_TO_SWITCH_ON] = {0x4F, 0x00},
    [HS_CIA402_SWITCH_ON_DISABLED] = {0x4F, 0x40},
    [HS_CIA402_READY_TO_SWITCH_ON] = {0x6F, 0x21},
    [HS_CIA402_SWITCHED_ON] = {0x6F, 0x23},
    [HS_CIA402_OPERATION_ENABLED] = {0x6F, 0x27},
    [HS_CIA402_QUICK_STOP_ACTIVE] = {0x6F, 0x07},
    [HS_CIA402_FAULT_REACTION_ACTIVE] = {0x4F, 0x0F},
    [HS_CIA402_FAULT] = {0x4F, 0x08},
};

static void expect_state(struct rig *r, enum hs_cia402_state s)
{
    uint16_t sw = statusword(r);
    if ((sw & PAT[s].mask) != PAT[s].value)
        fail_msg("statusword 0x%04X is not state %d", sw, s);
    assert_int_equal(hs_cia402_node_state(&r->node), s);
}

static void enable(struct rig *r)
{
    cw(r, 0x06);
    cw(r, 0x07);
    cw(r, 0x0F);
    expect_state(r, HS_CIA402_OPERATION_ENABLED);
}

/* ---- NMT and heartbeat ---- */

static void test_boot_and_nmt(void **state)
{
    (void)state;
    struct rig *r = rig_new();
    /* initialising (before the first poll): SDO requests are not served */
    uint8_t up[8] = {0x40, 0x00, 0x10, 0x00};
    assert_int_equal(send(r, 0x600 + NODE, 8, up), 0);
    tick(r);
    assert_int_equal(r->n_out, 1);
    assert_int_equal(r->out[0].id, 0x700 + NODE);
    assert_int_equal(r->node.nmt, 0x7F);
    /* NMT start before boot-up would be ignored; after it, operational */
    nmt(r, 0x01, NODE);
    assert_int_equal(r->node.nmt, 0x05);
}

static void test_bootup_heartbeat(void **state)
{
    (void)state;
    struct rig *r = rig_new();
    tick(r);
    const struct hs_can_frame *b = find(r, 0x700 + NODE);
    assert_non_null(b);
    assert_int_equal(b->len, 1);
    assert_int_equal(b->data[0], 0x00);           /* boot-up */
    assert_int_equal(r->out[0].id, 0x700 + NODE); /* the first frame the node sends */
    assert_int_equal(sdo_write(r, 0x1017, 0, 10, 2), 0);
    int hb = 0, last = -1;
    for (int i = 0; i < 50; i++) {
        tick(r);
        const struct hs_can_frame *f = find(r, 0x700 + NODE);
        if (f) {
            assert_int_equal(f->data[0], 0x7F); /* pre-operational */
            if (last >= 0)
                assert_int_equal(i - last, 10);
            last = i, hb++;
        }
    }
    assert_int_equal(hb, 5);
    nmt(r, 0x01, 0); /* start, all nodes */
    for (int i = 0; i < 10; i++)
        tick(r);
    assert_int_equal(r->node.nmt, 0x05);
    nmt(r, 0x02, NODE); /* stop, this node */
    for (int i = 0; i < 10; i++)
        tick(r);
    /* stopped: heartbeat says 4, SDO is not served */
    bool saw = false;
    for (int i = 0; i < 12; i++) {
        tick(r);
        const struct hs_can_frame *f = find(r, 0x700 + NODE);
        if (f)
            assert_int_equal(f->data[0], 0x04), saw = true;
    }
    assert_true(saw);
    uint8_t up[8] = {0x40, 0x00, 0x10, 0x00};
    send(r, 0x600 + NODE, 8, up);
    tick(r);
    assert_null(find(r, 0x580 + NODE));
    const uint8_t other[2] = {0x80, NODE + 1}; /* another node's command */
    assert_int_equal(send(r, 0x000, 2, other), -ENOENT);
    tick(r);
    assert_int_equal(r->node.nmt, 0x04);
    nmt(r, 0x80, NODE);
    tick(r);
    assert_int_equal(r->node.nmt, 0x7F);
    /* reset communication: boot-up again, 0x1017 back to its default (0), an application
     * object (0x6081) keeps its value; reset node restores it too */
    assert_int_equal(sdo_write(r, 0x6081, 0, 12345, 4), 0);
    nmt(r, 0x82, NODE);
    tick(r);
    b = find(r, 0x700 + NODE);
    assert_non_null(b);
    assert_int_equal(b->data[0], 0x00);
    assert_int_equal(rd(r, 0x1017, 0), 0);
    assert_int_equal(rd(r, 0x6081, 0), 12345);
    nmt(r, 0x81, 0);
    tick(r);
    assert_int_equal(find(r, 0x700 + NODE)->data[0], 0x00);
    assert_int_equal(rd(r, 0x6081, 0), (uint32_t)CPR);
    /* an NMT frame of the wrong length is counted, not obeyed */
    const uint8_t bad[1] = {0x01};
    assert_int_equal(send(r, 0x000, 1, bad), -EBADMSG);
    assert_int_equal(r->node.nmt, 0x7F);
}

/* ---- SDO ---- */

static void test_sdo_expedited_and_aborts(void **state)
{
    (void)state;
    struct rig *r = booted();
    uint32_t v;
    unsigned n;
    assert_int_equal(sdo_read(r, 0x1000, 0, &v, &n), 0);
    assert_int_equal(v, 0x00020192); /* CiA 402, servo */
    assert_int_equal(n, 4);
    assert_int_equal(sdo_read(r, 0x6041, 0, &v, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(sdo_read(r, 0x6060, 0, &v, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v, 8);
    assert_int_equal(sdo_read(r, 0x6502, 0, &v, NULL), 0);
    assert_int_equal(v, 0x3A5); /* PP, PV, HM, CSP, CSV, CST */
    assert_int_equal(sdo_write(r, 0x6081, 0, 0xABCDEF, 4), 0);
    assert_int_equal(rd(r, 0x6081, 0), 0xABCDEF);
    /* abort codes, CiA 301 table 22 */
    assert_int_equal(sdo_read(r, 0x2000, 0, &v, NULL), 0x06020000);
    assert_int_equal(sdo_read(r, 0x6040, 1, &v, NULL), 0x06090011);
    assert_int_equal(sdo_write(r, 0x6041, 0, 0, 2), 0x06010002);
    assert_int_equal(sdo_write(r, 0x1000, 0, 0, 4), 0x06010002);
    assert_int_equal(sdo_write(r, 0x6081, 0, 1, 2), 0x06070013);
    assert_int_equal(sdo_write(r, 0x6040, 0, 6, 4), 0x06070012);
    assert_int_equal(sdo_write(r, 0x6060, 0, 2, 1), 0x06090030); /* velocity mode: unsupported */
    assert_int_equal(sdo_write(r, 0x6098, 0, 1, 1), 0x06090032); /* homing method below 35 */
    assert_int_equal(sdo_write(r, 0x6007, 0, 9, 2), 0x06090031);
    assert_int_equal(sdo_write(r, 0x1003, 0, 1, 1), 0x06090030);
    /* size not indicated (e = 1, s = 0: 0x22): the object's size */
    uint8_t d[8] = {0x22, 0x40, 0x60, 0x00, 0x06, 0x00, 0xEE, 0xEE};
    send(r, 0x600 + NODE, 8, d);
    tick(r);
    assert_int_equal(find(r, 0x580 + NODE)->data[0], 0x60);
    assert_int_equal(rd(r, 0x6040, 0), 6);
    /* block upload (ccs 5) is not supported */
    uint8_t blk[8] = {0xA0, 0x00, 0x10, 0x00};
    send(r, 0x600 + NODE, 8, blk);
    tick(r);
    const struct hs_can_frame *f = find(r, 0x580 + NODE);
    assert_int_equal(f->data[0], 0x80);
    assert_int_equal(le(f->data + 4, 4), 0x05040001);
    /* an SDO request shorter than 8 bytes is counted as bad and not answered */
    uint64_t bad0 = r->node.base.stats.frames_bad;
    assert_int_equal(send(r, 0x600 + NODE, 4, blk), -EBADMSG);
    tick(r);
    assert_null(find(r, 0x580 + NODE));
    assert_int_equal(r->node.base.stats.frames_bad, bad0 + 1);
}

static void test_sdo_segmented(void **state)
{
    (void)state;
    struct rig *r = booted();
    /* upload of 0x1008 device name: initiate answer 0x41 with the size, then segments */
    uint8_t up[8] = {0x40, 0x08, 0x10, 0x00};
    send(r, 0x600 + NODE, 8, up);
    tick(r);
    const struct hs_can_frame *f = find(r, 0x580 + NODE);
    assert_int_equal(f->data[0], 0x41);
    uint32_t size = le(f->data + 4, 4);
    const char *name = "hilsim CiA 402 drive";
    assert_int_equal(size, strlen(name));
    char got[64] = {0};
    unsigned pos = 0;
    for (uint8_t t = 0;; t ^= 1) {
        uint8_t seg[8] = {(uint8_t)(0x60 | t << 4)};
        send(r, 0x600 + NODE, 8, seg);
        tick(r);
        f = find(r, 0x580 + NODE);
        assert_non_null(f);
        assert_int_equal((f->data[0] >> 4) & 1, t); /* toggle echoed */
        assert_int_equal(f->data[0] >> 5, 0);       /* scs 0 */
        unsigned len = 7 - ((f->data[0] >> 1) & 7);
        memcpy(got + pos, f->data + 1, len);
        pos += len;
        if (f->data[0] & 1)
            break;
        assert_true(pos < 64);
    }
    assert_int_equal(pos, size);
    assert_string_equal(got, name);
    /* toggle error: abort 0x05030000 */
    send(r, 0x600 + NODE, 8, up);
    tick(r);
    uint8_t seg1[8] = {0x70};
    send(r, 0x600 + NODE, 8, seg1);
    tick(r);
    f = find(r, 0x580 + NODE);
    assert_int_equal(f->data[0], 0x80);
    assert_int_equal(le(f->data + 4, 4), 0x05030000);
    /* segmented download of 4 bytes into 0x6083: initiate 0x21 with size, one last segment
     * (c = 1, n = 3 bytes without data) */
    uint8_t init[8] = {0x21, 0x83, 0x60, 0x00, 4, 0, 0, 0};
    send(r, 0x600 + NODE, 8, init);
    tick(r);
    assert_int_equal(find(r, 0x580 + NODE)->data[0], 0x60);
    uint8_t seg[8] = {0x00 | 3 << 1 | 1, 0x78, 0x56, 0x34, 0x12};
    send(r, 0x600 + NODE, 8, seg);
    tick(r);
    assert_int_equal(find(r, 0x580 + NODE)->data[0], 0x20);
    assert_int_equal(rd(r, 0x6083, 0), 0x12345678);
    /* a segmented download of 6 bytes into a 4-byte object: abort at initiate */
    uint8_t init6[8] = {0x21, 0x83, 0x60, 0x00, 6, 0, 0, 0};
    send(r, 0x600 + NODE, 8, init6);
    tick(r);
    f = find(r, 0x580 + NODE);
    assert_int_equal(f->data[0], 0x80);
    assert_int_equal(le(f->data + 4, 4), 0x06070012);
}

/* ---- PDO mapping by SDO, SYNC ---- */

static void map_rpdo1_csp(struct rig *r)
{
    /* the CiA 301 procedure: PDO not valid, count 0, entries, count, type, valid */
    assert_int_equal(sdo_write(r, 0x1400, 1, 0x80000200 + NODE, 4), 0);
    assert_int_equal(sdo_write(r, 0x1600, 0, 0, 1), 0);
    assert_int_equal(sdo_write(r, 0x1600, 1, 0x60400010, 4), 0);
    assert_int_equal(sdo_write(r, 0x1600, 2, 0x607A0020, 4), 0);
    assert_int_equal(sdo_write(r, 0x1600, 0, 2, 1), 0);
    assert_int_equal(sdo_write(r, 0x1400, 2, 1, 1), 0); /* synchronous */
    assert_int_equal(sdo_write(r, 0x1400, 1, 0x200 + NODE, 4), 0);
}

static void map_tpdo1_sync(struct rig *r, uint8_t every)
{
    assert_int_equal(sdo_write(r, 0x1800, 1, 0xC0000180 + NODE, 4), 0);
    assert_int_equal(sdo_write(r, 0x1A00, 0, 0, 1), 0);
    assert_int_equal(sdo_write(r, 0x1A00, 1, 0x60410010, 4), 0);
    assert_int_equal(sdo_write(r, 0x1A00, 2, 0x60640020, 4), 0);
    assert_int_equal(sdo_write(r, 0x1A00, 0, 2, 1), 0);
    assert_int_equal(sdo_write(r, 0x1800, 2, every, 1), 0);
    assert_int_equal(sdo_write(r, 0x1800, 1, 0x40000180 + NODE, 4), 0);
}

static void test_pdo_mapping_rules(void **state)
{
    (void)state;
    struct rig *r = booted();
    /* RPDO1 is valid by default: its mapping cannot change */
    assert_int_equal(sdo_write(r, 0x1600, 0, 0, 1), 0x06010000);
    assert_int_equal(sdo_write(r, 0x1600, 1, 0x607A0020, 4), 0x06010000);
    /* nor its COB-ID to another id while valid */
    assert_int_equal(sdo_write(r, 0x1400, 1, 0x210 + NODE, 4), 0x06090030);
    assert_int_equal(sdo_write(r, 0x1400, 1, 0x80000200 + NODE, 4), 0);
    /* count must be 0 before entries are written */
    assert_int_equal(sdo_write(r, 0x1600, 1, 0x607A0020, 4), 0x06010000);
    assert_int_equal(sdo_write(r, 0x1600, 0, 0, 1), 0);
    assert_int_equal(sdo_write(r, 0x1600, 1, 0x60410010, 4),
                     0x06040041); /* statusword: TPDO only */
    assert_int_equal(sdo_write(r, 0x1600, 1, 0x60400020, 4), 0x06040041); /* wrong length */
    assert_int_equal(sdo_write(r, 0x1600, 1, 0x21000020, 4), 0x06040041); /* no such object */
    assert_int_equal(sdo_write(r, 0x1600, 1, 0x607A0020, 4), 0);
    assert_int_equal(sdo_write(r, 0x1600, 2, 0x60FF0020, 4), 0);
    assert_int_equal(sdo_write(r, 0x1600, 3, 0x60400010, 4), 0);
    assert_int_equal(sdo_write(r, 0x1600, 0, 3, 1), 0x06040042); /* 80 bits */
    assert_int_equal(sdo_write(r, 0x1600, 0, 9, 1), 0x06090031);
    assert_int_equal(sdo_write(r, 0x1600, 0, 2, 1), 0);
    assert_int_equal(sdo_write(r, 0x1400, 2, 241, 1), 0x06090030);
    assert_int_equal(sdo_write(r, 0x1400, 1, 0x000 + NODE, 4), 0x06090030);      /* restricted id */
    assert_int_equal(sdo_write(r, 0x1400, 1, 0x20000200 + NODE, 4), 0x06090030); /* 29-bit */
    assert_int_equal(sdo_write(r, 0x1400, 1, 0x200 + NODE, 4), 0);
    assert_int_equal(rd(r, 0x1600, 0), 2);
    assert_int_equal(rd(r, 0x1600, 2), 0x60FF0020);
    /* TPDO inhibit time only while the PDO is not valid */
    assert_int_equal(sdo_write(r, 0x1800, 3, 10, 2), 0x06090030);
    /* RPDO has no sub 3 here and no sub 4 anywhere */
    assert_int_equal(sdo_write(r, 0x1800, 4, 0, 1), 0x06090011);
}

static void test_sync_timing(void **state)
{
    (void)state;
    struct rig *r = booted();
    map_rpdo1_csp(r);
    map_tpdo1_sync(r, 2);
    nmt(r, 0x01, NODE);
    tick(r);
    /* RPDO1: controlword 0x0006, target 0x00012345: waits for SYNC */
    const uint8_t rp[6] = {0x06, 0x00, 0x45, 0x23, 0x01, 0x00};
    assert_int_equal(send(r, 0x200 + NODE, 6, rp), 0);
    tick(r);
    assert_int_equal(rd(r, 0x607A, 0), 0);
    assert_int_equal(rd(r, 0x6040, 0), 0);
    r->js.q_rad = TWO_PI / 4; /* position actual = CPR / 4 from the next poll on */
    tick(r);
    sync_(r); /* SYNC 1: RPDO applied; TPDO type 2: not yet */
    tick(r);
    assert_null(find(r, 0x180 + NODE));
    assert_int_equal(rd(r, 0x607A, 0), 0x12345);
    assert_int_equal(rd(r, 0x6040, 0), 6);
    sync_(r); /* SYNC 2: TPDO sampled: statusword (ready to switch on), position */
    tick(r);
    const struct hs_can_frame *f = find(r, 0x180 + NODE);
    assert_non_null(f);
    assert_int_equal(f->len, 6);
    assert_int_equal(le(f->data, 2) & 0x6F, 0x21);
    assert_int_equal((int32_t)le(f->data + 2, 4), (int32_t)(CPR / 4));
    int n = 0;
    for (int i = 0; i < 10; i++) {
        sync_(r);
        tick(r);
        n += count(r, 0x180 + NODE);
    }
    assert_int_equal(n, 5); /* every 2nd SYNC */
    /* RPDO shorter than its mapping: not processed, EMCY 0x8210 once */
    const uint8_t shortp[2] = {0x0F, 0x00};
    assert_int_equal(send(r, 0x200 + NODE, 2, shortp), -EBADMSG);
    sync_(r);
    tick(r);
    f = find(r, 0x080 + NODE);
    assert_non_null(f);
    assert_int_equal(le(f->data, 2), 0x8210);
    assert_true(f->data[2] & 0x11); /* generic + communication */
    assert_int_equal(rd(r, 0x6040, 0), 6);
    /* PDOs are not processed in pre-operational */
    nmt(r, 0x80, NODE);
    const uint8_t rp2[6] = {0x07, 0x00, 0, 0, 0, 0};
    assert_int_equal(send(r, 0x200 + NODE, 6, rp2), -EOPNOTSUPP);
    sync_(r);
    tick(r);
    assert_null(find(r, 0x180 + NODE));
}

static void test_event_tpdo(void **state)
{
    (void)state;
    struct rig *r = booted();
    /* TPDO2: position actual, event-driven with 5 ms inhibit and a 20 ms event timer */
    assert_int_equal(sdo_write(r, 0x1A01, 0, 0, 1), 0);
    assert_int_equal(sdo_write(r, 0x1A01, 1, 0x60640020, 4), 0);
    assert_int_equal(sdo_write(r, 0x1A01, 0, 1, 1), 0);
    assert_int_equal(sdo_write(r, 0x1801, 2, 255, 1), 0);
    assert_int_equal(sdo_write(r, 0x1801, 3, 50, 2), 0);
    assert_int_equal(sdo_write(r, 0x1801, 5, 20, 2), 0);
    assert_int_equal(sdo_write(r, 0x1801, 1, 0x40000280 + NODE, 4), 0);
    nmt(r, 0x01, NODE);
    int64_t sent[64];
    int ns = 0;
    for (int i = 0; i < 100; i++) {
        if (i < 30)
            r->js.q_rad += 0.001; /* changes every tick for 30 ms */
        tick(r);
        if (find(r, 0x280 + NODE)) {
            assert_true(ns < 64);
            sent[ns++] = r->t;
        }
    }
    /* while changing: every 5 ms (inhibit); then the event timer, every 20 ms */
    assert_true(ns >= 8);
    for (int i = 1; i < ns; i++) {
        int64_t gap = sent[i] - sent[i - 1];
        if (sent[i] <= r->t - 100 * MS + 31 * MS)
            assert_int_equal(gap, 5 * MS);
    }
    assert_int_equal(sent[ns - 1] - sent[ns - 2], 20 * MS);
}

/* ---- CiA 402 state machine ---- */

static void test_power_state_machine(void **state)
{
    (void)state;
    struct rig *r = booted();
    tick(r);
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);    /* 1: automatic */
    assert_int_equal(statusword(r) & 0x0200, 0x0200); /* remote */
    cw(r, 0x07); /* switch on from switch on disabled: no transition */
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
    cw(r, 0x06); /* 2 */
    expect_state(r, HS_CIA402_READY_TO_SWITCH_ON);
    assert_true(statusword(r) & 0x10); /* voltage enabled */
    cw(r, 0x00);                       /* 7 disable voltage */
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
    cw(r, 0x06);
    cw(r, 0x02); /* 7 quick stop */
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
    cw(r, 0x06);
    cw(r, 0x07); /* 3 */
    expect_state(r, HS_CIA402_SWITCHED_ON);
    assert_false(r->cmd.enabled);
    cw(r, 0x06); /* 6 */
    expect_state(r, HS_CIA402_READY_TO_SWITCH_ON);
    cw(r, 0x07);
    cw(r, 0x02); /* 10 quick stop */
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
    cw(r, 0x06);
    cw(r, 0x07);
    cw(r, 0x00); /* 10 disable voltage */
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
    cw(r, 0x06);
    cw(r, 0x0F); /* 3 + 4 */
    expect_state(r, HS_CIA402_OPERATION_ENABLED);
    assert_true(r->cmd.enabled);
    cw(r, 0x07); /* 5 */
    expect_state(r, HS_CIA402_SWITCHED_ON);
    cw(r, 0x0F); /* 4 */
    expect_state(r, HS_CIA402_OPERATION_ENABLED);
    cw(r, 0x06); /* 8 */
    expect_state(r, HS_CIA402_READY_TO_SWITCH_ON);
    cw(r, 0x0F);
    cw(r, 0x00); /* 9 */
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
    assert_false(r->cmd.enabled);
    /* 11 quick stop, option 2: ramp on 0x6085, then switch on disabled by itself (12) */
    enable(r);
    r->js.dq_rad_s = 1.0;
    cw(r, 0x0B);
    assert_int_equal(hs_cia402_node_state(&r->node), HS_CIA402_QUICK_STOP_ACTIVE);
    uint16_t sw = (uint16_t)r->node.od.statusword;
    assert_int_equal(sw & 0x6F, 0x07);
    assert_int_equal(r->cmd.mode, HS_CAN_JOINT_MODE_POSITION_PD /* the ramp, then held */);
    assert_true(r->cmd.dq_ref_rad_s < 1.0 && r->cmd.dq_ref_rad_s > 0);
    /* 1 rad/s at 20 rev/s^2 (126 rad/s^2) stops in 8 ms */
    for (int i = 0; i < 10; i++)
        tick(r);
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
    /* option 6: stays in quick stop active; enable operation returns (16) */
    assert_int_equal(sdo_write(r, 0x605A, 0, 6, 2), 0);
    enable(r);
    cw(r, 0x0B);
    for (int i = 0; i < 10; i++)
        tick(r);
    expect_state(r, HS_CIA402_QUICK_STOP_ACTIVE);
    cw(r, 0x0F);
    expect_state(r, HS_CIA402_OPERATION_ENABLED);
    cw(r, 0x0B);
    cw(r, 0x00); /* 12 */
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
}

static void test_fault_and_reset(void **state)
{
    (void)state;
    struct rig *r = booted();
    enable(r);
    hs_cia402_node_raise_fault(&r->node, 0x4310); /* over-temperature, say */
    tick(r);
    /* fault reaction active for one cycle, then fault; EMCY with the code */
    assert_int_equal(r->node.od.statusword & 0x4F, 0x0F);
    const struct hs_can_frame *e = find(r, 0x080 + NODE);
    assert_non_null(e);
    assert_int_equal(e->len, 8);
    assert_int_equal(le(e->data, 2), 0x4310);
    assert_true(e->data[2] & 0x01);
    assert_false(r->cmd.enabled);
    tick(r);
    expect_state(r, HS_CIA402_FAULT);
    assert_int_equal(rd(r, 0x603F, 0), 0x4310);
    assert_int_equal(rd(r, 0x1003, 0), 1);
    assert_int_equal(rd(r, 0x1003, 1), 0x4310);
    assert_true(rd(r, 0x1001, 0) & 1);
    /* commands other than fault reset do nothing */
    cw(r, 0x0F);
    expect_state(r, HS_CIA402_FAULT);
    /* bit 7 rising edge (15): switch on disabled, EMCY 0x0000 error reset */
    assert_int_equal(sdo_write(r, 0x6040, 0, 0x80, 2), 0); /* the drive cycle of that tick */
    e = find(r, 0x080 + NODE);
    assert_non_null(e);
    assert_int_equal(le(e->data, 2), 0x0000);
    assert_int_equal(e->data[2], 0);
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
    assert_int_equal(rd(r, 0x603F, 0), 0);
    /* history is cleared only by writing 0 to 0x1003 sub 0 */
    assert_int_equal(sdo_write(r, 0x1003, 0, 0, 1), 0);
    assert_int_equal(rd(r, 0x1003, 0), 0);
    /* a fault while bit 7 is held: reset needs a new rising edge */
    hs_cia402_node_raise_fault(&r->node, 0x5000);
    tick(r);
    tick(r);
    cw(r, 0x80);
    expect_state(r, HS_CIA402_FAULT);
    cw(r, 0x00);
    cw(r, 0x80);
    expect_state(r, HS_CIA402_SWITCH_ON_DISABLED);
}

static void test_following_error(void **state)
{
    (void)state;
    struct rig *r = booted();
    enable(r); /* CSP, target 0, at 0 */
    assert_int_equal(sdo_write(r, 0x6066, 0, 20, 2), 0);
    /* target half a revolution away (window: a quarter), the joint held still */
    assert_int_equal(sdo_write(r, 0x607A, 0, (uint32_t)(CPR / 2), 4), 0);
    int64_t t0 = r->t;
    bool faulted = false;
    for (int i = 0; i < 40 && !faulted; i++) {
        tick(r);
        const struct hs_can_frame *e = find(r, 0x080 + NODE);
        if (e) {
            assert_int_equal(le(e->data, 2), 0x8611);
            faulted = true;
        }
    }
    assert_true(faulted);
    /* after the 20 ms timeout, not before */
    assert_true(r->t - t0 >= 20 * MS && r->t - t0 <= 23 * MS);
    tick(r);
    expect_state(r, HS_CIA402_FAULT);
    assert_int_equal(rd(r, 0x603F, 0), 0x8611);
}

static void test_heartbeat_consumer(void **state)
{
    (void)state;
    struct rig *r = booted();
    /* watch node 0x7E (the master) with 50 ms */
    assert_int_equal(sdo_write(r, 0x1016, 1, 0x007E0032, 4), 0);
    assert_int_equal(sdo_write(r, 0x1016, 2, 0x007E0040, 4), 0x06040043); /* same node twice */
    enable(r);
    const uint8_t op = 0x05;
    for (int i = 0; i < 100; i++) { /* not monitored before the first heartbeat */
        tick(r);
        assert_null(find(r, 0x080 + NODE));
    }
    assert_int_equal(send(r, 0x77E, 1, &op), HS_CAN_NODE_BROADCAST);
    for (int i = 0; i < 40; i++) {
        tick(r);
        if (i % 20 == 0)
            send(r, 0x77E, 1, &op);
        assert_null(find(r, 0x080 + NODE));
    }
    const struct hs_can_frame *e = NULL;
    for (int i = 0; i < 60 && !e; i++) {
        tick(r);
        e = find(r, 0x080 + NODE);
    }
    assert_non_null(e);
    assert_int_equal(le(e->data, 2), 0x8130);
    assert_true(e->data[2] & 0x10); /* communication */
    tick(r);                        /* fault reaction */
    tick(r);
    expect_state(r, HS_CIA402_FAULT); /* 0x6007 = 1: fault */
}

/* ---- modes, checked on a rigid inertia the test integrates itself ---- */

struct plant {
    double J, q, dq, tau;
};

/* tau = kp (q* - q) + kd (dq* - dq) + tau_ff, clamped: the law of hilsim/can_node.h */
static void plant_step(struct plant *p, const struct hs_can_joint_command *c, double dt)
{
    double tau = 0;
    if (c->enabled && c->mode != HS_CAN_JOINT_MODE_OFF) {
        tau = c->kp_nm_rad * (c->q_ref_rad - p->q) + c->kd_nm_s_rad * (c->dq_ref_rad_s - p->dq) +
              c->tau_ff_nm;
        if (c->torque_limit_nm > 0)
            tau = fmax(-c->torque_limit_nm, fmin(c->torque_limit_nm, tau));
    }
    p->tau = tau;
    /* 10 substeps, semi-implicit Euler */
    for (int i = 0; i < 10; i++) {
        double t = tau;
        if (c->enabled && c->mode != HS_CAN_JOINT_MODE_OFF) {
            t = c->kp_nm_rad * (c->q_ref_rad - p->q) + c->kd_nm_s_rad * (c->dq_ref_rad_s - p->dq) +
                c->tau_ff_nm;
            if (c->torque_limit_nm > 0)
                t = fmax(-c->torque_limit_nm, fmin(c->torque_limit_nm, t));
        }
        p->dq += t / p->J * dt / 10;
        p->q += p->dq * dt / 10;
    }
}

static void run(struct rig *r, struct plant *p, int ticks)
{
    for (int i = 0; i < ticks; i++) {
        tick(r);
        plant_step(p, &r->cmd, 1e-3);
        r->js.q_rad = p->q, r->js.dq_rad_s = p->dq, r->js.tau_nm = p->tau;
    }
}

static void test_csp_cst_csv(void **state)
{
    (void)state;
    struct rig *r = booted();
    struct plant p = {.J = 0.01};
    enable(r);
    /* CSP to 1 rad: PD on the drive's gains (kp 50, kd 1, J 0.01: settles within 0.3 s) */
    int32_t target = (int32_t)lround(1.0 * CPR / TWO_PI);
    assert_int_equal(sdo_write(r, 0x607A, 0, (uint32_t)target, 4), 0);
    run(r, &p, 600);
    assert_int_equal(r->cmd.mode, HS_CAN_JOINT_MODE_POSITION_PD);
    assert_true(fabs(p.q - 1.0) < 1e-3);
    int32_t pos = (int32_t)rd(r, 0x6064, 0);
    assert_true(abs(pos - target) <= 25); /* 1e-3 rad = 21 counts */
    /* CST: 200 per mille of 1 N*m on 0.01 kg*m^2: 20 rad/s^2 */
    assert_int_equal(sdo_write(r, 0x6060, 0, 10, 1), 0);
    assert_int_equal(sdo_write(r, 0x6071, 0, 200, 2), 0);
    tick(r);
    assert_int_equal(rd(r, 0x6061, 0), 10);
    double v0 = p.dq;
    run(r, &p, 100);
    assert_int_equal(r->cmd.mode, HS_CAN_JOINT_MODE_TORQUE);
    assert_true(fabs((p.dq - v0) - 20.0 * 0.1) < 0.05);
    int16_t tq = (int16_t)rd(r, 0x6077, 0);
    assert_int_equal(tq, 200);
    /* CSV: 2 rad/s */
    assert_int_equal(sdo_write(r, 0x6060, 0, 9, 1), 0);
    assert_int_equal(sdo_write(r, 0x60FF, 0, (uint32_t)lround(2.0 * CPR / TWO_PI), 4), 0);
    run(r, &p, 300);
    assert_true(fabs(p.dq - 2.0) < 1e-3);
    int32_t vel = (int32_t)rd(r, 0x606C, 0);
    assert_true(fabs(vel - 2.0 * CPR / TWO_PI) < 50);
    /* max torque 0x6072 limits the command */
    assert_int_equal(sdo_write(r, 0x6060, 0, 10, 1), 0);
    assert_int_equal(sdo_write(r, 0x6071, 0, (uint16_t)5000, 2), 0);
    assert_int_equal(sdo_write(r, 0x6072, 0, 500, 2), 0);
    tick(r);
    assert_true(fabs(r->cmd.torque_limit_nm - 0.5) < 1e-9);
}

static void test_profile_position(void **state)
{
    (void)state;
    struct rig *r = booted();
    struct plant p = {.J = 0.01};
    assert_int_equal(sdo_write(r, 0x6060, 0, 1, 1), 0);
    /* 1 rev at 2 rev/s, 10 rev/s^2 up, 5 rev/s^2 down: 0.2 + 0.3 + 0.4 s = 0.55 s cruise
     * 0.5 rev - 0.2 - 0.4 ... (computed below) */
    double v = 2, a = 10, dcl = 5, dist = 1;
    assert_int_equal(sdo_write(r, 0x6081, 0, (uint32_t)(v * CPR), 4), 0);
    assert_int_equal(sdo_write(r, 0x6083, 0, (uint32_t)(a * CPR), 4), 0);
    assert_int_equal(sdo_write(r, 0x6084, 0, (uint32_t)(dcl * CPR), 4), 0);
    enable(r);
    assert_int_equal(statusword(r) & 0x1400, 0x0400); /* target reached, no ack */
    assert_int_equal(sdo_write(r, 0x607A, 0, (uint32_t)(dist * CPR), 4), 0);
    int64_t t0 = r->t;
    cw(r, 0x1F); /* new set-point */
    uint16_t sw = statusword(r);
    assert_int_equal(sw & 0x1400, 0x1000); /* acknowledged, moving */
    cw(r, 0x0F);
    assert_int_equal(statusword(r) & 0x1000, 0);
    double vmax = 0;
    int64_t arrived = 0, reached = 0;
    for (int i = 0; i < 2000 && !reached; i++) {
        run(r, &p, 1);
        vmax = fmax(vmax, r->node.demand_vel);
        if (!arrived && r->node.demand_rad == r->node.pp_target_rad)
            arrived = r->t;
        if (r->node.od.statusword & 0x0400)
            reached = r->t;
    }
    assert_true(arrived > 0 && reached >= arrived);
    /* the demand follows the analytic trapezoid: t = v/(2a) + v/(2d) + dist/v (revolutions);
     * in 1 ms steps: the set-point is taken in the first tick after t0, each ramp step moves
     * at the step's end velocity and the last step snaps, so within 5 ticks */
    double t_exp = v / (2 * a) + v / (2 * dcl) + dist / v;
    double t_got = (double)(arrived - t0) * 1e-9;
    if (!(fabs(t_got - t_exp) < 0.005))
        fail_msg("demand arrived after %.4f s, trapezoid %.4f s", t_got, t_exp);
    /* target reached once the joint is inside the 0x6067 window (the plant lags the demand) */
    assert_true(reached - arrived < 100 * MS);
    assert_true(vmax <= v * TWO_PI * (1 + 1e-9));
    assert_true(vmax > v * TWO_PI * 0.99);
    run(r, &p, 200); /* settled on the held demand */
    assert_true(fabs(p.q - TWO_PI) < 2e-3);
    /* relative move with change set immediately: -0.5 rev from the last target */
    assert_int_equal(sdo_write(r, 0x607A, 0, (uint32_t)(int32_t)(-CPR / 2), 4), 0);
    cw(r, 0x7F);
    cw(r, 0x4F);
    run(r, &p, 1500);
    assert_true(fabs(p.q - TWO_PI / 2) < 2e-3);
    assert_int_equal(statusword(r) & 0x0400, 0x0400);
}

static void test_profile_velocity_and_homing(void **state)
{
    (void)state;
    struct rig *r = booted();
    struct plant p = {.J = 0.01};
    assert_int_equal(sdo_write(r, 0x6060, 0, 3, 1), 0);
    assert_int_equal(sdo_write(r, 0x6083, 0, (uint32_t)(4 * CPR), 4), 0); /* 4 rev/s^2 */
    enable(r);
    assert_int_equal(sdo_write(r, 0x60FF, 0, (uint32_t)(CPR), 4), 0); /* 1 rev/s */
    run(r, &p, 100);
    /* ramp: after 0.1 s (plus the SDO ticks) the demand is 0.4-0.5 rev/s, not 1 */
    double dv = r->node.demand_vel / TWO_PI;
    assert_true(dv > 0.39 && dv < 0.5);
    run(r, &p, 400);
    assert_true(fabs(p.dq - TWO_PI) < 0.01);
    assert_int_equal(statusword(r) & 0x1400, 0x0400); /* reached, speed not 0 */
    cw(r, 0x10F);                                     /* halt */
    run(r, &p, 400);
    assert_true(fabs(p.dq) < 0.01);
    assert_int_equal(statusword(r) & 0x1000, 0x1000); /* speed = 0 */
    /* homing method 37: the present position becomes the home offset */
    assert_int_equal(sdo_write(r, 0x6060, 0, 6, 1), 0);
    assert_int_equal(sdo_write(r, 0x607C, 0, 1000, 4), 0);
    cw(r, 0x0F);
    assert_int_equal(statusword(r) & 0x1000, 0);
    cw(r, 0x1F);
    assert_int_equal(statusword(r) & 0x3400, 0x1400); /* attained, reached, no error */
    int32_t pos = (int32_t)rd(r, 0x6064, 0);
    assert_true(abs(pos - 1000) <= 2);
}

/* ---- EDS ---- */

static void test_eds(void **state)
{
    (void)state;
    struct rig *r = rig_new();
    const char *eds = "[FileInfo]\nFileName=drive.eds\n; comment\n[DeviceInfo]\nVendorName=X\n"
                      "[1017]\nParameterName=Producer heartbeat time\nObjectType=0x7\n"
                      "DataType=0x0006\nAccessType=rw\nDefaultValue=250\nPDOMapping=0\n"
                      "[1018sub1]\nDataType=0x0007\nAccessType=ro\nDefaultValue=0x000002AB\n"
                      "[1801sub1]\nDataType=0x0007\nDefaultValue=$NODEID+0x280\n"
                      "[1A01]\nSubNumber=3\n[1A01sub0]\nDataType=0x0005\nDefaultValue=2\n"
                      "[1A01sub1]\nDataType=0x0007\nDefaultValue=0x60640020\n"
                      "[1A01sub2]\nDataType=0x0007\nDefaultValue=0x606C0020\n"
                      "[2001]\nDataType=0x0007\nAccessType=wo\nDefaultValue=7\nPDOMapping=1\n"
                      "[2002]\nDataType=0x0003\nAccessType=ro\nDefaultValue=-3\n"
                      "[6098]\nDataType=0x0002\nDefaultValue=35\n";
    unsigned applied = 0;
    struct hs_diag d;
    assert_int_equal(hs_cia402_node_load_eds(&r->node, eds, strlen(eds), "drive.eds", &applied, &d),
                     0);
    assert_int_equal(applied, 9);
    tick(r);
    assert_int_equal(rd(r, 0x1017, 0), 250);
    assert_int_equal(rd(r, 0x1018, 1), 0x2AB);
    assert_int_equal(rd(r, 0x1801, 1), 0x280 + NODE);
    assert_int_equal(rd(r, 0x1A01, 2), 0x606C0020);
    assert_int_equal(rd(r, 0x6098, 0), 35);
    assert_int_equal((int16_t)rd(r, 0x2002, 0), -3);
    uint32_t v;
    assert_int_equal(sdo_read(r, 0x2001, 0, &v, NULL), 0x06010001); /* write only */
    assert_int_equal(sdo_write(r, 0x2002, 0, 1, 2), 0x06010002);
    assert_int_equal(sdo_write(r, 0x2001, 0, 9, 4), 0);
    /* EDS values are defaults: reset node brings them back */
    assert_int_equal(sdo_write(r, 0x1017, 0, 100, 2), 0);
    nmt(r, 0x81, NODE);
    tick(r);
    assert_int_equal(rd(r, 0x1017, 0), 250);
    /* TPDO2 from the EDS is valid: it goes out when operational */
    nmt(r, 0x01, NODE);
    tick(r);
    const struct hs_can_frame *f = find(r, 0x280 + NODE);
    assert_non_null(f);
    assert_int_equal(f->len, 8);
}

static void expect_eds_error(const char *text, const char *where)
{
    struct rig *r = rig_new();
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_cia402_node_load_eds(&r->node, text, strlen(text), "bad.eds", NULL, &d),
                     -EINVAL);
    char buf[700];
    hs_diag_format(&d, buf, sizeof buf);
    if (!strstr(buf, where))
        fail_msg("expected \"%s\" in \"%s\"", where, buf);
}

static void test_eds_errors(void **state)
{
    (void)state;
    expect_eds_error("[1017]\nDataType=0x0006\nDefaultValue=12x\n", "bad.eds:3:14:");
    expect_eds_error("[FileInfo]\n[1017\n", "bad.eds:2:");
    expect_eds_error("[1017]\nthis line has no equals\n", "bad.eds:2:1:");
    expect_eds_error("\n\n[6040]\nDataType=0x0007\n", "bad.eds:3:1: EDS: 0x6040 sub 0: DataType");
    expect_eds_error("[1017]\nDefaultValue=70000\n", "bad.eds:2:14:");
    expect_eds_error("[1017]\nAccessType=rwx\n", "bad.eds:2:12:");
    /* a valid TPDO mapping the controlword (RPDO-only): named at the mapping's section */
    expect_eds_error("[1A00sub1]\nDefaultValue=0x60400010\n[1A00sub0]\nDefaultValue=1\n",
                     "bad.eds:3:1:");
}

/* Two drives behind one dispatch: NMT to all and SYNC reach both (HS_CAN_NODE_BROADCAST),
 * an SDO request only its node. */
static void test_broadcast_dispatch(void **state)
{
    (void)state;
    static struct hs_cia402_node a, b;
    struct hs_cia402_config ca, cb;
    hs_cia402_config_init(&ca, 1);
    hs_cia402_config_init(&cb, 2);
    assert_int_equal(hs_cia402_node_init(&a, &ca, NULL), 0);
    assert_int_equal(hs_cia402_node_init(&b, &cb, NULL), 0);
    struct hs_can_node *nodes[2] = {&a.base, &b.base};
    struct hs_can_joint_state js = {0};
    struct hs_can_joint_command cmd;
    struct hs_can_frame out[8];
    hs_can_node_poll(&a.base, MS, &js, &cmd, out, 8);
    hs_can_node_poll(&b.base, MS, &js, &cmd, out, 8);
    uint64_t unclaimed = 0;
    struct hs_can_frame f = {.id = 0x000, .len = 2, .data = {0x01, 0x00}};
    assert_int_equal(hs_can_nodes_dispatch(nodes, 2, &f, MS, &unclaimed), 0);
    assert_int_equal(a.nmt, 0x05);
    assert_int_equal(b.nmt, 0x05);
    f = (struct hs_can_frame){.id = 0x080, .len = 0};
    assert_int_equal(hs_can_nodes_dispatch(nodes, 2, &f, MS, &unclaimed), 0);
    assert_int_equal(a.syncs, 1);
    assert_int_equal(b.syncs, 1);
    f = (struct hs_can_frame){.id = 0x602, .len = 8, .data = {0x40, 0x00, 0x10, 0x00}};
    assert_int_equal(hs_can_nodes_dispatch(nodes, 2, &f, MS, &unclaimed), 1);
    f = (struct hs_can_frame){.id = 0x000, .len = 2, .data = {0x02, 0x02}}; /* stop node 2 */
    assert_int_equal(hs_can_nodes_dispatch(nodes, 2, &f, MS, &unclaimed), 1);
    assert_int_equal(a.nmt, 0x05);
    assert_int_equal(b.nmt, 0x04);
    f = (struct hs_can_frame){.id = 0x123, .len = 1};
    assert_int_equal(hs_can_nodes_dispatch(nodes, 2, &f, MS, &unclaimed), -ENOENT);
    assert_int_equal(unclaimed, 1);
}

/* boot_time_ms: after NMT reset node the drive stays silent (initialising) until its boot-up. */
static void test_reset_node_boot_time(void **state)
{
    (void)state;
    struct rig *r = rig_new();
    struct hs_cia402_config cfg;
    hs_cia402_config_init(&cfg, NODE);
    cfg.boot_time_ms = 200;
    struct hs_diag d;
    assert_int_equal(hs_cia402_node_init(&r->node, &cfg, &d), 0);
    tick(r); /* power-on: the boot-up at the first poll */
    assert_non_null(find(r, 0x700 + NODE));
    nmt(r, 0x81, NODE);
    r->n_out = 0; /* the power-on frames are read */
    int64_t t0 = r->t;
    const uint8_t up[8] = {0x40, 0x00, 0x10, 0x00};
    int ticks = 0;
    for (; ticks < 400 && !find(r, 0x700 + NODE); ticks++) {
        send(r, 0x600 + NODE, 8, up); /* initialising: no SDO answer */
        tick(r);
        assert_null(find(r, 0x580 + NODE));
    }
    const struct hs_can_frame *b = find(r, 0x700 + NODE);
    assert_non_null(b);
    assert_int_equal(b->data[0], 0);
    print_message("boot-up %lld ms after the reset\n", (long long)((r->t - t0) / MS));
    assert_true(r->t - t0 >= 200 * MS && r->t - t0 <= 201 * MS);
    assert_int_equal(rd(r, 0x1000, 0), 0x00020192); /* pre-operational: SDO again */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boot_and_nmt),
        cmocka_unit_test(test_bootup_heartbeat),
        cmocka_unit_test(test_sdo_expedited_and_aborts),
        cmocka_unit_test(test_sdo_segmented),
        cmocka_unit_test(test_pdo_mapping_rules),
        cmocka_unit_test(test_sync_timing),
        cmocka_unit_test(test_event_tpdo),
        cmocka_unit_test(test_power_state_machine),
        cmocka_unit_test(test_fault_and_reset),
        cmocka_unit_test(test_following_error),
        cmocka_unit_test(test_heartbeat_consumer),
        cmocka_unit_test(test_csp_cst_csv),
        cmocka_unit_test(test_profile_position),
        cmocka_unit_test(test_profile_velocity_and_homing),
        cmocka_unit_test(test_eds),
        cmocka_unit_test(test_eds_errors),
        cmocka_unit_test(test_broadcast_dispatch),
        cmocka_unit_test(test_reset_node_boot_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
