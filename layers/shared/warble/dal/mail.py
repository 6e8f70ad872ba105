"""Email through Amazon SES (API v2), behind ``warble.domain.passwords.ports.Mailer``. The
client follows the standard endpoint settings: locally AWS_ENDPOINT_URL names the moto server,
whose SES keeps every message and lists it at ``/_aws/ses`` (infra/local/moto_patches.py)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from warble.dal.dynamo import _session


class SesMailer:
    def __init__(self, sender: str, region: str) -> None:
        # The sender: an address whose identity (the address, or its domain) SES has verified;
        # template.yaml's EmailSenderIdentity.
        self._sender = sender
        self._region = region

    @cached_property
    def _ses(self) -> Any:
        return _session().create_client("sesv2", region_name=self._region)

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
