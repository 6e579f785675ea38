/* Helpers shared by the model tests: load VRML text from a string. */
#ifndef HS_TEST_MODEL_UTIL_H
#define HS_TEST_MODEL_UTIL_H

#include <math.h>
#include <string.h>

#include "hilsim/model.h"

static inline int load_src(const char *src, struct hs_model **m, struct hs_diag *d)
{
    memset(d, 0, sizeof *d);
    return hs_model_load_buffer(src, strlen(src), "t.wrl", NULL, m, d);
}

#define assert_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

#endif
