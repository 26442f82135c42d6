// What the emulate layer's files share about cachegrind's quantities and text (the parser in
// cachegrind.cpp, the rules' loader in rules.cpp, the Valgrind log reader in valgrind.cpp).
#pragma once

#include <pmc/emulate.hpp>

#include <optional>
#include <string_view>

namespace pmc::detail {

// The quantity of a cachegrind event name ("Ir"), or nullopt for one the emulation does not use.
std::optional<Quantity> quantity_of(std::string_view name);

// s without leading and trailing blanks (spaces, tabs, carriage returns).
std::string_view trim_blanks(std::string_view s);

}  // namespace pmc::detail
