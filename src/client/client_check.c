/* Validation of a mapped segment header: magic, ABI, sizes, offsets. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "client_internal.h"

int hs__client_err(char *errbuf, size_t errbuf_size, int err, const char *fmt, ...)
{
    if (errbuf && errbuf_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errbuf_size, fmt, ap);
        va_end(ap);
    }
    return err;
}

static int section_ok(uint64_t off, uint64_t size, uint64_t expect, uint64_t total)
{
    return size == expect && off % 8 == 0 && off >= sizeof(struct hs_shm_header) && off <= total &&
           size <= total - off;
}

int hs__client_check_header(const struct hs_shm_header *h, uint64_t file_size, char *errbuf,
                            size_t errbuf_size)
{
    uint32_t magic = atomic_load_explicit(&h->magic, memory_order_acquire);
    if (magic == 0)
        return hs__client_err(errbuf, errbuf_size, -EAGAIN,
                              "segment not initialised yet (server starting?)");
    if (magic != HS_SHM_MAGIC)
        return hs__client_err(errbuf, errbuf_size, -EPROTO,
                              "wrong magic 0x%08x (expected 0x%08x): not a hilsim segment", magic,
                              HS_SHM_MAGIC);
    if (h->abi_version != HS_SHM_ABI_VERSION || h->header_size != sizeof *h)
        return hs__client_err(errbuf, errbuf_size, -EPROTONOSUPPORT,
                              "ABI mismatch: segment has ABI version %u (header %u bytes), this "
                              "client speaks version %u (header %zu bytes)",
                              h->abi_version, h->header_size, HS_SHM_ABI_VERSION, sizeof *h);
    if (h->total_size > file_size)
        return hs__client_err(errbuf, errbuf_size, -EBADMSG,
                              "truncated segment: %llu bytes, header says total_size %llu",
                              (unsigned long long)file_size, (unsigned long long)h->total_size);
    if (h->joint_count > HS_SHM_JOINTS_MAX ||
        h->imu_count + (uint64_t)h->ft_count > HS_SHM_SENSORS_MAX ||
        h->name_count != h->joint_count + h->imu_count + h->ft_count)
        return hs__client_err(errbuf, errbuf_size, -EBADMSG,
                              "corrupt segment: counts joints %u imus %u fts %u names %u",
                              h->joint_count, h->imu_count, h->ft_count, h->name_count);
    uint64_t total = h->total_size;
    if (!section_ok(h->names_offset, h->names_size,
                    (uint64_t)h->name_count * sizeof(struct hs_shm_name), total))
        return hs__client_err(
            errbuf, errbuf_size, -EBADMSG, "corrupt segment: name table offset %llu size %llu",
            (unsigned long long)h->names_offset, (unsigned long long)h->names_size);
    if (!section_ok(h->state_offset, h->state_size,
                    hs_shm_state_bytes(h->joint_count, h->imu_count, h->ft_count), total))
        return hs__client_err(
            errbuf, errbuf_size, -EBADMSG, "corrupt segment: state section offset %llu size %llu",
            (unsigned long long)h->state_offset, (unsigned long long)h->state_size);
    if (!section_ok(h->command_offset, h->command_size, hs_shm_command_bytes(h->joint_count),
                    total))
        return hs__client_err(
            errbuf, errbuf_size, -EBADMSG, "corrupt segment: command section offset %llu size %llu",
            (unsigned long long)h->command_offset, (unsigned long long)h->command_size);
    return 0;
}
