/* The CiA 402 node's per-tick path allocates nothing: after init, a run of every frame kind
 * (NMT, SDO expedited and segmented, PDO remapping, SYNC with RPDOs and TPDOs, heartbeats,
 * EMCY on a fault and its reset) with a poll per tick, while malloc, calloc and realloc are
 * wrapped at link time and counted (label nosan: ASan has its own allocator). The frames are
 * written out here from CiA 301/402 as in test_cia402.c; this test checks allocation and that
 * the run did what it should (frames out, the drive enabled, a fault seen), not the codec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cia402/cia402.h"

static unsigned allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
    allocs++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t a, size_t b)
{
    allocs++;
    return __real_calloc(a, b);
}

void *__wrap_realloc(void *p, size_t n)
{
    allocs++;
    return __real_realloc(p, n);
}

#define N 4
#define MS 1000000LL

static struct hs_cia402_node node;
static int64_t now;
static unsigned sent, emcys;
static struct hs_can_joint_command cmd;

static void frame(uint32_t id, unsigned len, const uint8_t *d)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = id, f.len = (uint8_t)len;
    if (len)
        memcpy(f.data, d, len);
    hs_can_node_on_frame(&node.base, &f, now);
}

static void poll(void)
{
    struct hs_can_joint_state js = {.q_rad = 0.001 * (double)(now / MS), .dq_rad_s = 0.1};
    struct hs_can_frame out[HS_CIA402_TXQ];
    now += MS;
    int k = hs_can_node_poll(&node.base, now, &js, &cmd, out, HS_CIA402_TXQ);
    assert_true(k >= 0);
    sent += (unsigned)k;
    for (int i = 0; i < k; i++)
        emcys += out[i].id == 0x80 + N;
}

static void sdo_w(uint16_t index, uint8_t sub, uint32_t v, unsigned n)
{
    uint8_t d[8] = {(uint8_t)(0x23 | (4 - n) << 2), (uint8_t)index, (uint8_t)(index >> 8), sub};
    for (unsigned i = 0; i < n; i++)
        d[4 + i] = (uint8_t)(v >> (8 * i));
    frame(0x600 + N, 8, d);
    poll();
}

static void test_cia402_tick_allocates_nothing(void **state)
{
    (void)state;
    struct hs_cia402_config cfg;
    hs_cia402_config_init(&cfg, N);
    cfg.heartbeat_ms = 5;
    assert_int_equal(hs_cia402_node_init(&node, &cfg, NULL), 0);
    allocs = 0;
    poll(); /* boot-up */
    const uint8_t hb[1] = {0x05}, start[2] = {0x01, 0};
    sdo_w(0x1016, 1, 0x007F0064, 4);
    frame(0x77F, 1, hb);
    /* remap RPDO1 (controlword, target position) and TPDO1 (statusword, position) */
    sdo_w(0x1400, 1, 0x80000200 + N, 4);
    sdo_w(0x1600, 0, 0, 1);
    sdo_w(0x1600, 1, 0x60400010, 4);
    sdo_w(0x1600, 2, 0x607A0020, 4);
    sdo_w(0x1600, 0, 2, 1);
    sdo_w(0x1400, 2, 1, 1);
    sdo_w(0x1400, 1, 0x200 + N, 4);
    sdo_w(0x1800, 1, 0xC0000180 + N, 4);
    sdo_w(0x1A00, 0, 0, 1);
    sdo_w(0x1A00, 1, 0x60410010, 4);
    sdo_w(0x1A00, 2, 0x60640020, 4);
    sdo_w(0x1A00, 0, 2, 1);
    sdo_w(0x1800, 2, 1, 1);
    sdo_w(0x1800, 1, 0x40000180 + N, 4);
    /* segmented upload of the device name */
    const uint8_t up[8] = {0x40, 0x08, 0x10, 0x00};
    frame(0x600 + N, 8, up);
    poll();
    for (uint8_t t = 0; t < 4; t++) {
        const uint8_t seg[8] = {(uint8_t)(0x60 | (t & 1) << 4)};
        frame(0x600 + N, 8, seg);
        poll();
    }
    frame(0x000, 2, start);
    static const uint16_t cws[] = {0x06, 0x07, 0x0F, 0x0F, 0x0F, 0x0F};
    for (unsigned k = 0; k < 200; k++) {
        /* enable; after the fault reset at 130: shutdown, then enable again */
        uint16_t cw = k < 6 ? cws[k] : k > 130 && k < 136 ? 0x06 : 0x0F;
        int32_t target = (int32_t)(k * 20); /* about where the joint is (21 counts/ms) */
        const uint8_t rp[6] = {(uint8_t)cw,
                               (uint8_t)(cw >> 8),
                               (uint8_t)target,
                               (uint8_t)(target >> 8),
                               (uint8_t)(target >> 16),
                               (uint8_t)(target >> 24)};
        frame(0x200 + N, 6, rp);
        frame(0x080, 0, NULL);
        if (k % 50 == 0)
            frame(0x77F, 1, hb);
        if (k == 120)
            hs_cia402_node_raise_fault(&node, 0x5000);
        if (k == 130) {
            const uint8_t reset[6] = {0x80, 0x00};
            frame(0x200 + N, 6, reset);
            frame(0x080, 0, NULL);
        }
        poll();
    }
    assert_int_equal(allocs, 0);
    assert_true(sent > 250); /* a TPDO per SYNC (200), heartbeats every 5 ms, SDO answers */
    assert_true(emcys >= 2); /* the fault and the reset */
    assert_true(cmd.enabled);
    assert_int_equal(hs_cia402_node_state(&node), HS_CIA402_OPERATION_ENABLED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cia402_tick_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
