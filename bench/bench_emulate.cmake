# Emulated counting (docs/emulation.md, "Slowdown"): the target program's wall time natively, under
# Valgrind's cachegrind alone, and emulated (cachegrind and counting on the P6 model), side by side.
add_executable(pmc_bench_emulate_target bench_emulate.c)
target_compile_options(pmc_bench_emulate_target PRIVATE -O1 -g)
target_link_libraries(pmc_bench_emulate_target PRIVATE pmc_warnings)
add_executable(pmc_bench_emulate bench_emulate.cpp)
target_link_libraries(pmc_bench_emulate PRIVATE pmchal benchmark::benchmark pmc_warnings)
target_compile_definitions(pmc_bench_emulate PRIVATE PMC_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  PMC_BENCH_EMULATE_TARGET="$<TARGET_FILE:pmc_bench_emulate_target>")
add_dependencies(pmc_bench_emulate pmc_bench_emulate_target p6 p6-model)
