// The value of PYTORCH_CUDA_ALLOC_CONF (and PYTORCH_ALLOC_CONF,
// PYTORCH_HIP_ALLOC_CONF) read as PyTorch's allocator-config parser reads it
// (c10/cuda/CUDAAllocatorConfig.cpp and the newer ConfigTokenizer): `key:value`
// entries separated by `,`; `,` `:` `[` `]` are tokens and whitespace is
// dropped everywhere, even inside a word; booleans are exactly `True`/`False`;
// list values `[256:1,512:2,>:8]`. Every option and every problem carries
// byte offsets into the value, so a rule can put its diagnostic on exactly
// those characters of the source.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomlens::analyzer {

// Half-open range of bytes within the configuration value.
struct ConfRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  friend bool operator==(ConfRange, ConfRange) = default;
};

struct AllocOption {
  std::string key;    // whitespace removed, as PyTorch's lexer does
  std::string value;  // whitespace removed; a list keeps its brackets
  ConfRange key_range;    // trimmed of surrounding whitespace
  ConfRange value_range;  // trimmed; empty (at the end of the key) when there is no value
  ConfRange range;        // the whole option: key through value
};

// error: PyTorch raises at its first allocation (or the option cannot mean
// what it says); warning: accepted but ignored, overridden or non-portable.
enum class ConfSeverity { error, warning };

struct AllocConfProblem {
  ConfRange range;        // the offending option (or stray separator / list item)
  std::string message;    // names the key and the reason
  ConfSeverity severity = ConfSeverity::error;
  // An unambiguous correction: replace fix_range with replacement.
  std::optional<std::string> replacement;
  ConfRange fix_range;
  bool fix_keeps_behaviour = false;  // true when PyTorch reads the result exactly as before
};

struct AllocConf {
  std::vector<AllocOption> options;
  std::vector<AllocConfProblem> problems;  // in order of position
};

// Which build reads the value, when the context tells it.
enum class ConfPlatform { unknown, rocm, windows };

struct AllocConfContext {
  std::string_view variable;  // the variable that holds the value; "" when unknown
  ConfPlatform platform = ConfPlatform::unknown;
};

// The three variable names PyTorch reads.
bool is_alloc_conf_variable(std::string_view name);

// Parses a value. PYTORCH_HIP_ALLOC_CONF implies a ROCm build (hipMallocAsync
// backend, no expandable segments before 2.11). Never throws.
AllocConf parse_alloc_conf(std::string_view value, const AllocConfContext& context = {});

// Sets one `key:value` in an existing value: every entry with that key gets
// the new value (so duplicates agree), other entries and their order and
// spacing are kept; a key not present is appended after a `,`. Merging an
// option already present with the same value returns `existing` unchanged,
// so merging twice equals merging once. `option` without a `:` (or with an
// empty key) leaves `existing` unchanged.
std::string merge_alloc_conf(std::string_view existing, std::string_view option);

}  // namespace oomlens::analyzer
