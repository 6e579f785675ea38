/* The readings section (shm_abi.h, ABI 1.3): every sensor of any kind, described generically.
 * Attach copies and checks the descriptors; reads copy stamps and values under the state
 * seqlock. A segment from a server before 1.3 has no section: zero readings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"

#define READ_ATTEMPTS 64

int hs__client_copy_readings(struct hs_client *c, char *errbuf, size_t errbuf_size)
{
    const struct hs_shm_header *h = c->hdr;
    uint64_t off = h->readings_offset, size = h->readings_size, total = h->total_size;
    if (h->abi_minor < 3 || off == 0)
        return 0;
    struct hs_shm_readings_head rh;
    if (off % 8 || off < sizeof *h || off > total || size > total - off || size < sizeof rh)
        goto bad;
    memcpy(&rh, c->base + off, sizeof rh);
    if (rh.count > HS_SHM_SENSORS_MAX || rh.value_count > HS_SHM_READING_VALUES_MAX ||
        size != hs_shm_readings_bytes(rh.count, rh.value_count) || rh.desc_offset != sizeof rh ||
        rh.stamp_offset !=
            rh.desc_offset + (uint64_t)rh.count * sizeof(struct hs_shm_reading_desc) ||
        rh.value_offset !=
            rh.stamp_offset + (uint64_t)rh.count * sizeof(struct hs_shm_reading_stamp))
        goto bad;
    c->readings = calloc(rh.count ? rh.count : 1, sizeof *c->readings);
    if (!c->readings)
        return hs__client_err(errbuf, errbuf_size, -ENOMEM, "out of memory");
    memcpy(c->readings, c->base + off + rh.desc_offset, rh.count * sizeof *c->readings);
    for (uint32_t i = 0; i < rh.count; i++) {
        const struct hs_shm_reading_desc *d = &c->readings[i];
        if (!memchr(d->name, 0, sizeof d->name) || !memchr(d->kind, 0, sizeof d->kind) ||
            !memchr(d->unit, 0, sizeof d->unit) || d->value_index > rh.value_count ||
            d->value_count > rh.value_count - d->value_index)
            goto bad;
    }
    c->reading_count = rh.count;
    c->reading_values = rh.value_count;
    c->reading_data = c->base + off + rh.stamp_offset;
    return 0;
bad:
    return hs__client_err(errbuf, errbuf_size, -EBADMSG,
                          "corrupt segment: readings section offset %llu size %llu",
                          (unsigned long long)off, (unsigned long long)size);
}

HS_CLIENT_API uint32_t hs_client_reading_count(const struct hs_client *c)
{
    return c->reading_count;
}

HS_CLIENT_API uint32_t hs_client_reading_value_count(const struct hs_client *c)
{
    return c->reading_values;
}

HS_CLIENT_API const struct hs_shm_reading_desc *hs_client_reading(const struct hs_client *c,
                                                                  uint32_t i)
{
    return i < c->reading_count ? &c->readings[i] : NULL;
}

HS_CLIENT_API int hs_client_find_reading(const struct hs_client *c, const char *name,
                                         uint32_t *ret_index)
{
    for (uint32_t i = 0; name && i < c->reading_count; i++)
        if (!strcmp(c->readings[i].name, name)) {
            *ret_index = i;
            return 0;
        }
    return -ENOENT;
}

HS_CLIENT_API int hs_client_read_readings(const struct hs_client *c, uint64_t *ret_tick,
                                          struct hs_shm_reading_stamp *stamps, double *values)
{
    const unsigned char *vals =
        c->reading_data + (size_t)c->reading_count * sizeof(struct hs_shm_reading_stamp);
    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
        uint32_t s0 = hs_shm_seq_read_begin(&c->state->seq);
        if (s0 & 1u)
            continue;
        uint64_t tick;
        hs_shm_words_load(&tick, (const unsigned char *)c->state + HS_SHM_SEQ_DATA_OFFSET, 1);
        if (stamps && c->reading_count)
            hs_shm_words_load(stamps, c->reading_data,
                              (size_t)c->reading_count * sizeof *stamps / 8);
        if (values && c->reading_values)
            hs_shm_words_load(values, vals, c->reading_values);
        if (hs_shm_seq_read_valid(&c->state->seq, s0)) {
            if (ret_tick)
                *ret_tick = tick;
            return atomic_load_explicit(&c->hdr->server_state, memory_order_acquire) ==
                           HS_SHM_SERVER_STOPPED
                       ? -ESHUTDOWN
                       : 0;
        }
    }
    return -EAGAIN;
}
