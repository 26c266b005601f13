"""A small JSON-RPC client for end-to-end tests of `oomlens lsp`.

Starts the real binary, speaks LSP base-protocol framing (Content-Length) to
it over pipes, and records everything the server sends. Standard library
only. Every wait has a timeout, so a hung server fails a test instead of
hanging CI.

    server = LspServer(binary)
    server.initialize(capabilities=client_capabilities(pull=True))
    server.notify("textDocument/didOpen", {...})
    result = server.call_ok("textDocument/diagnostic", {...})
    assert server.shutdown_and_exit() == 0
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import threading
import time
from typing import Any, Callable, Optional

DEFAULT_TIMEOUT = 10.0


class LspTestError(AssertionError):
    """A protocol expectation failed (timeout, wrong reply, server gone)."""


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def client_capabilities(*, pull: bool = False, utf8: bool = False, markdown: bool = True,
                        literals: bool = True, resolve_properties: Optional[list] = None,
                        progress: bool = False, configuration: bool = False,
                        refresh: bool = False, watch_files: bool = False) -> dict:
    """ClientCapabilities with the switches the server reads."""
    code_action: dict = {"dynamicRegistration": False}
    if literals:
        code_action["codeActionLiteralSupport"] = {
            "codeActionKind": {"valueSet": ["", "quickfix", "refactor", "source", "source.fixAll"]}}
        code_action["isPreferredSupport"] = True
    if resolve_properties is not None:
        code_action["dataSupport"] = True
        code_action["resolveSupport"] = {"properties": list(resolve_properties)}
    text_document: dict = {
        "synchronization": {"dynamicRegistration": False, "didSave": True},
        "hover": {"contentFormat": ["markdown", "plaintext"] if markdown else ["plaintext"]},
        "codeAction": code_action,
        "publishDiagnostics": {"relatedInformation": True, "codeDescriptionSupport": True, "dataSupport": True},
    }
    if pull:
        text_document["diagnostic"] = {"dynamicRegistration": False, "relatedDocumentSupport": False}
    caps: dict = {
        "textDocument": text_document,
        "workspace": {"configuration": configuration, "workspaceEdit": {"documentChanges": True}},
        "window": {"workDoneProgress": progress},
        "general": {"positionEncodings": ["utf-8", "utf-16"] if utf8 else ["utf-16"]},
    }
    if refresh:
        caps["workspace"]["diagnostics"] = {"refreshSupport": True}
    if watch_files:
        caps["workspace"]["didChangeWatchedFiles"] = {"dynamicRegistration": True, "relativePatternSupport": True}
    return caps


class LspServer:
    """One `oomlens lsp` process and everything it said."""

    def __init__(self, binary: str, args: tuple = ("lsp",), *, cwd: Optional[str] = None,
                 env: Optional[dict] = None, name: str = "server"):
        self.name = name
        self.proc = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0, cwd=cwd, env=env)
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self.messages: list[dict] = []           # everything received, in order
        self.responses: dict[Any, list[dict]] = {}  # by id (JSON-encoded key)
        self.sent_ids: list[Any] = []             # ids of our requests, in order
        self.protocol_errors: list[str] = []      # framing/JSON errors in the server's output
        self.stdout_closed = False
        self._stderr = bytearray()
        self._next_id = 1
        # Answers to requests the server sends us: method -> fn(params) -> result.
        self.request_handlers: dict[str, Callable[[Any], Any]] = {
            "window/workDoneProgress/create": lambda params: None,
            "workspace/configuration": lambda params: [{} for _ in (params or {}).get("items", [])],
            "workspace/diagnostic/refresh": lambda params: None,
            "client/registerCapability": lambda params: None,
        }
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    # ---- reading -------------------------------------------------------
    def _read_stdout(self) -> None:
        stream = io.BufferedReader(self.proc.stdout, buffer_size=1 << 16)  # type: ignore[arg-type]
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    if not line.endswith(b"\r\n"):
                        self._protocol_error(f"header line not ended by CRLF: {line!r}")
                    key, _, value = line.decode("ascii", "replace").partition(":")
                    if key.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    self._protocol_error("header block without Content-Length")
                    continue
                body = stream.read(length)
                if len(body) < length:
                    self._protocol_error(f"output ended inside a body ({len(body)} of {length} bytes)")
                    return
                try:
                    message = json.loads(body.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as e:
                    self._protocol_error(f"server sent a body that is not UTF-8 JSON: {e}")
                    continue
                self._dispatch(message)
        except Exception as e:  # noqa: BLE001 - recorded, reported by the test
            self._protocol_error(f"reader failed: {e!r}")
        finally:
            with self._cond:
                self.stdout_closed = True
                self._cond.notify_all()

    def _read_stderr(self) -> None:
        while True:
            chunk = self.proc.stderr.read(65536)  # type: ignore[union-attr]
            if not chunk:
                return
            with self._cond:
                self._stderr += chunk
                if len(self._stderr) > 1 << 20:
                    del self._stderr[: len(self._stderr) - (1 << 20)]
                self._cond.notify_all()  # for wait_for on what the server logged

    def _protocol_error(self, text: str) -> None:
        with self._cond:
            self.protocol_errors.append(text)
            self._cond.notify_all()

    def _dispatch(self, message: dict) -> None:
        if not isinstance(message, dict):
            self._protocol_error(f"server sent a non-object message: {message!r}"[:300])
            return
        if message.get("jsonrpc") != "2.0":
            self._protocol_error(f"message without jsonrpc 2.0: {message!r}"[:300])
        is_request = "method" in message and "id" in message
        with self._cond:
            self.messages.append(message)
            if "method" not in message:
                self.responses.setdefault(_key(message.get("id")), []).append(message)
            self._cond.notify_all()
        if is_request:
            handler = self.request_handlers.get(message["method"])
            reply: dict = {"jsonrpc": "2.0", "id": message["id"]}
            if handler is None:
                reply["error"] = {"code": -32601, "message": "test client: unhandled " + message["method"]}
            else:
                reply["result"] = handler(message.get("params"))
            try:
                self.send(reply)
            except OSError:
                pass

    @property
    def stderr(self) -> str:
        with self._cond:
            return self._stderr.decode("utf-8", "replace")

    # ---- writing -------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        """Bytes as they are: for malformed-input tests."""
        with self._write_lock:
            try:
                self.proc.stdin.write(data)  # type: ignore[union-attr]
                self.proc.stdin.flush()  # type: ignore[union-attr]
            except BrokenPipeError as e:
                raise LspTestError(f"{self.name}: the server closed its input") from e

    def send(self, message: Any) -> None:
        self.send_raw(frame(encode(message)))

    def new_id(self) -> int:
        with self._cond:
            i = self._next_id
            self._next_id += 1
            return i

    def request(self, method: str, params: Any = None, *, id: Any = None, send: bool = True) -> Any:
        """Sends a request; returns its id (answers are collected by the reader)."""
        rid = self.new_id() if id is None else id
        message: dict = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        with self._cond:
            self.sent_ids.append(rid)
        if send:
            self.send(message)
        return rid

    def request_bytes(self, method: str, params: Any = None) -> tuple[Any, bytes]:
        """A framed request not yet sent, to batch with other bytes in one write."""
        rid = self.request(method, params, send=False)
        message: dict = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        return rid, frame(encode(message))

    @staticmethod
    def notification_bytes(method: str, params: Any = None) -> bytes:
        message: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return frame(encode(message))

    def notify(self, method: str, params: Any = None) -> None:
        self.send_raw(self.notification_bytes(method, params))

    # ---- waiting -------------------------------------------------------
    def wait_for(self, predicate: Callable[[], Any], timeout: float = DEFAULT_TIMEOUT, what: str = "a condition") -> Any:
        """Waits until predicate() (called under the lock) returns something truthy."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise LspTestError(f"{self.name}: timed out after {timeout:.1f}s waiting for {what}")
                if self.stdout_closed and self.proc.poll() is not None:
                    value = predicate()
                    if value:
                        return value
                    raise LspTestError(f"{self.name}: the server exited (status {self.proc.returncode}) "
                                       f"while the test waited for {what}")
                self._cond.wait(min(remaining, 0.2))

    def wait_response(self, rid: Any, timeout: float = DEFAULT_TIMEOUT) -> dict:
        return self.wait_for(lambda: (self.responses.get(_key(rid)) or [None])[0], timeout, f"the reply to id {rid!r}")

    def call(self, method: str, params: Any = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """Request + its response (result or error)."""
        return self.wait_response(self.request(method, params), timeout)

    def call_ok(self, method: str, params: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        response = self.call(method, params, timeout)
        if "error" in response:
            raise LspTestError(f"{method} failed: {response['error']}")
        return response.get("result")

    def call_error(self, method: str, params: Any = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        response = self.call(method, params, timeout)
        if "error" not in response:
            raise LspTestError(f"{method} should have failed, got result {str(response.get('result'))[:300]}")
        return response["error"]

    def mark(self) -> int:
        """The number of messages received so far: pass as `after` to look only at newer ones."""
        with self._cond:
            return len(self.messages)

    def notifications(self, method: str, after: int = 0) -> list[dict]:
        with self._cond:
            return [m for m in self.messages[after:] if m.get("method") == method and "id" not in m]

    def server_requests(self, method: str, after: int = 0) -> list[dict]:
        with self._cond:
            return [m for m in self.messages[after:] if m.get("method") == method and "id" in m]

    def wait_notification(self, method: str, predicate: Callable[[dict], bool] = lambda m: True,
                          after: int = 0, timeout: float = DEFAULT_TIMEOUT) -> dict:
        def find():
            for m in self.messages[after:]:
                if m.get("method") == method and "id" not in m and predicate(m.get("params")):
                    return m
            return None
        return self.wait_for(find, timeout, f"a {method} notification")["params"]

    def settle(self, quiet: float = 0.3, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Waits until the server has sent nothing for `quiet` seconds."""
        deadline = time.monotonic() + timeout
        count = self.mark()
        last_change = time.monotonic()
        while time.monotonic() - last_change < quiet:
            if time.monotonic() > deadline:
                raise LspTestError(f"{self.name}: the server never went quiet")
            time.sleep(0.05)
            now = self.mark()
            if now != count:
                count, last_change = now, time.monotonic()

    # ---- lifecycle -----------------------------------------------------
    def initialize(self, capabilities: Optional[dict] = None, initialization_options: Any = None,
                   send_initialized: bool = True, timeout: float = DEFAULT_TIMEOUT) -> dict:
        params: dict = {"processId": os.getpid(), "rootUri": None,
                        "clientInfo": {"name": "oomlens-e2e", "version": "1"},
                        "capabilities": capabilities if capabilities is not None else client_capabilities()}
        if initialization_options is not None:
            params["initializationOptions"] = initialization_options
        result = self.call_ok("initialize", params, timeout)
        if send_initialized:
            self.notify("initialized", {})
        return result

    def close_stdin(self) -> None:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass

    def wait_exit(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired as e:
            raise LspTestError(f"{self.name}: the server did not exit within {timeout:.1f}s") from e

    def shutdown_and_exit(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        response = self.call("shutdown", None, timeout)
        if "error" in response or response.get("result", "missing") is not None:
            raise LspTestError(f"shutdown should answer null, got {response}")
        self.notify("exit")
        return self.wait_exit(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.close_stdin()

    def answered_once_problems(self) -> list[str]:
        """Ids we sent that got no reply or several, and replies to ids we never sent."""
        problems = []
        with self._cond:
            sent = [_key(i) for i in self.sent_ids]
            for k in sent:
                n = len(self.responses.get(k, []))
                if n != 1:
                    problems.append(f"request id {k} answered {n} times")
            for k, replies in self.responses.items():
                if k not in sent and k != "null":
                    problems.append(f"{len(replies)} replies to id {k} that was never sent")
        return problems


def _key(rid: Any) -> str:
    return json.dumps(rid)
