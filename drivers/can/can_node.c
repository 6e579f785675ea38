/* Generic node wrappers and frame dispatch. */
#include <errno.h>

#include "hilsim/can_node.h"

int hs_can_node_on_frame(struct hs_can_node *node, const struct hs_can_frame *f, int64_t now_ns)
{
    return node->ops->on_frame(node, f, now_ns);
}

int hs_can_node_poll(struct hs_can_node *node, int64_t now_ns, const struct hs_can_joint_state *js,
                     struct hs_can_joint_command *ret_cmd, struct hs_can_frame *out,
                     unsigned out_max)
{
    return node->ops->poll(node, now_ns, js, ret_cmd, out, out_max);
}

int hs_can_nodes_dispatch(struct hs_can_node *const *nodes, unsigned n,
                          const struct hs_can_frame *f, int64_t now_ns, uint64_t *unclaimed)
{
    int first = -ENOENT;
    for (unsigned i = 0; i < n; i++) {
        int r = nodes[i]->ops->on_frame(nodes[i], f, now_ns);
        if (r == -ENOENT)
            continue;
        if (first < 0)
            first = (int)i;
        if (r != HS_CAN_NODE_BROADCAST)
            return first;
    }
    if (first >= 0)
        return first;
    if (unclaimed)
        (*unclaimed)++;
    return -ENOENT;
}
