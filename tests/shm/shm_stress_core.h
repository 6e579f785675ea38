/* The seqlock stress: one writer publishing at full speed, readers verifying every snapshot they
 * get against the tick it claims to be (every field is a function of the tick). Used with
 * processes (test_shm_stress) and with threads under ThreadSanitizer (test_shm_tsan). */
#ifndef HS_TEST_SHM_STRESS_CORE_H
#define HS_TEST_SHM_STRESS_CORE_H

#include <errno.h>
#include <time.h>

#include "hilsim/client.h"
#include "shm/shm_test_layout.h"

struct stress_result {
    uint64_t snapshots;   /* consistent reads of a published tick */
    uint64_t bad;         /* snapshots with any field inconsistent with their tick */
    uint64_t regressions; /* a tick older than one already seen */
    uint64_t eagain;      /* reads that gave up (every attempt overlapped a publish) */
    uint64_t last_tick;
    int attach_error;
};

static inline double stress_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Reads until the final tick is seen (or 480 s pass: then last_tick tells). The limit only
 * guards against a dead writer: under ThreadSanitizer on a loaded 2-core machine 10^6 updates
 * took past the 120 s it used to be, and the reader gave up before the writer was done. */
static inline void stress_read(struct hs_client *c, uint64_t final_tick, struct stress_result *r)
{
    struct hs_shm_joint_state j[HS_TEST_JOINTS];
    struct hs_shm_imu_state m[HS_TEST_SENSORS];
    struct hs_shm_ft_state f[HS_TEST_SENSORS];
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    struct hs_client_state st = {.joints = j, .imus = m, .fts = f};
    double give_up = stress_now_s() + 480;
    for (uint64_t n = 0;; n++) {
        if (hs_client_read_state(c, &st) < 0) {
            r->eagain++;
            continue;
        }
        if (st.tick < r->last_tick)
            r->regressions++;
        if (st.tick != 0) {
            r->snapshots++;
            if (hs_test_check(st.tick, j, info.joint_count, m, info.imu_count, f, info.ft_count))
                r->bad++;
        }
        r->last_tick = st.tick;
        if (st.tick >= final_tick || ((n & 0xfff) == 0 && stress_now_s() > give_up))
            break;
    }
}

static inline void stress_write(struct hs_shm_server *s, uint64_t final_tick)
{
    for (uint64_t t = 1; t <= final_tick; t++) {
        hs_test_fill(s, t);
        hs_shm_server_publish(s, t, (double)t * 1e-3, (int64_t)t);
    }
}

#endif
