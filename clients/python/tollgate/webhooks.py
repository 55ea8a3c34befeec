"""Checking that a decision POSTed to a request's resumeUrl came from Tollgate."""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Optional

# A signature older than this is refused, so a captured webhook cannot be replayed later.
DEFAULT_TOLERANCE_SECONDS = 300


class WebhookSignatureError(Exception):
    """The body was not signed by Tollgate with this agent key's webhook secret (or is too old)."""


def webhook_secret(agent_key: str) -> str:
    """The key's webhook secret: the hex HMAC-SHA256 of "tollgate-webhook-v1" keyed with the agent key."""
    return hmac.new(agent_key.encode("utf-8"), b"tollgate-webhook-v1", hashlib.sha256).hexdigest()


def verify_webhook(body: bytes, signature_header: Optional[str], agent_key: str, tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS, now_ms: Optional[int] = None) -> None:
    """Raises WebhookSignatureError unless `tollgate-signature` (t=<ms>,v1=<hex>) signs "<t>.<body>".

    The secret is used as the UTF-8 bytes of its 64-character hex string.
    """
    if not signature_header:
        raise WebhookSignatureError("no tollgate-signature header")
    parts = dict(part.split("=", 1) for part in signature_header.split(",") if "=" in part)
    stamp, given = parts.get("t"), parts.get("v1")
    if not stamp or not given or not stamp.isdigit():
        raise WebhookSignatureError(f"malformed tollgate-signature: {signature_header!r}")
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    if abs(now - int(stamp)) > tolerance_seconds * 1000:
        raise WebhookSignatureError("the signature is too old (or from the future): refusing a possible replay")
    expected = hmac.new(webhook_secret(agent_key).encode("utf-8"), stamp.encode("utf-8") + b"." + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, given):
        raise WebhookSignatureError("the signature does not match the body")
