# What the examples' check-installed.cmake scripts share (c/ and armv8/; backend-skeleton/ keeps
# its own copy, so that the skeleton can be copied out of this tree whole). Included after the
# script sets nothing but its own variables; it:
#  - empties WORK_DIR (required: every file the check writes goes under it);
#  - defines fail(<message>), run(<output variable> <expected exit status> <command...>) (stdout
#    and stderr together; another exit status fails the check with the command and both
#    outputs) and json_get(<variable> <json> <member...>) (the value, or "(missing)");
#  - sets PMCHAL_PREFIX: given, or WORK_DIR/prefix after installing PMC_BUILD_DIR there.
if(NOT WORK_DIR)
  message(FATAL_ERROR "check-installed: set -DWORK_DIR=<scratch directory>")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(fail what)
  message(FATAL_ERROR "check-installed: ${what}")
endfunction()

function(run out expect)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr
                  WORKING_DIRECTORY "${WORK_DIR}")
  string(REPLACE ";" " " cmd "${ARGN}")
  if(NOT status STREQUAL expect)
    fail("`${cmd}` exited ${status}, expected ${expect}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}")
  endif()
  message(STATUS "ok: ${cmd}")
  set(${out} "${stdout}${stderr}" PARENT_SCOPE)
endfunction()

function(json_get var json)
  string(JSON value ERROR_VARIABLE err GET "${json}" ${ARGN})
  if(err)
    set(value "(missing)")
  endif()
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

if(PMC_BUILD_DIR)
  set(PMCHAL_PREFIX "${WORK_DIR}/prefix")
  run(ignored 0 "${CMAKE_COMMAND}" --install "${PMC_BUILD_DIR}" --prefix "${PMCHAL_PREFIX}")
elseif(NOT PMCHAL_PREFIX)
  fail("set -DPMCHAL_PREFIX=<installed pmchal> or -DPMC_BUILD_DIR=<pmchal build tree>")
endif()
