// The metric files' common parts (catalog_import_metrics.cpp): shared by the Intel conversion
// there and perf's in catalog_import_metrics_perf.cpp.
#pragma once

#include "catalog_import.hpp"

namespace pmc_cli::catalog_import {

// "A;B;;A" -> {"A", "B"}.
std::vector<std::string> split_groups(std::string_view text);

// The events of one file and their formula variables: the event string with every character
// other than [A-Za-z0-9_] as '_', else (a clash, a reserved name, a leading digit) that with a
// number appended; one variable per event string across the file.
class Variables {
 public:
  std::string of(const std::string& event);
  // The `events` entry: EVENT, or VAR=EVENT when the variable is not the plain spelling.
  std::string entry(const std::string& event) const;

 private:
  std::map<std::string, std::string> var_;
  std::set<std::string> taken_;
};

struct Metric {
  std::string name;
  std::vector<std::string> aliases, groups, events;  // events: event strings, in first use
  int level = 0;
  bool tma = false;  // one of Intel's TMA metrics
  std::map<std::string, std::string> short_vars;  // event -> v1, v2, ...: a formula too long with the file's
  std::string parent, formula, unit, threshold, description;
};

// Adds e to events unless there.
void use(std::vector<std::string>& events, const std::string& e);
// Names unique regardless of case (a later one is left out, counted in file.skipped); aliases
// never another's name.
void settle_names(std::vector<Metric>& metrics, MetricFile& file);
// The whole file: the header comment, what was left out, backend, description, the metrics.
std::string file_text(const std::string& head, const std::string& backend, const std::string& description,
                      const std::vector<Metric>& metrics, const Variables& vars, const MetricFile& f);

}  // namespace pmc_cli::catalog_import
