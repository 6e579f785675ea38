/* Per-tick command intake: owner heartbeat, seqlocked copy, per-joint freshness. */
#include <math.h>
#include <string.h>

#include "shm_server_internal.h"

#define CMD_WORDS (sizeof(struct hs_shm_joint_command) / 8)
#define READ_ATTEMPTS 2 /* bounded: a writer mid-copy costs us this tick, never a wait */

/* Tracks the owner's heartbeat; returns the client status. */
static uint32_t track_owner(struct hs_shm_server *s, uint64_t owner, int64_t now_ns)
{
    uint64_t hb = atomic_load_explicit(&s->cmd->heartbeat, memory_order_relaxed);
    if (owner != s->tracked_owner) {
        s->tracked_owner = owner;
        s->last_heartbeat = hb;
        s->heartbeat_ns = now_ns;
        s->owner_lost = false;
    }
    if ((uint32_t)owner == 0)
        return HS_SHM_CLIENT_NONE;
    if (hb != s->last_heartbeat && !s->owner_lost) {
        s->last_heartbeat = hb;
        s->heartbeat_ns = now_ns;
    } else if (!s->owner_lost && now_ns - s->heartbeat_ns > (int64_t)s->client_timeout_ns) {
        /* Lost stays lost for this owner word: the client has to claim again. */
        s->owner_lost = true;
        s->lost_total++;
        atomic_store_explicit(&s->hdr->lost_owner, owner, memory_order_release);
    }
    return s->owner_lost ? HS_SHM_CLIENT_LOST : HS_SHM_CLIENT_ACTIVE;
}

/* Copies the section into scratch. Returns 1 when consistent, 0 when torn (mid-write). */
static int copy_section(struct hs_shm_server *s, uint64_t *ret_writer)
{
    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
        uint32_t s0 = hs_shm_seq_read_begin(&s->cmd->seq);
        if (s0 & 1u)
            return 0; /* a writer is inside (or died inside): do not wait for it */
        uint64_t writer;
        hs_shm_words_load(&writer, &s->cmd->writer, 1);
        hs_shm_words_load(s->scratch, s->shm_cmds, (size_t)s->joint_count * CMD_WORDS);
        if (hs_shm_seq_read_valid(&s->cmd->seq, s0)) {
            *ret_writer = writer;
            return 1;
        }
    }
    return 0;
}

/* Clients are not trusted: a command the client library would have refused is not applied. */
static int command_valid(const struct hs_shm_joint_command *c)
{
    return c->mode < HS_SHM_MODE_MAX && isfinite(c->q) && isfinite(c->dq) && isfinite(c->tau_ff) &&
           isfinite(c->current_a) && isfinite(c->kp) && isfinite(c->kd);
}

static void take_new_commands(struct hs_shm_server *s, uint64_t writer, int64_t now_ns,
                              uint32_t *fresh)
{
    /* A new owner numbers its commands afresh: nothing it wrote equals an old command. */
    bool new_writer = writer != s->inputs_writer;
    s->inputs_writer = writer;
    for (uint32_t i = 0; i < s->joint_count; i++) {
        const struct hs_shm_joint_command *c = &s->scratch[i];
        struct hs_shm_joint_input *in = &s->inputs[i];
        if (c->seq == 0) {
            memset(&in->cmd, 0, sizeof in->cmd);
            continue;
        }
        if (!new_writer && c->seq == in->cmd.seq)
            continue;
        if (!command_valid(c)) {
            s->rejected_total++; /* keep the previous command; it ages into STALE */
            continue;
        }
        in->cmd = *c;
        s->received_ns[i] = now_ns;
        in->status = HS_SHM_CMD_FRESH;
        (*fresh)++;
        if (c->seq > s->newest_seq)
            s->newest_seq = c->seq;
    }
}

void hs_shm_server_read_commands(struct hs_shm_server *s, int64_t now_ns,
                                 struct hs_shm_command_report *ret_report)
{
    struct hs_shm_guard_scope scope;
    hs__shm_guard_enter(&scope, &s->guard);
    uint64_t owner = atomic_load_explicit(&s->cmd->owner, memory_order_acquire);
    uint32_t client_status = track_owner(s, owner, now_ns);

    for (uint32_t i = 0; i < s->joint_count; i++)
        if (s->inputs[i].status == HS_SHM_CMD_FRESH)
            s->inputs[i].status = HS_SHM_CMD_HELD;

    uint64_t writer = 0;
    uint32_t fresh = 0, torn = 0;
    if (!copy_section(s, &writer)) {
        torn = 1;
        s->torn_total++;
    } else if (writer == owner && (uint32_t)owner != 0) {
        take_new_commands(s, writer, now_ns, &fresh);
    }
    /* else: data left by a previous owner (or none yet): keep what we had, let it age. */

    uint32_t stale = 0;
    for (uint32_t i = 0; i < s->joint_count; i++) {
        struct hs_shm_joint_input *in = &s->inputs[i];
        if (in->cmd.seq == 0) {
            in->status = HS_SHM_CMD_NONE;
            in->age_ns = 0;
            stale++;
            continue;
        }
        in->age_ns = now_ns - s->received_ns[i];
        if (client_status != HS_SHM_CLIENT_ACTIVE || in->age_ns > (int64_t)s->command_timeout_ns) {
            in->status = HS_SHM_CMD_STALE;
            stale++;
        }
    }

    s->staging_head->command_seq = s->newest_seq;
    s->staging_head->client_status = client_status;
    s->staging_head->stale_joints = stale;

    ret_report->client_status = client_status;
    ret_report->client_pid = (int32_t)(uint32_t)owner;
    ret_report->client_generation = (uint32_t)(owner >> 32);
    ret_report->fresh = fresh;
    ret_report->stale = stale;
    ret_report->torn = torn;
    ret_report->torn_total = s->torn_total;
    ret_report->lost_total = s->lost_total;
    ret_report->rejected_total = s->rejected_total;
    ret_report->newest_seq = s->newest_seq;
    ret_report->repaired_total = s->abuse_total;
    hs__shm_guard_leave(&scope);
}

void hs_shm_server_set_stale_joints(struct hs_shm_server *s, uint32_t stale)
{
    s->staging_head->stale_joints = stale;
}

void hs_shm_server_set_bench_flags(struct hs_shm_server *s, uint64_t flags)
{
    s->staging_head->bench_flags = flags;
}
