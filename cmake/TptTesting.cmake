# TptTesting.cmake: one way to register a GoogleTest binary with CTest.
#
#   tpt_discover_tests(<target> LABELS <label>... [<gtest_discover_tests options>...])
#
# Every discovered test gets all the labels given (module first: parser, rules,
# memory, diff, report, repro, kernels; then cli for tests that run the built
# binary, gpu for tests that need a device). gtest_discover_tests cannot carry a
# list in PROPERTIES (it writes `LABELS a b`, which keeps only `a`), so the
# labels are set by a second CTest include file that runs after discovery and
# walks the discovered names (TEST_LIST).
#
#   ctest -L cli        # the whole-binary tests
#   ctest -L parser     # what .ci/test runs again under ASan + UBSan
#   ctest -LE gpu       # everything that needs no GPU
function(tpt_discover_tests target)
  # gtest_discover_tests' own keywords are named here so that LABELS ends
  # where they begin; they are passed on as given.
  set(flags NO_PRETTY_TYPES NO_PRETTY_VALUES)
  set(one WORKING_DIRECTORY TEST_PREFIX TEST_SUFFIX DISCOVERY_TIMEOUT DISCOVERY_MODE XML_OUTPUT_DIR)
  set(many LABELS EXTRA_ARGS PROPERTIES TEST_FILTER)
  cmake_parse_arguments(PARSE_ARGV 1 A "${flags}" "${one}" "${many}")
  if(NOT A_LABELS)
    message(FATAL_ERROR "tpt_discover_tests(${target}): give at least one label (the module)")
  endif()
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tpt_discover_tests(${target}): unknown arguments ${A_UNPARSED_ARGUMENTS}")
  endif()
  set(pass)
  foreach(k IN LISTS flags)
    if(A_${k})
      list(APPEND pass ${k})
    endif()
  endforeach()
  foreach(k IN LISTS one)
    if(DEFINED A_${k})
      list(APPEND pass ${k} "${A_${k}}")
    endif()
  endforeach()
  foreach(k EXTRA_ARGS PROPERTIES TEST_FILTER)
    if(DEFINED A_${k})
      list(APPEND pass ${k} ${A_${k}})
    endif()
  endforeach()
  gtest_discover_tests(${target} ${pass} TEST_LIST ${target}_TESTS)
  set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${labels_file}
       "foreach(t IN LISTS ${target}_TESTS)\n"
       "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${A_LABELS}\")\n"
       "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
endfunction()

# tpt_cli_test(<name> LABELS <label>...): a test of the built `tptriage` from <name>.cc
# (tests/cli_run.h runs TPTRIAGE_BIN; samples are read under TPT_SOURCE_DIR), registered
# with tpt_discover_tests and rebuilt after tptriage.
function(tpt_cli_test name)
  add_executable(${name} ${name}.cc)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE GTest::gtest_main nlohmann_json::nlohmann_json tpt_warnings)
  target_compile_definitions(${name} PRIVATE TPTRIAGE_BIN="$<TARGET_FILE:tptriage>"
                             TPT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_dependencies(${name} tptriage)
  tpt_discover_tests(${name} ${ARGN})
endfunction()
