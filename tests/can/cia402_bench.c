/* Per-frame cost of the CiA 402 node beside the MIT node, side by side in one run: a CSP cycle
 * (RPDO with controlword and target, SYNC, poll producing the TPDO with statusword and position)
 * against an MIT cycle (command, poll producing the reply), and an SDO expedited read
 * round trip. Prints the median of several runs in ns per cycle and the ratios. Not a test:
 * nothing is asserted (perf/README.md).
 *
 *   ./build/tests/can/cia402_bench [runs]            (default 9 runs of 100000 cycles) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cia402/cia402.h"
#include "hilsim/can_mit.h"

#define CYCLES 100000

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static struct hs_cia402_node c4;
static struct hs_mit_node mit;
static struct hs_can_frame out[HS_CIA402_TXQ];
static volatile unsigned sink;

static void poll_node(struct hs_can_node *n, int64_t t, double q)
{
    struct hs_can_joint_state js = {.q_rad = q, .dq_rad_s = 0.5};
    struct hs_can_joint_command cmd;
    sink += (unsigned)hs_can_node_poll(n, t, &js, &cmd, out, HS_CIA402_TXQ);
}

static void feed(struct hs_can_node *n, uint32_t id, unsigned len, const uint8_t *d, int64_t t)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = id, f.len = (uint8_t)len;
    memcpy(f.data, d, len);
    hs_can_node_on_frame(n, &f, t);
}

static double run_cia402_csp(void)
{
    int64_t t = 0;
    double t0 = now_s();
    for (int k = 0; k < CYCLES; k++) {
        int32_t target = k & 0xFFF;
        const uint8_t rp[6] = {0x0F, 0, (uint8_t)target, (uint8_t)(target >> 8), 0, 0};
        feed(&c4.base, 0x201, 6, rp, t);
        feed(&c4.base, 0x080, 0, rp, t);
        t += 1000000;
        poll_node(&c4.base, t, 1e-4 * (k & 0xFFF));
    }
    return (now_s() - t0) / CYCLES * 1e9;
}

static double run_cia402_sdo(void)
{
    int64_t t = 0;
    const uint8_t up[8] = {0x40, 0x64, 0x60, 0x00};
    double t0 = now_s();
    for (int k = 0; k < CYCLES; k++) {
        feed(&c4.base, 0x601, 8, up, t);
        t += 1000000;
        poll_node(&c4.base, t, 0.1);
    }
    return (now_s() - t0) / CYCLES * 1e9;
}

static double run_mit(void)
{
    int64_t t = 0;
    uint8_t d[8];
    struct hs_mit_command mc = {.p_rad = 0.5, .v_rad_s = 0, .kp = 20, .kd = 1, .t_ff_nm = 0};
    hs_mit_pack_command(&mit.cfg.limits, &mc, d);
    double t0 = now_s();
    for (int k = 0; k < CYCLES; k++) {
        feed(&mit.base, 1, 8, d, t);
        t += 1000000;
        poll_node(&mit.base, t, 1e-4 * (k & 0xFFF));
    }
    return (now_s() - t0) / CYCLES * 1e9;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 9;
    if (runs < 1 || runs > 101)
        runs = 9;
    struct hs_cia402_config cfg;
    hs_cia402_config_init(&cfg, 1);
    cfg.rpdo[0] = (struct hs_cia402_pdo_config){
        .valid = true, .type = 1, .n = 2, .map = {0x60400010, 0x607A0020}};
    cfg.tpdo[0] = (struct hs_cia402_pdo_config){
        .valid = true, .type = 1, .n = 2, .map = {0x60410010, 0x60640020}};
    cfg.following_error_window_counts = 0xFFFFFFFFu;
    struct hs_mit_config mc;
    hs_mit_config_init(&mc, 1, 0);
    if (hs_cia402_node_init(&c4, &cfg, NULL) < 0 || hs_mit_node_init(&mit, &mc, NULL) < 0)
        return 1;
    const uint8_t start[2] = {0x01, 0}, enter[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFC};
    poll_node(&c4.base, 0, 0);
    feed(&c4.base, 0x000, 2, start, 0);
    feed(&mit.base, 1, 8, enter, 0);
    /* shutdown, then enable: the drive runs CSP in the timed cycles */
    const uint8_t shutdown[6] = {0x06, 0, 0, 0, 0, 0};
    feed(&c4.base, 0x201, 6, shutdown, 0);
    feed(&c4.base, 0x080, 0, shutdown, 0);
    poll_node(&c4.base, 1000000, 0);
    double csp[101], sdo[101], m[101];
    for (int r = 0; r < runs; r++) {
        m[r] = run_mit();
        csp[r] = run_cia402_csp();
        sdo[r] = run_cia402_sdo();
    }
    qsort(m, (size_t)runs, sizeof m[0], cmp);
    qsort(csp, (size_t)runs, sizeof csp[0], cmp);
    qsort(sdo, (size_t)runs, sizeof sdo[0], cmp);
    double mm = m[runs / 2], mc4 = csp[runs / 2], ms = sdo[runs / 2];
    printf("median of %d runs x %d cycles (frames in + poll):\n", runs, CYCLES);
    printf("  MIT command + reply          %8.1f ns/cycle (2 frames)\n", mm);
    printf("  CiA 402 RPDO + SYNC + TPDO   %8.1f ns/cycle (3 frames)  %.2f x MIT\n", mc4, mc4 / mm);
    printf("  CiA 402 SDO read + answer    %8.1f ns/cycle (2 frames)  %.2f x MIT\n", ms, ms / mm);
    printf("(drive state %d, %u frames out)\n", hs_cia402_node_state(&c4), sink);
    return 0;
}
