/* Layout of a bench segment: validation of the description, sizes, header and name table. */
#include <errno.h>
#include <string.h>

#include "shm_server_internal.h"

static int name_ok(const char *name)
{
    return name && name[0] && strlen(name) < HS_SHM_NAME_MAX;
}

int hs__shm_layout_check(const struct hs_shm_layout *l, struct hs_diag *diag)
{
    if (!l)
        return hs_diag_set(diag, -EINVAL, NULL, 0, 0, "shm layout: missing description");
    if (l->joint_count > HS_SHM_JOINTS_MAX || (l->joint_count && !l->joints))
        return hs_diag_set(diag, -EINVAL, NULL, 0, 0, "shm layout: joint_count %u (max %u)",
                           l->joint_count, HS_SHM_JOINTS_MAX);
    if (l->sensor_count > HS_SHM_SENSORS_MAX || (l->sensor_count && !l->sensors))
        return hs_diag_set(diag, -EINVAL, NULL, 0, 0, "shm layout: sensor_count %u (max %u)",
                           l->sensor_count, HS_SHM_SENSORS_MAX);
    if (!l->tick_period_ns || !l->command_timeout_ns || !l->client_timeout_ns)
        return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                           "shm layout: tick_period_ns, command_timeout_ns and client_timeout_ns "
                           "must be > 0");
    if (l->clock_mode >= HS_SHM_CLOCK_MODE_MAX)
        return hs_diag_set(diag, -EINVAL, NULL, 0, 0, "shm layout: clock_mode %u unknown",
                           l->clock_mode);
    for (uint32_t i = 0; i < l->joint_count; i++) {
        const struct hs_shm_joint_desc *j = &l->joints[i];
        if (!name_ok(j->name))
            return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                               "shm layout: joints[%u].name empty or longer than %d bytes", i,
                               HS_SHM_NAME_MAX - 1);
        if (j->unit && strcmp(j->unit, "rad") && strcmp(j->unit, "m"))
            return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                               "shm layout: joints[%u].unit '%s' (expected \"rad\" or \"m\")", i,
                               j->unit);
        for (uint32_t k = 0; k < i; k++)
            if (!strcmp(l->joints[k].name, j->name))
                return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                                   "shm layout: joints[%u].name '%s' duplicates joints[%u]", i,
                                   j->name, k);
    }
    for (uint32_t i = 0; i < l->sensor_count; i++) {
        const struct hs_shm_sensor_desc *d = &l->sensors[i];
        if (!name_ok(d->name))
            return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                               "shm layout: sensors[%u].name empty or longer than %d bytes", i,
                               HS_SHM_NAME_MAX - 1);
        if (d->kind != HS_SHM_KIND_IMU && d->kind != HS_SHM_KIND_FORCE)
            return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                               "shm layout: sensors[%u].kind %d (expected IMU or FORCE)", i,
                               (int)d->kind);
        for (uint32_t k = 0; k < i; k++)
            if (!strcmp(l->sensors[k].name, d->name))
                return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                                   "shm layout: sensors[%u].name '%s' duplicates sensors[%u]", i,
                                   d->name, k);
    }
    uint64_t values = 0;
    if (l->reading_count > HS_SHM_SENSORS_MAX || (l->reading_count && !l->readings))
        return hs_diag_set(diag, -EINVAL, NULL, 0, 0, "shm layout: reading_count %u (max %u)",
                           l->reading_count, HS_SHM_SENSORS_MAX);
    for (uint32_t i = 0; i < l->reading_count; i++) {
        const struct hs_shm_reading_desc *d = &l->readings[i];
        if (!d->name[0] || !memchr(d->name, 0, sizeof d->name) ||
            !memchr(d->kind, 0, sizeof d->kind) || !memchr(d->unit, 0, sizeof d->unit))
            return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                               "shm layout: readings[%u]: name empty, or a string not terminated",
                               i);
        values += d->value_count;
        if (values > HS_SHM_READING_VALUES_MAX)
            return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                               "shm layout: readings: more than %u values",
                               HS_SHM_READING_VALUES_MAX);
        for (uint32_t k = 0; k < i; k++)
            if (!strcmp(l->readings[k].name, d->name))
                return hs_diag_set(diag, -EINVAL, NULL, 0, 0,
                                   "shm layout: readings[%u].name '%s' duplicates readings[%u]", i,
                                   d->name, k);
    }
    return 0;
}

uint32_t hs__shm_layout_reading_values(const struct hs_shm_layout *l)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < l->reading_count; i++)
        n += l->readings[i].value_count;
    return n;
}

static void count_sensors(const struct hs_shm_layout *l, uint32_t *imus, uint32_t *fts)
{
    *imus = *fts = 0;
    for (uint32_t i = 0; i < l->sensor_count; i++) {
        if (l->sensors[i].kind == HS_SHM_KIND_IMU)
            (*imus)++;
        else
            (*fts)++;
    }
}

struct offsets {
    uint64_t names, names_size, state, state_size, command, command_size, readings, readings_size,
        total;
};

static struct offsets layout_offsets(const struct hs_shm_layout *l, uint32_t imus, uint32_t fts)
{
    struct offsets o;
    o.names = hs_shm_align(sizeof(struct hs_shm_header));
    o.names_size = (uint64_t)(l->joint_count + l->sensor_count) * sizeof(struct hs_shm_name);
    o.state = hs_shm_align(o.names + o.names_size);
    o.state_size = hs_shm_state_bytes(l->joint_count, imus, fts);
    /* The readings section sits between state and commands: like the state, only the server
     * writes it, and the command section, the one clients write, stays last. */
    o.readings = hs_shm_align(o.state + o.state_size);
    o.readings_size = hs_shm_readings_bytes(l->reading_count, hs__shm_layout_reading_values(l));
    o.command = hs_shm_align(o.readings + o.readings_size);
    o.command_size = hs_shm_command_bytes(l->joint_count);
    o.total = hs_shm_align(o.command + o.command_size);
    return o;
}

uint64_t hs__shm_layout_total(const struct hs_shm_layout *l, uint32_t *ret_imus, uint32_t *ret_fts)
{
    uint32_t imus, fts;
    count_sensors(l, &imus, &fts);
    *ret_imus = imus;
    *ret_fts = fts;
    return layout_offsets(l, imus, fts).total;
}

static void set_name(struct hs_shm_name *n, const char *name, const char *unit, uint32_t kind,
                     uint32_t index)
{
    memset(n, 0, sizeof *n);
    memcpy(n->name, name, strlen(name));
    memcpy(n->unit, unit, strlen(unit));
    n->kind = kind;
    n->index = index;
}

void hs__shm_layout_fill(unsigned char *base, const struct hs_shm_layout *l, uint64_t total)
{
    uint32_t imus, fts;
    count_sensors(l, &imus, &fts);
    struct offsets o = layout_offsets(l, imus, fts);
    memset(base, 0, total);

    struct hs_shm_header *h = (struct hs_shm_header *)base;
    h->abi_version = HS_SHM_ABI_VERSION;
    h->total_size = total;
    h->header_size = sizeof *h;
    h->joint_count = l->joint_count;
    h->imu_count = imus;
    h->ft_count = fts;
    h->name_count = l->joint_count + l->sensor_count;
    h->tick_period_ns = l->tick_period_ns;
    h->command_timeout_ns = l->command_timeout_ns;
    h->client_timeout_ns = l->client_timeout_ns;
    h->clock_mode = l->clock_mode;
    h->abi_minor = HS_SHM_ABI_MINOR;
    h->names_offset = o.names;
    h->names_size = o.names_size;
    h->state_offset = o.state;
    h->state_size = o.state_size;
    h->command_offset = o.command;
    h->command_size = o.command_size;
    h->readings_offset = o.readings;
    h->readings_size = o.readings_size;

    struct hs_shm_readings_head *rh = (struct hs_shm_readings_head *)(base + o.readings);
    rh->count = l->reading_count;
    rh->value_count = hs__shm_layout_reading_values(l);
    rh->desc_offset = sizeof *rh;
    rh->stamp_offset = rh->desc_offset + (uint64_t)rh->count * sizeof(struct hs_shm_reading_desc);
    rh->value_offset = rh->stamp_offset + (uint64_t)rh->count * sizeof(struct hs_shm_reading_stamp);
    struct hs_shm_reading_desc *rd =
        (struct hs_shm_reading_desc *)(base + o.readings + rh->desc_offset);
    uint32_t vi = 0;
    for (uint32_t i = 0; i < l->reading_count; i++) {
        rd[i] = l->readings[i];
        rd[i].value_index = vi;
        rd[i].reserved = 0;
        vi += rd[i].value_count;
    }

    struct hs_shm_name *names = (struct hs_shm_name *)(base + o.names);
    uint32_t n = 0, imu_i = 0, ft_i = 0;
    for (uint32_t i = 0; i < l->joint_count; i++)
        set_name(&names[n++], l->joints[i].name, l->joints[i].unit ? l->joints[i].unit : "rad",
                 HS_SHM_KIND_JOINT, i);
    for (uint32_t i = 0; i < l->sensor_count; i++) {
        if (l->sensors[i].kind == HS_SHM_KIND_IMU)
            set_name(&names[n++], l->sensors[i].name, "m/s2,rad/s", HS_SHM_KIND_IMU, imu_i++);
        else
            set_name(&names[n++], l->sensors[i].name, "N,Nm", HS_SHM_KIND_FORCE, ft_i++);
    }
}
