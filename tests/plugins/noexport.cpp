// Case (b): a perfectly loadable shared library that is not a pmchal backend: it exports a
// function but no pmc_backend_v1 descriptor.
#include <pmc/export.hpp>

extern "C" PMC_API int pmc_test_noexport_answer() { return 42; }
