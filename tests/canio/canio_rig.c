#include "canio_rig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(struct hs_diag *d, int r)
{
    char buf[HS_DIAG_MSG_MAX + 256];
    hs_diag_format(d, buf, sizeof buf);
    fprintf(stderr, "canio rig: %s\n", buf);
    return r;
}

int canio_rig_open(struct canio_rig *r, const char *path, const char *text, const char *base_dir,
                   bool with_can)
{
    memset(r, 0, sizeof *r);
    struct hs_diag d = {0};
    /* The rig ticks the bench itself, tick by tick on simulated time: a guest config's lockstep
     * clock (released by the guest peer's SYNC) has no part here, or the bench would hold the
     * frames it is sent for a SYNC that never comes. */
    static const char *const wall[] = {"rt.clock.mode=wall"};
    int rc = text ? hs_config_load_buffer(text, strlen(text), "canio.yaml", base_dir, &r->cfg, &d)
                  : hs_config_load_sets(path, wall, 1, &r->cfg, &d);
    if (rc < 0)
        return fail(&d, rc);
    rc = hs_bench_create(r->cfg, &r->bench, &d);
    if (rc < 0)
        return fail(&d, rc);
    r->period_ns = hs_bench_tick_period_ns(r->bench);
    r->now_ns = r->period_ns;
    if (!with_can)
        return 0;
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops, .tick_time_stamps = true};
    int peer_fd[8];
    for (uint32_t i = 0; i < r->cfg->can.nbuses; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
            return -errno;
        int sz = 4 << 20;
        setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
        setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
        o.socketpair_fd[i] = sv[0];
        peer_fd[i] = sv[1];
    }
    rc = hs_bench_can_attach(r->bench, &o, &r->can, &d);
    if (rc < 0)
        return fail(&d, rc);
    for (uint32_t i = 0; i < r->cfg->can.nbuses; i++) {
        struct hs_can_config pc;
        hs_can_config_init(&pc);
        pc.batch_max = HS_CAN_BATCH_MAX;
        pc.fd = r->cfg->can.buses[i].fd; /* the peer speaks FD where the bus does */
        pc.socketpair_fd = peer_fd[i];
        rc = hs_can_bus_open(&hs_can_socketpair_ops, &pc, &r->peer[i], &d);
        if (rc < 0)
            return fail(&d, rc);
        hs_can_bus_start(r->peer[i]);
        r->npeers++;
    }
    return 0;
}

void canio_rig_close(struct canio_rig *r)
{
    for (uint32_t i = 0; i < r->npeers; i++)
        hs_can_bus_close(r->peer[i]);
    hs_bench_destroy(r->bench);
    hs_config_free(r->cfg);
    memset(r, 0, sizeof *r);
}

int canio_rig_tick(struct canio_rig *r)
{
    int rc = hs_bench_tick(r->bench, r->now_ns, r->tick);
    r->now_ns += r->period_ns;
    r->tick++;
    return rc;
}

int canio_send(struct canio_rig *r, uint32_t bus, uint32_t id, const void *data, unsigned len)
{
    struct hs_can_frame f;
    memset(&f, 0, sizeof f);
    f.id = id;
    f.len = (uint8_t)len;
    if (len)
        memcpy(f.data, data, len);
    return hs_can_bus_send(r->peer[bus], &f, 1);
}

int canio_send_frame(struct canio_rig *r, uint32_t bus, const struct hs_can_frame *f)
{
    return hs_can_bus_send(r->peer[bus], f, 1);
}

int canio_recv(struct canio_rig *r, uint32_t bus, struct hs_can_frame *out, unsigned max)
{
    int n = 0;
    while ((unsigned)n < max) {
        int k = hs_can_bus_recv(r->peer[bus], out + n, max - (unsigned)n);
        if (k <= 0)
            break;
        n += k;
    }
    return n;
}
