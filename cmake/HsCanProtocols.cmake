# The CAN protocol registry (include/hilsim/can_protocols.h, one X(name, NAME) line each) read
# once at configure time into HS_CAN_PROTOCOLS, the list every library that has a per-protocol
# part walks: drivers/can/<name>/ (the protocol: codec and node, hs_can), src/config/can/
# <name>_config.c (its config section, hs_config) and src/bench/can/<name>_bind.c (its binding
# to the bench, hs_bench). The folder a file sits in is the library it joins.
file(READ ${CMAKE_SOURCE_DIR}/include/hilsim/can_protocols.h _hs_can_registry)
# (entries are the macro's lines, indented; the comment above it names X(name, NAME) too)
string(REGEX MATCHALL "\n[ \t]+X\\([a-z0-9_]+," _hs_can_entries "${_hs_can_registry}")
set(HS_CAN_PROTOCOLS "")
foreach(entry IN LISTS _hs_can_entries)
  string(REGEX REPLACE "^\n[ \t]+X\\(([a-z0-9_]+)," "\\1" proto "${entry}")
  list(APPEND HS_CAN_PROTOCOLS ${proto})
endforeach()
# The registry is read at configure time: editing it reconfigures.
set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_SOURCE_DIR}/include/hilsim/can_protocols.h)

# hs_can_protocol_sources(<target> <pattern>): adds, for every registered protocol, the file
# <pattern> with @P@ replaced by the protocol's name (relative to the calling folder) to
# <target>; a registered protocol without its file is a configure error naming the file.
function(hs_can_protocol_sources target pattern)
  foreach(proto IN LISTS HS_CAN_PROTOCOLS)
    string(REPLACE "@P@" "${proto}" file "${pattern}")
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${file})
      file(RELATIVE_PATH dir ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
      message(FATAL_ERROR "CAN protocol ${proto} is registered (include/hilsim/can_protocols.h) "
                          "but ${dir}/${file} is missing")
    endif()
    target_sources(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${file})
  endforeach()
endfunction()
