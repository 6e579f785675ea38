/* Consistent state snapshots through the state seqlock. */
#include <errno.h>

#include "client_internal.h"

/* A publish of ~1.5 KiB takes well under a microsecond; 64 overlapping attempts in a row mean the
 * writer is not making progress the way we assume, so report it rather than spin. */
#define READ_ATTEMPTS 64

int hs_client_read_state(const struct hs_client *c, struct hs_client_state *st)
{
    const unsigned char *base = (const unsigned char *)c->state;
    const unsigned char *joints = base + sizeof(struct hs_shm_state_head);
    const unsigned char *imus = joints + (size_t)c->joint_count * sizeof(struct hs_shm_joint_state);
    const unsigned char *fts = imus + (size_t)c->imu_count * sizeof(struct hs_shm_imu_state);
    struct hs_shm_state_head head;

    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
        uint32_t s0 = hs_shm_seq_read_begin(&c->state->seq);
        if (s0 & 1u) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause(); /* a publish is in progress: let it finish */
#endif
            continue;
        }
        hs_shm_words_load((unsigned char *)&head + HS_SHM_SEQ_DATA_OFFSET,
                          base + HS_SHM_SEQ_DATA_OFFSET,
                          (sizeof head - HS_SHM_SEQ_DATA_OFFSET) / 8);
        if (st->joints)
            hs_shm_words_load(st->joints, joints,
                              (size_t)c->joint_count * sizeof(struct hs_shm_joint_state) / 8);
        if (st->imus)
            hs_shm_words_load(st->imus, imus,
                              (size_t)c->imu_count * sizeof(struct hs_shm_imu_state) / 8);
        if (st->fts)
            hs_shm_words_load(st->fts, fts,
                              (size_t)c->ft_count * sizeof(struct hs_shm_ft_state) / 8);
        if (hs_shm_seq_read_valid(&c->state->seq, s0)) {
            st->tick = head.tick;
            st->sim_time_s = head.sim_time_s;
            st->mono_ns = head.mono_ns;
            st->command_seq = head.command_seq;
            st->client_status = head.client_status;
            st->stale_joints = head.stale_joints;
            st->bench_flags = head.bench_flags;
            if (atomic_load_explicit(&c->hdr->server_state, memory_order_acquire) ==
                HS_SHM_SERVER_STOPPED)
                return -ESHUTDOWN;
            /* A state older than silent_ns (one vDSO clock read to know): the server may have
             * crashed; only then ask (a stat and a /proc read), so a live server costs nothing. */
            int64_t now = hs_rt_now_ns();
            /* the difference in unsigned: mono_ns is the segment's word, and a hostile or
             * damaged one (INT64_MIN) must not overflow it (fuzz_client_attach found it) */
            if (head.mono_ns < now &&
                (uint64_t)now - (uint64_t)head.mono_ns > (uint64_t)c->silent_ns)
                return hs__client_server_gone(c);
            return 0;
        }
    }
    return -EAGAIN;
}
