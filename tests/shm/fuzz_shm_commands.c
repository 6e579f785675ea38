/* libFuzzer target: a hostile or broken client. The input is a script of writes into a real
 * segment's command section, as a client process could make them (owner word, heartbeat,
 * seqlock word, writer word, raw joint commands, including a seqlock left odd), interleaved
 * with the server's per-tick reads. Whatever the client writes, the server must never hand the
 * tick a command the client library would have refused (unknown mode, NaN or infinite values),
 * every status must be one of the enum's, and the report's counts must fit the joint count.
 *
 * Script records: one op byte, then its operands (little-endian, taken as far as data lasts):
 *   0 owner u64   1 heartbeat++   2 seq u32   3 writer u64   4 joint u8 + command bytes
 *   5 read at now += u16 us       6 a well-formed write by the current owner (seq odd, data,
 *   writer = owner, seq even) of joint u8 with command bytes */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/shm_test_layout.h"

#define JOINTS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct cursor {
    const uint8_t *p;
    size_t n;
};

static uint64_t take(struct cursor *c, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && c->n; i++, c->n--)
        v |= (uint64_t)*c->p++ << (8 * i);
    return v;
}

static void take_command(struct cursor *c, struct hs_shm_joint_command *cmd)
{
    size_t k = c->n < sizeof *cmd ? c->n : sizeof *cmd;
    memset(cmd, 0, sizeof *cmd);
    memcpy(cmd, c->p, k);
    c->p += k, c->n -= k;
}

static void check(const struct hs_shm_server *s, const struct hs_shm_command_report *rep)
{
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(s);
    for (uint32_t i = 0; i < JOINTS; i++) {
        if (in[i].status >= HS_SHM_CMD_STATUS_MAX)
            abort();
        const struct hs_shm_joint_command *c = &in[i].cmd;
        if (in[i].status != HS_SHM_CMD_NONE &&
            (c->mode >= HS_SHM_MODE_MAX || !isfinite(c->q) || !isfinite(c->dq) ||
             !isfinite(c->tau_ff) || !isfinite(c->current_a) || !isfinite(c->kp) ||
             !isfinite(c->kd)))
            abort(); /* an invalid command reached the tick */
        if (in[i].status != HS_SHM_CMD_NONE && c->seq == 0)
            abort();
    }
    if (rep->fresh > JOINTS || rep->stale > JOINTS || rep->client_status > HS_SHM_CLIENT_LOST)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char bench[64];
    static struct hs_test_layout t;
    if (!bench[0]) {
        snprintf(bench, sizeof bench, "fuzzcmd%ld", (long)getpid());
        hs_test_layout_init(&t, JOINTS);
    }
    struct hs_shm_server *s = NULL;
    struct hs_diag d;
    if (hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d) < 0)
        abort();
    /* The client's view: the segment mapped read-write by name, as another process would. */
    char name[96];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    int fd = shm_open(name, O_RDWR, 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        abort();
    uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        abort();
    const struct hs_shm_header *h = (const struct hs_shm_header *)base;
    struct hs_shm_command_head *head = (struct hs_shm_command_head *)(base + h->command_offset);
    struct hs_shm_joint_command *cmds = (struct hs_shm_joint_command *)(head + 1);

    struct cursor c = {data, size};
    int64_t now_ns = 1000000;
    struct hs_shm_command_report rep;
    uint64_t owner = 0;
    unsigned ops = 0;
    while (c.n && ops++ < 4096) {
        uint8_t op = (uint8_t)take(&c, 1) % 7;
        struct hs_shm_joint_command cmd;
        switch (op) {
        case 0:
            owner = take(&c, 8);
            atomic_store(&head->owner, owner);
            break;
        case 1:
            atomic_fetch_add(&head->heartbeat, 1);
            break;
        case 2:
            atomic_store(&head->seq, (uint32_t)take(&c, 4));
            break;
        case 3:
            head->writer = take(&c, 8);
            break;
        case 4: {
            uint32_t j = (uint32_t)take(&c, 1) % JOINTS;
            take_command(&c, &cmd);
            memcpy(&cmds[j], &cmd, sizeof cmd);
            break;
        }
        case 5:
            now_ns += (int64_t)take(&c, 2) * 1000;
            hs_shm_server_read_commands(s, now_ns, &rep);
            check(s, &rep);
            break;
        default: {
            uint32_t j = (uint32_t)take(&c, 1) % JOINTS;
            take_command(&c, &cmd);
            uint32_t q = atomic_load(&head->seq);
            atomic_store(&head->seq, q | 1u);
            head->writer = owner;
            memcpy(&cmds[j], &cmd, sizeof cmd);
            atomic_store(&head->seq, (q | 1u) + 1);
            atomic_fetch_add(&head->heartbeat, 1);
            break;
        }
        }
    }
    hs_shm_server_read_commands(s, now_ns + 1000000, &rep);
    check(s, &rep);
    munmap(base, (size_t)st.st_size);
    hs_shm_server_destroy(s);
    return 0;
}
