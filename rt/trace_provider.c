/* Instantiates the "hilsim" tracepoint probes (built only when HS_HAVE_LTTNG). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "hilsim/rt/trace_provider.h"
