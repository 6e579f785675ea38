/* The URDF test models (tests/model/urdf/) as the URDF tests load them. */
#ifndef HS_TEST_URDF_FIXTURE_H
#define HS_TEST_URDF_FIXTURE_H

#include "hilsim/model.h"

/* Loads tests/model/urdf/<name> under $HS_SOURCE_DIR (else "."); fails the test, printing the
 * loader's file:line and message, when it does not load. Free with hs_model_free. */
struct hs_model *urdf_load(const char *name);

#endif
