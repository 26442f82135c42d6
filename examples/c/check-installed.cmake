# Builds the embedding examples against an installed pmchal, the ways a consumer project finds
# it, and runs them: examples/c (count.c in C11, count.cpp in C++20, count17.cpp in C++17 on the C
# API) with find_package(pmchal) and with pkg-config (from CMake, and by hand with the compiler),
# and examples/region (region_demo) measured three ways without rebuilding. pmchal's test suite
# runs it (ctest -R example_embedding); by hand:
#
#   cmake -DPMCHAL_PREFIX=/opt/pmchal -DWORK_DIR=/tmp/embed-check -P check-installed.cmake
#   cmake -DPMC_BUILD_DIR=<pmchal build tree> -DWORK_DIR=... -P check-installed.cmake
#
# The second form first installs that build tree into WORK_DIR/prefix. Optional: -DCC=<compiler>,
# -DCXX=<compiler>, -DGENERATOR=<cmake generator>, -DEXPECT_VERSION=<what pkg-config must say>.
# Everything is written under WORK_DIR (emptied first). Expected counts: the bundled p6-demo
# workload on the simulated Pentium III retires 7,900,000 instructions, 7,550,000 in user mode
# (pmchal's examples/CMakeLists.txt works it out).
cmake_minimum_required(VERSION 3.20)

set(EXAMPLES "${CMAKE_CURRENT_LIST_DIR}/..")
include("${CMAKE_CURRENT_LIST_DIR}/../check-installed-common.cmake")  # WORK_DIR, run, fail, json_get, PMCHAL_PREFIX

# 1. The pmchal tree: PMCHAL_PREFIX (check-installed-common.cmake).
file(GLOB_RECURSE pc_files "${PMCHAL_PREFIX}/*/pmchal.pc")
if(NOT pc_files)
  fail("no pmchal.pc under ${PMCHAL_PREFIX}")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
# The programs run with no operator config: they name everything they need.
set(clean_env "${CMAKE_COMMAND}" -E env --unset=PMC_CONFIG --unset=PMC_REGION_EVENTS --unset=PMC_REGION_OUTPUT
    "XDG_CONFIG_HOME=${WORK_DIR}/no-config")
set(pkg_env "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${pc_dir}")

set(common_args -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_COMPILE_WARNING_AS_ERROR=ON)
if(CC)
  list(APPEND common_args "-DCMAKE_C_COMPILER=${CC}")
endif()
if(CXX)
  list(APPEND common_args "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
if(GENERATOR)
  list(APPEND common_args -G "${GENERATOR}")
endif()

# count, count_cpp and count17 on the simulated Pentium III over p6-demo.
function(check_counts build)
  run(out 0 ${clean_env} "${build}/count" --cpu pentium-iii --workload p6-demo instructions INST_RETIRED:u)
  if(NOT out MATCHES "backend: p6\n" OR NOT out MATCHES "instructions = 7900000\n" OR
     NOT out MATCHES "INST_RETIRED:u = 7550000\n")
    fail("${build}/count counted:\n${out}")
  endif()
  run(out 0 ${clean_env} "${build}/count_cpp" --cpu pentium-iii --workload p6-demo instructions INST_RETIRED:u)
  if(NOT out MATCHES "instructions = 7900000\n" OR NOT out MATCHES "INST_RETIRED:u = 7550000\n")
    fail("${build}/count_cpp counted:\n${out}")
  endif()
  run(out 0 ${clean_env} "${build}/count17" pentium-iii p6-demo instructions INST_RETIRED:u)
  if(NOT out MATCHES "instructions = 7900000\n" OR NOT out MATCHES "INST_RETIRED:u = 7550000\n")
    fail("${build}/count17 counted:\n${out}")
  endif()
  # An error from C: its message and exit status 1.
  run(out 1 ${clean_env} "${build}/count" --cpu pentium-iii --workload p6-demo INST_RETIRD)
  if(NOT out MATCHES "count: INST_RETIRD: .*INST_RETIRD.*\\(not_found\\)")
    fail("a misspelt event gave:\n${out}")
  endif()
endfunction()

# 2. find_package(pmchal).
run(ignored 0 "${CMAKE_COMMAND}" -S "${EXAMPLES}/c" -B "${WORK_DIR}/c-cmake" "-DCMAKE_PREFIX_PATH=${PMCHAL_PREFIX}"
    ${common_args})
run(ignored 0 "${CMAKE_COMMAND}" --build "${WORK_DIR}/c-cmake")
check_counts("${WORK_DIR}/c-cmake")

# 3. pkg-config, through CMake's FindPkgConfig.
run(ignored 0 ${pkg_env} "${CMAKE_COMMAND}" -S "${EXAMPLES}/c" -B "${WORK_DIR}/c-pkg-config" -DUSE_PKG_CONFIG=ON
    ${common_args})
run(ignored 0 "${CMAKE_COMMAND}" --build "${WORK_DIR}/c-pkg-config")
check_counts("${WORK_DIR}/c-pkg-config")

# 4. pkg-config by hand: a C program needs -I and -lpmchal, nothing else.
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
run(version 0 ${pkg_env} "${PKG_CONFIG}" --modversion pmchal)
string(STRIP "${version}" version)
if(EXPECT_VERSION AND NOT version STREQUAL EXPECT_VERSION)
  fail("pkg-config --modversion pmchal said ${version}, expected ${EXPECT_VERSION}")
endif()
run(cflags 0 ${pkg_env} "${PKG_CONFIG}" --cflags pmchal)
run(libs 0 ${pkg_env} "${PKG_CONFIG}" --libs pmchal)
run(libdir 0 ${pkg_env} "${PKG_CONFIG}" --variable=libdir pmchal)
string(STRIP "${cflags}" cflags)
string(STRIP "${libs}" libs)
string(STRIP "${libdir}" libdir)
string(REGEX MATCHALL "-l[^ ]+" link_libs "${libs}")
if(NOT link_libs STREQUAL "-lpmchal")
  fail("pkg-config --libs pmchal gives the libraries '${link_libs}', expected -lpmchal alone")
endif()
if(NOT EXISTS "${libdir}/libpmchal.so")
  fail("pkg-config's libdir ${libdir} has no libpmchal.so")
endif()
# The SONAME of 0.x carries the minor version (docs/c-api.md, "Versions and compatibility").
find_program(READELF readelf)
if(READELF AND version MATCHES "^0\\.([0-9]+)\\.")
  set(soname "libpmchal.so.0.${CMAKE_MATCH_1}")
  run(dynamic 0 "${READELF}" -d "${libdir}/libpmchal.so")
  string(FIND "${dynamic}" "Library soname: [${soname}]" at)
  if(at LESS 0)
    fail("libpmchal.so's SONAME is not ${soname}:\n${dynamic}")
  endif()
endif()
separate_arguments(cflags UNIX_COMMAND "${cflags}")
separate_arguments(libs UNIX_COMMAND "${libs}")
set(cc "${CC}")
if(NOT cc)
  set(cc cc)
endif()
run(ignored 0 "${cc}" -std=c11 -Wall -Wextra -Werror ${cflags} "${EXAMPLES}/c/count.c" ${libs} "-Wl,-rpath,${libdir}" -o
    "${WORK_DIR}/count-by-hand")
run(out 0 ${clean_env} "${WORK_DIR}/count-by-hand" --cpu pentium-iii --workload p6-demo instructions)
if(NOT out MATCHES "instructions = 7900000\n")
  fail("count built by hand counted:\n${out}")
endif()

# 5. region_demo, instrumented once, measured three ways.
run(ignored 0 "${CMAKE_COMMAND}" -S "${EXAMPLES}/region" -B "${WORK_DIR}/region" "-DCMAKE_PREFIX_PATH=${PMCHAL_PREFIX}"
    ${common_args})
run(ignored 0 "${CMAKE_COMMAND}" --build "${WORK_DIR}/region")
set(demo "${WORK_DIR}/region/region_demo")

function(region_stats prefix json name)
  string(JSON n LENGTH "${json}" regions)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    json_get(rname "${json}" regions ${i} name)
    if(rname STREQUAL name)
      json_get(calls "${json}" regions ${i} calls)
      json_get(threads "${json}" regions ${i} threads)
      json_get(sum "${json}" regions ${i} events 0 sum)
      json_get(min "${json}" regions ${i} events 0 min)
      json_get(max "${json}" regions ${i} events 0 max)
      set(${prefix}_calls "${calls}" PARENT_SCOPE)
      set(${prefix}_threads "${threads}" PARENT_SCOPE)
      set(${prefix}_sum "${sum}" PARENT_SCOPE)
      set(${prefix}_min "${min}" PARENT_SCOPE)
      set(${prefix}_max "${max}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  fail("no region '${name}' in:\n${json}")
endfunction()

# 5a. On the simulated Pentium III, from a config file: [regions] says the events and the output
#     (relative to the file). 2 threads x 5 "work" x 2 "kernel", one p6-demo per kernel:
#     kernel 20 calls of 7,900,000; work 10 calls of 2 x 7,900,000 = 15,800,000; both 158,000,000
#     in all; setup runs no workload: 0.
file(WRITE "${WORK_DIR}/sim.toml"
     "# written by check-installed.cmake\ncpu = \"pentium-iii\"\n[regions]\nevents = [\"instructions\"]\noutput = \"sim-regions.json\"\n")
run(ignored 0 ${clean_env} "PMC_CONFIG=${WORK_DIR}/sim.toml" "${demo}" 2 --workload p6-demo)
file(READ "${WORK_DIR}/sim-regions.json" json)
json_get(backend "${json}" backend)
json_get(event "${json}" events 0)
if(NOT backend STREQUAL "p6" OR NOT event STREQUAL "instructions")
  fail("the simulated run counted '${event}' on '${backend}':\n${json}")
endif()
region_stats(k "${json}" kernel)
region_stats(w "${json}" work)
region_stats(s "${json}" setup)
if(NOT "${k_calls} ${k_threads} ${k_sum} ${k_min} ${k_max}" STREQUAL "20 2 158000000 7900000 7900000" OR
   NOT "${w_calls} ${w_threads} ${w_sum} ${w_min} ${w_max}" STREQUAL "10 2 158000000 15800000 15800000" OR
   NOT "${s_calls} ${s_threads} ${s_sum}" STREQUAL "1 1 0")
  fail("simulated regions: kernel ${k_calls} ${k_threads} ${k_sum} ${k_min} ${k_max}, work ${w_calls} ${w_threads} "
       "${w_sum} ${w_min} ${w_max}, setup ${s_calls} ${s_threads} ${s_sum}:\n${json}")
endif()

# 5b. For real, on this machine: the events from $PMC_REGION_EVENTS (OS software events, which
#     every Linux has). 3 threads: work 15 calls, kernel 30; work holds its kernels, so it counts
#     at least their task-clock.
run(ignored 0 ${clean_env} "PMC_REGION_EVENTS=task-clock,context-switches" "PMC_REGION_OUTPUT=${WORK_DIR}/real.json"
    "${demo}" 3)
file(READ "${WORK_DIR}/real.json" json)
json_get(e0 "${json}" events 0)
json_get(e1 "${json}" events 1)
region_stats(k "${json}" kernel)
region_stats(w "${json}" work)
if(NOT "${e0} ${e1}" STREQUAL "task-clock context-switches" OR NOT "${k_calls} ${k_threads}" STREQUAL "30 3" OR
   NOT "${w_calls} ${w_threads}" STREQUAL "15 3" OR k_sum LESS_EQUAL 0 OR w_sum LESS k_sum)
  fail("real regions: kernel ${k_calls} calls ${k_threads} threads ${k_sum} ns, work ${w_calls} ${w_threads} "
       "${w_sum} ns:\n${json}")
endif()

# 5c. An event this machine does not have: the program says so and exits 1; the report written at
#     exit carries the error and no region.
run(out 1 ${clean_env} "PMC_REGION_EVENTS=no-such-event" "PMC_REGION_OUTPUT=${WORK_DIR}/bad.json" "${demo}" 1)
if(NOT out MATCHES "region_demo: regions: .*no-such-event")
  fail("a bad event gave:\n${out}")
endif()
file(READ "${WORK_DIR}/bad.json" json)
json_get(error "${json}" error)
string(JSON nregions LENGTH "${json}" regions)
if(NOT error MATCHES "no-such-event" OR NOT nregions EQUAL 0)
  fail("the report of a bad event:\n${json}")
endif()

message(STATUS "check-installed: C, C++20, C++17 and region programs build against ${PMCHAL_PREFIX} both ways and count")
