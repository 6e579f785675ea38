# LTTng-UST tracing: AUTO builds the provider when lttng-ust is found, ON requires it, OFF never.
# Sets HS_HAVE_LTTNG. Code uses the HS_TRACE() macro from hilsim/rt/trace.h, which compiles to
# nothing without it.
set(HS_HAVE_LTTNG OFF)
if(NOT HS_TRACING STREQUAL "OFF")
  pkg_check_modules(LTTNG_UST IMPORTED_TARGET lttng-ust>=2.12)
  if(LTTNG_UST_FOUND)
    set(HS_HAVE_LTTNG ON)
  elseif(HS_TRACING STREQUAL "ON")
    message(FATAL_ERROR "HS_TRACING=ON but lttng-ust was not found")
  endif()
endif()
message(STATUS "hilsim tracing (LTTng-UST): ${HS_HAVE_LTTNG}")
