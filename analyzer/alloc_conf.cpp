#include "analyzer/alloc_conf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>

namespace oomlens::analyzer {
namespace {

// How a key's value is read (PyTorch 2.6's CUDAAllocatorConfig and the newer
// AcceleratorAllocatorConfig).
enum class ValueKind {
  mib_min20,         // max_split_size_mb, max_non_split_rounding_mb: stoi, > 20 (2.6) / >= 20 (newer)
  mib_positive,      // large_segment_size_mb
  fraction_open,     // garbage_collection_threshold: stod, 0 < x < 1
  fraction_closed,   // per_process_memory_fraction
  boolean,           // exactly True or False
  backend,           // native | cudaMallocAsync (hipMallocAsync on ROCm)
  roundup,           // power of 2, or [mb:div,...,>:div]
  pow2_max128,       // pinned_num_register_threads
};

struct KnownKey {
  std::string_view name;
  ValueKind kind;
  bool native_only;  // ignored by backend:cudaMallocAsync
};

constexpr std::array<KnownKey, 16> kKeys{{
    {"backend", ValueKind::backend, false},
    {"max_split_size_mb", ValueKind::mib_min20, true},
    {"max_non_split_rounding_mb", ValueKind::mib_min20, true},
    {"roundup_power2_divisions", ValueKind::roundup, true},
    {"garbage_collection_threshold", ValueKind::fraction_open, true},
    {"expandable_segments", ValueKind::boolean, true},
    {"release_lock_on_cudamalloc", ValueKind::boolean, false},
    {"release_lock_on_hipmalloc", ValueKind::boolean, false},
    {"pinned_use_cuda_host_register", ValueKind::boolean, false},
    {"pinned_use_hip_host_register", ValueKind::boolean, false},
    {"pinned_num_register_threads", ValueKind::pow2_max128, false},
    {"pinned_use_background_threads", ValueKind::boolean, false},
    {"per_process_memory_fraction", ValueKind::fraction_closed, false},
    {"graph_capture_record_stream_reuse", ValueKind::boolean, false},
    {"large_segment_size_mb", ValueKind::mib_positive, false},
    {"throw_on_cudamalloc_oom", ValueKind::boolean, false},
}};

// Known to PyTorch 1.13 only; 2.x rejects it as unrecognised.
constexpr std::string_view kRemovedKey = "roundup_bypass_threshold_mb";

const KnownKey* find_key(std::string_view name) {
  for (const auto& k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

bool space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string strip_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!space(c)) out += c;
  return out;
}

ConfRange trim(std::string_view text, std::size_t b, std::size_t e) {
  while (b < e && space(text[b])) ++b;
  while (e > b && space(text[e - 1])) --e;
  return {b, e};
}

std::optional<std::uint64_t> parse_uint(std::string_view s) {
  std::uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  double v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

bool power_of_2(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal string alignment distance (a transposition counts as one edit).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The one known key a misspelling stands for: same letters up to case and
// `-`/`_`; else the unique nearest within two edits; else the unique key the
// word is a long prefix of (`max_split_size` for `max_split_size_mb`).
std::optional<std::string_view> suggest_key(std::string_view key) {
  if (key.size() > 64) return std::nullopt;  // no key is that long; keeps the distance table small
  std::string norm = lower(key);
  std::replace(norm.begin(), norm.end(), '-', '_');
  for (const auto& k : kKeys)
    if (k.name == norm) return k.name;
  std::size_t best = static_cast<std::size_t>(-1);
  std::vector<std::string_view> nearest;
  for (const auto& k : kKeys) {
    std::size_t d = edit_distance(norm, k.name);
    if (d < best) best = d, nearest.clear();
    if (d == best) nearest.push_back(k.name);
  }
  if (best <= 2 && norm.size() > 4) {
    if (nearest.size() == 1) return nearest.front();
    return std::nullopt;  // two keys equally close: ambiguous
  }
  std::vector<std::string_view> prefixed;
  for (const auto& k : kKeys)
    if (norm.size() >= 8 && (k.name.starts_with(norm) || norm.starts_with(k.name))) prefixed.push_back(k.name);
  if (prefixed.size() == 1) return prefixed.front();
  return std::nullopt;
}

// +1 at each `[` that has its `]`, -1 at that `]`, 0 elsewhere: an unclosed
// `[` must not swallow the options after it.
std::vector<int> brackets(std::string_view text) {
  std::vector<int> kind(text.size(), 0);
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') {
      open.push_back(i);
    } else if (text[i] == ']' && !open.empty()) {
      kind[open.back()] = 1;
      kind[i] = -1;
      open.pop_back();
    }
  }
  return kind;
}

// A top-level entry between commas (commas inside [...] do not separate).
struct Entry {
  std::size_t raw_begin = 0, raw_end = 0;  // raw_end is the comma, or the end
  ConfRange trimmed;
};

std::vector<Entry> split_entries(std::string_view text) {
  std::vector<Entry> out;
  auto kind = brackets(text);
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size()) {
      depth += kind[i];
      if (text[i] != ',' || depth > 0) continue;
    }
    out.push_back({start, i, trim(text, start, i)});
    start = i + 1;
  }
  return out;
}

// The first `:` outside brackets within [b, e); `kind` is brackets(text),
// computed once per value (a long value must not cost quadratic time).
std::optional<std::size_t> find_colon(std::string_view text, const std::vector<int>& kind, std::size_t b,
                                      std::size_t e) {
  int depth = 0;
  for (std::size_t i = b; i < e; ++i) {
    depth += kind[i];
    if (text[i] == ':' && depth <= 0) return i;
  }
  return std::nullopt;
}

class Checker {
 public:
  Checker(std::string_view text, const AllocConfContext& ctx) : text_(text), ctx_(ctx), kind_(brackets(text)) {}

  AllocConf run() {
    auto entries = split_entries(text_);
    bool blank = entries.size() == 1 && entries[0].trimmed.begin == entries[0].trimmed.end;
    for (std::size_t i = 0; i < entries.size() && !blank; ++i) {
      const Entry& e = entries[i];
      if (e.trimmed.begin == e.trimmed.end) {
        if (i + 1 == entries.size()) continue;  // a trailing comma is accepted
        // PyTorch reads the `,` where a key should be and rejects it.
        AllocConfProblem p;
        p.range = {e.raw_end, e.raw_end + 1};
        p.message = "empty option before ',': PyTorch rejects a ',' where an option name should be";
        p.replacement = "";
        p.fix_range = {e.raw_begin, e.raw_end + 1};
        problems_.push_back(std::move(p));
        continue;
      }
      std::size_t before = problems_.size();
      entry(e);
      entry_index_.push_back(i);
      flawed_.push_back(problems_.size() > before);
    }
    entries_ = std::move(entries);
    cross_checks();
    std::stable_sort(problems_.begin(), problems_.end(),
                     [](const AllocConfProblem& a, const AllocConfProblem& b) { return a.range.begin < b.range.begin; });
    return {std::move(options_), std::move(problems_)};
  }

 private:
  void add(ConfRange range, std::string message, ConfSeverity severity = ConfSeverity::error) {
    problems_.push_back({range, std::move(message), severity, std::nullopt, {}, false});
  }
  void add_fix(ConfRange range, std::string message, ConfRange fix_range, std::string replacement,
               ConfSeverity severity = ConfSeverity::error, bool keeps = false) {
    problems_.push_back({range, std::move(message), severity, std::move(replacement), fix_range, keeps});
  }
  std::string label(const AllocOption& o) const { return o.value.empty() ? o.key : o.key + ":" + o.value; }

  void entry(const Entry& e) {
    AllocOption o;
    o.range = e.trimmed;
    auto colon = find_colon(text_, kind_, e.trimmed.begin, e.trimmed.end);
    if (!colon) {
      o.key_range = o.range;
      o.key = strip_spaces(text_.substr(o.range.begin, o.range.end - o.range.begin));
      o.value_range = {o.range.end, o.range.end};
      options_.push_back(o);
      no_value(options_.back());
      return;
    }
    o.key_range = trim(text_, e.trimmed.begin, *colon);
    o.value_range = trim(text_, *colon + 1, e.trimmed.end);
    if (o.value_range.begin == o.value_range.end) o.value_range = {*colon + 1, *colon + 1};
    o.key = strip_spaces(text_.substr(o.key_range.begin, o.key_range.end - o.key_range.begin));
    o.value = strip_spaces(text_.substr(o.value_range.begin, o.value_range.end - o.value_range.begin));
    options_.push_back(o);
    const AllocOption& opt = options_.back();
    if (opt.key.empty()) return add(opt.range, fmt::format("':{}': missing option name before ':'", opt.value));
    const KnownKey* known = find_key(opt.key);
    if (!known) return unknown(opt);
    if (opt.value.empty())
      return add(opt.range, fmt::format("{}: missing value after ':'", opt.key));
    value(opt, *known);
  }

  void no_value(const AllocOption& o) {
    // `expandable_segments=True`: the shell habit of `=` for `:`.
    auto eq = o.key.find('=');
    if (eq != std::string::npos && find_key(o.key.substr(0, eq))) {
      auto at = text_.find('=', o.range.begin);
      return add_fix(o.range, fmt::format("'{}': key and value are separated by ':', not '='", o.key), {at, at + 1},
                     ":");
    }
    if (!find_key(o.key)) return unknown(o);
    add(o.range, fmt::format("'{}' has no value (expected '{}:value')", o.key, o.key));
  }

  void unknown(const AllocOption& o) {
    if (o.key == kRemovedKey)
      return add(o.range,
                 fmt::format("'{}' existed only in PyTorch 1.13: PyTorch 2.x rejects it as an unrecognized option", o.key));
    auto s = suggest_key(o.key);
    if (!s) return add(o.key_range, fmt::format("unknown option '{}'", o.key));
    add_fix(o.key_range, fmt::format("unknown option '{}' (did you mean '{}'?)", o.key, *s), o.key_range,
            std::string(*s));
  }

  void value(const AllocOption& o, const KnownKey& k) {
    const std::string& v = o.value;
    bool token_chars = v.find_first_of(":[]") != std::string::npos;
    if (token_chars && k.kind != ValueKind::roundup) {
      if (auto joined = wrong_separator(o))
        return add_fix(o.range,
                       fmt::format("{}: options are separated by ',' (PyTorch reads this as one malformed value)",
                                   label(o)),
                       o.range, *joined);
      return add(o.range, fmt::format("{}: malformed value (one value per option; options are separated by ',')", label(o)));
    }
    switch (k.kind) {
      case ValueKind::mib_min20: return mib(o, 20);
      case ValueKind::mib_positive: return mib(o, 1);
      case ValueKind::fraction_open: {
        auto d = parse_double(v);
        if (!d || !(*d > 0 && *d < 1)) add(o.range, fmt::format("{}: must be a number between 0 and 1, exclusive", label(o)));
        return;
      }
      case ValueKind::fraction_closed: {
        auto d = parse_double(v);
        if (!d || !(*d >= 0 && *d <= 1)) add(o.range, fmt::format("{}: must be a number between 0 and 1", label(o)));
        return;
      }
      case ValueKind::boolean: {
        if (v == "True" || v == "False") return;
        std::string l = lower(v);
        if (l == "true" || l == "false")
          return add_fix(o.range, fmt::format("{}: must be True or False (case-sensitive)", label(o)), o.value_range,
                         l == "true" ? "True" : "False");
        return add(o.range, fmt::format("{}: must be True or False", label(o)));
      }
      case ValueKind::backend: return backend(o);
      case ValueKind::roundup: return roundup(o);
      case ValueKind::pow2_max128: {
        auto n = parse_uint(v);
        if (!n || !power_of_2(*n) || *n > 128) add(o.range, fmt::format("{}: must be a power of 2, at most 128", label(o)));
        return;
      }
    }
  }

  // `a:1;b:2` or `a:1 b:2` (the 1.13 parser split on spaces): the option
  // rewritten with commas, when every part starts with a known key.
  std::optional<std::string> wrong_separator(const AllocOption& o) const {
    std::string_view raw = text_.substr(o.range.begin, o.range.end - o.range.begin);
    std::vector<std::size_t> starts{0};
    for (std::size_t i = 1; i < raw.size(); ++i) {
      if (!(raw[i - 1] == ';' || space(raw[i - 1])) || raw[i] == ';' || space(raw[i])) continue;
      for (const auto& k : kKeys) {
        if (!raw.substr(i).starts_with(k.name)) continue;
        auto after = raw.find_first_not_of(" \t", i + k.name.size());
        if (after != std::string_view::npos && raw[after] == ':') starts.push_back(i);
        break;
      }
    }
    if (starts.size() < 2) return std::nullopt;
    std::string out;
    for (std::size_t n = 0; n < starts.size(); ++n) {
      std::size_t end = n + 1 < starts.size() ? starts[n + 1] : raw.size();
      std::string_view part = raw.substr(starts[n], end - starts[n]);
      while (!part.empty() && (part.back() == ';' || space(part.back()))) part.remove_suffix(1);
      if (part.find(';') != std::string_view::npos) return std::nullopt;
      if (n) out += ',';
      out += part;
    }
    return out;
  }

  void mib(const AllocOption& o, std::uint64_t min) {
    const std::string& v = o.value;
    std::string need = min == 20 ? "an integer ≥ 20 (MiB)" : "a positive integer (MiB)";
    std::size_t digits = 0;
    while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits]))) ++digits;
    auto n = parse_uint(std::string_view(v).substr(0, digits));
    if (!n) return add(o.range, fmt::format("{}: must be {}", label(o), need));
    if (*n > 2147483647) return add(o.range, fmt::format("{}: out of range (PyTorch reads it as a 32-bit int)", label(o)));
    if (*n < min) return add(o.range, fmt::format("{}: must be {}", label(o), need));
    if (digits < v.size()) {
      // stoi reads the leading digits and ignores the rest: `512MB` is 512.
      std::string_view num = std::string_view(v).substr(0, digits);
      return add_fix(o.range,
                     fmt::format("{}: PyTorch reads only the leading {} and ignores '{}' (the unit is always MiB)",
                                 label(o), num, v.substr(digits)),
                     o.value_range, std::string(num), ConfSeverity::warning, true);
    }
    if (min == 20 && *n == 20)
      add(o.range, fmt::format("{}: PyTorch 2.6 and older reject 20 (they require more than 20)", label(o)),
          ConfSeverity::warning);
  }

  void backend(const AllocOption& o) {
    std::vector<std::string_view> valid{"native", "cudaMallocAsync"};
    if (ctx_.variable == "PYTORCH_HIP_ALLOC_CONF") valid = {"native", "hipMallocAsync"};
    else if (ctx_.variable != "PYTORCH_CUDA_ALLOC_CONF") valid.push_back("hipMallocAsync");
    if (std::find(valid.begin(), valid.end(), o.value) != valid.end()) return;
    std::string words = fmt::format("{} or {}", valid[0], valid[1]);
    for (auto name : valid)
      if (lower(name) == lower(o.value))
        return add_fix(o.range, fmt::format("{}: must be {} (case-sensitive)", label(o), words), o.value_range,
                       std::string(name));
    add(o.range, fmt::format("{}: unknown backend, must be {}", label(o), words));
  }

  void roundup(const AllocOption& o) {
    const std::string& v = o.value;
    if (v.empty() || v[0] != '[') {
      auto n = parse_uint(v);
      if (!n || !power_of_2(*n))
        add(o.range, fmt::format("{}: must be a power of 2, or a list such as [256:1,512:2,>:4]", label(o)));
      return;
    }
    if (v.back() != ']' || std::count(v.begin(), v.end(), '[') != 1 || std::count(v.begin(), v.end(), ']') != 1)
      return add(o.range, fmt::format("{}: malformed list (expected [size_mb:divisions,...,>:divisions])", label(o)));
    // Items between the brackets, with their own ranges.
    std::size_t open = text_.find('[', o.value_range.begin);
    std::size_t close = text_.rfind(']', o.value_range.end - 1);
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i <= close; ++i) {
      if (i < close && text_[i] != ',') continue;
      ConfRange item = trim(text_, start, i);
      start = i + 1;
      std::string t = strip_spaces(text_.substr(item.begin, item.end - item.begin));
      if (t.empty()) {
        if (i == close && item.begin > open + 1) continue;  // `[...,]` PyTorch's loop stops at `]`
        if (i == close && close == open + 1) continue;        // `[]`
        add({i, i + 1}, fmt::format("{}: empty entry in the list", o.key));
        continue;
      }
      auto c = t.find(':');
      if (c == std::string::npos) {
        add(item, fmt::format("{}: list entry '{}' needs size_mb:divisions", o.key, t));
        continue;
      }
      std::string size = t.substr(0, c), div = t.substr(c + 1);
      auto s = parse_uint(size);
      if (size != ">" && (!s || !power_of_2(*s)))
        add(item, fmt::format("{}: '{}': the interval start must be a power of 2 (MiB) or '>'", o.key, t));
      auto d = parse_uint(div);
      if (!d || (*d != 0 && !power_of_2(*d)))
        add(item, fmt::format("{}: '{}': the divisions must be a power of 2, or 0", o.key, t));
    }
  }

  // Whether the option's own reading found a problem (set by entry()).
  bool has_problem(const AllocOption& o) const { return flawed_[static_cast<std::size_t>(&o - options_.data())]; }

  // The bytes that removing option `i` deletes, with one neighbouring comma.
  ConfRange removal(std::size_t i) const {
    const Entry& e = entries_[entry_index_[i]];
    std::size_t next = entry_index_[i] + 1;
    if (next < entries_.size() && entries_[next].trimmed.begin != entries_[next].trimmed.end)
      return {e.trimmed.begin, entries_[next].trimmed.begin};
    if (i > 0) return {options_[i - 1].range.end, e.trimmed.end};
    return {e.trimmed.begin, next < entries_.size() ? entries_[next].raw_begin : e.trimmed.end};
  }

  void cross_checks() {
    const AllocOption* first_backend = nullptr;
    for (const auto& o : options_) {
      if (o.key != "backend" || has_problem(o)) continue;
      if (!first_backend) {
        first_backend = &o;
        // PyTorch's load-time reader splits on spaces and commas: `backend: x` is missed there.
        std::string_view raw = text_.substr(o.range.begin, o.range.end - o.range.begin);
        if (o.value != "native" && raw.find_first_of(" \t\r\n") != std::string_view::npos)
          add_fix(o.range,
                  fmt::format("{}: write it without spaces: PyTorch's load-time reader misses it, loads the native "
                              "allocator, then fails ('Allocator backend parsed at runtime != allocator backend parsed "
                              "at load time')",
                              label(o)),
                  o.range, label(o));
      } else if (o.value != first_backend->value) {
        add(o.range, fmt::format("{} conflicts with the earlier backend:{}: PyTorch loads the first and fails on this one",
                                 label(o), first_backend->value));
      }
    }
    bool is_async = first_backend && first_backend->value != "native";
    std::map<std::string, std::size_t> last;
    for (std::size_t i = 0; i < options_.size(); ++i) last[options_[i].key] = i;
    for (std::size_t i = 0; i < options_.size(); ++i) {
      const AllocOption& o = options_[i];
      const KnownKey* k = find_key(o.key);
      if (!k) continue;
      if (is_async && k->native_only && !has_problem(o))
        add(o.range, fmt::format("'{}' is ignored under backend:{}", o.key, first_backend->value), ConfSeverity::warning);
      if (o.key == "expandable_segments" && o.value == "True") {
        bool rocm = ctx_.platform == ConfPlatform::rocm || ctx_.variable == "PYTORCH_HIP_ALLOC_CONF";
        if (rocm)
          add(o.range, "expandable_segments:True is ignored on ROCm before PyTorch 2.11 (it logs 'expandable_segments "
                       "not supported on this platform')", ConfSeverity::warning);
        else if (ctx_.platform == ConfPlatform::windows)
          add(o.range, "expandable_segments:True is ignored on Windows (it logs 'expandable_segments not supported on "
                       "this platform')", ConfSeverity::warning);
      }
      std::size_t j = last[o.key];
      if (j == i || o.key == "backend") continue;
      const AllocOption& later = options_[j];
      if (o.key == "roundup_power2_divisions") {
        add(o.range, fmt::format("'{}' is set again later: the lists are combined, not replaced", o.key),
            ConfSeverity::warning);
        continue;
      }
      std::string msg = fmt::format("'{}' is set again later ({}): the last value wins", o.key, label(later));
      if (has_problem(o)) add(o.range, std::move(msg), ConfSeverity::warning);
      else add_fix(o.range, std::move(msg), removal(i), "", ConfSeverity::warning, true);
    }
  }

  std::string_view text_;
  AllocConfContext ctx_;
  std::vector<int> kind_;
  std::vector<AllocOption> options_;
  std::vector<AllocConfProblem> problems_;
  std::vector<Entry> entries_;
  std::vector<std::size_t> entry_index_;  // options_[i] came from entries_[entry_index_[i]]
  std::vector<bool> flawed_;              // options_[i] has a problem of its own
};

}  // namespace

bool is_alloc_conf_variable(std::string_view name) {
  return name == "PYTORCH_CUDA_ALLOC_CONF" || name == "PYTORCH_ALLOC_CONF" || name == "PYTORCH_HIP_ALLOC_CONF";
}

AllocConf parse_alloc_conf(std::string_view value, const AllocConfContext& context) {
  return Checker(value, context).run();
}

std::string merge_alloc_conf(std::string_view existing, std::string_view option) {
  auto colon = option.find(':');
  if (colon == std::string_view::npos) return std::string(existing);
  std::string key = strip_spaces(option.substr(0, colon));
  std::string value = strip_spaces(option.substr(colon + 1));
  if (key.empty()) return std::string(existing);
  std::string wanted = key + ":" + value;

  struct Edit {
    std::size_t begin, end;
    std::string text;
  };
  std::vector<Edit> edits;
  bool present = false;
  auto kind = brackets(existing);
  for (const Entry& e : split_entries(existing)) {
    if (e.trimmed.begin == e.trimmed.end) continue;
    auto c = find_colon(existing, kind, e.trimmed.begin, e.trimmed.end);
    std::size_t key_end = c ? *c : e.trimmed.end;
    if (strip_spaces(existing.substr(e.trimmed.begin, key_end - e.trimmed.begin)) != key) continue;
    present = true;
    if (!c) {  // the key alone: give it its value
      edits.push_back({e.trimmed.begin, e.trimmed.end, wanted});
      continue;
    }
    ConfRange v = trim(existing, *c + 1, e.trimmed.end);
    if (strip_spaces(existing.substr(v.begin, v.end - v.begin)) == value) continue;
    if (v.begin == v.end) v = {*c + 1, *c + 1};
    edits.push_back({v.begin, v.end, value});
  }
  std::string out;
  if (present) {
    std::size_t at = 0;
    for (const auto& e : edits) {
      out.append(existing.substr(at, e.begin - at));
      out += e.text;
      at = e.end;
    }
    out.append(existing.substr(at));
    return out;
  }
  std::size_t last = existing.find_last_not_of(" \t\r\n\f\v");
  if (last == std::string_view::npos) return wanted;
  out.append(existing.substr(0, last + 1));
  if (existing[last] != ',') out += ',';
  out += wanted;
  out.append(existing.substr(last + 1));
  return out;
}

}  // namespace oomlens::analyzer
