// The memory a snapshot's peak holds, on the lines of the user's code that
// allocated it: inlay hints at the lines' ends, and the breakdown on hover.
#include <fmt/format.h>

#include "lsp/local_files.hpp"
#include "lsp/markdown.hpp"
#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::show_snapshot_lines(std::optional<SnapshotLines> lines) {
  if (!lines) return;  // no trace: the lines shown before stay
  snapshot_lines_ = std::make_shared<const SnapshotLines>(std::move(*lines));
  if (client_.inlay_hint_refresh) send_request("workspace/inlayHint/refresh", nullptr, nullptr);
}

void Server::inlay_hint(InlayHintParams params, const Reply<std::vector<InlayHint>>& reply) {
  std::vector<InlayHint> hints;
  const DocumentSnapshot doc = documents_.get(params.text_document.uri);
  auto path = path_from_file_uri(params.text_document.uri);
  if (!snapshot_lines_ || !doc || !path) return reply(hints);
  const LineIndex& index = doc->lines();
  for (const auto& [line, memory] : lines_of_document(*snapshot_lines_, *path, workspace_folders_)) {
    const auto at = static_cast<std::size_t>(line - 1);  // frames count from 1, LSP lines from 0
    if (at >= index.line_count()) continue;
    const Position end = index.position_of(index.line_end(at), client_.encoding);
    if (params.range && (end < params.range->start || end > params.range->end)) continue;
    std::string label = line_memory_label(*memory);
    std::string tooltip = client_.markdown_hover ? line_memory_markdown(*snapshot_lines_, *memory) : label;
    hints.push_back({end, std::move(label), client_.markdown_hover, std::move(tooltip)});
  }
  reply(hints);
}

std::optional<Hover> Server::snapshot_line_hover(const std::string& uri, std::uint32_t line) const {
  auto path = path_from_file_uri(uri);
  if (!snapshot_lines_ || !path) return std::nullopt;
  for (const auto& [at, memory] : lines_of_document(*snapshot_lines_, *path, workspace_folders_))
    if (at == static_cast<std::int64_t>(line) + 1) {
      std::string text = line_memory_markdown(*snapshot_lines_, *memory);
      return client_.markdown_hover ? Hover{true, std::move(text)} : Hover{false, markdown_to_plaintext(text)};
    }
  return std::nullopt;
}

}  // namespace oomlens::lsp
