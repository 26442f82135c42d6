# Runs pmc-conformance on one copy of the example backend (tests/conformance/CMakeLists.txt) with
# its output to a pipe, and checks the verdict and the output:
#   cmake -DKIT=<pmc-conformance> -DPLUGIN_DIR=<dir> -DDUMP=<cpuid dump> -DSOURCE_DIR=<source tree>
#         -DBUILD_DIR=<build tree> [-DEXPECT_CHECK=<check> -DEXPECT_TEXT=<regex>] -P run_kit.cmake
# Without EXPECT_CHECK the kit must pass. With it, the kit must fail, and the output must hold
# Boost.Test's line for a failure of that check: error: in "<check>": <text>.
# Either way the output is plain text: no ESC byte (colour codes) and neither tree's absolute path.
cmake_minimum_required(VERSION 3.20)
execute_process(COMMAND "${KIT}" --plugin-dir "${PLUGIN_DIR}" --cpuid-dump "${DUMP}" --backend toy
                RESULT_VARIABLE status OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
set(out "${stdout}${stderr}")
message("--- pmc-conformance exited ${status}; its output:\n${out}---")
if(EXPECT_CHECK)
  if(status EQUAL 0)
    message(FATAL_ERROR "pmc-conformance passed a backend whose ${EXPECT_CHECK} is broken")
  endif()
  if(NOT status MATCHES "^[0-9]+$")
    message(FATAL_ERROR "pmc-conformance did not exit normally: ${status}")
  endif()
  if(NOT out MATCHES "error: in \"${EXPECT_CHECK}\": ${EXPECT_TEXT}")
    message(FATAL_ERROR "pmc-conformance failed, but not with a failure of ${EXPECT_CHECK} matching `${EXPECT_TEXT}`")
  endif()
else()
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "pmc-conformance failed the example backend (exit status ${status})")
  endif()
  if(NOT out MATCHES "No errors detected")
    message(FATAL_ERROR "pmc-conformance exited 0 without its \"No errors detected\"")
  endif()
endif()
string(ASCII 27 esc)
string(FIND "${out}" "${esc}" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "the output to a pipe holds an ESC byte (a colour code) at offset ${at}")
endif()
foreach(tree "${SOURCE_DIR}" "${BUILD_DIR}")
  string(FIND "${out}" "${tree}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the output holds the absolute path ${tree} (at offset ${at})")
  endif()
endforeach()
