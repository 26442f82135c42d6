// EventCatalog's copies and moves, and its internal state (catalog_state.hpp): the public header
// holds the state behind a pointer, so copying it is spelled out here.
#include "catalog_cache.hpp"
#include "catalog_state.hpp"
#include "encode_tables.hpp"

#include <pmc/event.hpp>

#include <memory>
#include <string>

namespace pmc {

namespace detail {

// A copy shares the cache file's events with the original and the encoder's tables (which hold
// indexes, not pointers), and has its own lookup tables and its own pending flag, so that each
// copy decodes its events into its own vector.
CatalogState::CatalogState(const CatalogState& other)
    : name_index(other.name_index),
      alias_index(other.alias_index),
      generic_index(other.generic_index),
      encode_tables(other.encode_tables),
      cache_key(other.cache_key),
      source(other.source),
      pending(other.pending.load(std::memory_order_acquire)) {}

CatalogState::~CatalogState() = default;

CatalogState& CatalogState::of(const EventCatalog& cat) {
  if (!cat.state_) cat.state_ = std::make_unique<CatalogState>();
  return *cat.state_;
}

const std::string& CatalogState::key(const EventCatalog& cat) {
  static const std::string kNone;
  return cat.state_ ? cat.state_->cache_key : kNone;
}

}  // namespace detail

EventCatalog::EventCatalog() = default;

EventCatalog::EventCatalog(const EventCatalog& other)
    : events_(other.events_),
      format_(other.format_),
      cpus_(other.cpus_),
      files_(other.files_),
      default_modifiers_(other.default_modifiers_),
      modifiers_(other.modifiers_),
      extra_regs_(other.extra_regs_),
      pmu_(other.pmu_),
      description_(other.description_),
      backend_(other.backend_),
      state_(other.state_ ? std::make_unique<detail::CatalogState>(*other.state_) : nullptr) {}

EventCatalog& EventCatalog::operator=(const EventCatalog& other) {
  if (this != &other) {
    EventCatalog copy(other);
    *this = std::move(copy);
  }
  return *this;
}

EventCatalog::EventCatalog(EventCatalog&& other) noexcept = default;
EventCatalog& EventCatalog::operator=(EventCatalog&& other) noexcept = default;
EventCatalog::~EventCatalog() = default;

}  // namespace pmc
