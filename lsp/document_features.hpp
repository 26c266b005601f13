// What the server does with one kind of document (a log, a script or
// configuration file, anything else), behind one interface: handlers ask
// features_for(kind) and never fork on the kind. Adding a kind of document
// is one class in its own file and one line in document_features.cpp.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lsp/document_analysis.hpp"
#include "lsp/protocol.hpp"
#include "lsp/workspace_projects.hpp"

namespace oomlens::lsp {

// What an analysis is made from besides the document and the settings.
struct AnalysisInputs {
  const std::atomic<bool>& cancelled;          // polled between pieces of the text
  const std::function<void(double)>& progress;  // now and then, for large documents
  // An earlier analysis of the same document (a script is re-parsed
  // incrementally from it), and a large log's segments to re-read only
  // around an edit.
  const DocumentAnalysis* previous = nullptr;
  const LogBase& base;
  // A script of a workspace folder: its imports are read in the folder's
  // project, and its facts kept there for the scripts that import it.
  const std::optional<ProjectMember>& project;
};

// The client's open document for a URI, null when it is not open: an edit of
// a script the client holds is made on its text and names its version.
using OpenDocuments = std::function<DocumentSnapshot(const std::string& uri)>;

struct ActionContext {
  const ClientCapabilities& client;
  OpenDocuments open;
};

class DocumentFeatures {
 public:
  virtual ~DocumentFeatures() = default;

  // Fills `analysis` (whose doc, encoding and options are set): its
  // diagnostics and what the other features read. Off the protocol thread.
  virtual void analyze(DocumentAnalysis& analysis, const AnalysisInputs& inputs) const = 0;

  // The hover at a position; nothing when nothing is there.
  virtual std::optional<Hover> hover(const DocumentAnalysis& analysis, Position position, bool markdown) const = 0;

  // The actions for a range, honouring `only`; parts a lazily resolving
  // client asks for later are left out.
  virtual std::vector<CodeActionItem> code_actions(const DocumentAnalysis& analysis, const CodeActionParams& params,
                                                   const ActionContext& context) const = 0;

  // The parts code_actions left out; nothing when the action no longer
  // matches the analysis (the document changed).
  virtual std::optional<ResolvedParts> resolve(const DocumentAnalysis& analysis, const CodeActionResolveParams& action,
                                               const ClientCapabilities& client) const = 0;
};

const DocumentFeatures& features_for(DocumentKind kind);

// Analyses a document with the features of its kind. `cancelled` is polled
// between pieces of the text; `progress(fraction)` is called now and then for
// large documents. `previous`, an earlier analysis of the same document, lets
// a script be re-parsed incrementally; `base` lets a large log be re-read
// only around an edit; `project` is a script's workspace project.
std::shared_ptr<const DocumentAnalysis> analyze_document(const DocumentSnapshot& doc, const Settings& settings,
                                                         PositionEncoding encoding, const std::atomic<bool>& cancelled,
                                                         const std::function<void(double)>& progress,
                                                         const std::shared_ptr<const DocumentAnalysis>& previous = nullptr,
                                                         const LogBase& base = {},
                                                         const std::optional<ProjectMember>& project = std::nullopt);

}  // namespace oomlens::lsp
