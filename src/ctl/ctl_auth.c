/* Who may command a bench over its control socket. The socket's mode (0660) already keeps
 * others out at connect; the server checks the peer's credentials again, as the kernel gives
 * them (SO_PEERCRED, SO_PEERGROUPS), so a socket whose mode or group was widened by hand, or a
 * descriptor passed on by an allowed process, does not let anyone else command the bench. */
#include <errno.h>
#include <stdio.h>

#include "hilsim/ctl.h"

int hs_ctl_peer_allowed(const struct hs_ctl_peer *peer, uint32_t bench_uid, uint32_t socket_gid,
                        char *err, size_t errsize)
{
    if (peer->uid == 0 || peer->uid == bench_uid || peer->gid == socket_gid)
        return 0;
    for (uint32_t i = 0; i < peer->ngroups; i++)
        if (peer->groups[i] == socket_gid)
            return 0;
    snprintf(err, errsize,
             "not authorised: uid %u (pid %u) is not root, not the bench's user (uid %u) and not "
             "in the control socket's group (gid %u)",
             peer->uid, peer->pid, bench_uid, socket_gid);
    return -EACCES;
}
