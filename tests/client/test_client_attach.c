/* libhilsim-client attach checks (each failure a clear error, no crash), state reads, and
 * tick waits with miss counting. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/client.h"
#include "shm/shm_test_layout.h"

/* Writes a copy of a real segment (patched by the caller) under another bench name. */
static void write_segment(const char *bench, const void *bytes, size_t size)
{
    char name[128];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    shm_unlink(name);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, size), (ssize_t)size);
    close(fd);
}

static void remove_segment(const char *bench)
{
    char name[128];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    shm_unlink(name);
}

static void expect_attach_error(const char *bench, int err, const char *needle)
{
    struct hs_client *c = NULL;
    char buf[HS_CLIENT_ERRBUF_MIN] = "";
    assert_int_equal(hs_client_attach(bench, &c, buf, sizeof buf), err);
    assert_null(c);
    if (!strstr(buf, needle))
        fail_msg("attach error '%s' does not mention '%s'", buf, needle);
}

static void test_attach_errors_are_clear(void **state)
{
    (void)state;
    char bench[64], bad[64];
    hs_test_bench(bench, sizeof bench, "orig");
    hs_test_bench(bad, sizeof bad, "bad");
    expect_attach_error(bench, -ENOENT, "no bench");
    expect_attach_error("../etc", -EINVAL, "invalid bench name");
    expect_attach_error(NULL, -EINVAL, "invalid bench name");

    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    char name[128];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    int fd = shm_open(name, O_RDONLY, 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    size_t size = (size_t)st.st_size;
    unsigned char *orig = malloc(size), *copy = malloc(size);
    assert_int_equal(read(fd, orig, size), (ssize_t)size);
    close(fd);
    struct hs_shm_header *h = (struct hs_shm_header *)copy;

    memcpy(copy, orig, size);
    write_segment(bad, copy, size);
    struct hs_client *c;
    assert_int_equal(hs_client_attach(bad, &c, NULL, 0), 0); /* the unpatched copy is fine */
    hs_client_detach(c);

    memcpy(copy, orig, size);
    atomic_store(&h->magic, 0x12345678u);
    write_segment(bad, copy, size);
    expect_attach_error(bad, -EPROTO, "wrong magic 0x12345678");

    memcpy(copy, orig, size);
    atomic_store(&h->magic, 0u);
    write_segment(bad, copy, size);
    expect_attach_error(bad, -EAGAIN, "not initialised");

    memcpy(copy, orig, size);
    h->abi_version = HS_SHM_ABI_VERSION + 1;
    write_segment(bad, copy, size);
    expect_attach_error(bad, -EPROTONOSUPPORT, "ABI mismatch");

    memcpy(copy, orig, size);
    write_segment(bad, copy, size / 2);
    expect_attach_error(bad, -EBADMSG, "truncated segment");
    write_segment(bad, copy, 100);
    expect_attach_error(bad, -EBADMSG, "truncated segment");
    write_segment(bad, copy, 0);
    expect_attach_error(bad, -EBADMSG, "truncated segment");

    memcpy(copy, orig, size);
    h->state_offset = size - 8;
    write_segment(bad, copy, size);
    expect_attach_error(bad, -EBADMSG, "state section");

    memcpy(copy, orig, size);
    h->joint_count = 31;
    write_segment(bad, copy, size);
    expect_attach_error(bad, -EBADMSG, "corrupt segment");

    memcpy(copy, orig, size);
    struct hs_shm_name *names = (struct hs_shm_name *)(copy + h->names_offset);
    names[2].index = 1000;
    write_segment(bad, copy, size);
    expect_attach_error(bad, -EBADMSG, "name table entry 2");
    memcpy(copy, orig, size);
    memset(names[3].name, 'x', sizeof names[3].name);
    write_segment(bad, copy, size);
    expect_attach_error(bad, -EBADMSG, "name table entry 3");

    remove_segment(bad);
    free(orig);
    free(copy);
    hs_shm_server_destroy(s);
    expect_attach_error(bench, -ENOENT, "is hilsim running");
    hs_client_detach(NULL);
}

static void test_read_state_and_wait_tick(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "state");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    hs_test_fill(s, 41);
    hs_shm_server_publish(s, 41, 0.041, 123);

    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    uint64_t tick = 0;
    uint32_t missed = 99;
    assert_int_equal(hs_client_wait_tick(c, 0, &tick, &missed), -ETIMEDOUT);
    assert_int_equal(hs_client_wait_tick(c, 2000000, &tick, &missed), -ETIMEDOUT);

    hs_test_fill(s, 42);
    hs_shm_server_publish(s, 42, 0.042, 456);
    assert_int_equal(hs_client_wait_tick(c, 0, &tick, &missed), 0);
    assert_int_equal(tick, 42);
    assert_int_equal(missed, 0);

    struct hs_shm_joint_state j[HS_TEST_JOINTS];
    struct hs_shm_imu_state m[3];
    struct hs_shm_ft_state f[3];
    struct hs_client_state st = {.joints = j, .imus = m, .fts = f};
    assert_int_equal(hs_client_read_state(c, &st), 0);
    assert_int_equal(st.tick, 42);
    assert_true(st.sim_time_s == 0.042);
    assert_int_equal(st.mono_ns, 456);
    assert_int_equal(hs_test_check(42, j, HS_TEST_JOINTS, m, 3, f, 3), 0);
    assert_true(j[4].q == 46.0 && f[2].torque_nm[1] == 169.0);

    /* Two publishes between waits: one tick missed. */
    for (uint64_t k = 43; k <= 44; k++)
        hs_shm_server_publish(s, k, 0, 0);
    assert_int_equal(hs_client_wait_tick(c, 0, &tick, &missed), 0);
    assert_int_equal(tick, 44);
    assert_int_equal(missed, 1);
    assert_int_equal(hs_client_missed_ticks(c), 1);

    /* A snapshot with NULL arrays reads only the head. */
    struct hs_client_state head = {0};
    assert_int_equal(hs_client_read_state(c, &head), 0);
    assert_int_equal(head.tick, 44);

    hs_shm_server_destroy(s);
    assert_int_equal(hs_client_wait_tick(c, 1000000, &tick, &missed), -ESHUTDOWN);
    hs_client_detach(c);
}

static size_t segment_copy(const char *bench, unsigned char *buf, size_t size)
{
    char name[128];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    int fd = shm_open(name, O_RDONLY, 0);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, size);
    close(fd);
    assert_true(n > 0);
    return (size_t)n;
}

/* A viewer's attachment: reads and follows ticks like any client, and leaves the segment
 * byte for byte as it found it, whatever it tries. */
static void test_readonly_attach_never_writes(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "ro");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    struct hs_shm_server *s;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    hs_test_fill(s, 7);
    hs_shm_server_publish(s, 7, 0.007, 70);

    static unsigned char before[1 << 20], after[1 << 20];
    size_t n = segment_copy(bench, before, sizeof before);
    struct hs_client *c;
    char err[256] = "";
    assert_int_equal(hs_client_attach_readonly(bench, &c, err, sizeof err), 0);
    uint64_t tick = 0;
    assert_int_equal(hs_client_wait_tick(c, 3000000, &tick, NULL), -ETIMEDOUT);
    assert_int_equal(hs_client_claim(c, err, sizeof err), -EPERM);
    assert_non_null(strstr(err, "read-only"));
    struct hs_client_command cmd = {.mode = HS_SHM_MODE_TORQUE, .tau_ff = 1.0};
    assert_int_equal(hs_client_write_command(c, 0, &cmd), -EPERM);
    assert_int_equal(hs_client_write_commands(c, &cmd, 1), -EPERM);
    assert_int_equal(hs_client_step(c), -EPERM);
    hs_client_heartbeat(c);
    struct hs_shm_joint_state j[HS_TEST_JOINTS];
    struct hs_client_state st = {.joints = j};
    assert_int_equal(hs_client_read_state(c, &st), 0);
    assert_int_equal(st.tick, 7);
    assert_int_equal(hs_test_check(7, j, HS_TEST_JOINTS, NULL, 0, NULL, 0), 0);
    assert_int_equal(segment_copy(bench, after, sizeof after), n);
    assert_memory_equal(before, after, n);

    /* It follows published ticks without the futex. */
    hs_shm_server_publish(s, 8, 0.008, 80);
    assert_int_equal(hs_client_wait_tick(c, 1000000000, &tick, NULL), 0);
    assert_int_equal(tick, 8);
    hs_client_detach(c);
    hs_shm_server_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attach_errors_are_clear),
        cmocka_unit_test(test_read_state_and_wait_tick),
        cmocka_unit_test(test_readonly_attach_never_writes),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
