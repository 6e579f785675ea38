#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/urdf_fixture.h"

struct hs_model *urdf_load(const char *name)
{
    char path[PATH_MAX];
    const char *src = getenv("HS_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/model/urdf/%s", src ? src : ".", name);
    struct hs_model *m = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_model_load(path, &m, &d);
    if (r)
        print_error("%s:%d: %s\n", d.file, d.line, d.msg);
    assert_int_equal(r, 0);
    return m;
}
