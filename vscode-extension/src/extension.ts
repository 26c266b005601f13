// Entry point: wires the language client, the commands, the report panels and
// the terminal watcher. All analysis happens in the oomlens binary, over LSP.
import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import { State, type LanguageClient, type Middleware } from "vscode-languageclient/node";
import { findBinary } from "./binary";
import { createClient, LOG_SELECTOR } from "./client";
import { RestartBudget, withTimeout } from "./restartBudget";
import { CLIENT_COMMANDS, registerCommands } from "./commands";
import type { DiagnoseResult, Incident, ScriptFix, SnapshotResult } from "./contract";
import { markdownPage, ReportPanel, showStaticPanel, withStrictCsp } from "./panels";
import { applicableFix, baseName, scriptOf, type ReportAction } from "./report";
import { locateScript } from "./scripts";
import { selectionDiagnostics } from "./selectionDiagnostics";
import { compareTitle, explorerPair, pickSnapshotOrFolder, pickSnapshotPair } from "./snapshots";
import { SERVER_COMMANDS, ServerApi, UnsupportedCommandError } from "./serverApi";
import { commandWithBinary, readTerminalSelection, runInTerminal } from "./terminals";
import { TerminalWatcher } from "./terminalWatcher";
import { TestState } from "./testState";

// How long the server may take to answer "initialize" (it takes milliseconds)
// before the user is told it did not start.
const START_TIMEOUT_MS = 20_000;

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export class OomlensExtension implements vscode.Disposable {
  readonly output = vscode.window.createOutputChannel("oomlens");
  private client: LanguageClient | undefined;
  /** The oomlens binary the server runs from: verification commands use it too. */
  private binary: string | undefined;
  private readonly budget = new RestartBudget();
  private readonly selectionDiags = vscode.languages.createDiagnosticCollection("oomlens-selection");
  private readonly report = new ReportPanel((action, result) => void this.onReportAction(action, result));
  private readonly testState = new TestState();
  private readonly disposables: vscode.Disposable[] = [];
  readonly api = new ServerApi(
    {
      sendRequest: async <R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> => {
        await this.starting;
        const client = this.client;
        if (!client || !client.isRunning()) return Promise.reject(new Error('The oomlens server is not running. Run "oomlens: Restart Server".'));
        return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
      },
    },
    () => {
      const caps = this.client?.initializeResult?.capabilities;
      return caps ? (caps.executeCommandProvider?.commands ?? []) : undefined;
    },
  );

  /** The server's start (or restart) in progress; requests wait for it. */
  private starting: Promise<void> = Promise.resolve();

  constructor(private readonly context: vscode.ExtensionContext) {}

  activate(): void {
    this.disposables.push(
      ...registerCommands({
        [CLIENT_COMMANDS.diagnoseSelection]: () => this.diagnoseSelection(),
        [CLIENT_COMMANDS.diagnoseTerminalSelection]: () => this.diagnoseTerminalSelection(),
        [CLIENT_COMMANDS.analyzeSnapshotFile]: (uri?: unknown) => this.analyzeSnapshot(uri instanceof vscode.Uri ? uri : undefined),
        [CLIENT_COMMANDS.compareSnapshotFiles]: (_uri?: unknown, selected?: unknown) => this.compareSnapshots(explorerPair(selected)),
        [CLIENT_COMMANDS.verifyFix]: (command?: unknown) => this.verifyFix(typeof command === "string" ? command : undefined),
        [CLIENT_COMMANDS.applyFixToScript]: (arg?: unknown) => this.applyFixCommand(arg),
        [CLIENT_COMMANDS.restartServer]: () => this.restart(),
        [CLIENT_COMMANDS.showOutput]: () => this.output.show(true),
      }),
      new TerminalWatcher(
        () => vscode.workspace.getConfiguration("oomlens").get<boolean>("watchTerminals", false),
        (commandLine, output) => this.onTerminalOom(commandLine, output),
      ),
      vscode.window.onDidChangeTerminalShellIntegration((e) => {
        // Watching needs shell integration; say in the log which terminals have it.
        this.output.appendLine(`[oomlens] shell integration active in terminal "${e.terminal.name}"`);
        this.testState.event(`shell-integration:${e.terminal.name}`);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("oomlens.path")) void this.restart();
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length) this.selectionDiags.delete(e.document.uri);
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => this.selectionDiags.delete(doc.uri)),
      this.selectionDiags,
      this.report,
      this.testState,
      this.output,
    );
    // Activation does not wait for the server: a slow or hung start must not
    // hold up the editor (commands wait for it instead).
    this.starting = this.start();
  }

  // ---- server lifecycle -------------------------------------------------

  private async start(): Promise<void> {
    const config = vscode.workspace.getConfiguration("oomlens");
    const discovery = findBinary({
      configured: config.get<string>("path", ""),
      extensionPath: this.context.extensionPath,
      envPath: process.env.PATH ?? "",
      platform: process.platform,
      homeDir: os.homedir(),
      workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      isExecutable,
    });
    if (!discovery.ok) {
      this.output.appendLine(`[oomlens] ${discovery.message}\n[oomlens] looked at: ${discovery.tried.join(", ")}`);
      this.testState.event("binary-missing");
      void this.showSetupError(discovery.message);
      return;
    }
    const { path: binary, source } = discovery.choice;
    this.binary = binary;
    this.output.appendLine(`[oomlens] using ${binary} (from ${source === "setting" ? 'the "oomlens.path" setting' : source === "bundled" ? "the extension's bundled binary" : "PATH"})`);
    this.client = createClient({
      output: this.output,
      budget: this.budget,
      binary,
      executeCommand: this.executeCommandMiddleware,
      onGaveUp: (message) => void this.showSetupError(message),
    });
    try {
      await withTimeout(this.client.start(), START_TIMEOUT_MS, `no answer to "initialize" within ${START_TIMEOUT_MS / 1000} s`);
      this.testState.event(`server-started:${(this.client.initializeResult?.capabilities.executeCommandProvider?.commands ?? []).join(",")}`);
    } catch (err) {
      const message = `The oomlens server (${binary}) did not start (${err instanceof Error ? err.message : String(err)}); what it printed is in the oomlens output. Check the "oomlens.path" setting, then run "oomlens: Restart Server".`;
      this.output.appendLine(`[oomlens] ${message}`);
      void this.showSetupError(message);
    }
  }

  private async showSetupError(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Output");
    if (choice === "Open Settings") await vscode.commands.executeCommand("workbench.action.openSettings", "oomlens.path");
    if (choice === "Show Output") this.output.show(true);
  }

  async restart(): Promise<void> {
    this.budget.reset();
    const old = this.client;
    this.client = undefined;
    if (old) {
      try {
        if (old.state !== State.Stopped) await old.stop(2000);
      } catch (err) {
        this.output.appendLine(`[oomlens] stopping the old server: ${String(err)}`);
      }
      await old.dispose().catch(() => undefined);
    }
    this.starting = this.start();
    await this.starting;
  }

  // ---- server commands the editor carries out --------------------------

  private readonly executeCommandMiddleware: Middleware["executeCommand"] = async (command, args, next) => {
    const first: unknown = args[0];
    switch (command) {
      case SERVER_COMMANDS.runVerification:
        if (typeof first === "string") return this.runVerification(first);
        break;
      case SERVER_COMMANDS.copyVerification:
        if (typeof first === "string") {
          await vscode.env.clipboard.writeText(first);
          vscode.window.setStatusBarMessage("oomlens: verification command copied", 3000);
          return { command: first };
        }
        break;
      case SERVER_COMMANDS.showFix:
        if (first && typeof first === "object") return this.showFix(first as Record<string, unknown>);
        break;
      case SERVER_COMMANDS.explain:
      case SERVER_COMMANDS.explainDocument: {
        const result = (await next(command, args)) as { markdown?: string } | undefined;
        if (result?.markdown) showStaticPanel("oomlens.explain", command === SERVER_COMMANDS.explain ? `oomlens: ${String(first)}` : "oomlens: explanation", markdownPage("oomlens", result.markdown));
        return result;
      }
    }
    return (await next(command, args)) as unknown;
  };

  private runVerification(command: string): { command: string } {
    runInTerminal(commandWithBinary(command, this.binary), vscode.workspace.workspaceFolders?.[0]?.uri);
    this.testState.event(`ran:${command}`);
    return { command };
  }

  private async showFix(fix: Record<string, unknown>): Promise<unknown> {
    const script = typeof fix.script === "string" && fix.script ? fix.script : undefined;
    const kind = fix.kind;
    const scriptFix: ScriptFix | undefined =
      kind === "env" && typeof fix.name === "string" && typeof fix.value === "string"
        ? { kind: "env", name: fix.name, value: fix.value }
        : kind === "snapshot"
          ? { kind: "snapshot" }
          : undefined;
    const text =
      kind === "env" ? `Set ${String(fix.name)}=${String(fix.value)} before torch starts.` : typeof fix.detail === "string" ? fix.detail : "oomlens fix";
    const buttons: string[] = [];
    const apply = script ? `Apply to ${baseName(script)}` : "Apply to script…";
    if (scriptFix && this.api.supports(SERVER_COMMANDS.fixScript)) buttons.push(apply);
    if (kind === "env") buttons.push("Copy");
    const choice = await vscode.window.showInformationMessage(text, ...buttons);
    if (choice === apply && scriptFix) await this.applyFix(script, scriptFix);
    if (choice === "Copy") await vscode.env.clipboard.writeText(`${String(fix.name)}=${String(fix.value)}`);
    return { message: text };
  }

  // ---- diagnose ---------------------------------------------------------

  private async diagnose(text: string, source: string): Promise<DiagnoseResult | undefined> {
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `oomlens: diagnosing ${source}`, cancellable: true },
      async (_progress, token) => {
        try {
          return await this.api.diagnoseText(text, source, token);
        } catch (err) {
          if (token.isCancellationRequested) return undefined;
          void vscode.window.showErrorMessage(`oomlens: ${err instanceof Error ? err.message : String(err)}`);
          return undefined;
        }
      },
    );
  }

  private async diagnoseSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage("oomlens: select a traceback or part of a log in an editor first.");
      return;
    }
    const selection = editor.selection.isEmpty ? new vscode.Range(0, 0, editor.document.lineCount, 0) : editor.selection;
    const text = editor.document.getText(selection);
    const source = `${baseName(editor.document.uri.path) || "selection"}:${selection.start.line + 1}`;
    const result = await this.diagnose(text, source);
    if (!result) return;
    this.report.show(result, `oomlens: ${source}`);
    this.testState.event(`report:${result.json?.incidents?.length ?? 0}`);
    if (vscode.languages.match(LOG_SELECTOR, editor.document) === 0) {
      this.selectionDiags.set(editor.document.uri, selectionDiagnostics(result.json ?? {}, selection.start.line, editor.document.lineCount));
    }
  }

  private async diagnoseTerminalSelection(): Promise<void> {
    const terminal = vscode.window.activeTerminal;
    const text = await readTerminalSelection().catch((err: unknown) => {
      this.output.appendLine(`[oomlens] reading the terminal selection: ${String(err)}`);
      return undefined;
    });
    this.testState.event(`terminal-selection:${text?.length ?? "none"}`);
    if (!terminal || !text) {
      void vscode.window.showInformationMessage("oomlens: select some output in a terminal first.");
      return;
    }
    const result = await this.diagnose(text, `terminal ${terminal.name}`);
    if (!result) return;
    this.report.show(result, `oomlens: terminal ${terminal.name}`);
    this.testState.event(`report:${result.json?.incidents?.length ?? 0}`);
  }

  private async onTerminalOom(commandLine: string, output: string): Promise<void> {
    let result: DiagnoseResult;
    try {
      result = await this.api.diagnoseText(output, commandLine || "terminal");
    } catch (err) {
      this.output.appendLine(`[oomlens] terminal watch: ${String(err)}`);
      return;
    }
    const first = result.json?.incidents?.[0];
    if (!first) return;
    this.testState.event(`terminal-oom:${first.rule ?? ""}`);
    const what = `${first.class ?? "GPU OOM"}, ${first.rule ?? ""}`.trim();
    const choice = await vscode.window.showWarningMessage(`oomlens: "${commandLine}" ran out of GPU memory (${what}).`, "Open Report");
    if (choice === "Open Report") this.report.show(result, `oomlens: ${commandLine}`);
  }

  // ---- report actions ---------------------------------------------------

  private async onReportAction(action: ReportAction, result: DiagnoseResult): Promise<void> {
    const incident: Incident | undefined = result.json?.incidents?.[action.incident];
    if (!incident) return;
    const fix = "fix" in action ? incident.fixes?.[action.fix] : undefined;
    switch (action.type) {
      case "copyVerify":
        if (incident.verify) await vscode.env.clipboard.writeText(incident.verify);
        break;
      case "runVerify":
        if (incident.verify) this.runVerification(incident.verify);
        break;
      case "copyFix":
        if (fix?.kind === "env" && fix.env?.name) await vscode.env.clipboard.writeText(`${fix.env.name}=${fix.env.value ?? ""}`);
        else if (fix?.command) await vscode.env.clipboard.writeText(fix.command);
        break;
      case "runFix":
        if (fix?.command) this.runVerification(fix.command);
        break;
      case "applyFix": {
        const kind = fix ? applicableFix(fix) : undefined;
        if (!fix || !kind) break;
        const scriptFix: ScriptFix =
          kind === "env"
            ? { kind: "env", name: fix.env!.name!, value: fix.env!.value ?? "" }
            : kind === "snapshot"
              ? { kind: "snapshot", ...(incident.location?.line && incident.location.file === scriptOf(incident) ? { line: incident.location.line } : {}) }
              : { kind: "empty_cache" };
        await this.applyFix(scriptOf(incident), scriptFix);
        break;
      }
      case "openLocation": {
        const file = incident.location?.file;
        if (!file) break;
        const uri = await locateScript(file);
        if (uri) {
          const line = Math.max(0, (incident.location?.line ?? 1) - 1);
          await vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0), viewColumn: vscode.ViewColumn.One });
        }
        break;
      }
      case "explain":
        if (incident.rule) await vscode.commands.executeCommand(SERVER_COMMANDS.explain, incident.rule);
        break;
    }
  }

  private async applyFixCommand(arg: unknown): Promise<void> {
    if (!arg || typeof arg !== "object") return;
    const a = arg as { script?: string; fix?: ScriptFix };
    if (a.fix) await this.applyFix(a.script, a.fix);
  }

  /** Opens the script (so the server edits the version the user sees) and applies the server's edit. */
  async applyFix(script: string | undefined, fix: ScriptFix): Promise<boolean> {
    if (!this.api.supports(SERVER_COMMANDS.fixScript)) {
      if (fix.kind === "env") await vscode.env.clipboard.writeText(`${fix.name}=${fix.value}`);
      void vscode.window.showWarningMessage(
        `oomlens: this oomlens binary cannot edit scripts yet (no oomlens.fixScript)${fix.kind === "env" ? `; ${fix.name}=${fix.value} was copied instead` : ""}. Update the binary or the "oomlens.path" setting.`,
      );
      return false;
    }
    const uri = script ? await locateScript(script) : (await vscode.window.showOpenDialog({ canSelectMany: false, filters: { Python: ["py"] } }))?.[0];
    if (!uri) return false;
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preserveFocus: false });
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `oomlens: preparing the fix for ${baseName(uri.path)}`, cancellable: true },
        (_p, token) => this.api.fixScript(uri.toString(), fix, token),
      );
      if (!result?.edit || !this.client) {
        void vscode.window.showInformationMessage(`oomlens: nothing to change in ${baseName(uri.path)}${result?.title ? `: ${result.title}` : ""}.`);
        return false;
      }
      const edit = await this.client.protocol2CodeConverter.asWorkspaceEdit(result.edit as Parameters<LanguageClient["protocol2CodeConverter"]["asWorkspaceEdit"]>[0]);
      if (!edit) return false;
      const applied = await vscode.workspace.applyEdit(edit);
      if (!applied) void vscode.window.showWarningMessage(`oomlens: the edit to ${baseName(uri.path)} could not be applied (the file changed meanwhile?); try again.`);
      else this.testState.event(`applied:${result.title ?? fix.kind}`);
      return applied;
    } catch (err) {
      const message = err instanceof UnsupportedCommandError ? err.message : `oomlens: ${err instanceof Error ? err.message : String(err)}`;
      void vscode.window.showErrorMessage(message);
      return false;
    }
  }

  // ---- snapshots and verification --------------------------------------

  private async analyzeSnapshot(uri: vscode.Uri | undefined): Promise<void> {
    // A .pickle opens in the binary editor, not a text editor: ask the tab.
    const tabInput = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    const active = tabInput && typeof tabInput === "object" && "uri" in tabInput && tabInput.uri instanceof vscode.Uri ? tabInput.uri : undefined;
    const file =
      uri ??
      (active?.path.endsWith(".pickle") ? active : undefined) ??
      (await pickSnapshotOrFolder(process.platform, (o) => vscode.window.showOpenDialog(o), (labels, o) => vscode.window.showQuickPick(labels, o)));
    if (!file) return;
    const title = `oomlens: ${baseName(file.path)}`;
    if (await this.showSnapshotPage([file], title, (token) => this.api.analyzeSnapshot(file.fsPath, token)))
      this.testState.event(`snapshot:${baseName(file.path)}`);
  }

  private async compareSnapshots(pair: [vscode.Uri, vscode.Uri] | undefined): Promise<void> {
    const runs = pair ?? (await pickSnapshotPair((o) => vscode.window.showOpenDialog(o)));
    if (!runs) return;
    const [a, b] = runs;
    if (await this.showSnapshotPage(runs, compareTitle(a, b), (token) => this.api.compareSnapshots(a.fsPath, b.fsPath, token)))
      this.testState.event(`compare:${baseName(a.path)}:${baseName(b.path)}`);
  }

  /** Reads the snapshots through the server (cancellable) and shows its page; false when nothing was shown. */
  private async showSnapshotPage(files: vscode.Uri[], title: string, read: (token: vscode.CancellationToken) => Promise<SnapshotResult>): Promise<boolean> {
    if (files.some((f) => f.scheme !== "file")) {
      void vscode.window.showErrorMessage("oomlens: snapshots are read from local files only.");
      return false;
    }
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `oomlens: reading ${files.map((f) => baseName(f.path)).join(" and ")}`, cancellable: true },
      async (_p, token) => {
        try {
          return await read(token);
        } catch (err) {
          if (!token.isCancellationRequested) void vscode.window.showErrorMessage(err instanceof UnsupportedCommandError ? err.message : `oomlens: ${err instanceof Error ? err.message : String(err)}`);
          return undefined;
        }
      },
    );
    if (!result) return false;
    const html = result.html ? withStrictCsp(result.html) : markdownPage(title, result.markdown ?? "No report.");
    showStaticPanel("oomlens.snapshot", title, html);
    return true;
  }

  private async verifyFix(command?: string): Promise<void> {
    let suggested = command ?? this.report.current.json?.incidents?.find((i) => i.verify)?.verify ?? "";
    // No report open: the A/B run of the script (or log) in the active editor.
    const active = vscode.window.activeTextEditor?.document;
    if (!suggested && active && this.api.supports(SERVER_COMMANDS.verify))
      suggested = (await this.api.verify(active.uri.toString()).catch(() => undefined))?.command ?? "";
    const chosen = await vscode.window.showInputBox({
      title: "oomlens: Verify Fix",
      prompt: "The command runs in a terminal named for it; edit it first if needed.",
      value: suggested,
      ignoreFocusOut: true,
    });
    if (chosen?.trim()) this.runVerification(chosen.trim());
  }

  async dispose(): Promise<void> {
    for (const d of this.disposables) d.dispose();
    await this.client?.stop(2000).catch(() => undefined);
  }
}

let instance: OomlensExtension | undefined;

export function activate(context: vscode.ExtensionContext): OomlensExtension {
  instance = new OomlensExtension(context);
  instance.activate();
  return instance;
}

export async function deactivate(): Promise<void> {
  const current = instance;
  instance = undefined;
  await current?.dispose();
}
