/* Every file in tests/model/malformed/ must fail cleanly: no model, and a diag with the line
 * and a key word given by the file's first line, "# expect: LINE WORD [FILE]" ('_' in WORD
 * stands for a space; FILE: the
 * basename the diag must name, for errors inside an inlined file). */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "model_test_util.h"

static void check_file(const char *dir, const char *name, int *count)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char head[256] = "", word[128] = "", file[128] = "";
    int line = -1;
    char *ok = fgets(head, sizeof head, f);
    fclose(f);
    assert_non_null(ok);
    int n = sscanf(head, "# expect: %d %127s %127s", &line, word, file);
    if (n < 2) {
        fprintf(stderr, "%s: no '# expect: LINE WORD' header\n", name);
        fail();
    }
    for (char *c = word; *c; c++)
        if (*c == '_')
            *c = ' ';
    struct hs_model *m = NULL;
    struct hs_diag d = {0};
    int r = hs_model_load(path, &m, &d);
    const char *base = strrchr(d.file, '/');
    base = base ? base + 1 : d.file;
    bool good =
        r < 0 && !m && d.line == line && strstr(d.msg, word) && (n < 3 || !strcmp(base, file));
    if (!good)
        fprintf(stderr, "%s: r=%d got %s:%d:%d: %s (expected line %d, '%s' %s)\n", name, r, d.file,
                d.line, d.column, d.msg, line, word, n >= 3 ? file : "");
    hs_model_free(m);
    assert_true(good);
    (*count)++;
}

static void test_malformed_corpus(void **state)
{
    (void)state;
    const char *dir = getenv("HS_MODEL_MALFORMED_DIR");
    assert_non_null(dir);
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    struct dirent *e;
    int count = 0;
    while ((e = readdir(dd)))
        if (strstr(e->d_name, ".wrl"))
            check_file(dir, e->d_name, &count);
    closedir(dd);
    assert_true(count >= 15);
}

static void test_missing_file(void **state)
{
    (void)state;
    struct hs_model *m = NULL;
    struct hs_diag d;
    assert_int_equal(hs_model_load("/nonexistent/x.wrl", &m, &d), -ENOENT);
    assert_null(m);
    assert_non_null(strstr(d.msg, "cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_corpus),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
