/* The CAN fault filter on a real pair of buses (socketpair backend, the conformance suite's
 * frame semantics): a drop pattern drops exactly the frames it names, counted; probabilities
 * repeat with the seed and land near their rate; duplicate, corrupt and reorder do what they
 * say in both directions; an inactive rule and an uninstalled filter change nothing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hilsim/can.h"
#include "hilsim/can_fault.h"

struct pair {
    struct hs_can_bus *a, *b;
};

static void open_pair(struct pair *p)
{
    struct hs_can_config cfg;
    hs_can_config_init(&cfg);
    cfg.batch_max = 64;
    struct hs_diag d = {0};
    assert_int_equal(hs_can_socketpair_open_pair(&cfg, &p->a, &p->b, &d), 0);
    assert_int_equal(hs_can_bus_start(p->a), 0);
    assert_int_equal(hs_can_bus_start(p->b), 0);
}

static void close_pair(struct pair *p)
{
    hs_can_bus_close(p->a);
    hs_can_bus_close(p->b);
}

static struct hs_can_frame frame(uint32_t id, uint8_t seq)
{
    struct hs_can_frame f = {.id = id, .len = 8};
    f.data[0] = 7;
    f.data[1] = seq;
    return f;
}

/* Sends n frames a -> b one by one and receives them all; returns how many arrived. */
static int pump(struct pair *p, const struct hs_can_frame *tx, int n, struct hs_can_frame *rx,
                int cap)
{
    int got = 0;
    for (int i = 0; i < n; i++) {
        assert_int_equal(hs_can_bus_send(p->a, &tx[i], 1), 1);
        int r;
        while ((r = hs_can_bus_recv(p->b, rx + got, (unsigned)(cap - got))) > 0)
            got += r;
    }
    return got;
}

static void test_drop_pattern_drops_exactly_those_frames(void **state)
{
    (void)state;
    struct pair p;
    open_pair(&p);
    struct hs_can_fault_filter *f;
    assert_int_equal(hs_can_fault_filter_create(1, &f), 0);
    struct hs_can_fault_rule rule = {.id = 0x20,
                                     .mask = 0x7e0,
                                     .data0 = -1,
                                     .direction = HS_CAN_FAULT_RX,
                                     .kind = HS_CAN_FAULT_DROP,
                                     .probability = 1,
                                     .pattern = "1101"};
    uint32_t k;
    assert_int_equal(hs_can_fault_filter_add(f, &rule, &k), 0);
    hs_can_bus_set_fault_filter(p.b, f);
    hs_can_fault_filter_set_active(f, k, true);
    /* 100 frames: even ones to node 1 (0x21, matched), odd ones to node 2 (0x41) */
    struct hs_can_frame tx[100], rx[200];
    for (int i = 0; i < 100; i++)
        tx[i] = frame(i % 2 ? 0x41 : 0x21, (uint8_t)i);
    int got = pump(&p, tx, 100, rx, 200);
    /* matched frames m = 0..49 are dropped where "1101"[m % 4] == '1' */
    int want = 0, j = 0;
    for (int i = 0; i < 100; i++) {
        bool matched = i % 2 == 0, dropped = matched && "1101"[(i / 2) % 4] == '1';
        if (dropped)
            continue;
        want++;
        assert_true(j < got);
        assert_int_equal(rx[j].data[1], i); /* the survivors, in order */
        j++;
    }
    struct hs_can_fault_counts c;
    hs_can_fault_filter_counts(f, k, &c);
    print_message("%d of 100 frames arrived; rule matched %llu, dropped %llu\n", got,
                  (unsigned long long)c.matched, (unsigned long long)c.acted);
    assert_int_equal(got, want);
    assert_int_equal(c.matched, 50);
    assert_int_equal(c.acted, 38); /* 12 full cycles of 3 drops, then "11" */
    /* inactive: everything passes and nothing is counted */
    hs_can_fault_filter_set_active(f, k, false);
    assert_int_equal(pump(&p, tx, 100, rx, 200), 100);
    hs_can_fault_filter_counts(f, k, &c);
    assert_int_equal(c.matched, 50);
    hs_can_bus_set_fault_filter(p.b, NULL);
    hs_can_fault_filter_destroy(f);
    close_pair(&p);
}

static int drops_with_seed(uint64_t seed, bool record[1000])
{
    struct pair p;
    open_pair(&p);
    struct hs_can_fault_filter *f;
    assert_int_equal(hs_can_fault_filter_create(seed, &f), 0);
    struct hs_can_fault_rule rule = {.id = 0x21,
                                     .mask = 0x7ff,
                                     .data0 = -1,
                                     .direction = HS_CAN_FAULT_TX,
                                     .kind = HS_CAN_FAULT_DROP,
                                     .probability = 0.2};
    uint32_t k;
    assert_int_equal(hs_can_fault_filter_add(f, &rule, &k), 0);
    hs_can_bus_set_fault_filter(p.a, f); /* the sender's side this time */
    hs_can_fault_filter_set_active(f, k, true);
    static struct hs_can_frame tx[1000], rx[1000];
    for (int i = 0; i < 1000; i++) {
        tx[i] = frame(0x21, 0);
        tx[i].data[2] = (uint8_t)(i >> 8), tx[i].data[3] = (uint8_t)i;
    }
    int got = pump(&p, tx, 1000, rx, 1000);
    memset(record, 1, 1000);
    for (int j = 0; j < got; j++)
        record[rx[j].data[2] << 8 | rx[j].data[3]] = false;
    struct hs_can_fault_counts c;
    hs_can_fault_filter_counts(f, k, &c);
    assert_int_equal(c.acted, 1000 - got);
    hs_can_bus_set_fault_filter(p.a, NULL);
    hs_can_fault_filter_destroy(f);
    close_pair(&p);
    return 1000 - got;
}

static void test_probability_repeats_with_seed(void **state)
{
    (void)state;
    static bool r1[1000], r2[1000], r3[1000];
    int a = drops_with_seed(7, r1), b = drops_with_seed(7, r2), c = drops_with_seed(8, r3);
    print_message("p = 0.2 over 1000 frames: %d, %d (same seed), %d (other seed) dropped\n", a, b,
                  c);
    assert_memory_equal(r1, r2, sizeof r1);
    assert_memory_not_equal(r1, r3, sizeof r1);
    /* binomial(1000, 0.2): sd 12.6; 5 sd either side */
    assert_true(a > 137 && a < 263);
}

static void test_duplicate_corrupt_reorder(void **state)
{
    (void)state;
    struct pair p;
    open_pair(&p);
    struct hs_can_fault_filter *f;
    assert_int_equal(hs_can_fault_filter_create(3, &f), 0);
    uint32_t dup, cor, reo;
    struct hs_can_fault_rule rule = {.id = 0x100,
                                     .mask = 0x7ff,
                                     .data0 = -1,
                                     .direction = HS_CAN_FAULT_TX,
                                     .kind = HS_CAN_FAULT_DUPLICATE,
                                     .probability = 1};
    assert_int_equal(hs_can_fault_filter_add(f, &rule, &dup), 0);
    rule.id = 0x200, rule.kind = HS_CAN_FAULT_CORRUPT;
    assert_int_equal(hs_can_fault_filter_add(f, &rule, &cor), 0);
    /* reorder on the receiving side, only MIT-style replies for node 7 in data[0] */
    rule.id = 0x300, rule.kind = HS_CAN_FAULT_REORDER, rule.data0 = 7,
    rule.direction = HS_CAN_FAULT_RX;
    assert_int_equal(hs_can_fault_filter_add(f, &rule, &reo), 0);
    hs_can_bus_set_fault_filter(p.a, f);
    hs_can_bus_set_fault_filter(p.b, f);
    for (uint32_t i = 0; i < 3; i++)
        hs_can_fault_filter_set_active(f, i, true);
    struct hs_can_frame tx[4] = {frame(0x300, 0), frame(0x100, 1), frame(0x200, 2),
                                 frame(0x400, 3)};
    /* one batch, so the reorder has frames to go behind */
    assert_int_equal(hs_can_bus_send(p.a, tx, 4), 4);
    struct hs_can_frame rx[16];
    int got = 0, r;
    while ((r = hs_can_bus_recv(p.b, rx + got, 16u - (unsigned)got)) > 0)
        got += r;
    assert_int_equal(got, 5);
    /* 0x300 moved behind the rest of its receive batch; 0x100 twice; 0x200 altered */
    assert_int_equal(rx[0].id, 0x100);
    assert_int_equal(rx[1].id, 0x100);
    assert_memory_equal(rx[0].data, rx[1].data, 8);
    assert_int_equal(rx[2].id, 0x200);
    assert_memory_not_equal(rx[2].data, tx[2].data, 8);
    assert_int_equal(rx[3].id, 0x400);
    assert_int_equal(rx[4].id, 0x300);
    hs_can_bus_set_fault_filter(p.a, NULL);
    hs_can_bus_set_fault_filter(p.b, NULL);
    hs_can_fault_filter_destroy(f);
    close_pair(&p);
}

/* A delay of 4 ticks on the receiving side and 2 on the sending side of one filter: every held
 * frame comes out at exactly its due tick, in order, behind that call's own frames, with its
 * receive stamp cleared (it arrives then); frames held before the rule went off still come out
 * on time; a queue held full loses the rest, counted as overflow. */
static void test_delay_holds_exact_ticks(void **state)
{
    (void)state;
    struct pair p;
    open_pair(&p);
    struct hs_can_fault_filter *f;
    assert_int_equal(hs_can_fault_filter_create(5, &f), 0);
    struct hs_can_fault_rule rule = {.id = 0x21,
                                     .mask = 0x7ff,
                                     .data0 = -1,
                                     .direction = HS_CAN_FAULT_RX,
                                     .kind = HS_CAN_FAULT_DELAY,
                                     .probability = 1,
                                     .delay_ticks = 4};
    uint32_t rx_rule, tx_rule;
    assert_int_equal(hs_can_fault_filter_add(f, &rule, &rx_rule), 0);
    rule.id = 0x42, rule.direction = HS_CAN_FAULT_TX, rule.delay_ticks = 2;
    assert_int_equal(hs_can_fault_filter_add(f, &rule, &tx_rule), 0);
    rule.delay_ticks = 0;
    assert_int_equal(hs_can_fault_filter_add(f, &rule, &(uint32_t){0}), -EINVAL);
    hs_can_bus_set_fault_filter(p.a, f);
    hs_can_bus_set_fault_filter(p.b, f);
    hs_can_fault_filter_set_active(f, rx_rule, true);
    hs_can_fault_filter_set_active(f, tx_rule, true);
    /* ticks 0..29: each tick a sends 0x21 (rx-delayed at b), 0x42 (tx-delayed at a) and 0x63
     * (never delayed), tagged with the tick; b receives once per tick. Rules off from tick 20. */
    int arrived[40][3], order_ok = 1;
    memset(arrived, -1, sizeof arrived);
    for (int t = 0; t < 40; t++) {
        hs_can_fault_filter_set_tick(f, t);
        if (t == 20) {
            hs_can_fault_filter_set_active(f, rx_rule, false);
            hs_can_fault_filter_set_active(f, tx_rule, false);
        }
        struct hs_can_frame tx[3] = {frame(0x21, (uint8_t)t), frame(0x42, (uint8_t)t),
                                     frame(0x63, (uint8_t)t)};
        tx[0].rx_time_ns = tx[1].rx_time_ns = 0;
        assert_int_equal(hs_can_bus_send(p.a, tx, t < 30 ? 3 : 0), t < 30 ? 3 : 0);
        struct hs_can_frame rx[16];
        int got = 0, r;
        while ((r = hs_can_bus_recv(p.b, rx + got, 16u - (unsigned)got)) > 0)
            got += r;
        for (int k = 0; k < got; k++) {
            int which = rx[k].id == 0x21 ? 0 : rx[k].id == 0x42 ? 1 : 2;
            assert_int_equal(arrived[rx[k].data[1]][which], -1);
            arrived[rx[k].data[1]][which] = t;
            if (which == 0 && rx[k].data[1] < 20 && rx[k].rx_time_ns != 0)
                order_ok = 0;
        }
    }
    for (int t = 0; t < 30; t++) {
        assert_int_equal(arrived[t][0], t < 20 ? t + 4 : t);
        assert_int_equal(arrived[t][1], t < 20 ? t + 2 : t);
        assert_int_equal(arrived[t][2], t);
    }
    assert_true(order_ok);
    struct hs_can_fault_counts c;
    hs_can_fault_filter_counts(f, rx_rule, &c);
    assert_int_equal(c.acted, 20);
    assert_int_equal(c.overflow, 0);
    hs_can_fault_filter_counts(f, tx_rule, &c);
    assert_int_equal(c.acted, 20);
    /* a delay longer than the run with 300 frames: 256 are held, 44 lost and counted */
    hs_can_fault_filter_set_active(f, tx_rule, true);
    hs_can_fault_filter_set_tick(f, 100);
    struct hs_can_frame many[50];
    for (int i = 0; i < 50; i++)
        many[i] = frame(0x42, (uint8_t)i);
    for (int i = 0; i < 6; i++)
        assert_int_equal(hs_can_bus_send(p.a, many, 50), 50);
    hs_can_fault_filter_counts(f, tx_rule, &c);
    print_message("delay: 20 + 20 frames held 4 and 2 ticks exactly; queue full: %llu of 300 "
                  "lost\n",
                  (unsigned long long)c.overflow);
    assert_int_equal(c.acted, 320);
    assert_int_equal(c.overflow, 300 - HS_CAN_FAULT_DELAY_MAX);
    struct hs_can_frame rx[64];
    assert_int_equal(hs_can_bus_recv(p.b, rx, 64), 0);
    hs_can_bus_set_fault_filter(p.a, NULL);
    hs_can_bus_set_fault_filter(p.b, NULL);
    hs_can_fault_filter_destroy(f);
    close_pair(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drop_pattern_drops_exactly_those_frames),
        cmocka_unit_test(test_probability_repeats_with_seed),
        cmocka_unit_test(test_duplicate_corrupt_reorder),
        cmocka_unit_test(test_delay_holds_exact_ticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
