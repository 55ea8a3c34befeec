"""Webhook signatures, checked against a value computed by hand from the documented scheme."""

import hashlib
import hmac
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tollgate import WebhookSignatureError, verify_webhook, webhook_secret  # noqa: E402

KEY = "tgk_test_agent_key_0123456789"
BODY = b'{"approvalId":"apr_1","status":"APPROVED"}'
NOW = 1_700_000_000_000


def signed(body: bytes, stamp: int) -> str:
    secret = hmac.new(KEY.encode(), b"tollgate-webhook-v1", hashlib.sha256).hexdigest()
    digest = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={stamp},v1={digest}"


class WebhookTests(unittest.TestCase):
    def test_secret_is_the_hex_hmac_of_the_label(self):
        self.assertEqual(len(webhook_secret(KEY)), 64)

    def test_a_genuine_webhook_verifies(self):
        verify_webhook(BODY, signed(BODY, NOW), KEY, now_ms=NOW)

    def test_an_altered_body_is_refused(self):
        with self.assertRaises(WebhookSignatureError):
            verify_webhook(BODY.replace(b"APPROVED", b"REJECTED"), signed(BODY, NOW), KEY, now_ms=NOW)

    def test_another_key_is_refused(self):
        with self.assertRaises(WebhookSignatureError):
            verify_webhook(BODY, signed(BODY, NOW), KEY + "x", now_ms=NOW)

    def test_an_old_signature_is_refused(self):
        with self.assertRaises(WebhookSignatureError):
            verify_webhook(BODY, signed(BODY, NOW - 10 * 60_000), KEY, now_ms=NOW)

    def test_missing_or_malformed_headers_are_refused(self):
        for header in (None, "", "v1=abc", "t=soon,v1=abc"):
            with self.assertRaises(WebhookSignatureError):
                verify_webhook(BODY, header, KEY, now_ms=NOW)


if __name__ == "__main__":
    unittest.main()
