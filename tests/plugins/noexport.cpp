// Case (b): a perfectly loadable shared library that is not a pmchal plugin: it exports a
// function but neither a pmc_backend_v2 nor a pmc_model_v2 descriptor.
#include <pmc/export.hpp>

extern "C" PMC_API int pmc_test_noexport_answer() { return 42; }
