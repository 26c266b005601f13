#include "lsp/file_lines.hpp"

#include <algorithm>
#include <fstream>
#include <map>

namespace oomlens::lsp {
namespace {

// A span's last line is kept up to this many bytes to measure where it ends:
// a longer line (a progress bar redrawn for hours) is measured on its start.
constexpr std::size_t kMaxLineBytes = 64 * 1024;

// What the pass learns about one wanted '\n' line.
struct LineFacts {
  bool wants_text = false;     // it ends a span
  bool seen = false;
  std::uint32_t lsp_line = 0;  // the LSP line it starts on
  std::string text;            // its bytes, without the '\n' (when wanted)
};

}  // namespace

std::vector<std::optional<Range>> locate_file_lines(const std::string& path, const std::vector<NewlineSpan>& spans,
                                                    PositionEncoding encoding, const std::atomic<bool>& cancelled) {
  std::vector<std::optional<Range>> out(spans.size());
  std::map<std::uint64_t, LineFacts> wanted;
  for (const auto& s : spans) {
    wanted[s.first];
    wanted[std::max(s.first, s.last)].wants_text = true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in || wanted.empty()) return out;

  // LSP line ends are "\n", "\r\n" and a bare "\r": every '\r' ends a line,
  // and a '\n' does unless a '\r' came just before it.
  std::uint64_t line = 1;
  std::uint32_t lsp_line = 0;
  bool after_cr = false;
  auto next = wanted.begin();
  LineFacts* current = nullptr;  // the wanted line being read, if it is one
  auto enter_line = [&] {
    current = nullptr;
    if (next != wanted.end() && next->first == line) {
      current = &next->second;
      current->seen = true;
      current->lsp_line = lsp_line;
      ++next;
    }
  };
  enter_line();
  std::vector<char> buffer(1 << 20);
  while (current || next != wanted.end()) {
    if (cancelled.load(std::memory_order_relaxed)) return std::vector<std::optional<Range>>(spans.size());
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::size_t n = static_cast<std::size_t>(in.gcount());
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c == '\n') {
        if (!after_cr) ++lsp_line;
        after_cr = false;
        ++line;
        enter_line();
        if (!current && next == wanted.end()) break;
        continue;
      }
      if (current && current->wants_text && current->text.size() < kMaxLineBytes) current->text.push_back(c);
      after_cr = c == '\r';
      if (after_cr) ++lsp_line;
    }
  }

  for (std::size_t k = 0; k < spans.size(); ++k) {
    const LineFacts& first = wanted[spans[k].first];
    const LineFacts& last = wanted[std::max(spans[k].first, spans[k].last)];
    if (!first.seen || !last.seen) continue;
    // Measured as a text in memory would be: the trailing '\r' of a "\r\n"
    // (and of a redraw that ends the line) is not part of it.
    std::string_view text = last.text;
    while (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    Position end = LineIndex(text).position_of(text.size(), encoding);
    out[k] = Range{{first.lsp_line, 0}, {last.lsp_line + end.line, end.character}};
  }
  return out;
}

}  // namespace oomlens::lsp
