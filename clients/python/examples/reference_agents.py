"""The reference scenario's agent side in Python: the customer-support
orchestrator (O1) calls a lookup agent (A1) and an email agent (A2), whose
send_email tool waits for an operator. A2 also gives a resumeUrl, and checks
the decision webhook's signature when it arrives.

    python3 clients/python/examples/reference_agents.py http://localhost:3000 <agent key>

Prints one JSON line with what happened; decide the approval in the console meanwhile.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tollgate import ApprovalRejected, Tollgate, verify_webhook  # noqa: E402

url, agent_key = sys.argv[1], sys.argv[2]
tollgate = Tollgate(url, agent_key)
webhooks = []


class DecisionWebhook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        try:
            verify_webhook(body, self.headers.get("tollgate-signature"), agent_key)
            webhooks.append({"verified": True, "approvalId": json.loads(body)["approvalId"]})
            self.send_response(200)
        except Exception as error:  # a forged or stale webhook is refused, never acted on
            webhooks.append({"verified": False, "error": str(error)})
            self.send_response(401)
        self.end_headers()

    def log_message(self, *args):
        pass


receiver = HTTPServer(("127.0.0.1", 0), DecisionWebhook)
threading.Thread(target=receiver.serve_forever, daemon=True).start()
resume_url = f"http://127.0.0.1:{receiver.server_address[1]}/decisions"

session_id = tollgate.open_session(title="Python: customer asks for a refund")
o1 = tollgate.begin(session_id, "customer-support-orchestrator", input={"ticket": "T-1001"})

a1 = tollgate.begin(session_id, "customer-lookup", parent_request_id=o1["requestId"])
tollgate.complete(a1["requestId"], output={"customer": "ada@example.com"})

a2 = tollgate.begin(session_id, "email-agent", parent_request_id=o1["requestId"], resume_url=resume_url)
sent = []
try:
    result = tollgate.gate(
        a2["requestId"],
        "send_email",
        {"to": "ada@example.com", "subject": "Your refund", "body": "We refunded 120 EUR."},
        run=lambda args: sent.append(args) or {"messageId": "msg-1"},
        reason="emails a customer",
    )
    tollgate.complete(a2["requestId"], output=result)
    outcome = "sent"
except ApprovalRejected as rejected:
    tollgate.fail(a2["requestId"], str(rejected), code="REJECTED")
    outcome = "rejected"
tollgate.complete(o1["requestId"], output={"email": outcome})

# The webhook is delivered with the decision; give it a moment to arrive.
for _ in range(100):
    if webhooks:
        break
    threading.Event().wait(0.05)
receiver.shutdown()
print(json.dumps({"sessionId": session_id, "outcome": outcome, "sent": sent, "webhooks": webhooks}))
