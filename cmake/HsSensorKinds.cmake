# The sensor kind registry (include/hilsim/sensor_kinds.h, one X(name, NAME, node, ROLE) line
# each) read at configure time into HS_SENSOR_KINDS, so the plant builds
# src/plant/sensors/sensor_<name>.c for every registered kind without a list of its own.
file(READ ${CMAKE_SOURCE_DIR}/include/hilsim/sensor_kinds.h _hs_sensor_registry)
# (entries are the macro's lines, indented; the comment above it names X(name, ...) too, after
# a " *", and the field lists' lines are F(...))
string(REGEX MATCHALL "\n[ \t]+X\\([a-z0-9_]+," _hs_sensor_entries "${_hs_sensor_registry}")
set(HS_SENSOR_KINDS "")
foreach(entry IN LISTS _hs_sensor_entries)
  string(REGEX REPLACE "^\n[ \t]+X\\(([a-z0-9_]+)," "\\1" kind "${entry}")
  list(APPEND HS_SENSOR_KINDS ${kind})
endforeach()
if(NOT HS_SENSOR_KINDS)
  message(FATAL_ERROR "no sensor kind found in include/hilsim/sensor_kinds.h")
endif()
# The registry is read at configure time: editing it reconfigures.
set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_SOURCE_DIR}/include/hilsim/sensor_kinds.h)
