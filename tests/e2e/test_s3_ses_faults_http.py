"""S3 or SES unavailable (issue 40, fault 8) against the local runtime, with the moto server's
fault switch (``infra/local/faults.py``): while the store fails, the client's answer is honest
(S3's own 503 for an upload, a Media still ``pending``, a reset's 202) and nothing is lost: once
the store is back, the image is processed and the reset email sent, once each.

Each queue's visibility timeout is made 1 s for the test (the template's are minutes, as AWS
advises), so a failed delivery comes again at once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from warble.dal.mail import SES_ATTEMPTS
from warble.dal.media import S3_ATTEMPTS

from infra.local.faults import SERVED_PATH
from infra.local.moto_server import aws_client
from tests.e2e.test_media_http import PROCESSED, photo, send, settled, start
from tests.e2e.test_passwords_http import reset_mails, token_of
from tests.support import waiting

pytestmark = pytest.mark.e2e

WAIT = 30.0  # seconds a redelivery may take on a busy machine (never asserted as a speed)


def eventually(check: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
    return waiting.eventually(check, what, timeout)


@pytest.fixture
def faults(stack) -> Iterator[Callable[..., dict[str, Any]]]:
    """Sets the stack's fault switch; off after the test, whatever happened."""
    yield from waiting.fault_switch(stack.moto)


def served(stack) -> dict[str, int]:
    return dict(httpx.get(f"{stack.moto}{SERVED_PATH}", timeout=10).raise_for_status().json())


class Queue:
    """A queue of the stack, in moto, by its name's ending (``<stack>-<suffix>``)."""

    def __init__(self, stack, suffix: str) -> None:
        self.sqs = aws_client("sqs", stack.moto)
        self.url = self.sqs.get_queue_url(QueueName=f"{stack.stack_name}-{suffix}")["QueueUrl"]

    def held(self) -> int:
        """Messages in it, visible or in flight."""
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        found = self.sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=names)
        return sum(int(found["Attributes"][name]) for name in names)

    def visibility(self, seconds: int) -> None:
        attributes = {"VisibilityTimeout": str(seconds)}
        self.sqs.set_queue_attributes(QueueUrl=self.url, Attributes=attributes)


@pytest.fixture
def quick(stack) -> Iterator[Callable[[str], Queue]]:
    """A queue whose failed deliveries come again after 1 s; its timeout put back after."""
    changed: list[tuple[Queue, int]] = []

    def make(suffix: str) -> Queue:
        queue = Queue(stack, suffix)
        found = queue.sqs.get_queue_attributes(
            QueueUrl=queue.url, AttributeNames=["VisibilityTimeout"]
        )
        changed.append((queue, int(found["Attributes"]["VisibilityTimeout"])))
        queue.visibility(1)
        return queue

    yield make
    for queue, seconds in changed:
        queue.visibility(seconds)


def test_while_s3_fails_an_upload_is_refused_or_kept_pending_and_processed_once_back(
    stack, new_user, faults, quick
):
    _, token = new_user("s3f")
    retries, given_up = quick("media-retries"), Queue(stack, "media-failures")
    data = photo(400, 300)
    with stack.client(token) as client:
        form = start(client, "image/jpeg", len(data))
        media_id = form["media"]["id"]

        # S3 down: the upload itself is S3's own 503, which a client retries
        faults(s3=1.0)
        refused = send(form, data, "image/jpeg")
        assert refused.status_code == 503, refused.text
        assert "<Code>ServiceUnavailable</Code>" in refused.text

        # S3 taking uploads but failing reads: the upload is taken, its processing fails
        # through Lambda's two retries and on into the retry queue; the Media stays pending
        faults(s3=1.0, s3_methods=["GET"])
        taken = send(form, data, "image/jpeg")
        assert taken.status_code == 204, taken.text
        eventually(retries.held, "the event in the retry queue, Lambda's retries spent")
        # one delivery from the queue failed too (each read tried S3_ATTEMPTS times)
        eventually(lambda: served(stack)["s3"] >= 4 * S3_ATTEMPTS, "a failed redelivery")
        pending = client.get(f"/v1/media/{media_id}")
        assert pending.status_code == 200 and pending.json()["status"] == "pending"

        # S3 back: the next delivery from the retry queue processes it
        faults()
        media = settled(client, media_id)
    assert media["status"] == "ready", media
    assert media["width"] == 300 and media["height"] == 400  # the upright photo
    eventually(lambda: retries.held() == 0, "the retry queue emptied", PROCESSED)
    assert given_up.held() == 0
    # processed once: the upload removed, one original and one preview
    s3 = aws_client("s3", stack.moto)
    bucket = next(b["Name"] for b in s3.list_buckets()["Buckets"] if "-media-" in b["Name"])
    stems = {
        o["Key"]
        for prefix in (f"media/{media_id}/", f"uploads/{media_id}")
        for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    }
    assert len(stems) == 2 and all(key.startswith(f"media/{media_id}/") for key in stems)


def test_while_ses_fails_a_reset_is_accepted_and_mailed_once_it_is_back(
    stack, new_user, faults, quick
):
    body, _ = new_user("sesf")
    address = body["user"]["email"]
    requests = quick("password-reset")
    with stack.client() as anonymous:
        # two resets mailed: two of the hour's three spent
        for _ in range(2):
            assert anonymous.post("/v1/auth/password-reset", json={"email": address}).is_success
        assert len(reset_mails(stack, address, at_least=2)) == 2

        # SES down: the third is still accepted (and mailed later)
        faults(ses=1.0)
        asked = anonymous.post("/v1/auth/password-reset", json={"email": address})
        assert asked.status_code == 202, asked.text
    # a whole delivery failed (SES tried SES_ATTEMPTS times), the request back in the queue
    eventually(lambda: served(stack)["ses"] >= SES_ATTEMPTS, "a failed delivery")
    faults()

    # SES back: the redelivery mails it (the failed try's token spent nothing of the cap)
    mails = reset_mails(stack, address, at_least=3)
    assert len(mails) == 3
    eventually(lambda: requests.held() == 0, "the request queue emptied")
    assert len(reset_mails(stack, address)) == 3  # once
    with stack.client() as anonymous:
        confirmed = anonymous.post(
            "/v1/auth/password-reset/confirm",
            json={"token": token_of(mails[2]), "password": "after-outage-1"},
        )
    assert confirmed.status_code == 204, confirmed.text
