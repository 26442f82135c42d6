// The events TOML loader (docs/event-format.md), in parts: the document, its events and CPU tags
// (catalog_load.cpp), the [pmu] shape and [[probe]] table (catalog_pmu.cpp), the modifiers
// (catalog_modifiers.cpp), the keys of model-specific catalogs (catalog_event_keys.cpp). A friend of EventCatalog: it fills the catalog's members directly.
#pragma once

#include "toml_util.hpp"

#include <pmc/catalog.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmc::detail {

struct CatalogLoader {
  // One events file, already parsed, for `backend` (a file for another backend adds nothing).
  static void load(EventCatalog& cat, const toml::table& doc, const std::string& name, std::string_view backend);
  // Adds one definition, replacing the earlier definitions of its name for its CPUs.
  static void merge(EventCatalog& cat, EventDef e);
  // A `cpus` list, each tag declared in [cpus].
  static std::vector<std::string> cpu_list(const EventCatalog& cat, const toml::table& t);
  // [modifier.NAME] tables.
  static void read_modifier_decls(EventCatalog& cat, const toml::node& node);
  // [pmu], [[pmu.counters]], [[pmu.registers]].
  static void read_pmu(EventCatalog& cat, const toml::node& node);
  // [[probe]] rules.
  static void read_probe(EventCatalog& cat, const toml::node& node);
  // [extra.NAME] tables (catalog_event_keys.cpp).
  static void read_extra_decls(EventCatalog& cat, const toml::node& node);
  // An event's keys of model-specific catalogs: umask2, set, extra, extra_msrs, code2,
  // exclusive, deprecated, period, precise, errata, topic (after its modifiers are known).
  static void read_event_keys(const EventCatalog& cat, const toml::table& t, EventDef& e);
};

// What cat.load(p, backend) of each of `paths` in turn makes, into a catalog nothing was loaded
// into: restored from the parse cache's record of the last step when it has one, without reading
// the records of the steps before it (Hal's catalog at its first use: the data file's record is
// not read when the whole catalog's is there).
void load_chain(EventCatalog& cat, const std::vector<std::filesystem::path>& paths, std::string_view backend);

// Where a node was written.
SourceRef ref_of(const toml::node& n);
// A `modifiers` list (key of t), each name built in or declared by [modifier.NAME].
std::vector<std::string> read_modifiers(const toml::table& t, std::string_view key, const EventCatalog& cat);
// "5", "0-8" or [5, "7-8"] under key: inclusive ranges (a probe rule's family, model, stepping).
std::vector<ValueRange> read_ranges(const toml::table& t, std::string_view key);
// A required unsigned integer that fits `field` (when given); `what` names it in messages.
std::uint64_t read_unsigned(const toml::table& t, std::string_view key, std::optional<BitField> field,
                            std::string_view what);

}  // namespace pmc::detail
