/* libFuzzer target: arbitrary bytes as a bench segment. hs_client_attach must reject anything
 * inconsistent with a clear error, and whatever it accepts must be safe to use (names, state
 * reads, waits, claim and command writes stay inside the mapping). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hilsim/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(struct hs_client *c)
{
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    struct hs_shm_joint_state *j = calloc(info.joint_count + 1, sizeof *j);
    struct hs_shm_imu_state *m = calloc(info.imu_count + 1, sizeof *m);
    struct hs_shm_ft_state *f = calloc(info.ft_count + 1, sizeof *f);
    struct hs_client_state st = {.joints = j, .imus = m, .fts = f};
    hs_client_read_state(c, &st);
    uint32_t idx, kind;
    hs_client_find_joint(c, "RARM_ELBOW", &idx);
    hs_client_find_sensor(c, "FT_R", &kind, &idx);
    for (uint32_t i = 0; i <= info.joint_count; i++) {
        hs_client_joint_name(c, i);
        hs_client_joint_unit(c, i);
    }
    hs_client_wait_tick(c, 0, NULL, NULL);
    if (hs_client_claim(c, NULL, 0) == 0) {
        struct hs_client_command cmd = {.mode = HS_SHM_MODE_POSITION_PD, .q = 1, .kp = 1};
        hs_client_write_command(c, 0, &cmd);
        hs_client_write_commands(c, &cmd, info.joint_count ? 1 : 0);
    }
    free(j);
    free(m);
    free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char bench[64];
    if (!bench[0])
        snprintf(bench, sizeof bench, "fuzz%ld", (long)getpid());
    char name[96];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        shm_unlink(name);
        return 0;
    }
    close(fd);
    struct hs_client *c = NULL;
    char err[HS_CLIENT_ERRBUF_MIN];
    if (hs_client_attach(bench, &c, err, sizeof err) == 0) {
        exercise(c);
        hs_client_detach(c);
    }
    shm_unlink(name);
    return 0;
}
