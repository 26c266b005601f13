#include "analyzer/log/job.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <map>

namespace oomlens::analyzer {
namespace {

constexpr std::size_t kMaxRankDigits = 5;

std::optional<int> small_number(std::string_view digits) {
  if (digits.empty() || digits.size() > kMaxRankDigits) return std::nullopt;
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool names_node(std::string_view word) {
  return word.size() >= 4 && (word.substr(0, 4) == "node" || word.substr(0, 4) == "host" ||
                              word.substr(0, 4) == "Node" || word.substr(0, 4) == "Host" ||
                              word.substr(0, 4) == "NODE" || word.substr(0, 4) == "HOST");
}

// A rank word and its number: "rank3", "rank_3", "local_rank-3", "worker3",
// "node3". Not "gpu3": file names say "gpu0" of the device a test ran on.
const char* kRankWords = R"((?i)(local_rank|localrank|rank|worker|node|host)([-_.]?)(\d{1,5}))";

}  // namespace

std::vector<std::string> path_components(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') {
      parts.emplace_back(path.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

PathRank path_rank(std::string_view path) {
  static const RE2 whole_word(std::string("^") + kRankWords + "$");
  // The word ends the file name's stem and starts it or follows a non-letter.
  static const RE2 stem_word(std::string(R"(^(.*?[^A-Za-z])?)") + kRankWords + "$");
  static const RE2 attempt(R"(^attempt_\d+$)");
  static const RE2 slurm(R"(^(.*?\d{2,})([-.])(\d{1,5})$)");

  PathRank out;
  std::vector<std::string> parts = path_components(path);
  if (parts.empty()) return out;
  std::optional<int> dir_rank, file_rank;
  bool replaced = false;
  // Directories, outermost first: the innermost rank wins.
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    std::string word, sep, digits;
    if (RE2::FullMatch(parts[i], attempt) && i + 2 < parts.size()) {
      if (auto r = small_number(parts[i + 1])) {
        dir_rank = r;
        parts[i + 1] = "*";
        replaced = true;
        ++i;
      }
    } else if (RE2::FullMatch(parts[i], whole_word, &word, &sep, &digits)) {
      if (!names_node(word)) dir_rank = small_number(digits);
      parts[i] = word + sep + "*";
      replaced = true;
    }
  }
  // The file name: its stem up to the last dot, or to the first ("rank3.stderr.log").
  std::string& name = parts.back();
  bool in_name = false;
  for (std::size_t dot : {name.rfind('.'), name.find('.')}) {
    if (in_name) break;
    std::string stem = dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
    std::string rest = stem.size() < name.size() ? name.substr(stem.size()) : std::string();
    std::string before, word, sep, digits;
    if (RE2::FullMatch(stem, stem_word, &before, &word, &sep, &digits)) {
      if (!names_node(word)) file_rank = small_number(digits);
      name = before + word + sep + "*" + rest;
      in_name = replaced = true;
    }
  }
  if (!replaced) {
    std::size_t dot = name.rfind('.');
    std::string stem = dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
    std::string rest = stem.size() < name.size() ? name.substr(stem.size()) : std::string();
    std::string before, sep, digits;
    if (RE2::FullMatch(stem, slurm, &before, &sep, &digits)) {
      file_rank = small_number(digits);
      name = before + sep + "*" + rest;
      in_name = replaced = true;
      out.weak = true;
    }
  }
  if (!replaced) return out;
  // A rank in a directory groups every file under it (stdout.log, stderr.log,
  // error.json of one rank); a rank in the name groups files named alike.
  std::size_t keep = in_name ? parts.size() : parts.size() - 1;
  for (std::size_t i = 0; i < keep; ++i) out.job_key += (i ? "/" : "") + parts[i];
  if (!in_name) out.job_key += "/";
  out.rank = file_rank ? file_rank : dir_rank;
  return out;
}

std::vector<JobFiles> group_job_files(const std::vector<std::string>& paths) {
  std::vector<PathRank> ranks;
  std::map<std::string, std::vector<std::size_t>> by_key;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    ranks.push_back(path_rank(paths[i]));
    if (!ranks.back().job_key.empty()) by_key[ranks.back().job_key].push_back(i);
  }
  auto grouped = [&](std::size_t i) {
    const auto& members = by_key[ranks[i].job_key];
    if (ranks[i].job_key.empty() || members.size() < 2) return false;
    if (!ranks[i].weak) return true;
    return std::any_of(members.begin(), members.end(), [&](std::size_t j) { return ranks[j].rank == 0; });
  };
  std::vector<JobFiles> jobs;
  std::map<std::string, std::size_t> job_of;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!grouped(i)) {
      jobs.push_back({{i}, {ranks[i].weak ? std::nullopt : ranks[i].rank}});
      continue;
    }
    auto [it, fresh] = job_of.emplace(ranks[i].job_key, jobs.size());
    if (fresh) jobs.emplace_back();
    jobs[it->second].inputs.push_back(i);
    jobs[it->second].ranks.push_back(ranks[i].rank);
  }
  return jobs;
}

Analysis analyze_job(std::vector<JobInput> inputs) {
  Analysis a;
  std::vector<OomEvent> events;
  std::vector<LogFinding> findings;
  std::vector<InputInfo> info;
  const bool several = inputs.size() > 1;
  std::size_t total = 0;
  for (const auto& in : inputs) total += in.log.events.size();
  for (std::uint32_t k = 0; k < inputs.size(); ++k) {
    auto& in = inputs[k];
    for (auto& e : in.log.events) e.file = k;
    // The first input's events stay where they are: a log of 100 000 OOMs
    // holds tens of MiB of them, and moving them costs as much in fresh pages.
    if (k == 0) {
      events = std::move(in.log.events);
      events.reserve(total);
    } else {
      events.insert(events.end(), std::make_move_iterator(in.log.events.begin()),
                    std::make_move_iterator(in.log.events.end()));
    }
    // The moved-from events still hold their room: a log of 100 000 OOMs
    // would keep tens of MiB of empty shells through the grouping.
    std::vector<OomEvent>().swap(in.log.events);
    for (auto& f : in.log.findings) {
      f.file = k;
      findings.push_back(std::move(f));
    }
    a.bytes += in.log.bytes;
    a.lines += in.log.lines;
    a.findings_capped = a.findings_capped || in.log.capped;
    a.ooms_not_analysed += in.log.ooms_not_analysed;
    info.push_back({several ? in.name : std::string(), in.rank});
  }
  a.incidents = group_incidents(std::move(events), findings, {}, info);
  a.findings = std::move(findings);
  return a;
}

}  // namespace oomlens::analyzer
