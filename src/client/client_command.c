/* Owning the command section (CAS claim with generation) and writing joint commands. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client_internal.h"

#define CMD_WORDS (sizeof(struct hs_shm_joint_command) / 8)

static int pid_alive(uint32_t pid)
{
    return pid != 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH);
}

void hs_client_heartbeat(struct hs_client *c)
{
    if (c->owner_word)
        atomic_fetch_add_explicit(&c->cmd->heartbeat, 1, memory_order_relaxed);
}

int hs_client_claim(struct hs_client *c, char *errbuf, size_t errbuf_size)
{
    if (c->readonly)
        return hs__client_err(errbuf, errbuf_size, -EPERM,
                              "a read-only client cannot claim the commands");
    uint64_t owner = atomic_load_explicit(&c->cmd->owner, memory_order_acquire);
    if (c->owner_word && owner == c->owner_word &&
        atomic_load_explicit(&c->hdr->lost_owner, memory_order_acquire) != owner)
        return 0;
    uint32_t pid = (uint32_t)owner;
    if (pid_alive(pid) && (pid != (uint32_t)getpid() || owner != c->owner_word) &&
        atomic_load_explicit(&c->hdr->lost_owner, memory_order_acquire) != owner)
        return hs__client_err(errbuf, errbuf_size, -EBUSY,
                              "commands are owned by live client pid %u (generation %u)", pid,
                              (uint32_t)(owner >> 32));
    uint64_t mine = ((owner >> 32) + 1) << 32 | (uint32_t)getpid();
    if (!atomic_compare_exchange_strong_explicit(&c->cmd->owner, &owner, mine, memory_order_acq_rel,
                                                 memory_order_acquire))
        return hs__client_err(errbuf, errbuf_size, -EBUSY,
                              "another client claimed the commands first (pid %u)",
                              (uint32_t)owner);
    c->owner_word = mine;

    /* Whatever a previous owner left (perhaps half-written, seq odd) is replaced by "no command"
     * before seq becomes even again, so it can never be read as consistent. */
    struct hs_shm_joint_command zero;
    memset(&zero, 0, sizeof zero);
    uint32_t odd = hs_shm_seq_write_begin(&c->cmd->seq);
    for (uint32_t i = 0; i < c->joint_count; i++)
        hs_shm_words_store(&c->shm_cmds[i], &zero, CMD_WORDS);
    hs_shm_words_store(&c->cmd->writer, &mine, 1);
    hs_shm_seq_write_end(&c->cmd->seq, odd);
    hs_client_heartbeat(c);
    return 0;
}

void hs_client_release(struct hs_client *c)
{
    uint64_t mine = c->owner_word;
    if (!mine)
        return;
    uint64_t freed = mine & ~(uint64_t)0xffffffffu; /* keep the generation, pid 0 */
    atomic_compare_exchange_strong_explicit(&c->cmd->owner, &mine, freed, memory_order_acq_rel,
                                            memory_order_relaxed);
    c->owner_word = 0;
}

static int check_owner(struct hs_client *c)
{
    /* A stopped server applies nothing: say so rather than accept the command. */
    if (atomic_load_explicit(&c->hdr->server_state, memory_order_acquire) == HS_SHM_SERVER_STOPPED)
        return -ESHUTDOWN;
    if (!c->owner_word)
        return -EPERM;
    if (atomic_load_explicit(&c->cmd->owner, memory_order_acquire) != c->owner_word) {
        c->owner_word = 0; /* taken over */
        return -EPERM;
    }
    if (atomic_load_explicit(&c->hdr->lost_owner, memory_order_acquire) == c->owner_word)
        return -ENOTCONN;
    return 0;
}

static int command_valid(const struct hs_client_command *cmd)
{
    return cmd->mode < HS_SHM_MODE_MAX && isfinite(cmd->q) && isfinite(cmd->dq) &&
           isfinite(cmd->tau_ff) && isfinite(cmd->current_a) && isfinite(cmd->kp) &&
           isfinite(cmd->kd);
}

static void to_shm(const struct hs_client_command *in, uint64_t seq, int64_t stamp_ns,
                   struct hs_shm_joint_command *out)
{
    *out = (struct hs_shm_joint_command){
        .mode = in->mode,
        .q = in->q,
        .dq = in->dq,
        .tau_ff = in->tau_ff,
        .current_a = in->current_a,
        .kp = in->kp,
        .kd = in->kd,
        .seq = seq,
        .stamp_ns = stamp_ns,
    };
}

int hs_client_write_commands(struct hs_client *c, const struct hs_client_command *cmds,
                             uint32_t count)
{
    int r = check_owner(c);
    if (r < 0)
        return r;
    if (count > c->joint_count)
        return -EINVAL;
    for (uint32_t i = 0; i < count; i++)
        if (!command_valid(&cmds[i]))
            return -EINVAL;
    uint64_t seq = ++c->next_seq;
    int64_t now = hs_rt_now_ns();
    struct hs_shm_joint_command jc;
    uint32_t odd = hs_shm_seq_write_begin(&c->cmd->seq);
    for (uint32_t i = 0; i < count; i++) {
        to_shm(&cmds[i], seq, now, &jc);
        hs_shm_words_store(&c->shm_cmds[i], &jc, CMD_WORDS);
    }
    hs_shm_words_store(&c->cmd->writer, &c->owner_word, 1);
    hs_shm_seq_write_end(&c->cmd->seq, odd);
    hs_client_heartbeat(c);
    return 0;
}

int hs_client_write_command(struct hs_client *c, uint32_t joint,
                            const struct hs_client_command *cmd)
{
    int r = check_owner(c);
    if (r < 0)
        return r;
    if (joint >= c->joint_count || !command_valid(cmd))
        return -EINVAL;
    struct hs_shm_joint_command jc;
    to_shm(cmd, ++c->next_seq, hs_rt_now_ns(), &jc);
    uint32_t odd = hs_shm_seq_write_begin(&c->cmd->seq);
    hs_shm_words_store(&c->shm_cmds[joint], &jc, CMD_WORDS);
    hs_shm_words_store(&c->cmd->writer, &c->owner_word, 1);
    hs_shm_seq_write_end(&c->cmd->seq, odd);
    hs_client_heartbeat(c);
    return 0;
}

int hs_client_step(struct hs_client *c)
{
    int r = check_owner(c);
    if (r < 0)
        return r;
    hs_client_heartbeat(c);
    /* seq_cst store then load, paired with the server's flag store and re-load (shm_release.c):
     * either it sees the release, or we see it waiting and wake it. */
    atomic_store_explicit(&c->hdr->release_futex, (uint32_t)c->last_tick, memory_order_seq_cst);
    if (atomic_load_explicit(&c->hdr->release_waiting, memory_order_seq_cst))
        syscall(SYS_futex, &c->hdr->release_futex, FUTEX_WAKE, 1, NULL, NULL, 0);
    return 0;
}

uint64_t hs_client_last_command_seq(const struct hs_client *c)
{
    return c->next_seq;
}
