"""Tollgate's agent client for Python, standard library only.

Calls Tollgate's tRPC API as plain JSON over HTTP: open a session, begin and
complete requests, ask for approval and wait for the decision (long-poll), run
a tool at most once under an approval, and verify the signature of a decision
webhook. See clients/python/README.md.
"""

from .client import ApprovalAnswered, ApprovalRejected, Tollgate, TollgateError
from .webhooks import WebhookSignatureError, verify_webhook, webhook_secret

__all__ = ["Tollgate", "TollgateError", "ApprovalRejected", "ApprovalAnswered", "verify_webhook", "webhook_secret", "WebhookSignatureError"]
