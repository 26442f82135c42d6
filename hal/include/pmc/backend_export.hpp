// Included by exactly one source file of each backend library, the one that exports its
// descriptor:   PMC_EXPORT_BACKEND(pmc::p6::descriptor)
// The alias must differ from the unqualified symbol name (Boost.DLL would otherwise alias the
// variable to itself), so pass a qualified name.
#pragma once

#include <pmc/backend.hpp>

#include <boost/dll/alias.hpp>

#define PMC_EXPORT_BACKEND(qualified_descriptor) BOOST_DLL_ALIAS(qualified_descriptor, pmc_backend_v1)
