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
  cmake_parse_arguments(PARSE_ARGV 1 A "" "" "LABELS")
  if(NOT A_LABELS)
    message(FATAL_ERROR "tpt_discover_tests(${target}): give at least one label (the module)")
  endif()
  gtest_discover_tests(${target} ${A_UNPARSED_ARGUMENTS} TEST_LIST ${target}_TESTS)
  set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${labels_file}
       "foreach(t IN LISTS ${target}_TESTS)\n"
       "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${A_LABELS}\")\n"
       "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
endfunction()
