/* Test helpers shared by tests/shm and tests/client: unique bench names, a humanoid-sized layout
 * (30 joints, 3 IMUs, 3 F/T sensors) and values derived from the tick so every snapshot can be
 * checked for consistency field by field. */
#ifndef HS_TEST_SHM_LAYOUT_H
#define HS_TEST_SHM_LAYOUT_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hilsim/shm_server.h"

#define HS_TEST_JOINTS 30
#define HS_TEST_SENSORS 6

struct hs_test_layout {
    char joint_names[HS_TEST_JOINTS][HS_SHM_NAME_MAX];
    char sensor_names[HS_TEST_SENSORS][HS_SHM_NAME_MAX];
    struct hs_shm_joint_desc joints[HS_TEST_JOINTS];
    struct hs_shm_sensor_desc sensors[HS_TEST_SENSORS];
    struct hs_shm_layout layout;
};

/* "t<pid>-<tag>": unique per process and test. */
static inline void hs_test_bench(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "t%ld-%s", (long)getpid(), tag);
}

/* cmocka group teardown: unlinks every segment this process's tests named (a failed assertion
 * skips the test's own destroy). */
static inline int hs_test_cleanup(void **state)
{
    (void)state;
    char prefix[64], name[300];
    snprintf(prefix, sizeof prefix, "hilsim-t%ld-", (long)getpid());
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            snprintf(name, sizeof name, "/%s", e->d_name);
            shm_unlink(name);
        }
    if (d)
        closedir(d);
    return 0;
}

/* Joint 4 is "RARM_ELBOW" and joint 29 is linear ("m"); sensors alternate IMU and F/T. */
static inline void hs_test_layout_init(struct hs_test_layout *t, uint32_t joints)
{
    for (uint32_t i = 0; i < joints && i < HS_TEST_JOINTS; i++) {
        if (i == 4)
            snprintf(t->joint_names[i], HS_SHM_NAME_MAX, "RARM_ELBOW");
        else
            snprintf(t->joint_names[i], HS_SHM_NAME_MAX, "JOINT_%02u", i);
        t->joints[i].name = t->joint_names[i];
        t->joints[i].unit = i == 29 ? "m" : "rad";
    }
    for (uint32_t i = 0; i < HS_TEST_SENSORS; i++) {
        snprintf(t->sensor_names[i], HS_SHM_NAME_MAX, "%s_%u", i % 2 ? "FT" : "IMU", i / 2);
        t->sensors[i].name = t->sensor_names[i];
        t->sensors[i].kind = i % 2 ? HS_SHM_KIND_FORCE : HS_SHM_KIND_IMU;
    }
    t->layout = (struct hs_shm_layout){
        .joints = t->joints,
        .joint_count = joints,
        .sensors = t->sensors,
        .sensor_count = HS_TEST_SENSORS,
        .tick_period_ns = 1000000,
        .command_timeout_ns = 10000000,
        .client_timeout_ns = 100000000,
    };
}

/* Fills the server's staging arrays with values that are all functions of tick. */
static inline void hs_test_fill(struct hs_shm_server *s, uint64_t tick)
{
    struct hs_shm_joint_state *j = hs_shm_server_joints(s);
    double t = (double)tick;
    for (uint32_t i = 0; i < hs_shm_server_joint_count(s); i++) {
        j[i].q = t + i;
        j[i].dq = -t - i;
        j[i].tau = 0.5 * t;
        j[i].current_a = t * 2 + i;
        j[i].encoder_count = (int64_t)tick * 31 + i;
    }
    struct hs_shm_imu_state *m = hs_shm_server_imus(s);
    for (uint32_t i = 0; i < hs_shm_server_imu_count(s); i++)
        for (int k = 0; k < 3; k++) {
            m[i].accel_mps2[k] = t + k;
            m[i].gyro_rad_s[k] = t - k;
        }
    struct hs_shm_ft_state *f = hs_shm_server_fts(s);
    for (uint32_t i = 0; i < hs_shm_server_ft_count(s); i++)
        for (int k = 0; k < 3; k++) {
            f[i].force_n[k] = 3 * t + k;
            f[i].torque_nm[k] = 4 * t + k;
        }
}

/* Returns the number of fields inconsistent with tick (0 for a good snapshot). */
static inline unsigned hs_test_check(uint64_t tick, const struct hs_shm_joint_state *j, uint32_t nj,
                                     const struct hs_shm_imu_state *m, uint32_t ni,
                                     const struct hs_shm_ft_state *f, uint32_t nf)
{
    double t = (double)tick;
    unsigned bad = 0;
    for (uint32_t i = 0; i < nj; i++)
        bad += (j[i].q != t + i) + (j[i].dq != -t - i) + (j[i].tau != 0.5 * t) +
               (j[i].current_a != t * 2 + i) + (j[i].encoder_count != (int64_t)tick * 31 + i);
    for (uint32_t i = 0; i < ni; i++)
        for (int k = 0; k < 3; k++)
            bad += (m[i].accel_mps2[k] != t + k) + (m[i].gyro_rad_s[k] != t - k);
    for (uint32_t i = 0; i < nf; i++)
        for (int k = 0; k < 3; k++)
            bad += (f[i].force_n[k] != 3 * t + k) + (f[i].torque_nm[k] != 4 * t + k);
    return bad;
}

#endif
