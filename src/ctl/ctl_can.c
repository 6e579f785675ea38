/* The CAN buses as `ctl status` and `ctl state` show them: each bus's name, its state as the
 * tick last saw it (error-active, error-passive, bus-off, ... as the bus reports it; vcan has no
 * controller and may say unknown) and the frames the kernel dropped before the bench read them.
 * Read off the tick: hs_bench_can_bus_live loads what the tick published (relaxed atomics), as
 * systemd's STATUS= line does. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>

#include "hilsim/config.h"
#include "hilsim/ctl.h"
#include "hilsim/io_can.h"

int hs_ctl_can_text(const struct hs_bench_can *can, char *buf, size_t size)
{
    if (!size)
        return 0;
    size_t n = 0;
    buf[0] = 0;
    int w = snprintf(buf, size, "can");
    if (w < 0 || (size_t)w >= size)
        return -ENOSPC;
    n = (size_t)w;
    const char *name;
    enum hs_can_bus_state st;
    uint64_t drops;
    uint32_t i = 0;
    for (; can && i < HS_CFG_MAX_BUSES && hs_bench_can_bus_live(can, i, &name, &st, &drops) == 0;
         i++) {
        const char *iface = hs_bench_can_bus_interface(can, i);
        w = snprintf(buf + n, size - n, "%s %s (%s) %s drops %llu", i ? "," : "", name, iface,
                     hs_can_bus_state_name(st), (unsigned long long)drops);
        if (w < 0 || (size_t)w >= size - n) {
            buf[n] = 0;
            return -ENOSPC;
        }
        n += (size_t)w;
    }
    w = snprintf(buf + n, size - n, "%s", i ? "" : " none");
    if (w < 0 || (size_t)w >= size - n) {
        buf[n] = 0;
        return -ENOSPC;
    }
    return (int)(n + (size_t)w);
}

json_t *hs_ctl_can_json(const struct hs_bench_can *can)
{
    json_t *a = json_array();
    const char *name;
    enum hs_can_bus_state st;
    uint64_t drops;
    bool bad = !a;
    for (uint32_t i = 0;
         a && can && i < HS_CFG_MAX_BUSES && hs_bench_can_bus_live(can, i, &name, &st, &drops) == 0;
         i++) {
        json_t *o = json_object();
        bad |= json_object_set_new(o, "name", json_string(name)) != 0;
        bad |= json_object_set_new(o, "interface",
                                   json_string(hs_bench_can_bus_interface(can, i))) != 0;
        bad |= json_object_set_new(o, "state", json_string(hs_can_bus_state_name(st))) != 0;
        bad |= json_object_set_new(o, "drops", json_integer((json_int_t)drops)) != 0;
        bad |= json_array_append_new(a, o) != 0;
    }
    if (!bad)
        return a;
    json_decref(a);
    return NULL;
}
