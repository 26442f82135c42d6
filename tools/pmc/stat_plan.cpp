// pmc stat: what to count (event groups, metrics and the events they need), counting it on a set
// of targets (Counters), and the metrics evaluated over the rows.
#include "stat.hpp"

#include <fmt/ranges.h>

#include <algorithm>

namespace pmc_cli {

namespace {

// Errors about the event itself (a misspelt name, a bad modifier): the user's to fix, never a
// <not supported> row.
bool user_error(pmc::errc e) {
  switch (e) {
    case pmc::errc::not_found:
    case pmc::errc::parse:
    case pmc::errc::unit_mask:
    case pmc::errc::attribute:
    case pmc::errc::attribute_value:
    case pmc::errc::feature_combination:
    case pmc::errc::invalid_argument: return true;
    default: return false;
  }
}

}  // namespace

Plan make_plan(const pmc::Hal& hal, const Options& o, const std::function<std::vector<std::string>()>& defaults) {
  Plan plan;
  std::vector<std::string> asked = split_events(o.metrics);
  // Without -M or --topdown only the default metrics show, and none is a vendor's.
  plan.catalog = pmc::builtin_metrics(hal, !asked.empty() || o.topdown);
  // The machine's constants only for asked metrics (the TSC's rate may take a measurement).
  if (!asked.empty() || o.topdown) plan.constants = pmc::metric_constants(hal);
  plan.metric_only = o.metric_only;
  // --topdown: perf's TopdownL1 .. L<N> groups, which the vendors' lists fill (AMD's pipeline
  // utilization is in PipelineL<N>, which the imported files put in TopdownL<N> too).
  if (o.topdown) {
    for (unsigned level = 1; level <= o.td_level; ++level) {
      const std::string group = fmt::format("TopdownL{}", level);
      if (plan.catalog.select(group).empty()) {
        if (level == 1)
          throw pmc::Error(pmc::errc::not_supported,
                           fmt::format("--topdown: no top-down metrics for this CPU ({}); pmc list --metrics "
                                       "lists the metrics there are",
                                       hal.backend() ? hal.pmu().description : hal.why()));
        throw pmc::Error(pmc::errc::not_supported,
                         fmt::format("--td-level {}: this CPU's top-down tree ends at level {}", o.td_level, level - 1));
      }
      asked.push_back(group);
    }
  }
  // perf stat -M alone counts only what the metrics need.
  plan.defaults = o.events.empty() && asked.empty();
  if (plan.defaults)
    for (auto& e : defaults()) plan.groups.push_back({{std::move(e)}, false});
  else
    plan.groups = pmc::parse_event_list(o.events);
  plan.mode = counted_as(o, "");
  for (std::string& e : detailed_events(o.detailed)) {
    plan.optional_events.push_back(e);
    plan.groups.push_back({{std::move(e)}, false});
  }
  for (const std::string& name : asked) {
    const auto selected = plan.catalog.select(name);
    if (selected.empty()) {
      const auto near = plan.catalog.nearest(name);
      throw pmc::Error(pmc::errc::not_found,
                       fmt::format("unknown metric or metric group '{}'{} (see 'pmc list --metrics')", name,
                                   near.empty() ? "" : fmt::format("; nearest: {}", fmt::join(near, ", "))));
    }
    for (const auto* m : selected)
      if (std::find(plan.metrics.begin(), plan.metrics.end(), m) == plan.metrics.end()) plan.metrics.push_back(m);
  }
  plan.metrics_asked = !plan.metrics.empty();
  // The slots event: the generic `slots`, or an event only its fixed counter counts (the
  // catalogs' TOPDOWN.SLOTS).
  std::optional<unsigned> slots_counter;
  if (hal.backend() && plan.metrics_asked) {
    try {
      slots_counter = hal.encode("slots").fixed;
    } catch (const pmc::Error&) {  // no top-down slots on this CPU
    }
  }
  if (slots_counter)
    for (const auto* m : plan.metrics)
      for (const pmc::MetricInput* in : pmc::metric_inputs(*m, plan.constants)) {
        if (std::find(plan.leaders.begin(), plan.leaders.end(), in->event) != plan.leaders.end()) continue;
        try {
          const pmc::Encoding e = hal.encode(in->event);
          if (e.generic == "slots" || (e.fixed == slots_counter && e.counters.empty())) plan.leaders.push_back(in->event);
        } catch (const pmc::Error&) {  // counted (or refused) later, with the others
        }
      }
  if (!plan.metrics_asked)
    for (const auto& m : plan.catalog.metrics())
      if (m.by_default) plan.metrics.push_back(&m);
  return plan;
}

void add_metric_events(const Plan& plan, const std::function<const std::vector<pmc::Encoding>&()>& counted,
                       const std::function<void(const EventGroup&)>& add) {
  if (!plan.metrics_asked) return;  // the default metrics show only what the plan's events give
  // Every event string of the plan, and each one added here: an event the session refused has
  // no encoding to match, and is not tried twice.
  std::vector<std::string> planned;
  for (const auto& g : plan.groups) planned.insert(planned.end(), g.events.begin(), g.events.end());
  std::vector<std::string> inputs = plan.leaders;
  for (const auto* m : plan.metrics)
    for (const pmc::MetricInput* in : pmc::metric_inputs(*m, plan.constants)) inputs.push_back(in->event);
  for (const std::string& event : inputs) {
    if (std::find(planned.begin(), planned.end(), event) != planned.end()) continue;
    // Fed already by an event of the levels the input would be counted at (every level, or
    // --all-user's / --all-kernel's): a metric pairs only inputs of the same levels.
    const std::vector<pmc::Encoding>& encodings = counted();
    if (std::any_of(encodings.begin(), encodings.end(), [&](const pmc::Encoding& e) {
          pmc::Reading as_counted;
          as_counted.event = e.event;
          as_counted.canonical = e.canonical;
          pmc::Reading as_added;
          as_added.event = event + plan.mode;
          return pmc::feeds_metric_input(e, event) && pmc::metric_filter(as_counted) == pmc::metric_filter(as_added);
        }))
      continue;
    planned.push_back(event);
    add({{event}, false});
  }
}

std::vector<MetricRow> evaluate(const Plan& plan, const std::vector<Row>& rows, std::optional<double> duration_ns) {
  // The metrics of each CPU (-A) or label (--per-thread, --per-core, --per-socket) apart.
  std::vector<std::pair<int, std::string>> keys;
  for (const Row& r : rows)
    if (r.reading && std::find(keys.begin(), keys.end(), std::pair(r.cpu, r.aggr)) == keys.end())
      keys.emplace_back(r.cpu, r.aggr);
  if (keys.empty()) keys.emplace_back(-1, std::string());
  std::vector<MetricRow> out;
  for (const auto& [cpu, aggr] : keys) {
    std::vector<pmc::Reading> readings;
    std::vector<std::string> unsupported;
    for (const Row& r : rows) {
      if (r.reading && !r.idle && r.cpu == cpu && r.aggr == aggr) readings.push_back(*r.reading);
      if (!r.reading) unsupported.push_back(r.event);
    }
    for (const auto* m : plan.metrics) {
      MetricRow mr{m, cpu, pmc::evaluate_metric(*m, readings, duration_ns, &plan.constants), std::nullopt, aggr};
      if (!mr.value.value) {
        // A default metric shows only when it can be computed; one whose inputs were counted
        // but not compatibly (instructions:u, cycles:k) is said why in --json.
        mr.hidden = !plan.metrics_asked;
        if (!plan.metrics_asked && !mr.value.incompatible) continue;
        std::vector<std::string> missing;
        for (const auto& in : m->events)
          if (std::find(unsupported.begin(), unsupported.end(), in.event) != unsupported.end())
            missing.push_back(in.event);
        if (!missing.empty())
          mr.value.error = fmt::format("{} {} not supported here", fmt::join(missing, " and "),
                                       missing.size() == 1 ? "is" : "are");
      }
      out.push_back(std::move(mr));
    }
  }
  mark_thresholds(out);
  return out;
}

std::string metric_note(const MetricRow& m) {
  if (!m.value.value) return fmt::format("{}: {}", m.def->name, m.value.error);
  const char* scaled = m.value.scaled ? " (from scaled counts)" : "";
  if (!m.def->unit.empty() && m.def->unit[0] == '%')
    return fmt::format("{:7.2f}{}{}", *m.value.value, m.def->unit, scaled);
  return fmt::format("{:8.3f} {}{}", *m.value.value, m.def->unit, scaled);
}

// ---------------------------------------------------------------------------------------------

Counters::Counters(const pmc::Hal& hal, const Plan& plan, const std::vector<pmc::Scope>& scopes, bool per_cpu,
                   std::vector<Label> labels)
    : labels_(std::move(labels)), per_cpu_(per_cpu) {
  for (const auto& s : scopes) {
    sessions_.push_back(hal.session(s));
    cpus_.push_back(s.kind == pmc::Scope::Kind::cpu ? s.cpu : -1);
  }
  // Without a backend, a default that is not a HAL event (cycles, instructions...) is <not
  // supported> without asking the sessions: their answer is an exception, and the first one a
  // process throws costs it about 0.05 ms (docs/performance.md, Results: the fourth round).
  std::vector<pmc::HalEventDescription> hal_events;
  if (plan.defaults && !hal.backend()) hal_events = pmc::hal_events();
  for (const EventGroup& g : plan.groups) add(hal, plan, g, hal_events);
  // Every session has the same events: the first one's encodings say what is counted.
  add_metric_events(
      plan,
      [&]() -> const std::vector<pmc::Encoding>& {
        static const std::vector<pmc::Encoding> none;
        return sessions_.empty() ? none : sessions_.front().encodings();
      },
      [&](const EventGroup& g) { add(hal, plan, g, hal_events); });
}

void Counters::add(const pmc::Hal& hal, const Plan& plan, const EventGroup& g,
                   const std::vector<pmc::HalEventDescription>& hal_events) {
  const auto pmu_event = [&](const std::string& name) {
    return std::none_of(hal_events.begin(), hal_events.end(),
                        [&](const pmc::HalEventDescription& h) { return h.name == name || h.alias == name; });
  };
  std::vector<std::string> names = g.events;
  std::string reason;
  if (!hal_events.empty() && !g.braces && pmu_event(names.front())) {
    events_.push_back(names.front());
    unsupported_.push_back(
        fmt::format("event '{}' needs a PMU backend, and none was chosen: {}", names.front(), hal.why()));
    return;
  }
  std::vector<std::string> counted = names;  // --all-user, --all-kernel: with the mode
  for (auto& n : counted) n += plan.mode;
  const bool optional = !g.braces && std::find(plan.optional_events.begin(), plan.optional_events.end(),
                                               names.front()) != plan.optional_events.end();
  for (std::size_t k = 0; k < sessions_.size(); ++k) {
    try {
      if (g.braces)
        sessions_[k].add_group(counted);
      else
        sessions_[k].add(counted.front());
    } catch (const pmc::Error& e) {
      if (user_error(e.kind()) && !optional) throw;
      // A default the user may not count with kernel mode (perf_event_paranoid): user mode.
      if (plan.defaults && e.kind() == pmc::errc::permission && !g.braces) {
        try {
          sessions_[k].add(names.front() + ":u");
          names.front() += ":u";
          continue;
        } catch (const pmc::Error&) {  // the row says why the plain one failed
        }
      }
      if (k > 0) throw;  // counted on one target but not another: no row can say that
      reason = e.what();
      break;
    }
  }
  for (const auto& n : names) {
    events_.push_back(n);
    unsupported_.push_back(reason);
  }
}

// A session all of whose events are <not supported> has nothing to start.
void Counters::start() {
  for (auto& s : sessions_)
    if (!s.encodings().empty()) s.start();
}

void Counters::stop() {
  for (auto& s : sessions_)
    if (!s.encodings().empty()) s.stop();
}

void Counters::poll() {
  for (auto& s : sessions_) s.poll();
}

namespace {

// One event's readings of some sessions, summed.
pmc::Reading sum_of(const std::vector<std::vector<pmc::Reading>>& all, const std::vector<std::size_t>& members,
                    std::size_t index) {
  pmc::Reading sum = all.at(members.front()).at(index);
  for (std::size_t m = 1; m < members.size(); ++m) {
    const pmc::Reading& r = all.at(members[m]).at(index);
    // The TSC is one clock, the same on every CPU: its ticks are not added up.
    sum.value = sum.unit == "ticks" ? std::max(sum.value, r.value) : sum.value + r.value;
    sum.time_enabled += r.time_enabled;
    sum.time_running += r.time_running;
    sum.extrapolated = sum.extrapolated || r.extrapolated;
  }
  sum.cpu = -1;
  return sum;
}

}  // namespace

std::vector<Row> Counters::read() {
  std::vector<std::vector<pmc::Reading>> all;
  for (auto& s : sessions_) all.push_back(s.read());
  std::vector<Row> rows;
  std::size_t index = 0;  // among the counted events
  for (std::size_t e = 0; e < events_.size(); ++e) {
    if (!unsupported_[e].empty()) {
      rows.push_back({events_[e], std::nullopt, unsupported_[e], -1, std::nullopt});
      continue;
    }
    if (per_cpu_) {
      for (std::size_t k = 0; k < all.size(); ++k)
        rows.push_back({events_[e], all[k].at(index), {}, cpus_[k], std::nullopt});
    } else if (!labels_.empty()) {
      // A row per label, in the order the labels first appear, summing its sessions.
      for (std::size_t k = 0; k < all.size(); ++k) {
        bool seen = false;
        for (std::size_t j = 0; j < k && !seen; ++j) seen = labels_[j].id == labels_[k].id;
        if (seen) continue;
        std::vector<std::size_t> members;
        for (std::size_t j = k; j < all.size(); ++j)
          if (labels_[j].id == labels_[k].id) members.push_back(j);
        Row row{events_[e], sum_of(all, members, index), {}, -1, std::nullopt};
        row.aggr = labels_[k].id;
        row.aggr_text = labels_[k].text;
        row.aggr_kind = labels_[k].kind;
        row.aggr_count = labels_[k].count_cpus ? static_cast<unsigned>(members.size()) : 0;
        rows.push_back(std::move(row));
      }
    } else {
      std::vector<std::size_t> members(all.size());
      for (std::size_t k = 0; k < all.size(); ++k) members[k] = k;
      rows.push_back({events_[e], sum_of(all, members, index), {}, -1, std::nullopt});
    }
    ++index;
  }
  // Never enabled (a process that slept throughout, a command that ended before -D's delay):
  // perf's <not counted>.
  for (Row& r : rows)
    if (r.reading && r.reading->time_enabled == 0 && r.reading->unit != "ticks") r.idle = true;
  return rows;
}

std::vector<Row> difference(const std::vector<Row>& now, const std::vector<Row>& before) {
  std::vector<Row> out = now;
  for (std::size_t i = 0; i < out.size() && i < before.size(); ++i) {
    if (!out[i].reading || !before[i].reading) continue;
    pmc::Reading& r = *out[i].reading;
    const pmc::Reading& b = *before[i].reading;
    r.value = r.value >= b.value ? r.value - b.value : 0;
    r.time_enabled = r.time_enabled >= b.time_enabled ? r.time_enabled - b.time_enabled : 0;
    r.time_running = r.time_running >= b.time_running ? r.time_running - b.time_running : 0;
    // Not enabled at all in the interval (a task that slept through it): perf's <not counted>.
    out[i].idle = r.time_enabled == 0;
  }
  return out;
}

}  // namespace pmc_cli
