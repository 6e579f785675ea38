/* The bench I/O module registry's table, generated from its list (hilsim/service/io_module.h,
 * where the order is explained). */
#include "hilsim/service/io_module.h"

#define ENTRY(name) &hs_service_io_##name,
const struct hs_service_io *const hs_service_io_modules[] = {HS_SERVICE_IO_MODULES(ENTRY)};
#undef ENTRY

const uint32_t hs_service_io_count = sizeof hs_service_io_modules / sizeof hs_service_io_modules[0];

_Static_assert(sizeof hs_service_io_modules / sizeof hs_service_io_modules[0] <= HS_SERVICE_IO_MAX,
               "raise HS_SERVICE_IO_MAX");
