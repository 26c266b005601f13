// The language server: a thin protocol layer over the analyzer and the rules
// (DESIGN.md, "LSP"). It owns the protocol state (lifecycle, capabilities,
// documents, requests in flight) and nothing of the analysis. Its handlers
// are bound to methods in server.cpp, one file per method family.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lsp/binder.hpp"
#include "lsp/capabilities.hpp"
#include "lsp/document_analysis.hpp"
#include "lsp/documents.hpp"
#include "lsp/notebooks.hpp"
#include "lsp/jsonrpc.hpp"
#include "lsp/protocol.hpp"
#include "lsp/snapshot_lines.hpp"
#include "lsp/workspace_projects.hpp"

namespace oomlens::lsp {

struct SnapshotCommandOutcome;  // snapshot_command.hpp

// How the server reaches the world. The stdio runner wires these to Asio;
// tests can run everything inline.
struct ServerIo {
  std::function<void(const nlohmann::json&)> send;                 // one outgoing message
  std::function<void(std::function<void()>)> run_in_background;   // analysis, off the protocol thread
  std::function<void(std::function<void()>)> run_on_protocol;     // back onto the protocol thread
  std::function<void(std::string_view)> log;                      // stderr
};

class Server {
 public:
  explicit Server(ServerIo io);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Everything below runs on the protocol thread.
  void on_message(std::string_view body);
  // A large body that was read (and partly parsed) as it arrived.
  void on_message(IncrementalMessage& body);
  // Logged; a request skipped for its size (its id read from the stream) is
  // answered with the error.
  void on_framing_error(std::string_view description, const std::optional<std::string>& skipped_request_id = {});
  void on_input_end();

  // After "exit" or the end of input: stop reading, exit with this status
  // (0 only when "shutdown" came first, as the spec asks).
  bool finished() const { return finished_; }
  int exit_code() const { return shutdown_requested_ ? 0 : 1; }

 private:
  // Dispatch (server.cpp).
  void bind_methods();
  void dispatch(Message message, std::size_t body_bytes);
  void on_request(Request request);
  void on_notification(Notification& n);
  void on_response(const Response& r);
  void reply(const PendingPtr& p, nlohmann::json result);
  void reply_error(const PendingPtr& p, int code, std::string_view message);
  // A request whose document changed before it could be answered. A
  // diagnostic pull gets ServerCancelled with retriggerRequest (LSP 3.17's
  // DiagnosticServerCancellationData): the client pulls again, for the new
  // version, where ContentModified would leave it with an empty list. Any
  // other request gets ContentModified.
  void reply_superseded(const PendingPtr& p);
  void send_request(std::string_view method, nlohmann::json params, std::function<void(const Response&)> on_reply);
  void notify(std::string_view method, nlohmann::json params);

  // Lifecycle (lifecycle.cpp).
  void initialize(InitializeParams params, const Reply<InitializeResult>& reply);
  void shutdown(NoParams params, const Reply<std::nullptr_t>& reply);
  void initialized(NoParams params);
  void exit_notification(NoParams params);
  void cancel_request(CancelParams params);
  void set_trace(NoParams params);

  // Documents (text_sync.cpp).
  void did_open(DidOpenParams params);
  void did_change(DidChangeParams params);
  void did_close(const DidCloseParams& params);
  void did_save(NoParams params);

  // Their analyses (scheduling.cpp).
  void schedule_analysis(const DocumentSnapshot& doc);
  void on_analysis_done(const std::shared_ptr<const DocumentAnalysis>& analysis);
  // Runs `then` with the analysis of the document's current version, once
  // it is ready; answers the request as superseded when a newer version replaces
  // it, and does nothing once the request has been answered (cancelled).
  void with_analysis(const PendingPtr& p, const std::string& uri,
                     std::function<void(const DocumentAnalysis&)> then);
  void publish(const DocumentAnalysis& analysis);  // diagnostics.cpp
  // The line starts the JSON reader found for `text`, when it is one of the
  // large strings of the notification being handled.
  std::optional<LineStarts> take_string_lines(const std::string& text);

  // Jobs of several files (job_sync.cpp).
  struct AnalysisSlot;
  // The text of `uri` changed (or it was opened or closed): the other open
  // files of its job read it, so they are analysed again.
  void reanalyse_job_of(const std::string& uri);
  // Says in the client's log what the analysis could not read of its job,
  // once per message while it stays the same.
  void log_job_messages(AnalysisSlot& slot, const DocumentAnalysis& analysis);

  // Scripts of a workspace folder (project_sync.cpp): the text of `uri`
  // changed (or it was opened or closed), so the open scripts that import
  // it, directly or not, are analysed again; no other.
  void reanalyse_importers_of(const std::string& uri);
  // A changed file of a project, or (whole_project) one that makes every
  // script of its project worth analysing again.
  struct ProjectChange {
    ProjectMember file;
    bool whole_project = false;
  };
  void reanalyse_importers(const std::vector<ProjectChange>& changes, const std::string& except_uri = {});

  // Files changed on disk (file_watch.cpp): the client watches the project's
  // files for the server when it can register the watcher.
  void register_file_watchers();
  void did_change_watched_files(const DidChangeWatchedFilesParams& params);

  // Features: diagnostics.cpp, hover.cpp, code_action.cpp, commands.cpp.
  void pull_diagnostics(DocumentDiagnosticParams params, const Reply<DocumentDiagnosticReport>& reply);
  void hover(const HoverParams& params, const Reply<std::optional<Hover>>& reply);
  // Memory at a snapshot's peak on the document's lines (snapshot_hints.cpp).
  void inlay_hint(InlayHintParams params, const Reply<std::vector<InlayHint>>& reply);
  std::optional<Hover> snapshot_line_hover(const std::string& uri, std::uint32_t line) const;
  void show_snapshot_lines(std::optional<SnapshotLines> lines);
  void code_action(CodeActionParams params, const Reply<std::vector<CodeActionItem>>& reply);
  void code_action_resolve(CodeActionResolveParams params, const Reply<nlohmann::json>& reply);
  void execute_command(ExecuteCommandParams params, const Reply<CommandAnswer>& reply);
  // The oomlens.* commands (commands.cpp), each given the arguments.
  using CommandReply = Reply<CommandAnswer>;
  void diagnose_text(CommandArguments& args, const CommandReply& reply);
  void analyze_snapshot(CommandArguments& args, const CommandReply& reply);
  void compare_snapshots(CommandArguments& args, const CommandReply& reply);
  // Runs a snapshot command in the background (given the request's cancel
  // flag) and answers with its outcome.
  using SnapshotRun = std::function<SnapshotCommandOutcome(const std::atomic<bool>& cancelled)>;
  void answer_snapshot_command(const CommandReply& reply, SnapshotRun run);
  void fix_script(CommandArguments& args, const CommandReply& reply);
  void explain(CommandArguments& args, const CommandReply& reply);
  void explain_document(CommandArguments& args, const CommandReply& reply);
  void copy_verification(CommandArguments& args, const CommandReply& reply);
  void run_verification(CommandArguments& args, const CommandReply& reply);
  void verify(CommandArguments& args, const CommandReply& reply);

  // Notebooks (notebook_sync.cpp): the code cells as one script under the notebook's URI.
  void notebook_did_open(NotebookOpenParams params);
  void notebook_did_change(NotebookChangeParams params);
  void notebook_did_close(const NotebookCloseParams& params);
  void open_notebook_script(const std::string& uri, std::string text);
  void publish_notebook(const DocumentAnalysis& analysis);
  // For a cell's URI: answered from its notebook's script (true), else false.
  bool pull_cell_diagnostics(const std::string& cell, const Reply<DocumentDiagnosticReport>& reply);
  bool cell_code_action(CodeActionParams& params, const Reply<std::vector<CodeActionItem>>& reply);
  void pass_verification(CommandArguments& args, const CommandReply& reply, bool run);
  void show_fix(CommandArguments& args, const CommandReply& reply);

  // Settings (settings.cpp).
  void did_change_configuration(DidChangeConfigurationParams params);
  void request_configuration();
  void apply_settings(const SettingsSection& section);
  void refresh_all();

  ServerIo io_;
  Binder binder_;
  enum class Phase { uninitialized, running, shut_down } phase_ = Phase::uninitialized;
  bool shutdown_requested_ = false;
  bool finished_ = false;
  ClientCapabilities client_;
  std::vector<std::string> workspace_folders_;
  // Each workspace folder as a project whose scripts import each other.
  std::unique_ptr<WorkspaceProjects> projects_;
  // The last snapshot analysed (oomlens.analyzeSnapshot), by line.
  std::shared_ptr<const SnapshotLines> snapshot_lines_;
  Settings settings_;
  DocumentStore documents_;
  Notebooks notebooks_;
  std::map<std::string, std::int64_t> notebook_script_versions_;
  // Whether the client has pulled a notebook cell's diagnostics. Until it
  // does, cells get theirs pushed even from a client that pulls for files:
  // VS Code's language client (9.x) pulls only for documents it opened with
  // textDocument/didOpen or shows in a tab, and a cell is neither.
  bool cells_pulled_ = false;
  bool push_cell_diagnostics() const { return !client_.pull_diagnostics || !cells_pulled_; }

  std::map<std::string, PendingPtr> pending_;  // by serialized id
  std::map<std::string, std::function<void(const Response&)>> outgoing_;  // our requests, by id
  std::int64_t next_outgoing_id_ = 1;

  struct AnalysisSlot {
    std::int64_t version = 0;
    // Which scheduling this slot waits for: a settings change re-analyses the
    // same version, so the version alone cannot tell two results apart (it
    // names the pull resultId, see diagnostics.cpp).
    std::uint64_t serial = 0;
    std::shared_ptr<const DocumentAnalysis> ready;  // null while analysing
    std::shared_ptr<const DocumentAnalysis> last;   // the latest finished one (incremental re-parse)
    std::shared_ptr<std::atomic<bool>> cancel;
    std::vector<std::pair<PendingPtr, std::function<void(const DocumentAnalysis&)>>> waiting;
    // Large logs: the latest segmented analysis (of `segmented_version`) and
    // each accepted change since, as (version, one replacement of the text
    // before it), so that the next analysis re-reads only around them.
    std::shared_ptr<const analyzer::SegmentedLog> segmented;
    std::int64_t segmented_version = 0;
    std::vector<std::pair<std::int64_t, analyzer::LogEdit>> edits;
    std::uint64_t opening = 0;  // counts didOpens: a result for an earlier opening's text is not kept
    std::uint64_t running = 0;  // the serial of the analysis under way (0: none)
    bool rerun = false;         // a newer version waits for it (schedule_analysis)
    std::vector<std::string> job_messages;  // those already logged
  };
  void start_analysis(AnalysisSlot& slot, const DocumentSnapshot& doc);
  // The base for analysing `doc` (scheduling.cpp), empty when there is none.
  LogBase log_base(const AnalysisSlot& slot, const DocumentSnapshot& doc) const;
  void keep_segmented(const DocumentAnalysis& analysis, std::uint64_t opening);
  std::map<std::string, AnalysisSlot, std::less<>> analyses_;
  std::int64_t progress_tokens_ = 0;
  std::vector<StringLines>* string_lines_ = nullptr;  // of the notification being handled
  std::uint64_t analysis_serial_ = 0;
};

// Runs the server on standard input and output until "exit" or the end of
// input; returns the process exit status.
int run_stdio_server();

}  // namespace oomlens::lsp
