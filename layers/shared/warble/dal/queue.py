"""The queues (SQS, through the standard endpoint settings): the account deletion workflow's
steps sent as JSON messages (``warble.domain.deletion.ports.step_body``), and the password
resets asked for (``warble.domain.passwords.ports.reset_body``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from warble.dal.dynamo import _session
from warble.domain.deletion.ports import Step, StepNotSent, step_body
from warble.domain.passwords.ports import reset_body
from warble.errors import Unavailable
from warble.tracing import instrument

SEND_BATCH_LIMIT = 10  # messages per SendMessageBatch (SQS's limit)
MAX_DELAY_SECONDS = 900  # SQS's longest DelaySeconds


class _SqsQueue:
    """One queue by its URL, its client made on first send (botocore is not imported before)."""

    def __init__(self, url: str, region: str) -> None:
        self._url = url
        self._region = region

    @cached_property
    def _sqs(self) -> Any:
        instrument("botocore")
        return _session().create_client("sqs", region_name=self._region)


class SqsStepQueue(_SqsQueue):
    def send(self, steps: Sequence[Step], delay_seconds: int = 0) -> None:
        """Every step sent, or an exception (a message SQS failed is sent again once)."""
        delay = max(0, min(delay_seconds, MAX_DELAY_SECONDS))
        for start in range(0, len(steps), SEND_BATCH_LIMIT):
            entries = [
                {"Id": str(i), "MessageBody": json.dumps(step_body(step)), "DelaySeconds": delay}
                for i, step in enumerate(steps[start : start + SEND_BATCH_LIMIT])
            ]
            for _attempt in range(2):
                try:
                    answer = self._sqs.send_message_batch(QueueUrl=self._url, Entries=entries)
                except (BotoCoreError, ClientError) as exc:
                    raise StepNotSent(str(exc)) from exc
                failed = {f["Id"] for f in answer.get("Failed", [])}
                entries = [e for e in entries if e["Id"] in failed]
                if not entries:
                    break
            else:
                raise StepNotSent(f"SQS refused {len(entries)} deletion steps")


class SqsResetRequests(_SqsQueue):
    """Password resets asked for, one message each, for PasswordResetFunction."""

    def send(self, email: str) -> None:
        try:
            self._sqs.send_message(QueueUrl=self._url, MessageBody=json.dumps(reset_body(email)))
        except (BotoCoreError, ClientError) as exc:
            # Nothing was queued: a 503, which the client may retry (a 202 would promise a mail).
            raise Unavailable() from exc
