// The catalog events' own rules (docs/emulation.md, "Catalog events, per model"), read from a
// model's events file (sim/models/<model>/emulation-events.toml, installed as
// share/pmchal/emulation/<model>-events.toml) by rules.cpp.
#pragma once

#include <pmc/emulate.hpp>

#include <toml++/toml.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace pmc::detail {

// Reads one `events` entry as a [[signal]] rule into its signal; returns the reason the signal is
// withheld on these caches, or nullopt.
using EventRuleReader = std::function<std::optional<std::string>(const toml::table&, EmulatedSignal&)>;

// Adds to map the entries of file's [[catalog]] tables that name an event of the Hal's CPU defined
// in that catalog file (and, for "EVENT:MASK", a unit mask of it): `events` as signals (or
// withheld ones), `cannot` as refused events with the text of their [reasons] entry.
void add_catalog_rules(const Hal& hal, const std::filesystem::path& file, SignalMap& map, const EventRuleReader& read);

// The rules' name for an event string on the Hal's CPU: the catalog event's name, with ":MASK" for
// each unit mask of it the string gives ("LS_DISPATCH:LD_DISPATCH"); "" when the string names no
// catalog event.
std::string catalog_event_key(const Hal& hal, std::string_view event);

}  // namespace pmc::detail
