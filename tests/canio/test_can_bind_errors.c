/* The shared bind skeleton's failure paths through the bench (hs_bench_can_attach on the bundled
 * CiA 402 arm): an error the protocol reports with its own place (the node's EDS file) reaches
 * the caller as written, and the failed bench is destroyed cleanly (ASan: nothing leaked); a
 * second bench in the same process then binds both its nodes (the port table is the bench's). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/bench.h"
#include "hilsim/can.h"
#include "hilsim/config.h"
#include "hilsim/io_can.h"

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

/* The bundled arm's config with `extra` added to the first node's cia402 section. */
static int attach(const char *extra, struct hs_diag *d)
{
    const char *src = getenv("HS_SOURCE_DIR");
    assert_non_null(src);
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s/config/arm2-cia402.yaml", src);
    snprintf(dir, sizeof dir, "%s/config", src);
    char *text = read_all(path);
    const char *key = "boot_time_ms: 500}}";
    char *at = strstr(text, key);
    assert_non_null(at);
    size_t head = (size_t)(at - text) + strlen("boot_time_ms: 500");
    size_t len = strlen(text) + strlen(extra) + 1;
    char *edited = malloc(len);
    assert_non_null(edited);
    snprintf(edited, len, "%.*s%s%s", (int)head, text, extra, text + head);
    free(text);

    const struct hs_config *cfg = NULL;
    int rc = hs_config_load_buffer(edited, strlen(edited), "arm2-cia402.yaml", dir, &cfg, d);
    free(edited);
    assert_int_equal(rc, 0);
    struct hs_bench *bench = NULL;
    assert_int_equal(hs_bench_create(cfg, &bench, d), 0);
    struct hs_bench_can_opts o = {.backend = &hs_can_socketpair_ops};
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    o.socketpair_fd[0] = sv[0];
    struct hs_bench_can *can = NULL;
    rc = hs_bench_can_attach(bench, &o, &can, d);
    if (rc < 0)
        close(sv[0]); /* on failure the module owns nothing */
    else
        assert_int_equal(hs_bench_can_node_stats(can, 1, &(struct hs_bench_can_node_stats){0}), 0);
    hs_bench_destroy(bench);
    close(sv[1]);
    hs_config_free(cfg);
    return rc;
}

static void test_eds_error_keeps_its_place(void **state)
{
    (void)state;
    char eds[] = "/tmp/hs_bind_errXXXXXX";
    int fd = mkstemp(eds);
    assert_true(fd >= 0);
    const char bad[] = "[1017]\nDataType=0x0006\nDefaultValue=12x\n";
    assert_int_equal(write(fd, bad, sizeof bad - 1), (ssize_t)(sizeof bad - 1));
    close(fd);
    char extra[128];
    snprintf(extra, sizeof extra, ", eds: %s", eds);
    struct hs_diag d = {0};
    assert_int_equal(attach(extra, &d), -EINVAL);
    char buf[700];
    hs_diag_format(&d, buf, sizeof buf);
    char where[128];
    snprintf(where, sizeof where, "%s:3:14:", eds);
    if (!strstr(buf, where))
        fail_msg("expected \"%s\" in \"%s\"", where, buf);
    unlink(eds);
}

static void test_good_config_binds_after_a_failure(void **state)
{
    (void)state;
    struct hs_diag d = {0};
    if (attach("", &d) < 0)
        fail_msg("%s", d.msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eds_error_keeps_its_place),
        cmocka_unit_test(test_good_config_binds_after_a_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
