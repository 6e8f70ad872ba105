"""Email through Amazon SES (API v2), behind ``warble.domain.passwords.ports.Mailer``. The
client follows the standard endpoint settings: locally AWS_ENDPOINT_URL names the moto server,
whose SES keeps every message and lists it at ``/_aws/ses`` (infra/local/moto_patches.py)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from botocore.config import Config

from warble.dal.dynamo import _session

# botocore's standard retries (its legacy mode's backoff could sleep 15 s of the function's 30),
# one retry only: the caller is a queue's consumer, and the queue's redelivery is the retry that
# outlasts an SES outage (retrying at two layers would multiply the attempts on a failing SES).
SES_ATTEMPTS = 2
SES_CONFIG = Config(
    retries={"mode": "standard", "total_max_attempts": SES_ATTEMPTS},
    connect_timeout=2,
    read_timeout=10,
)


class SesMailer:
    def __init__(self, sender: str, region: str) -> None:
        # The sender: an address whose identity (the address, or its domain) SES has verified;
        # template.yaml's EmailSenderIdentity.
        self._sender = sender
        self._region = region

    @cached_property
    def _ses(self) -> Any:
        return _session().create_client("sesv2", region_name=self._region, config=SES_CONFIG)

    def send(self, to: str, subject: str, text: str, html: str) -> None:
        self._ses.send_email(
            FromEmailAddress=self._sender,
            Destination={"ToAddresses": [to]},
            Content={
                "Simple": {
                    "Subject": {"Data": subject, "Charset": "UTF-8"},
                    "Body": {
                        "Text": {"Data": text, "Charset": "UTF-8"},
                        "Html": {"Data": html, "Charset": "UTF-8"},
                    },
                }
            },
        )
