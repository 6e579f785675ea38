# hs_add_test(NAME name SOURCES ... LIBS ... [TIMEOUT s] [LABELS ...] [ENV ...])
# Builds a cmocka test and registers it with ctest. HS_SHARED_DIR is passed in the environment
# so tests that need real models can find them (and skip when the folder is absent).
if(BUILD_TESTING)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka>=1.1)
endif()
file(REMOVE ${CMAKE_BINARY_DIR}/fuzzers.txt)

function(hs_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  target_include_directories(${T_NAME} PRIVATE ${CMAKE_SOURCE_DIR}/tests)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "HS_SHARED_DIR=${HS_SHARED_DIR};HS_SOURCE_DIR=${CMAKE_SOURCE_DIR};HS_BUILD_DIR=${CMAKE_BINARY_DIR};${T_ENV}")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()

# hs_add_fuzzer(NAME name SOURCES ... LIBS ... CORPUS dir)
# With HS_FUZZ (clang) it builds a libFuzzer binary NAME. Always builds NAME_replay, the same
# entry point driven by tests/fuzz_replay_main.c over the corpus, and runs it as a ctest, so the
# corpus (seeds plus every crash ever found) is replayed in every build, sanitizers included.
function(hs_add_fuzzer)
  cmake_parse_arguments(F "" "NAME;CORPUS" "SOURCES;LIBS" ${ARGN})
  add_executable(${F_NAME}_replay ${F_SOURCES} ${CMAKE_SOURCE_DIR}/tests/fuzz_replay_main.c)
  target_link_libraries(${F_NAME}_replay PRIVATE ${F_LIBS})
  add_test(NAME ${F_NAME}_replay COMMAND ${F_NAME}_replay ${F_CORPUS})
  set_tests_properties(${F_NAME}_replay PROPERTIES LABELS "fuzz" TIMEOUT 300)
  if(HS_FUZZ)
    add_executable(${F_NAME} ${F_SOURCES})
    target_compile_options(${F_NAME} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${F_NAME} PRIVATE ${F_LIBS})
    target_link_options(${F_NAME} PRIVATE -fsanitize=fuzzer)
    # scripts/test-all.sh reads this list to give every fuzzer a short run on its corpus.
    file(APPEND ${CMAKE_BINARY_DIR}/fuzzers.txt "${CMAKE_CURRENT_BINARY_DIR}/${F_NAME} ${F_CORPUS}\n")
  endif()
endfunction()

# hs_add_guest_test(NAME name [OUT dir] [HOST_SCRIPT script] [TIMEOUT s] [LABELS ...] [ENV ...]
#                   [ARGS ...])
# A test that boots the PREEMPT_RT QEMU guest (tests/rtguest, label "rtguest" plus LABELS):
#   run-in-rt-guest.sh ARGS... [OUT]          runs ARGS inside the guest;
#   HOST_SCRIPT run-in-rt-guest.sh ARGS... [OUT]  runs a host script that boots guests itself.
# OUT: a folder under this directory's build tree, made here, given as the last argument and
# made writable in the guest (HS_GUEST_RW, first in the environment): the test's artifacts stay
# there. TIMEOUT defaults to 900 s: a loaded host's emulated boot may take up to the runner's
# HS_GUEST_BOOT_TIMEOUT (240 s) before the command's own HS_GUEST_TIMEOUT starts. ENV entries
# follow HS_GUEST_RW in order.
# Every guest test holds the resource lock HS_GUEST_LOCK, so `ctest -jN` runs one emulated guest
# at a time beside the other tests: a TCG guest keeps two vCPU threads busy, and two of them on
# a 2-core host starved each other past their limits. A test that boots guests without this
# function sets RESOURCE_LOCK ${HS_GUEST_LOCK} itself.
set(HS_GUEST_LOCK rtguest_qemu)
function(hs_add_guest_test)
  cmake_parse_arguments(G "" "NAME;OUT;HOST_SCRIPT;TIMEOUT" "LABELS;ENV;ARGS" ${ARGN})
  set(runner ${CMAKE_SOURCE_DIR}/tests/rtguest/run-in-rt-guest.sh)
  set(cmd ${runner} ${G_ARGS})
  if(G_HOST_SCRIPT)
    set(cmd ${G_HOST_SCRIPT} ${cmd})
  endif()
  set(env ${G_ENV})
  if(G_OUT)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${G_OUT})
    file(MAKE_DIRECTORY ${out})
    list(APPEND cmd ${out})
    list(PREPEND env "HS_GUEST_RW=${out}")
  endif()
  if(NOT G_TIMEOUT)
    set(G_TIMEOUT 900)
  endif()
  set(labels rtguest ${G_LABELS})
  add_test(NAME ${G_NAME} COMMAND ${cmd})
  set_tests_properties(${G_NAME} PROPERTIES LABELS "${labels}" TIMEOUT ${G_TIMEOUT}
                       RESOURCE_LOCK ${HS_GUEST_LOCK})
  if(env)
    set_tests_properties(${G_NAME} PROPERTIES ENVIRONMENT "${env}")
  endif()
endfunction()
