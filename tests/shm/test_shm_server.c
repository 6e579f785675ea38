/* Server lifecycle: segment creation (mode, group, mlock, O_EXCL with live/stale diagnosis),
 * layout validation and the name table as clients see it. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/client.h"
#include "shm/shm_test_layout.h"

static long vm_locked_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static void test_create_mode_mlock_and_names(void **state)
{
    (void)state;
    char bench[64], path[128];
    hs_test_bench(bench, sizeof bench, "create");
    struct hs_test_layout t;
    hs_test_layout_init(&t, HS_TEST_JOINTS);
    struct hs_shm_server *s = NULL;
    struct hs_diag d;
    long locked_before = vm_locked_kb();
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    assert_non_null(s);
#ifndef __SANITIZE_ADDRESS__ /* ASan's mlock interceptor does nothing */
    assert_true(vm_locked_kb() > locked_before);
#else
    (void)locked_before;
#endif

    assert_int_equal(hs_shm_server_path(bench, path, sizeof path), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0660);

    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    struct hs_client_info info;
    hs_client_get_info(c, &info);
    assert_int_equal(info.joint_count, 30);
    assert_int_equal(info.imu_count, 3);
    assert_int_equal(info.ft_count, 3);
    assert_int_equal(info.server_pid, getpid());
    assert_int_equal(info.tick_period_ns, 1000000);
    uint32_t idx, kind;
    assert_int_equal(hs_client_find_joint(c, "RARM_ELBOW", &idx), 0);
    assert_int_equal(idx, 4);
    assert_string_equal(hs_client_joint_unit(c, 29), "m");
    assert_string_equal(hs_client_joint_name(c, 29), "JOINT_29");
    assert_null(hs_client_joint_name(c, 30));
    assert_int_equal(hs_client_find_sensor(c, "FT_1", &kind, &idx), 0);
    assert_int_equal(kind, HS_SHM_KIND_FORCE);
    assert_int_equal(idx, 1);
    assert_int_equal(hs_client_find_sensor(c, "IMU_2", &kind, &idx), 0);
    assert_int_equal(kind, HS_SHM_KIND_IMU);
    assert_int_equal(idx, 2);
    assert_int_equal(hs_client_find_joint(c, "IMU_0", &idx), -ENOENT);
    assert_int_equal(hs_client_find_sensor(c, "RARM_ELBOW", &kind, &idx), -ENOENT);
    hs_client_detach(c);

    hs_shm_server_destroy(s);
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(errno, ENOENT);
    hs_shm_server_destroy(NULL);
}

static void test_mode_and_group(void **state)
{
    (void)state;
    char bench[64], path[128];
    hs_test_bench(bench, sizeof bench, "mode");
    hs_shm_server_path(bench, path, sizeof path);
    struct hs_test_layout t;
    hs_test_layout_init(&t, 2);
    struct hs_shm_server *s = NULL;
    struct hs_diag d;

    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0666, &s, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "world"));
    assert_null(s);
    assert_int_equal(access(path, F_OK), -1);

    assert_int_equal(hs_shm_server_create(bench, &t.layout, "no-such-group-hs", 0, &s, &d),
                     -ENOENT);
    assert_non_null(strstr(d.msg, "no-such-group-hs"));
    assert_int_equal(access(path, F_OK), -1);

    assert_int_equal(hs_shm_server_create(bench, &t.layout, "root", 0640, &s, &d), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(st.st_gid, 0);
    hs_shm_server_destroy(s);
}

static void test_occupied_name_live_and_stale(void **state)
{
    (void)state;
    char bench[64];
    hs_test_bench(bench, sizeof bench, "occupied");
    struct hs_test_layout t;
    hs_test_layout_init(&t, 3);
    struct hs_shm_server *s = NULL, *s2 = NULL;
    struct hs_diag d;
    char pidstr[32];

    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s2, &d), -EEXIST);
    assert_null(s2);
    snprintf(pidstr, sizeof pidstr, "pid %d", (int)getpid());
    assert_non_null(strstr(d.msg, "in use by running server"));
    assert_non_null(strstr(d.msg, pidstr));
    assert_int_equal(hs_shm_server_remove_stale(bench, &d), -EBUSY);
    hs_shm_server_destroy(s);

    /* A server that died without destroying leaves a stale segment. */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct hs_shm_server *cs;
        _exit(hs_shm_server_create(bench, &t.layout, NULL, 0, &cs, NULL) == 0 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The next server takes the dead one's segment over and says so. */
    struct hs_shm_segment_info info;
    assert_int_equal(hs_shm_server_inspect(bench, &info, &d), 0);
    assert_true(info.hilsim);
    assert_false(info.alive);
    assert_int_equal(info.pid, child);
    assert_true(info.start > 0);
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s2, &d), 0);
    snprintf(pidstr, sizeof pidstr, "server pid %d is dead", (int)child);
    assert_non_null(strstr(hs_shm_server_note(s2), "took over stale segment"));
    assert_non_null(strstr(hs_shm_server_note(s2), pidstr));
    assert_int_equal(hs_shm_server_inspect(bench, &info, &d), 0);
    assert_true(info.alive);
    assert_int_equal(info.pid, getpid());
    hs_shm_server_destroy(s2);
    assert_int_equal(hs_shm_server_remove_stale(bench, &d), -ENOENT);

    /* A recorded start time that does not match: the pid was reused by another process. */
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s, &d), 0);
    char name[128];
    snprintf(name, sizeof name, "/hilsim-%s", bench);
    int hfd = shm_open(name, O_RDWR, 0);
    assert_true(hfd >= 0);
    uint64_t fake_start = info.start + 12345;
    assert_int_equal(
        pwrite(hfd, &fake_start, sizeof fake_start, offsetof(struct hs_shm_header, creator_start)),
        (ssize_t)sizeof fake_start);
    close(hfd);
    assert_int_equal(hs_shm_server_inspect(bench, &info, &d), 0);
    assert_false(info.alive);
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s2, &d), 0);
    assert_non_null(strstr(hs_shm_server_note(s2), "took over"));
    hs_shm_server_destroy(s); /* its file is gone from the name: s2's segment survives */
    assert_int_equal(hs_shm_server_inspect(bench, &info, &d), 0);
    assert_true(info.alive);
    hs_shm_server_destroy(s2);

    /* Something that is not a hilsim segment. */
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &s2, &d), -EEXIST);
    assert_non_null(strstr(d.msg, "not a complete hilsim segment"));
    assert_int_equal(hs_shm_server_remove_stale(bench, &d), -EPROTO);
    assert_int_equal(hs_shm_server_remove(bench, 1, &d), 0);
    assert_int_equal(hs_shm_server_remove(bench, 1, &d), -ENOENT);
}

/* Start A, remove its segment by hand, start B on the same name, stop A: B's segment stays. */
static void test_stop_removes_only_its_own_segment(void **state)
{
    (void)state;
    char bench[64], path[128];
    hs_test_bench(bench, sizeof bench, "identity");
    struct hs_test_layout t;
    hs_test_layout_init(&t, 3);
    struct hs_shm_server *a = NULL, *b = NULL;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &a, &d), 0);
    assert_int_equal(hs_shm_server_path(bench, path, sizeof path), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(hs_shm_server_create(bench, &t.layout, NULL, 0, &b, &d), 0);
    assert_string_equal(hs_shm_server_note(b), ""); /* nothing was there to take over */
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    hs_shm_server_destroy(a);
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino);

    struct hs_client *c;
    char err[256];
    assert_int_equal(hs_client_attach(bench, &c, err, sizeof err), 0);
    hs_client_detach(c);
    hs_shm_server_destroy(b);
    assert_int_equal(stat(path, &after), -1);
    assert_int_equal(errno, ENOENT);
}

static void expect_layout_error(struct hs_test_layout *t, const char *needle)
{
    char bench[64];
    hs_test_bench(bench, sizeof bench, "layout");
    struct hs_shm_server *s = NULL;
    struct hs_diag d;
    assert_int_equal(hs_shm_server_create(bench, &t->layout, NULL, 0, &s, &d), -EINVAL);
    assert_null(s);
    if (!strstr(d.msg, needle))
        fail_msg("diag '%s' does not mention '%s'", d.msg, needle);
}

static void test_layout_errors_name_the_field(void **state)
{
    (void)state;
    struct hs_test_layout t;
    hs_test_layout_init(&t, 5);
    t.joints[3].name = t.joint_names[1];
    expect_layout_error(&t, "joints[3].name 'JOINT_01' duplicates joints[1]");
    hs_test_layout_init(&t, 5);
    t.joints[2].unit = "deg";
    expect_layout_error(&t, "joints[2].unit 'deg'");
    hs_test_layout_init(&t, 5);
    t.joints[0].name = "";
    expect_layout_error(&t, "joints[0].name");
    hs_test_layout_init(&t, 5);
    t.sensors[1].kind = HS_SHM_KIND_JOINT;
    expect_layout_error(&t, "sensors[1].kind");
    hs_test_layout_init(&t, 5);
    t.layout.tick_period_ns = 0;
    expect_layout_error(&t, "tick_period_ns");

    hs_test_layout_init(&t, 5);
    struct hs_shm_server *s = NULL;
    struct hs_diag d;
    const char *bad[] = {"", ".hidden", "a/b", "x y",
                         "0123456789012345678901234567890123456789012345678901234567890123456789"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(hs_shm_server_create(bad[i], &t.layout, NULL, 0, &s, &d), -EINVAL);
        assert_non_null(strstr(d.msg, "bench name"));
    }
    assert_int_equal(hs_shm_server_create(NULL, &t.layout, NULL, 0, &s, &d), -EINVAL);
    assert_null(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_mode_mlock_and_names),
        cmocka_unit_test(test_mode_and_group),
        cmocka_unit_test(test_occupied_name_live_and_stale),
        cmocka_unit_test(test_stop_removes_only_its_own_segment),
        cmocka_unit_test(test_layout_errors_name_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, hs_test_cleanup);
}
