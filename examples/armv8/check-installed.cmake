# Builds the ARMv8 PMUv3 backend and model against an installed pmchal and checks that the
# installed `pmc` loads them through plugin_path, probes the Arm CPU descriptions, encodes, counts
# a simulated workload exactly, that the model passes its register-level test, and that the
# installed conformance kit passes. pmchal's test suite runs it (ctest -R example_armv8); by hand:
#
#   cmake -DPMCHAL_PREFIX=/opt/pmchal -DWORK_DIR=/tmp/armv8-check -P check-installed.cmake
#   cmake -DPMC_BUILD_DIR=<pmchal build tree> -DWORK_DIR=... -P check-installed.cmake
#
# The second form first installs that build tree into WORK_DIR/prefix. Optional: -DCXX=<compiler>,
# -DGENERATOR=<cmake generator>. Everything is written under WORK_DIR (emptied first).
cmake_minimum_required(VERSION 3.20)

set(HERE "${CMAKE_CURRENT_LIST_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/../check-installed-common.cmake")  # WORK_DIR, run, fail, json_get, PMCHAL_PREFIX

# The candidate `backend` of a `pmc probe --json`: its score and reason.
function(candidate prefix json backend)
  string(JSON n LENGTH "${json}" candidates)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    json_get(name "${json}" candidates ${i} backend)
    if(name STREQUAL backend)
      json_get(score "${json}" candidates ${i} score)
      json_get(reason "${json}" candidates ${i} reason)
      set(${prefix}_score "${score}" PARENT_SCOPE)
      set(${prefix}_reason "${reason}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  fail("${backend} is not among the candidates:\n${json}")
endfunction()

# 1. The pmchal tree: PMCHAL_PREFIX (check-installed-common.cmake).
set(pmc "${PMCHAL_PREFIX}/bin/pmc")

# 2. Build the plugins and the model test against it, warnings as errors.
set(configure "${CMAKE_COMMAND}" -S "${HERE}" -B "${WORK_DIR}/build" "-DCMAKE_PREFIX_PATH=${PMCHAL_PREFIX}"
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_COMPILE_WARNING_AS_ERROR=ON)
if(CXX)
  list(APPEND configure "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
if(GENERATOR)
  list(APPEND configure -G "${GENERATOR}")
endif()
run(ignored 0 ${configure})
run(ignored 0 "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")

# 3. The model against the architecture, register by register.
run(ignored 0 "${WORK_DIR}/build/armv8-model-test" "${WORK_DIR}/build/plugins" "${HERE}")

# 4. pmc with a config whose plugin_path (relative to the file) holds the build.
file(WRITE "${WORK_DIR}/config.toml" "# written by check-installed.cmake\nplugin_path = [\"build/plugins\"]\n")
set(pmc_cfg "${CMAKE_COMMAND}" -E env --unset=PMC_CONFIG "XDG_CONFIG_HOME=${WORK_DIR}/no-config" "${pmc}" --config
    "${WORK_DIR}/config.toml")
set(a72 "${HERE}/cortex-a72.toml")
set(fx "${HERE}/a64fx.toml")

#    The Cortex-A72: armv8 chosen, the part, the PMU version and the 6 counters of PMCR_EL0.N.
run(out 0 ${pmc_cfg} probe --json --cpuid-dump "${a72}")
json_get(backend "${out}" backend)
if(NOT backend STREQUAL "armv8")
  fail("on cortex-a72.toml the chosen backend is '${backend}', expected armv8:\n${out}")
endif()
candidate(c "${out}" armv8)
if(NOT c_reason STREQUAL "Arm part 0xd08 r0p3 (Cortex-A72): Cortex-A72, PMUv3 (ID_AA64DFR0_EL1.PMUVer 1), 6 event counters (PMCR_EL0.N) and the cycle counter")
  fail("armv8's reason on the Cortex-A72: ${c_reason}")
endif()
candidate(p6 "${out}" p6)
if(NOT p6_score EQUAL 0)
  fail("p6 claims the Cortex-A72:\n${out}")
endif()
#    The A64FX: the Fujitsu rule, PMUv3p1, 8 counters.
run(out 0 ${pmc_cfg} probe --json --cpuid-dump "${fx}")
candidate(c "${out}" armv8)
if(NOT c_reason MATCHES "A64FX, PMUv3p1 \\(ID_AA64DFR0_EL1.PMUVer 4\\), 8 event counters")
  fail("armv8's reason on the A64FX: ${c_reason}")
endif()
#    An x86 CPU: armv8 refuses it, saying why.
run(out 0 ${pmc_cfg} probe --json --cpuid-dump pentium-iii)
candidate(c "${out}" armv8)
if(NOT c_score EQUAL 0 OR NOT c_reason MATCHES "not an AArch64 CPU$")
  fail("armv8 on a Pentium III: score ${c_score}, reason '${c_reason}'")
endif()

# 5. Encodings (PMEVTYPER<n>_EL0): INST_RETIRED (0x08) counting EL0 only sets P (bit 31, "not
#    EL1") = 0x80000008; at EL1 only, U (bit 30) = 0x40000008; CPU_CYCLES (0x11) with :h sets
#    NSH (bit 27) = 0x08000011.
run(out 0 ${pmc_cfg} encode --json --cpuid-dump "${a72}" INST_RETIRED:u instructions:k CPU_CYCLES:h)
json_get(c0 "${out}" 0 config)
json_get(c1 "${out}" 1 config)
json_get(c2 "${out}" 2 config)
if(NOT "${c0} ${c1} ${c2}" STREQUAL "0x80000008 0x40000008 0x8000011")
  fail("encodings ${c0} ${c1} ${c2}; expected 0x80000008 0x40000008 0x8000011:\n${out}")
endif()
run(out 1 ${pmc_cfg} encode --cpuid-dump "${a72}" INST_RETIRED:c=1)
if(NOT out MATCHES "the Arm PMUv3 has no counter mask")
  fail("INST_RETIRED:c=1 gave:\n${out}")
endif()

# 6. Counting armv8-demo.toml exactly, across the 32-bit wrap (its comments work the numbers out).
foreach(case "INST_RETIRED=6448950944" "INST_RETIRED:u=6448450944" "INST_RETIRED:k=500000" "CPU_CYCLES=6444950944"
             "LD_RETIRED=2000000" "BR_RETIRED=2000000" "EXC_TAKEN=1" "cycles=6444950944" "instructions=6448950944")
  string(REPLACE "=" ";" pair "${case}")
  list(GET pair 0 event)
  list(GET pair 1 expect)
  foreach(cpu "${a72}" "${fx}")
    run(out 0 ${pmc_cfg} stat --json --cpuid-dump "${cpu}" --workload "${HERE}/armv8-demo.toml" -e "${event}")
    json_get(value "${out}" counters 0 value)
    if(NOT value STREQUAL expect)
      fail("pmc stat -e ${event} on armv8-demo (${cpu}) counted ${value}, expected ${expect}:\n${out}")
    endif()
  endforeach()
endforeach()
#    Seven events at once on the six counters and the cycle counter of a Cortex-A72.
run(out 0 ${pmc_cfg} stat --json --cpuid-dump "${a72}" --workload "${HERE}/armv8-demo.toml" -e
    "CPU_CYCLES,INST_RETIRED,INST_RETIRED:u,INST_RETIRED:k,LD_RETIRED,BR_RETIRED,EXC_TAKEN")
set(expect 6444950944 6448950944 6448450944 500000 2000000 2000000 1)
foreach(i RANGE 6)
  json_get(value "${out}" counters ${i} value)
  list(GET expect ${i} want)
  if(NOT value STREQUAL want)
    fail("seven events together: counter ${i} = ${value}, expected ${want}:\n${out}")
  endif()
endforeach()

# 7. The installed conformance kit passes on the backend and its model, on both CPUs.
run(out 0 "${PMCHAL_PREFIX}/bin/pmc-conformance" --plugin-dir "${WORK_DIR}/build/plugins" --cpuid-dump "${a72}"
    --cpuid-dump "${fx}" --backend armv8)

message(STATUS "check-installed: the ARMv8 PMUv3 backend and model build against ${PMCHAL_PREFIX}, load, count and conform")
