"""The HTTP client: one method per agent procedure, retries on network errors only."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
import uuid
from typing import Any, Callable, Optional

# The server holds a long-poll for at most this long; the client asks again until decided.
LONG_POLL_MS = 55_000
NETWORK_RETRIES = 5


class TollgateError(Exception):
    """The server refused a call: `code` is its tRPC code (NOT_FOUND, CONFLICT, BAD_REQUEST, ...)."""

    def __init__(self, message: str, code: Optional[str], status: int):
        super().__init__(message)
        self.code = code
        self.status = status


class ApprovalRejected(Exception):
    """The operator rejected (or the approval expired or was canceled): the tool must not run."""

    def __init__(self, result: dict):
        decision = result.get("decision") or {}
        super().__init__(decision.get("message") or f"approval {result['approvalId']} ended {result['status']}")
        self.result = result


class ApprovalAnswered(ApprovalRejected):
    """The operator answered in words instead of letting the tool run (decision "respond").

    The tool does not run; `answer` is what the operator wrote, for the agent to
    act on. It is an ApprovalRejected, so code written before answers existed,
    which catches that, still stops the tool.
    """

    def __init__(self, result: dict):
        super().__init__(result)
        self.answer = (result.get("decision") or {}).get("message") or ""


class Tollgate:
    """An agent service's connection to Tollgate, authenticated by its agent key.

    Each thread keeps one HTTP/1.1 connection open between calls (keep-alive),
    so a call costs no TCP handshake; a connection the server or a proxy closed
    meanwhile is opened again and the call sent once more.
    """

    def __init__(self, url: str, api_key: str, timeout_seconds: float = 70.0):
        parsed = urllib.parse.urlsplit(url.rstrip("/"))
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"Tollgate URL must be http(s)://host[:port], got {url!r}")
        self._scheme = parsed.scheme
        self._netloc = parsed.netloc
        self._base_path = parsed.path + "/api/trpc/"
        self.api_key = api_key
        self.timeout_seconds = timeout_seconds
        self._local = threading.local()

    # -- transport ---------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            kind = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            connection = kind(self._netloc, timeout=self.timeout_seconds)
            self._local.connection = connection
        return connection

    def _drop_connection(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def close(self) -> None:
        """Closes this thread's connection (the next call opens another)."""
        self._drop_connection()

    def _exchange(self, method: str, target: str, body: Optional[bytes]) -> "tuple[int, bytes]":
        headers = {"authorization": f"Bearer {self.api_key}", "accept": "application/json"}
        if body is not None:
            headers["content-type"] = "application/json"
        # A kept-alive connection the other side closed while idle fails on
        # first use: that is no network error of this call, so it is sent once
        # more on a new connection straight away.
        for reused in (True, False):
            connection = self._connection()
            fresh = connection.sock is None
            try:
                connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._drop_connection()
                if reused and not fresh:
                    continue
                raise
            except BaseException:
                self._drop_connection()
                raise
            if response.will_close:
                self._drop_connection()
            return response.status, data
        raise AssertionError("unreachable")

    def _call(self, path: str, payload: dict, query: bool = False) -> Any:
        if query:
            method, target, body = "GET", self._base_path + path + "?input=" + urllib.parse.quote(json.dumps(payload)), None
        else:
            method, target, body = "POST", self._base_path + path, json.dumps(payload).encode("utf-8")
        for attempt in range(NETWORK_RETRIES + 1):
            try:
                status, raw = self._exchange(method, target, body)
            except (OSError, http.client.HTTPException):
                if attempt >= NETWORK_RETRIES:
                    raise
                time.sleep(min(0.2 * 2**attempt, 5))
                continue
            if status < 300:
                return json.loads(raw)["result"]["data"]
            answer = _json_or_none(raw)
            problem = answer.get("error") if isinstance(answer, dict) else None
            if problem is None:
                # Not an answer from Tollgate (a proxy's 502 while a node restarts): try again.
                if attempt < NETWORK_RETRIES and status in (502, 503, 504):
                    time.sleep(min(0.2 * 2**attempt, 5))
                    continue
                raise TollgateError(f"{path}: HTTP {status}", None, status)
            data = problem.get("data") or {}
            raise TollgateError(problem.get("message", f"{path} failed"), data.get("code"), status)
        raise AssertionError("unreachable")

    # -- sessions and requests ----------------------------------------------

    def open_session(self, title: Optional[str] = None, session_id: Optional[str] = None) -> str:
        payload: dict = {}
        if title is not None:
            payload["title"] = title
        if session_id is not None:
            payload["sessionId"] = session_id
        return self._call("session.open", payload)["sessionId"]

    def begin(self, session_id: str, agent: str, parent_request_id: Optional[str] = None, input: Any = None, resume_url: Optional[str] = None) -> dict:
        """Begins a request (one invocation of `agent`); returns {"taskId", "requestId", ...}."""
        payload: dict = {"sessionId": session_id, "agent": agent, "idempotencyKey": f"begin-{uuid.uuid4()}"}
        if parent_request_id is not None:
            payload["parentRequestId"] = parent_request_id
        if input is not None:
            payload["input"] = input
        if resume_url is not None:
            payload["resumeUrl"] = resume_url
        return self._call("request.begin", payload)

    def complete(self, request_id: str, output: Any = None) -> dict:
        payload: dict = {"requestId": request_id}
        if output is not None:
            payload["output"] = output
        return self._call("request.complete", payload)

    def fail(self, request_id: str, message: str, code: Optional[str] = None) -> dict:
        error = {"message": message, **({"code": code} if code else {})}
        return self._call("request.fail", {"requestId": request_id, "error": error})

    # -- approvals -----------------------------------------------------------

    def request_approval(self, request_id: str, tool: str, args: Any, reason: Optional[str] = None, idempotency_key: Optional[str] = None, **options: Any) -> dict:
        """Asks an operator (or the workspace's policy) about one tool call; returns {"approvalId", "status", ...}.

        Extra options are sent as given: allow, timeoutMs, onTimeout, summary, externalId.
        """
        payload: dict = {"requestId": request_id, "tool": tool, "args": args, "idempotencyKey": idempotency_key or f"approval-{uuid.uuid4()}", **options}
        if reason is not None:
            payload["reason"] = reason
        return self._call("approval.request", payload)

    def wait_for_decision(self, approval_id: str, poll_ms: int = LONG_POLL_MS) -> dict:
        """Long-polls until the approval is decided, expired or canceled; returns what approval.await answers."""
        while True:
            result = self._call("approval.await", {"approvalId": approval_id, "timeoutMs": poll_ms}, query=True)
            if result["status"] != "PENDING":
                return result

    def gate(self, request_id: str, tool: str, args: Any, run: Callable[[Any], Any], reason: Optional[str] = None, **options: Any) -> Any:
        """Asks, waits, and runs `run` with the approved (possibly edited) arguments at most once.

        Raises ApprovalAnswered (an ApprovalRejected) with the operator's
        `answer` when they answered instead, and ApprovalRejected when the tool
        must not run. Another replica that already holds the approval's
        execution claim makes this one raise too.
        """
        asked = self.request_approval(request_id, tool, args, reason=reason, **options)
        result = asked if asked["status"] != "PENDING" else self.wait_for_decision(asked["approvalId"])
        decision = result.get("decision") or {}
        may_run = result["status"] == "APPROVED" or (result["status"] == "EXPIRED" and decision.get("action") == "approve")
        if not may_run:
            raise ApprovalAnswered(result) if decision.get("action") == "respond" else ApprovalRejected(result)
        approved_args = decision["args"] if decision.get("action") == "edit" else args
        claim_key = f"python-{uuid.uuid4()}"
        claim = self._call("approval.claimExecution", {"approvalId": result["approvalId"], "claimKey": claim_key})
        if not claim["granted"]:
            if claim.get("execution"):
                return claim["execution"]["result"]
            raise ApprovalRejected({**result, "decision": {**decision, "message": "another replica holds this approval's execution claim"}})
        value = run(approved_args)
        self._call("approval.reportExecution", {"approvalId": result["approvalId"], "executedArgs": approved_args, "result": value, "claimKey": claim_key})
        return value


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None
