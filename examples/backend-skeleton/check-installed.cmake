# Builds this skeleton against an installed pmchal and checks that the installed `pmc` loads it.
# pmchal's test suite runs it (ctest -R example_backend_skeleton); run it yourself after
# changing the skeleton:
#
#   cmake -DPMCHAL_PREFIX=/opt/pmchal -DWORK_DIR=/tmp/toy-check -P check-installed.cmake
#   cmake -DPMC_BUILD_DIR=<pmchal build tree> -DWORK_DIR=... -P check-installed.cmake
#
# The second form first installs that build tree into WORK_DIR/prefix. Optional: -DCXX=<compiler>,
# -DGENERATOR=<cmake generator>. Everything is written under WORK_DIR (emptied first).
cmake_minimum_required(VERSION 3.20)

set(SKELETON_DIR "${CMAKE_CURRENT_LIST_DIR}")
if(NOT WORK_DIR)
  message(FATAL_ERROR "check-installed: set -DWORK_DIR=<scratch directory>")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# run(<output variable> <expected exit status> <command...>): the command's stdout; a different
# exit status fails the check with the command and both outputs.
function(run out expect)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr
                  WORKING_DIRECTORY "${WORK_DIR}")
  string(REPLACE ";" " " cmd "${ARGN}")
  if(NOT status STREQUAL expect)
    message(FATAL_ERROR "check-installed: `${cmd}` exited ${status}, expected ${expect}\n"
                        "--- stdout:\n${stdout}\n--- stderr:\n${stderr}")
  endif()
  message(STATUS "ok: ${cmd}")
  set(${out} "${stdout}${stderr}" PARENT_SCOPE)
endfunction()

function(fail what)
  message(FATAL_ERROR "check-installed: ${what}")
endfunction()

# json_get(<variable> <json> <member...>): the value, or "(missing)".
function(json_get var json)
  string(JSON value ERROR_VARIABLE err GET "${json}" ${ARGN})
  if(err)
    set(value "(missing)")
  endif()
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

# 1. The pmchal tree.
if(PMC_BUILD_DIR)
  set(PMCHAL_PREFIX "${WORK_DIR}/prefix")
  run(ignored 0 "${CMAKE_COMMAND}" --install "${PMC_BUILD_DIR}" --prefix "${PMCHAL_PREFIX}")
elseif(NOT PMCHAL_PREFIX)
  fail("set -DPMCHAL_PREFIX=<installed pmchal> or -DPMC_BUILD_DIR=<pmchal build tree>")
endif()
set(pmc "${PMCHAL_PREFIX}/bin/pmc")
set(toy_cpu "${SKELETON_DIR}/toy-cpuid.txt")

# 2. Configure and build the skeleton against it, warnings as errors.
set(configure "${CMAKE_COMMAND}" -S "${SKELETON_DIR}" -B "${WORK_DIR}/build"
    "-DCMAKE_PREFIX_PATH=${PMCHAL_PREFIX}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_COMPILE_WARNING_AS_ERROR=ON)
if(CXX)
  list(APPEND configure "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
if(GENERATOR)
  list(APPEND configure -G "${GENERATOR}")
endif()
run(ignored 0 ${configure})
run(ignored 0 "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")

# 3. A config file whose plugin_path (relative to the file) holds the build: the backend, its
#    data file beside it, and the model.
file(WRITE "${WORK_DIR}/config.toml" "# written by check-installed.cmake\nplugin_path = [\"build/plugins\"]\n")
set(cfg --config "${WORK_DIR}/config.toml")

# 4. On a Pentium III the toy backend and model are loaded, toy is a candidate that does not
#    match, and p6 wins.
run(out 0 "${pmc}" ${cfg} probe --json --cpuid-dump pentium-iii)
json_get(backend "${out}" backend)
if(NOT backend STREQUAL "p6")
  fail("on pentium-iii the chosen backend is '${backend}', expected p6:\n${out}")
endif()
string(JSON n LENGTH "${out}" candidates)
set(found FALSE)
if(n GREATER 0)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    json_get(name "${out}" candidates ${i} backend)
    if(name STREQUAL "toy")
      set(found TRUE)
      json_get(score "${out}" candidates ${i} score)
      json_get(reason "${out}" candidates ${i} reason)
      if(NOT score EQUAL 0 OR NOT reason MATCHES "toy backend: matches no real CPU$")
        fail("toy candidate on pentium-iii: score ${score}, reason '${reason}'")
      endif()
    endif()
  endforeach()
endif()
if(NOT found)
  fail("the toy backend is not among the candidates:\n${out}")
endif()
if(NOT out MATCHES "build/plugins/libtoy\\.so" OR NOT out MATCHES "build/plugins/libtoy-model\\.so")
  fail("plugins do not list build/plugins/libtoy.so and libtoy-model.so:\n${out}")
endif()

# 5. On the imaginary ToyVendorCPU the toy backend wins, and encodes from its toy.toml:
#    TOY_INSTRUCTIONS (0x02) | LOADS (0x01 << 8) | usr (bit 16) = 0x10102;
#    instructions = TOY_INSTRUCTIONS:ANY with usr + os (bits 16, 17) = 0x30002.
run(out 0 "${pmc}" ${cfg} probe --json --cpuid-dump "${toy_cpu}")
json_get(backend "${out}" backend)
if(NOT backend STREQUAL "toy")
  fail("on toy-cpuid.txt the chosen backend is '${backend}', expected toy:\n${out}")
endif()
run(out 0 "${pmc}" ${cfg} encode --json --cpuid-dump "${toy_cpu}" TOY_INSTRUCTIONS:LOADS:u instructions)
json_get(c0 "${out}" 0 config)
json_get(c1 "${out}" 1 config)
if(NOT c0 STREQUAL "0x10102" OR NOT c1 STREQUAL "0x30002")
  fail("encodings ${c0}, ${c1}; expected 0x10102, 0x30002:\n${out}")
endif()

# 6. It counts on its own device model, exactly across the 32-bit wrap (toy-demo.toml's
#    comments work the numbers out).
foreach(case "TOY_INSTRUCTIONS=6444450944" "TOY_CYCLES=6443450944" "TOY_INSTRUCTIONS:LOADS=1000000")
  string(REPLACE "=" ";" pair "${case}")
  list(GET pair 0 event)
  list(GET pair 1 expect)
  run(out 0 "${pmc}" ${cfg} stat --json --cpuid-dump "${toy_cpu}" --workload "${SKELETON_DIR}/toy-demo.toml"
      -e "${event}")
  json_get(value "${out}" counters 0 value)
  if(NOT value STREQUAL expect)
    fail("pmc stat -e ${event} on toy-demo counted ${value}, expected ${expect}:\n${out}")
  endif()
endforeach()

# 7. The installed conformance kit passes on the toy backend and its model.
run(out 0 "${PMCHAL_PREFIX}/bin/pmc-conformance" --plugin-dir "${WORK_DIR}/build/plugins"
    --cpuid-dump "${toy_cpu}" --backend toy)

# 8. Installed into the pmchal tree (the skeleton's default prefix), it needs no config at all.
#    Only into a tree this script installed itself: never into the caller's pmchal.
if(PMC_BUILD_DIR)
  run(ignored 0 "${CMAKE_COMMAND}" --install "${WORK_DIR}/build")
  set(no_config "${CMAKE_COMMAND}" -E env --unset=PMC_CONFIG "XDG_CONFIG_HOME=${WORK_DIR}/no-config")
  run(out 0 ${no_config} "${pmc}" list --json --cpuid-dump "${toy_cpu}")
  # The toy events, then pmchal's own HAL events (pmu "hal").
  string(JSON n LENGTH "${out}")
  set(toy_events 0)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    json_get(pmu "${out}" ${i} pmu)
    if(pmu STREQUAL "toy")
      math(EXPR toy_events "${toy_events} + 1")
    endif()
  endforeach()
  json_get(source "${out}" 0 source)
  if(NOT toy_events EQUAL 2 OR NOT source MATCHES "share/pmchal/events/toy\\.toml")
    fail("installed: expected the 2 toy events from share/pmchal/events/toy.toml:\n${out}")
  endif()

  # 9. A model plugin deleted from the install: counting on it fails with one line naming the
  #    model and where it was looked for; probe, list and encode still work.
  file(REMOVE "${PMCHAL_PREFIX}/lib/pmchal/plugins/libp6-model.so")
  execute_process(COMMAND ${no_config} "${pmc}" stat --cpuid-dump pentium-iii --workload p6-demo
                  RESULT_VARIABLE status OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  string(REGEX MATCHALL "\n" lines "${stderr}")
  list(LENGTH lines nlines)
  if(NOT status EQUAL 1 OR NOT nlines EQUAL 1 OR NOT stderr MATCHES "device model 'p6'"
     OR NOT stderr MATCHES "lib/pmchal/plugins")
    fail("without libp6-model.so, pmc stat exited ${status} with:\n${stderr}")
  endif()
  message(STATUS "ok: without libp6-model.so: ${stderr}")
  run(ignored 0 ${no_config} "${pmc}" probe --cpuid-dump pentium-iii)
  run(ignored 0 ${no_config} "${pmc}" list --cpuid-dump pentium-iii)
  run(ignored 0 ${no_config} "${pmc}" encode --cpuid-dump pentium-iii INST_RETIRED:u)
endif()

message(STATUS "check-installed: the toy backend and model build against ${PMCHAL_PREFIX}, load, count and conform")
