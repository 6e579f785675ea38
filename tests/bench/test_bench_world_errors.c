/* Errors the world finds in a config's physics name the config file, line and column: a
 * material given to a link no model has is only found when the world is built against the
 * loaded models, long after the parser is done; so is an initial state that diverges. The config
 * is a real file written to a temporary directory and loaded by path, as `hilsim run` does. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Loads yaml from a file in a fresh directory and builds the bench; returns its error with *d
 * filled and the file's path in path. */
static int build(const char *yaml, char path[256], struct hs_diag *d)
{
    char dir[] = "/tmp/hs_world_errors_XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(path, 256, "%s/bench.yaml", dir);
    write_file(path, yaml);
    const struct hs_config *cfg = NULL;
    memset(d, 0, sizeof *d);
    int r = hs_config_load(path, &cfg, d);
    if (r < 0)
        fail_msg("the config itself must load: %s:%d: %s", d->file, d->line, d->msg);
    struct hs_bench *b = NULL;
    r = hs_bench_create(cfg, &b, d);
    hs_bench_destroy(b);
    hs_config_free(cfg);
    unlink(path);
    rmdir(dir);
    return r;
}

#define HEAD                                                                                       \
    "bench: {name: world_errors}\n"                                                                \
    "models:\n"                                                                                    \
    "  - {name: arm, file: " HS_TEST_SOURCE_DIR "/models/arm2.wrl}\n"                              \
    "  - {name: floor, file: " HS_TEST_SOURCE_DIR "/models/floor.wrl, static: true}\n"             \
    "controller: {type: none}\n"                                                                   \
    "physics:\n"

static void test_unknown_link_names_the_file(void **state)
{
    (void)state;
    char path[256];
    struct hs_diag d;
    int r = build(HEAD "  materials:\n"
                       "    floor: {material: ground}\n"
                       "    NOSUCHLINK: {material: sole}\n",
                  path, &d);
    assert_int_equal(r, -EINVAL);
    assert_string_equal(d.file, path);
    assert_int_equal(d.line, 9);
    assert_int_equal(d.column, 5); /* the key NOSUCHLINK */
    assert_non_null(strstr(d.msg, "NOSUCHLINK"));
    char buf[HS_DIAG_FILE_MAX + HS_DIAG_MSG_MAX + 32];
    hs_diag_format(&d, buf, sizeof buf);
    print_message("%s\n", buf);
}

/* A world error with no entry of its own (the guard trips during the warm-up) still names the
 * config, and a model's error keeps the model's file. */
static void test_warmup_divergence_names_the_file(void **state)
{
    (void)state;
    char path[256];
    struct hs_diag d;
    int r = build(HEAD "  guard: {max_position_m: 0.001}\n", path, &d);
    assert_int_equal(r, -ERANGE);
    assert_string_equal(d.file, path);
    assert_non_null(strstr(d.msg, "warm-up"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_link_names_the_file),
        cmocka_unit_test(test_warmup_divergence_names_the_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
