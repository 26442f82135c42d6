// pmc stat: whose activity is counted (a command, processes, a thread, CPUs), how the counts are
// summed (--per-thread, --per-core, --per-socket, from /proc and the CPU topology in sysfs),
// the event strings counted (--all-user, --all-kernel, -d), and the options that do not go
// together.
#include "stat.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace pmc_cli {

namespace {

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

int number_in(const std::filesystem::path& file, int otherwise) {
  try {
    return std::stoi(first_line(file));
  } catch (const std::exception&) {  // missing (die_id before Linux 5.2) or unreadable
    return otherwise;
  }
}

// --per-thread: the threads of a process, in the order of their ids, each "COMM-TID".
void add_threads(int pid, Target& t) {
  const std::filesystem::path tasks = fmt::format("/proc/{}/task", pid);
  std::error_code ec;
  std::vector<int> tids;
  for (const auto& entry : std::filesystem::directory_iterator(tasks, ec)) {
    try {
      tids.push_back(std::stoi(entry.path().filename().string()));
    } catch (const std::exception&) {  // not a thread's directory
    }
  }
  if (ec || tids.empty()) throw pmc::Error(pmc::errc::not_found, fmt::format("-p {}: no such process", pid));
  std::sort(tids.begin(), tids.end());
  for (int tid : tids) {
    const std::string comm = first_line(tasks / std::to_string(tid) / "comm");
    t.scopes.push_back(pmc::Scope::thread_id(tid));
    t.labels.push_back({fmt::format("{}-{}", comm, tid), fmt::format("{:>16}-{:<8} ", comm, tid), "thread", false});
  }
}

// --per-core, --per-socket: where a CPU is, from /sys/devices/system/cpu/cpuN/topology.
Label topology_label(int cpu, bool per_core) {
  const std::filesystem::path topo = fmt::format("/sys/devices/system/cpu/cpu{}/topology", cpu);
  const int socket = number_in(topo / "physical_package_id", 0);
  const int die = number_in(topo / "die_id", 0);
  const int core = number_in(topo / "core_id", cpu);
  if (per_core)
    return {fmt::format("S{}-D{}-C{}", socket, die, core), fmt::format("S{}-D{}-C{:<8} ", socket, die, core), "core",
            true};
  return {fmt::format("S{}", socket), fmt::format("S{:<5} ", socket), "socket", true};
}

}  // namespace

Target target_of(const Options& o) {
  Target t;
  if (o.all_cpus || !o.cpu_list.empty()) {
    const std::vector<int> cpus = o.all_cpus ? pmc::online_cpus() : pmc::parse_cpu_list(o.cpu_list);
    for (int c : cpus) {
      t.scopes.push_back(pmc::Scope::on_cpu(c));
      if (o.per_core || o.per_socket) t.labels.push_back(topology_label(c, o.per_core));
    }
    t.per_cpu = o.no_aggr;
    t.cpu_wide = true;
    t.describe = o.all_cpus ? "system wide" : fmt::format("CPU(s) {}", o.cpu_list);
  } else if (!o.pids.empty()) {
    for (int pid : o.pids) {
      if (o.per_thread)
        add_threads(pid, t);
      else
        t.scopes.push_back(pmc::Scope::process(pid));
    }
    t.describe = fmt::format("process id '{}'", fmt::join(o.pids, ","));
  } else if (o.tid) {
    t.scopes.push_back(pmc::Scope::thread_id(o.tid));
    if (o.per_thread) {
      const std::string comm = first_line(fmt::format("/proc/{}/comm", o.tid));
      t.labels.push_back({fmt::format("{}-{}", comm, o.tid), fmt::format("{:>16}-{:<8} ", comm, o.tid), "thread", false});
    }
    t.describe = fmt::format("thread id '{}'", o.tid);
  }
  return t;
}

// Whether a process or thread still runs: /proc/ID/stat exists and is not a zombie (an exited
// task its parent has not reaped yet; kill(ID, 0) still succeeds on those).
bool task_alive(int id) {
  std::ifstream in("/proc/" + std::to_string(id) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

std::string counted_as(const Options& o, const std::string& event) {
  if (o.all_user) return event + ":u";
  if (o.all_kernel) return event + ":k";
  return event;
}

std::vector<std::string> detailed_events(unsigned level) {
  std::vector<std::string> out;
  if (level >= 1) out = {"L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses"};
  if (level >= 2)
    for (const char* e : {"L1-icache-loads", "L1-icache-load-misses", "dTLB-loads", "dTLB-load-misses", "iTLB-loads",
                          "iTLB-load-misses"})
      out.emplace_back(e);
  if (level >= 3)
    for (const char* e : {"L1-dcache-prefetches", "L1-dcache-prefetch-misses"}) out.emplace_back(e);
  return out;
}

std::optional<std::string> stat_conflict(const Options& o) {
  const bool cpus = o.all_cpus || !o.cpu_list.empty();
  const bool pids = !o.pids.empty();
  const bool real = cpus || pids || o.tid || !o.command.empty();
  if (!o.workload.empty() && !o.command.empty())
    return "stat counts either a simulated workload (--workload) or a command, not both";
  if (!o.workload.empty() && (cpus || pids || o.tid || o.interval_ms || o.repeat > 1 || o.timeout_ms ||
                              o.separator || !o.output.empty() || o.no_aggr || o.delay_ms || o.detailed ||
                              o.per_thread || o.per_core || o.per_socket))
    return "-a, -C, -p, -t, -A, -I, -r, -D, -d, --per-thread, --per-core, --per-socket, --timeout, -x and -o count "
           "real activity, not --workload";
  if (o.workload.empty() && !real)
    return "stat needs a command (pmc stat [OPTIONS] COMMAND [ARGS...]), -a, -C LIST, -p PID, -t TID or --workload FILE";
  if ((cpus ? 1 : 0) + (pids ? 1 : 0) + (o.tid ? 1 : 0) > 1) return "choose one of -a/-C, -p and -t";
  if ((pids || o.tid) && !o.command.empty()) return "-p and -t count a running process; they take no command";
  if (o.no_aggr && !cpus) return "-A (one count per CPU) goes with -a or -C";
  if (o.per_thread && !pids && !o.tid)
    return "--per-thread counts the threads of -p PID or -t TID (as perf stat, not of a command)";
  if ((o.per_core || o.per_socket) && !cpus) return "--per-core and --per-socket go with -a or -C";
  if ((o.no_aggr ? 1 : 0) + (o.per_core ? 1 : 0) + (o.per_socket ? 1 : 0) > 1)
    return "choose one of -A, --per-core and --per-socket";
  if (o.all_user && o.all_kernel) return "--all-user and --all-kernel do not go together";
  if (o.interval_count && !o.interval_ms) return "--interval-count N goes with -I MS";
  if (o.delay_ms && o.command.empty()) return "-D delays the counting of a command: give one";
  if (o.repeat > 1 && o.command.empty()) return "-r repeats a command: give one";
  if (o.repeat > 1 && o.interval_ms) return "-r and -I do not go together";
  if (o.separator && (o.json || o.json_lines)) return "-x (CSV) and --json or -j do not go together";
  if (o.json && o.json_lines) return "-j (perf's JSON lines) and --json (one document) do not go together";
  if (o.append && o.output.empty()) return "--append appends to the file of -o: give one";
  if (o.separator && o.separator->empty()) return "-x needs a separator";
  if (o.regions && o.command.empty()) return "--regions reports the regions of a command: give one";
  if (o.regions && (o.repeat > 1 || o.interval_ms)) return "--regions does not go with -r or -I";
  return std::nullopt;
}

}  // namespace pmc_cli
