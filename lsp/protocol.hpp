// The LSP types the server reads and writes, and their JSON, in one place (as
// clangd's Protocol.h). Handlers and features work on these structs and never
// pick JSON apart or build it by hand. A request's malformed field is the
// client's error: reading throws ParamsError (answered -32602) naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "lsp/capabilities.hpp"
#include "lsp/positions.hpp"

namespace oomlens::lsp {

struct ParamsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- Shared pieces -------------------------------------------------------

struct TextDocumentIdentifier {
  std::string uri = {};
};

struct Location {
  std::string uri = {};
  Range range = {};
};

// What a diagnostic of ours carries in `data` (ruff's way): which diagnosis
// it is ("incident:0", "source:2", "syntax") and of which version, so that
// a code action needs no second analysis; for a log, its fixes as well.
struct DiagnosticData {
  std::string ref = {};
  std::int64_t version = 0;
  std::optional<std::string> verdict_class = {};  // "class": an incident's verdict
  nlohmann::json fixes = {};                       // an incident's fixes (report/json_report's form), or null
  std::optional<std::string> verify = {};          // an incident's verification command
  std::optional<std::string> script = {};          // the script its traceback starts in
  std::optional<std::string> fix_safety = {};      // "fix": a source diagnostic's fix safety
};

struct DiagnosticRelatedInformation {
  Location location = {};
  std::string message = {};
};

struct Diagnostic {
  Range range = {};
  int severity = 1;
  std::optional<std::string> code = {};
  std::optional<std::string> code_href = {};  // codeDescription.href: the rule's page
  std::string message = {};
  // Absent and empty differ on the wire: a repeated finding always says
  // where its repeats are, even when none could be located.
  std::optional<std::vector<DiagnosticRelatedInformation>> related_information = {};
  DiagnosticData data = {};
};



struct TextEdit {
  Range range = {};
  std::string new_text = {};
};

struct TextDocumentEdit {
  std::string uri = {};
  std::optional<std::int64_t> version = {};  // null: a file read from disk, not one the client holds
  std::vector<TextEdit> edits = {};
};

struct WorkspaceEdit {
  std::vector<TextDocumentEdit> documents = {};
  // Versioned documentChanges (the client then refuses an edit of a document
  // that moved on) when it takes them, else the plain `changes` map.
  bool document_changes = false;
};

// ---- Lifecycle -------------------------------------------------------------

// The "oomlens" settings as the client sent them (initializationOptions,
// didChangeConfiguration, the answer to workspace/configuration): unknown
// keys are ignored; a value of the wrong type keeps the default and is
// reported in `problems`.
struct SettingsSection {
  Settings settings = {};
  std::vector<std::string> problems = {};
};

struct InitializeParams {
  ClientCapabilities capabilities = {};
  // workspaceFolders' local paths (else rootUri's, else rootPath): where a
  // snapshot's relative file names are looked up.
  std::vector<std::string> workspace_folders = {};
  // initializationOptions (its "oomlens" section when it has one).
  std::optional<SettingsSection> settings = {};
};

struct InitializeResult {
  ClientCapabilities client = {};  // the server's capabilities follow from the client's
  std::string version = {};
};

struct NoParams {};

struct CancelParams {
  std::optional<nlohmann::json> id = {};  // a request id: number or string
};

// workspace/didChangeConfiguration: settings (their "oomlens" section).
struct DidChangeConfigurationParams {
  std::optional<SettingsSection> settings = {};
};

struct ConfigurationParams {
  std::string section = {};
};

// client/registerCapability for workspace/didChangeWatchedFiles: the files
// the server reads from disk, watched by the client (the server watches
// nothing itself).
struct FileSystemWatcher {
  std::string glob_pattern = {};
  int kind = 7;  // WatchKind: Create 1 | Change 2 | Delete 4
};
struct WatchedFilesRegistration {
  std::string id = {};
  std::vector<FileSystemWatcher> watchers = {};
};

// workspace/didChangeWatchedFiles: files created, changed or deleted on disk.
struct FileEvent {
  enum class Type { created = 1, changed = 2, deleted = 3 };
  std::string uri = {};
  Type type = Type::changed;
};
struct DidChangeWatchedFilesParams {
  std::vector<FileEvent> changes = {};
};

// The client's answer to workspace/configuration: the settings of the one
// section asked for; none when the answer holds no item.
struct ConfigurationResult {
  std::optional<SettingsSection> settings = {};
};

// window/logMessage and window/showMessage.
struct MessageParams {
  int type = 3;  // 1 error, 2 warning, 3 info
  std::string message = {};
};

struct WorkDoneProgressCreateParams {
  std::string token = {};
};

// $/progress of a work-done token: begin (title), report, end.
struct ProgressParams {
  std::string token = {};
  std::string kind = {};
  std::optional<std::string> title = {};
  std::optional<int> percentage = {};
};

// ---- Text synchronization ----------------------------------------------------

struct DidOpenParams {
  std::string uri = {};
  std::string language_id = {};
  std::int64_t version = 0;
  std::string text = {};  // moved out of the message: it can be 100 MiB
};

struct ContentChange {
  std::optional<Range> range = {};  // none: the whole text
  std::string text = {};
};

struct DidChangeParams {
  std::string uri = {};
  std::int64_t version = 0;
  std::vector<ContentChange> changes = {};
};

struct DidCloseParams {
  TextDocumentIdentifier text_document = {};
};

// ---- Notebook synchronization (LSP 3.17) --------------------------------------

// A cell of a notebook: its text document, and whether it is code (kind 2).
struct NotebookCellItem {
  std::string uri = {};
  bool code = false;
};

struct NotebookOpenParams {
  std::string uri = {};
  std::vector<NotebookCellItem> cells = {};
  std::vector<DidOpenParams> cell_documents = {};
};

struct NotebookChangeParams {
  std::string uri = {};
  // change.cells.structure: cells replaced at `start` (deleteCount of them)
  struct Splice {
    std::size_t start = 0;
    std::size_t delete_count = 0;
    std::vector<NotebookCellItem> cells = {};
  };
  std::optional<Splice> structure = {};
  std::vector<DidOpenParams> opened = {};  // structure.didOpen
  std::vector<std::string> closed = {};    // structure.didClose
  std::vector<NotebookCellItem> data = {};  // cells.data: a cell's kind changed
  std::vector<DidChangeParams> text = {};  // cells.textContent
};

struct NotebookCloseParams {
  std::string uri = {};
  std::vector<std::string> cells = {};  // cellTextDocuments
};

// ---- Diagnostics -------------------------------------------------------------

struct DocumentDiagnosticParams {
  TextDocumentIdentifier text_document = {};
  std::string previous_result_id = {};  // empty when none
};

struct DocumentDiagnosticReport {
  bool unchanged = false;
  std::optional<std::string> result_id = {};
  std::vector<Diagnostic> items = {};  // a full report's
};

// The data of a pull answered ServerCancelled: pull again.
struct DiagnosticServerCancellationData {
  bool retrigger_request = true;
};

struct PublishDiagnosticsParams {
  std::string uri = {};
  std::optional<std::int64_t> version = {};
  std::vector<Diagnostic> diagnostics = {};
};

// ---- Hover -------------------------------------------------------------------

struct HoverParams {
  TextDocumentIdentifier text_document = {};
  std::optional<Position> position = {};  // none: not a position (no hover, not an error)
};

// textDocument/inlayHint: hints for the lines within `range` (all when none).
struct InlayHintParams {
  TextDocumentIdentifier text_document = {};
  std::optional<Range> range = {};
};

struct Hover {
  bool markdown = true;  // contents.kind: markdown or plaintext
  std::string value = {};
};

// An inlay hint at a line's end, padded on the left; its tooltip is Markdown
// (MarkupContent) for clients that show it, else plain text.
struct InlayHint {
  Position position = {};
  std::string label = {};
  bool markdown_tooltip = true;
  std::string tooltip = {};
};

// A fix as code actions pass it to oomlens.showFix and oomlens.fixScript:
// "env" (name, value), "snapshot" (line), "empty_cache", "fixAll"; with what
// showFix says of it.
struct FixRequest {
  std::string kind = {};
  std::optional<std::string> name = {};
  std::optional<std::string> value = {};
  std::optional<std::string> script = {};
  std::optional<std::string> safety = {};
  std::optional<std::string> detail = {};
  std::optional<std::uint32_t> line = {};
};

// A command's arguments here are text (a command line, a rule code, a URI)
// or a fix.
using CommandArgument = std::variant<std::string, FixRequest>;

struct Command {
  std::string title = {};
  std::string command = {};
  std::vector<CommandArgument> arguments = {};
};

// ---- Code actions ------------------------------------------------------------

// A diagnostic the client sent back: the reference and version in its data.
struct DiagnosticRef {
  std::string ref = {};
  std::int64_t version = 0;
};

struct CodeActionParams {
  TextDocumentIdentifier text_document = {};
  std::optional<Range> range = {};               // none when malformed
  std::vector<DiagnosticRef> diagnostics = {};   // context.diagnostics of ours, well formed
  // context.only; an entry that is not a string is kept empty (it admits nothing).
  std::optional<std::vector<std::string>> only = {};
};

// How to make an action's left-out part again at resolve time: which
// diagnosis (or document-wide action) and, for a log, which of its actions.
struct CodeActionData {
  std::string uri = {};
  std::int64_t version = 0;
  std::string ref = {};
  std::optional<std::size_t> index = {};
};

struct CodeAction {
  std::string title = {};
  std::string kind = {};
  std::vector<Diagnostic> diagnostics = {};
  bool preferred = false;
  std::optional<WorkspaceEdit> edit = {};
  std::optional<Command> command = {};
  std::optional<CodeActionData> data = {};
};

// CodeAction for clients with literal support, Command for the others.
using CodeActionItem = std::variant<CodeAction, Command>;

struct CodeActionResolveParams {
  nlohmann::json action = {};  // as the client sent it: resolve changes nothing already set
  std::string uri = {};        // data.uri
  std::optional<std::int64_t> version = {};
  std::optional<std::string> ref = {};
  std::optional<std::size_t> index = {};
};

// What resolve fills in: the parts code actions left out.
struct ResolvedParts {
  std::optional<Command> command = {};
  std::optional<WorkspaceEdit> edit = {};
};

// ---- Commands ----------------------------------------------------------------

// A command's arguments as the client sent them: each command has its own
// shape, read by its reader below (text_argument, verify_argument, ...).
using CommandArguments = nlohmann::json;

struct ExecuteCommandParams {
  std::string command = {};
  CommandArguments arguments = CommandArguments::array();  // moved: a selection to diagnose can be large
};

// oomlens.fixScript: the edit of one fix on a script or configuration file,
// or why there is none (title and edit null, with a message).
struct ScriptFix {
  std::optional<std::string> title = {};
  std::optional<std::string> safety = {};
  std::optional<WorkspaceEdit> edit = {};
  std::optional<std::string> message = {};
  std::optional<std::string> verify = {};  // the `oomlens verify` A/B command for the setting
};

// The first argument of a command that takes one text: a string, or an
// object with "text" (and, for oomlens.diagnoseText, "source": its label).
struct TextArgument {
  std::string text = {};
  std::optional<std::string> source = {};
};

// oomlens.verify's argument: the open document, and the allocator setting to
// verify (else the one the server proposes).
struct VerifyArgument {
  std::string uri = {};
  std::optional<std::string> conf = {};
};

// oomlens.fixScript's argument: the script and the fix to apply to it.
struct FixScriptArgument {
  std::string uri = {};
  nlohmann::json fix = {};  // read with fix_request: a malformed one has its own message
};

// What the oomlens.* commands answer, each with the fields it has.
struct CommandResult {
  std::optional<nlohmann::json> report = {};  // "json": a diagnosis in report/'s JSON contract
  std::optional<std::string> markdown = {};
  std::optional<std::string> html = {};
  std::optional<std::string> command = {};  // a command line to run or copy
  std::optional<std::string> message = {};
};

// What workspace/executeCommand answers: oomlens.fixScript's fix, or the
// result of another command. A struct, not a variant alias, so that no other
// variant converts to it when a result's JSON is looked up.
struct CommandAnswer {
  std::variant<CommandResult, ScriptFix> value;
  CommandAnswer(CommandResult result) : value(std::move(result)) {}  // NOLINT(google-explicit-constructor)
  CommandAnswer(ScriptFix fix) : value(std::move(fix)) {}            // NOLINT(google-explicit-constructor)
};

// ---- Reading params ------------------------------------------------------------
// Each takes the params of its method (moving large strings out of them).

void read(nlohmann::json& j, InitializeParams& out);
void read(nlohmann::json& j, NoParams& out);
void read(nlohmann::json& j, CancelParams& out);
void read(nlohmann::json& j, DidChangeConfigurationParams& out);
void read(nlohmann::json& j, DidChangeWatchedFilesParams& out);
void read(nlohmann::json& j, DidOpenParams& out);
void read(nlohmann::json& j, DidChangeParams& out);
void read(nlohmann::json& j, DidCloseParams& out);
void read(nlohmann::json& j, NotebookOpenParams& out);
void read(nlohmann::json& j, NotebookChangeParams& out);
void read(nlohmann::json& j, NotebookCloseParams& out);
void read(nlohmann::json& j, DocumentDiagnosticParams& out);
void read(nlohmann::json& j, HoverParams& out);
void read(nlohmann::json& j, InlayHintParams& out);
void read(nlohmann::json& j, CodeActionParams& out);
void read(nlohmann::json& j, CodeActionResolveParams& out);
void read(nlohmann::json& j, ExecuteCommandParams& out);
std::optional<TextArgument> text_argument(nlohmann::json& arguments);  // moves the text
std::optional<FixScriptArgument> fix_script_argument(nlohmann::json& arguments);
// oomlens.verify's: throws ParamsError naming what is wrong.
VerifyArgument verify_argument(const nlohmann::json& arguments);
// oomlens.analyzeSnapshot's (and each of oomlens.compareSnapshots'): the
// argument at `index`, a path or URI as given (a string, or an object with
// "path" or "uri"); nothing for another value.
std::optional<std::string> snapshot_argument(const nlohmann::json& arguments, std::size_t index = 0);
// A fix object (its kind empty when it names none); nothing for another value.
std::optional<FixRequest> fix_request(const nlohmann::json& j);
// oomlens.showFix's: the fix object it is given first.
std::optional<FixRequest> show_fix_argument(const nlohmann::json& arguments);

// ---- Reading replies to the server's requests -----------------------------------
// Leniently: an answer the server cannot use changes nothing.

void read(const nlohmann::json& result, ConfigurationResult& out);

// ---- Writing results -----------------------------------------------------------

void to_json(nlohmann::json& j, const Position& p);
void to_json(nlohmann::json& j, const Range& r);
void to_json(nlohmann::json& j, const Location& l);
void to_json(nlohmann::json& j, const DiagnosticData& d);
void to_json(nlohmann::json& j, const DiagnosticRelatedInformation& r);
void to_json(nlohmann::json& j, const Diagnostic& d);
void to_json(nlohmann::json& j, const Command& c);
void to_json(nlohmann::json& j, const TextEdit& e);
void to_json(nlohmann::json& j, const WorkspaceEdit& e);
void to_json(nlohmann::json& j, const InitializeResult& r);
void to_json(nlohmann::json& j, const ConfigurationParams& p);
void to_json(nlohmann::json& j, const WatchedFilesRegistration& r);  // RegistrationParams
void to_json(nlohmann::json& j, const MessageParams& m);
void to_json(nlohmann::json& j, const WorkDoneProgressCreateParams& p);
void to_json(nlohmann::json& j, const ProgressParams& p);
void to_json(nlohmann::json& j, const DocumentDiagnosticReport& r);
void to_json(nlohmann::json& j, const PublishDiagnosticsParams& p);
void to_json(nlohmann::json& j, const DiagnosticServerCancellationData& d);
void to_json(nlohmann::json& j, const Hover& h);
void to_json(nlohmann::json& j, const InlayHint& h);
void to_json(nlohmann::json& j, const CodeActionData& d);
void to_json(nlohmann::json& j, const CodeAction& a);
void to_json(nlohmann::json& j, const CodeActionItem& item);
void to_json(nlohmann::json& j, const ScriptFix& f);
void to_json(nlohmann::json& j, const FixRequest& f);
void to_json(nlohmann::json& j, const CommandArgument& argument);
void to_json(nlohmann::json& j, const CommandResult& r);
void to_json(nlohmann::json& j, const CommandAnswer& a);

// An optional result: null when there is none (a hover over nothing).
template <class T>
void to_json(nlohmann::json& j, const std::optional<T>& value) {
  if (value) to_json(j, *value);
  else j = nullptr;
}

// The client's action with what resolve filled in, where it was left out.
nlohmann::json resolved_action(nlohmann::json action, const ResolvedParts& parts);

}  // namespace oomlens::lsp
