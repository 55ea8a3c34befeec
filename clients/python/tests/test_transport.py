"""The client's HTTP transport against a real local HTTP/1.1 server: one kept-alive connection, reopened when closed."""

import json
import os
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tollgate import ApprovalAnswered, ApprovalRejected, Tollgate, TollgateError  # noqa: E402


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep the test output quiet
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.peers.append(self.client_address)
        plan = self.server.plan.pop(0) if self.server.plan else "ok"
        if plan == "close-after":
            self._answer(200, {"result": {"data": {"echo": body}}}, close=True)
        elif plan == "502":
            self._answer(502, None)
        elif plan == "answered":
            decision = {"action": "respond", "message": "refund to the card, not the account", "decidedBy": "ops@example.com", "decidedAt": "2026-01-01T00:00:00.000Z"}
            self._answer(200, {"result": {"data": {"approvalId": "apr_1", "status": "REJECTED", "decision": decision}}})
        elif plan == "conflict":
            self._answer(409, {"error": {"message": "already decided", "data": {"code": "CONFLICT"}}})
        else:
            self._answer(200, {"result": {"data": {"echo": body}}})

    def _answer(self, status, payload, close=False):
        raw = json.dumps(payload).encode() if payload is not None else b"bad gateway"
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        if close:
            self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(raw)
        if close:
            self.close_connection = True


class TransportTest(unittest.TestCase):
    def setUp(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.peers = []
        self.server.plan = []
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.client = Tollgate(f"http://127.0.0.1:{self.server.server_address[1]}", "tgk_key")

    def tearDown(self):
        self.client.close()
        self.server.shutdown()
        self.server.server_close()

    def test_calls_share_one_kept_alive_connection(self):
        for n in range(3):
            self.assertEqual(self.client._call("request.complete", {"n": n}), {"echo": {"n": n}})
        self.assertEqual(len(set(self.server.peers)), 1)

    def test_a_connection_the_server_closed_is_opened_again(self):
        self.server.plan = ["close-after"]
        self.client._call("request.complete", {"n": 1})
        self.assertEqual(self.client._call("request.complete", {"n": 2}), {"echo": {"n": 2}})
        self.assertEqual(len(set(self.server.peers)), 2)

    def test_a_proxy_error_is_retried_and_a_refusal_is_raised(self):
        self.server.plan = ["502"]
        self.assertEqual(self.client._call("request.complete", {"n": 1}), {"echo": {"n": 1}})
        self.server.plan = ["conflict"]
        with self.assertRaises(TollgateError) as raised:
            self.client._call("approval.decide", {})
        self.assertEqual((raised.exception.code, raised.exception.status), ("CONFLICT", 409))

    def test_an_operators_answer_is_an_answer_that_code_catching_rejected_still_catches(self):
        self.server.plan = ["answered"]
        ran = []
        with self.assertRaises(ApprovalRejected) as caught:
            self.client.gate("req_1", "refund", {"order": 42}, ran.append)
        self.assertIsInstance(caught.exception, ApprovalAnswered)
        self.assertEqual(caught.exception.answer, "refund to the card, not the account")
        self.assertEqual(ran, [])


if __name__ == "__main__":
    unittest.main()
