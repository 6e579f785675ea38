/* The one list of bench I/O modules: CAN first, so boards see their nodes before a local
 * controller attaches over shm (the order the bench has always used). */
#include "hilsim/service/io_module.h"

const struct hs_service_io *const hs_service_io_modules[] = {
    &hs_service_io_record, /* before CAN: the recording taps the buses as they open */
    &hs_service_io_can,         &hs_service_io_shm,
    &hs_service_io_scenario,    /* its stage sees what CAN and shm wrote */
    &hs_service_io_ctl,         /* live control: its stage after the scenario's */
    &hs_service_io_record_tick, /* after every module: its inputs phase must come last */
};

const uint32_t hs_service_io_count = sizeof hs_service_io_modules / sizeof hs_service_io_modules[0];

_Static_assert(sizeof hs_service_io_modules / sizeof hs_service_io_modules[0] <= HS_SERVICE_IO_MAX,
               "raise HS_SERVICE_IO_MAX");
