// A GPU out-of-memory error in words no specific parser knows: third-party
// CUDA extensions and hand-written kernels ("cudaMalloc returned error 2: out
// of memory", "[CUDA] out of memory (code 2)"), other frameworks (CuPy,
// llama.cpp, inference servers re-raising with advice on their own knobs),
// vendor runtimes ("MLU out of memory", Gaudi's "MODULE:PT_DEVMEM Allocation
// failed"), a library's *_ALLOC_FAILED status (cuFFT). Runs after every
// specific parser, so it only sees what they left.
//
// A line is claimed when it states that memory ran out (oom_context.hpp),
// names a GPU runtime, device or vendor, and reads as an error: an exception
// type on the line, or error words without advice ("if you see ...", "to
// avoid ...") and not followed by the run carrying on. Host memory, code and
// notes of a retry that worked are left alone. The event carries whatever
// sizes the sentence states (requested / free / total) and nothing else, so
// it classifies as unquantified unless the sentence proves more.
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/log/parse/common.hpp"
#include "analyzer/log/parse/oom_context.hpp"
#include "analyzer/log/parse/parser.hpp"

namespace oomlens::analyzer::parse {
namespace {

// How far a line without an exception type looks ahead for the run going on.
constexpr std::size_t kFateLines = 120;

Framework framework_of(std::string_view text, std::string_view exception, std::string_view source_file) {
  Framework f = framework_from_words(text, exception);
  if (f != Framework::unknown || source_file.empty()) return f;
  if (source_file.find("tensorflow") != std::string_view::npos) return Framework::tensorflow;
  if (source_file.find("xla") != std::string_view::npos) return Framework::jax;
  return f;
}

}  // namespace

std::optional<std::size_t> parse_generic_oom(const Region& region, std::size_t at, Parsed& out) {
  if (at >= region.lines.size()) return std::nullopt;
  const Line& line = region.lines[at];
  auto pos = oom_statement(line.text);  // the cheap test first: most lines stop here
  if (!pos) return std::nullopt;
  std::string_view body = line.text;
  std::string_view source_file;
  if (strip_log_prefix(body, &source_file)) pos = oom_statement(body);  // else the same text: the same answer
  if (!pos) return std::nullopt;
  // The C10 suffix's "Search for `cudaErrorMemoryAllocation' ..." belongs to the CUDA error above it.
  if (!has_gpu_context(body) || is_host_memory(body) || is_code(body) || is_c10_suffix(body) || is_mention(body, *pos))
    return std::nullopt;
  if (is_survival_note(body)) return std::nullopt;  // survived_oom.cpp's, when it is a GPU OOM at all

  std::size_t message_start = 0;
  std::string exception = exception_on(body, *pos, &message_start);
  if (exception.empty()) {
    // No exception type: a log line. It must read as an error, not as advice,
    // and the run must not simply go on after it.
    if (!has_error_context(body) || is_advice(body)) return std::nullopt;
    if (fate_after(region, at, kFateLines) == Fate::survived) {
      MemoryNumbers numbers;
      read_stated_sizes(body, numbers);
      out.findings.push_back(finding_at(line, FindingKind::allocator_pressure,
                                        "a GPU allocation failed with out of memory, and the run went on after it",
                                        numbers.requested));
      return at;
    }
  }

  OomEvent ev = event_at(line, OomFamily::generic);
  std::string_view message = body.substr(message_start);
  while (!message.empty() && (message.front() == ' ' || message.front() == '\t')) message.remove_prefix(1);
  ev.message = capped(message);
  ev.exception = std::move(exception);
  ev.device = device_from_words(body);
  ev.gpu = device_index(body);
  ev.framework = framework_of(body, ev.exception, source_file);
  read_stated_sizes(message, ev.numbers);
  return append_event(region, at, std::move(ev), out);
}

}  // namespace oomlens::analyzer::parse
