// Events, all of them: event strings (event_spec.hpp), register layouts (register_format.hpp),
// the catalog (catalog.hpp) and encodings (encoding.hpp).
#pragma once

#include <pmc/catalog.hpp>
#include <pmc/encoding.hpp>
#include <pmc/event_spec.hpp>
#include <pmc/register_format.hpp>
