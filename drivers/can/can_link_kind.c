/* The rtnetlink link kind of an interface ("can", "vcan", "vxcan", ...). libsocketcan's
 * getters only work on kind "can" and print to stderr otherwise, so the kind is checked first
 * with one RTM_GETLINK request of our own. Init only. */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "can_link.h"

static int find_kind(struct nlmsghdr *h, size_t len, char *kind, size_t size)
{
    for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
        if (h->nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *e = NLMSG_DATA(h);
            return e->error ? e->error : -ENODEV;
        }
        if (h->nlmsg_type != RTM_NEWLINK)
            continue;
        struct ifinfomsg *ifi = NLMSG_DATA(h);
        int alen = (int)IFLA_PAYLOAD(h);
        for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
            if (a->rta_type != IFLA_LINKINFO)
                continue;
            int ilen = (int)RTA_PAYLOAD(a);
            for (struct rtattr *i = RTA_DATA(a); RTA_OK(i, ilen); i = RTA_NEXT(i, ilen))
                if (i->rta_type == IFLA_INFO_KIND) {
                    snprintf(kind, size, "%.*s", (int)RTA_PAYLOAD(i), (char *)RTA_DATA(i));
                    return 0;
                }
        }
        kind[0] = 0; /* a link without a kind (physical non-CAN device) */
        return 0;
    }
    return -EIO;
}

int hs__can_link_kind(const char *iface, char *kind, size_t size)
{
    unsigned idx = if_nametoindex(iface);
    if (!idx)
        return -ENODEV;
    int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (s < 0)
        return -errno;
    struct timeval tv = {.tv_sec = 1};
    (void)setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct {
        struct nlmsghdr h;
        struct ifinfomsg i;
    } req;
    memset(&req, 0, sizeof req);
    req.h.nlmsg_len = NLMSG_LENGTH(sizeof req.i);
    req.h.nlmsg_type = RTM_GETLINK;
    req.h.nlmsg_flags = NLM_F_REQUEST;
    req.h.nlmsg_seq = 1;
    req.i.ifi_family = AF_UNSPEC;
    req.i.ifi_index = (int)idx;
    int r;
    if (send(s, &req, req.h.nlmsg_len, 0) < 0) {
        r = -errno;
    } else {
        static _Alignas(struct nlmsghdr) char buf[16384];
        ssize_t n = recv(s, buf, sizeof buf, 0);
        r = n < 0 ? -errno : find_kind((struct nlmsghdr *)buf, (size_t)n, kind, size);
    }
    close(s);
    return r;
}
