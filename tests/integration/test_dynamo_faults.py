"""DynamoDB throttling and failing (issue 40, fault 5) with the local fault switch
(``infra/local/faults.py``, ``/_warble/faults`` on the moto server): the switch answers as
DynamoDB does; a route whose table always throttles answers ``503 unavailable`` with Retry-After
and stores nothing; at a moderate rate botocore's retries carry the writes through; a retry never
sleeps past the request's deadline; an unreachable DynamoDB is a 503 too; a stream reader fails
the batch (Lambda delivers it again) and the redelivery applies it once; a refused condition
stays what it was; in a brownout (every call slow, fault 9) a request is a 503 with Retry-After
before its function's timeout.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from pynamodb.exceptions import PutError
from warble import services
from warble.dal import store_unavailable
from warble.dal.dynamo import BATCH_SENDS, DynamoUnavailable
from warble.dal.erasing import Items, key
from warble.dal.graph import GraphItem
from warble.dal.media import MediaTable
from warble.deadline import answering_within
from warble.domain.counters.ports import user_counter
from warble.settings import get_settings

from infra.local.events import HttpRequest, http_api_event
from infra.local.faults import FAULTS_PATH
from tests.integration.test_deadline import ShortContext
from tests.integration.test_redis_down import Caller, _function, _unavailable
from tests.integration.test_sample_events import Context, _load_function
from tests.support.streams import StreamTap
from tests.support.tcp_proxy import TcpProxy
from tests.support.waiting import fault_switch

pytestmark = pytest.mark.integration

OFF = {
    "throttle": 0.0,
    "internal_error": 0.0,
    "unprocessed": 0.0,
    "s3": 0.0,
    "s3_methods": ["DELETE", "GET", "HEAD", "POST", "PUT"],
    "ses": 0.0,
    "latency_ms": 0,
}
POST = "POST /v1/tweets", "/v1/tweets"
THROTTLED = {"ProvisionedThroughputExceededException", "ThrottlingException"}


@pytest.fixture
def faults(moto) -> Iterator[Callable[..., dict[str, Any]]]:
    """Sets the moto server's fault switch; switched off after the test, whatever happened."""
    yield from fault_switch(moto.url)


def _bare_client(moto: Any, service: str = "dynamodb") -> Any:
    """A client that does not retry, to see each answer of the switch."""
    config = Config(retries={"mode": "standard", "total_max_attempts": 1})
    return boto3.client(service, endpoint_url=moto.url, region_name="us-east-1", config=config)


def _tweets_of(user: dict[str, Any]) -> list[str]:
    author = int(user["id"])
    return [str(t.id) for t in services.tweets().newest_of([author], 100)[author]]


def test_the_switch_answers_as_dynamodb_and_only_for_the_data_plane(moto, faults):
    url = f"{moto.url}{FAULTS_PATH}"
    table = get_settings().graph_table
    client = _bare_client(moto)
    key = {"pk": {"S": "U#1"}, "sk": {"S": "F#2"}}
    # off by default
    assert httpx.get(url, timeout=10).json() == OFF
    for wrong in ({"throttle": 2}, {"throttle": 0.6, "internal_error": 0.6}, {"slow": 1}, [1]):
        assert httpx.put(url, json=wrong, timeout=10).status_code == 400
    assert httpx.get(url, timeout=10).json() == OFF

    # every data-plane call throttled, as DynamoDB throttles: 400, its codes, its headers
    assert faults(throttle=1.0) == {**OFF, "throttle": 1.0}
    assert httpx.get(url, timeout=10).json() == {**OFF, "throttle": 1.0}
    codes = set()
    for _ in range(12):
        with pytest.raises(ClientError) as raised:
            client.get_item(TableName=table, Key=key)
        answer = raised.value.response
        assert answer["ResponseMetadata"]["HTTPStatusCode"] == 400
        headers = answer["ResponseMetadata"]["HTTPHeaders"]
        assert headers["content-type"] == "application/x-amz-json-1.0"
        assert len(headers["x-amzn-requestid"]) == 52 and headers["x-amz-crc32"].isdigit()
        codes.add(answer["Error"]["Code"])
    assert codes == THROTTLED  # both kinds (the chance of one kind alone 12 times: 1 in 2,048)
    # the control plane and the streams are never faulted (the stack starts, pollers read)
    assert client.describe_table(TableName=table)["Table"]["TableName"] == table
    _bare_client(moto, "dynamodbstreams").list_streams()

    assert faults(internal_error=1.0) == {**OFF, "internal_error": 1.0}
    with pytest.raises(ClientError) as raised:
        client.put_item(TableName=table, Item=key)
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert raised.value.response["Error"]["Code"] == "InternalServerError"

    # off: nothing of the refused put was applied
    assert httpx.delete(url, timeout=10).json() == OFF
    assert "Item" not in client.get_item(TableName=table, Key=key, ConsistentRead=True)


def test_throttled_writes_answer_503_with_retry_after_and_store_nothing(accounts, faults):
    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    bob = accounts.signup("bob", "bob@example.com", "password1", None, "phone")
    tweet = services.tweets().post(bob.user["id"], "before the fault", None, [])
    call = Caller()
    call.functions["graph"] = _function("graph")
    like = "PUT /v1/tweets/{tweet_id}/like", f"/v1/tweets/{tweet.id}/like"
    follow = "PUT /v1/users/me/following/{user_id}", f"/v1/users/me/following/{bob.user['id']}"
    apart = services.graph().relationships(alice.user["id"], [bob.user["id"]])

    # when every DynamoDB call is throttled
    faults(throttle=1.0)
    answers = {}
    for name, function, route, body in (
        ("post", "tweets", POST, {"text": "during the fault"}),
        ("like", "tweets", like, None),
        ("follow", "graph", follow, None),
    ):
        answers[name] = (*call.http(function, *route, alice, body), call.headers)
    faults(throttle=0.0)

    # then each write is API.md's 503 with Retry-After, and nothing is stored
    for name, answer in answers.items():
        assert _unavailable(*answer), (name, answer)
    assert _tweets_of(alice.user) == []
    assert services.container().stores.likes().edge(alice.user["id"], int(tweet.id)) is None
    assert services.graph().relationships(alice.user["id"], [bob.user["id"]]) == apart
    # and, the fault gone, the same warm handlers write
    assert call.http("tweets", *POST, alice, {"text": "after"})[0] == 201
    assert call.http("tweets", *like, alice) == (200, {"liked": True})
    assert call.http("graph", *follow, alice)[0] == 200


def test_at_a_moderate_rate_retries_carry_the_writes_through(accounts, faults):
    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    call = Caller()

    # when three DynamoDB calls in ten are throttled, and one in a hundred fails
    faults(throttle=0.3, internal_error=0.01)
    answers = [call.http("tweets", *POST, alice, {"text": f"t{i}"}) for i in range(20)]
    faults(throttle=0.0)

    # then every answer is a 201 or a 503, and all but a few are 201 (each call is tried
    # four times: one fails with a chance of 1 in 110; without retries, 1 in 3 would)
    statuses = [status for status, _ in answers]
    assert set(statuses) <= {201, 503}, statuses
    assert statuses.count(201) >= 17, statuses
    # and every acknowledged write is stored
    created = {body["id"] for status, body in answers if status == 201}
    assert created <= set(_tweets_of(alice.user))


def test_a_retry_never_sleeps_past_the_deadline(accounts, faults):
    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    call = Caller()
    handler = call.functions["tweets"].handler
    faults(throttle=1.0)
    request = HttpRequest(
        "POST",
        "/v1/tweets",
        headers=[("content-type", "application/json"), ("authorization", f"Bearer {alice.token}")],
        body=b'{"text": "short of time"}',
    )
    event = http_api_event(request, route_key=POST[0], api_id="api")

    # when a throttled write has 1.5 s of its function's time left (its deadline rings at 1.3 s)
    started = time.monotonic()
    answer = handler(event, ShortContext(1500))
    took = time.monotonic() - started

    # then botocore stops retrying when the next backoff could outlast the deadline: a 503
    # before the alarm (which would ring at 1.3 s), not a sleep into it
    assert answer["statusCode"] == 503
    assert took < 1.25, took


def test_a_stream_reader_fails_the_batch_and_the_redelivery_applies_it_once(accounts, faults):
    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    uid = int(alice.user["id"])
    tap = StreamTap([get_settings().tweets_table])
    services.tweets().post(uid, "counted once", None, [])
    batch = {"Records": tap.drain()}
    fanout = _load_function("fanout").handler

    # when the fan-out reader gets the tweet while DynamoDB throttles every call
    faults(throttle=1.0)
    with pytest.raises(Exception) as raised:
        fanout(batch, Context())
    faults(throttle=0.0)

    # then the batch fails (Lambda delivers it again), with the store's error inside
    assert any(isinstance(e, DynamoUnavailable) for e in getattr(raised.value, "errors", ()))
    # and the redelivery applies it, once
    assert fanout(batch, Context()) == {"batchItemFailures": []}
    counter = user_counter(uid)
    assert services.container().stores.counters().read([counter])[counter]["tweet_count"] == 1


def test_a_refused_condition_or_a_bad_request_is_not_unavailable(accounts, faults):
    services.graph()  # binds GraphItem to the stack's table
    GraphItem(pk="U#1", sk="F#2").save()
    with pytest.raises(PutError) as raised:
        GraphItem(pk="U#1", sk="F#2").save(condition=GraphItem.pk.does_not_exist())
    assert raised.value.cause_response_code == "ConditionalCheckFailedException"
    assert not isinstance(raised.value, store_unavailable())
    with pytest.raises(PutError) as invalid:
        GraphItem(pk="", sk="F#2").save()  # an empty key: a ValidationException
    assert invalid.value.cause_response_code == "ValidationException"
    assert not isinstance(invalid.value, store_unavailable())


@pytest.fixture
def dynamodb_outage(moto) -> Iterator[TcpProxy]:
    """The code's DynamoDB (the moto server) behind a proxy this test cuts and restores."""
    port = int(moto.url.rsplit(":", 1)[1])
    proxy = TcpProxy(("127.0.0.1", port))
    proxy.restore()
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{proxy.port}"
    services.reset()  # stores bound again: the models' clients on the proxy's address
    try:
        yield proxy
    finally:
        proxy.cut()
        os.environ["AWS_ENDPOINT_URL"] = moto.url
        services.reset()


def test_an_unreachable_dynamodb_is_a_503_and_the_same_handlers_recover(accounts, dynamodb_outage):
    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    call = Caller()
    assert call.http("tweets", *POST, alice, {"text": "before"})[0] == 201

    # when DynamoDB refuses every connection (its warm ones dropped)
    dynamodb_outage.cut()
    answer = (*call.http("tweets", *POST, alice, {"text": "during the outage"}), call.headers)

    # then the write is a 503 with Retry-After (botocore's connection errors, after its retries)
    assert _unavailable(*answer), answer
    # and once it is back, the same warm handler writes, and only the acknowledged tweets exist
    dynamodb_outage.restore()
    assert call.http("tweets", *POST, alice, {"text": "after"})[0] == 201
    author = int(alice.user["id"])
    texts = [t.text for t in services.tweets().newest_of([author], 10)[author]]
    assert sorted(texts) == ["after", "before"]


def test_the_switch_fails_s3_and_ses_as_they_fail_and_counts_what_it_served(moto, faults):
    """Fault 8's switch: S3's 503 in its XML shape, for the methods named only; SES's 503; each
    fault counted; moto's list of sent mail unsigned, so never faulted."""
    served = f"{moto.url}{FAULTS_PATH}/served"
    s3, ses = _bare_client(moto, "s3"), _bare_client(moto, "sesv2")
    s3.create_bucket(Bucket="faults-test")
    s3.put_object(Bucket="faults-test", Key="k", Body=b"before")
    url = f"{moto.url}{FAULTS_PATH}"
    assert httpx.put(url, json={"s3_methods": ["TRACE"]}, timeout=10).status_code == 400

    assert faults(s3=1.0, s3_methods=["get"])["s3_methods"] == ["GET"]
    with pytest.raises(ClientError) as raised:
        s3.get_object(Bucket="faults-test", Key="k")
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert raised.value.response["Error"]["Code"] == "ServiceUnavailable"
    s3.put_object(Bucket="faults-test", Key="k", Body=b"after")  # a PUT still taken
    signer = boto3.client(
        "s3", endpoint_url=moto.url, region_name="us-east-1",
        config=Config(signature_version="s3v4"),
    )  # fmt: skip
    presigned = signer.generate_presigned_url("get_object", {"Bucket": "faults-test", "Key": "k"})
    assert httpx.get(presigned, timeout=10).status_code == 503  # signed in the query: the same

    faults(ses=1.0)
    mail = {
        "FromEmailAddress": "noreply@example.com",
        "Destination": {"ToAddresses": ["a@example.com"]},
        "Content": {"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "t"}}}},
    }
    with pytest.raises(ClientError) as raised:
        ses.send_email(**mail)
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert raised.value.response["Error"]["Code"] == "ServiceUnavailable"
    assert httpx.get(served, timeout=10).json() == {
        "throttle": 0, "internal_error": 0, "unprocessed": 0, "s3": 0, "ses": 1, "latency": 0
    }  # fmt: skip
    listed = httpx.get(f"{moto.url}/_aws/ses", timeout=10).raise_for_status().json()
    assert not [
        m for m in listed["messages"] if m["Destination"]["ToAddresses"] == ["a@example.com"]
    ]

    faults()
    assert s3.get_object(Bucket="faults-test", Key="k")["Body"].read() == b"after"


def test_unprocessed_batch_writes_are_resent_with_backoff_then_unavailable(moto, faults):
    """BatchWriteItem answered with every request unprocessed: resent with backoff (more sends
    than pynamodb's three), then DynamoUnavailable (a 503, a failed record), not a PutError (a
    500); with a request's deadline, before the deadline."""
    served = f"{moto.url}{FAULTS_PATH}/served"
    media = MediaTable(get_settings())
    faults(unprocessed=1.0)
    with pytest.raises(DynamoUnavailable):
        media.delete_many(list(range(1, 4)))
    assert httpx.get(served, timeout=10).json()["unprocessed"] == BATCH_SENDS

    faults(unprocessed=1.0)
    started = time.monotonic()
    with pytest.raises(DynamoUnavailable), answering_within(ShortContext(1500)):
        media.delete_many(list(range(1, 4)))
    assert time.monotonic() - started < 1.25  # the deadline's alarm would ring at 1.3 s
    assert httpx.get(served, timeout=10).json()["unprocessed"] >= 2

    faults()
    media.delete_many(list(range(1, 30)))  # two calls, each answered in full


def test_an_erasure_resends_unprocessed_deletes_with_backoff_then_unavailable(moto, faults):
    """The account deletion's batch deletes (warble.dal.erasing) resend what DynamoDB leaves
    unprocessed as a model's batch writes do: with backoff, ``BATCH_SENDS`` sends, then
    DynamoUnavailable (the step fails and SQS delivers it again); with a deadline, before it."""
    served = f"{moto.url}{FAULTS_PATH}/served"
    settings = get_settings()
    items = Items(settings)
    doomed = [(settings.graph_table, key(f"U#{n}", "F#1")) for n in range(1, 4)]
    faults(unprocessed=1.0)
    with pytest.raises(DynamoUnavailable):
        items.delete(doomed)
    assert httpx.get(served, timeout=10).json()["unprocessed"] == BATCH_SENDS

    faults(unprocessed=1.0)
    started = time.monotonic()
    with pytest.raises(DynamoUnavailable), answering_within(ShortContext(1500)):
        items.delete(doomed)
    assert time.monotonic() - started < 1.25  # the deadline's alarm would ring at 1.3 s

    faults()
    many = [(settings.graph_table, key(f"U#{n}", "F#1")) for n in range(1, 30)]
    assert items.delete(many) == 29  # two calls, each answered in full


def test_the_latency_switch_slows_every_data_plane_call_and_nothing_else(moto, faults):
    """Fault 9's switch: ``latency_ms`` makes each DynamoDB data-plane call wait, then answers
    it as usual; the control plane and the streams are not slowed; wrong values are refused."""
    url, served = f"{moto.url}{FAULTS_PATH}", f"{moto.url}{FAULTS_PATH}/served"
    for wrong in ({"latency_ms": -1}, {"latency_ms": 60_001}, {"latency_ms": 0.5}):
        assert httpx.put(url, json=wrong, timeout=10).status_code == 400, wrong
    table = get_settings().graph_table
    client = _bare_client(moto)
    key = {"pk": {"S": "U#1"}, "sk": {"S": "F#3"}}

    assert faults(latency_ms=700) == {**OFF, "latency_ms": 700}
    started = time.monotonic()
    client.put_item(TableName=table, Item=key)
    assert time.monotonic() - started >= 0.7
    client.describe_table(TableName=table)
    _bare_client(moto, "dynamodbstreams").list_streams()
    # one call slowed: the put (the control plane and the streams were not)
    assert httpx.get(served, timeout=10).json()["latency"] == 1

    faults()
    # the slowed put was applied, as DynamoDB applies a slow call
    assert "Item" in client.get_item(TableName=table, Key=key, ConsistentRead=True)
    assert httpx.get(served, timeout=10).json()["latency"] == 0


def test_in_a_brownout_a_request_is_a_503_with_retry_after_before_its_timeout(accounts, faults):
    """Every DynamoDB call takes 2 s, and the request has 3 s of its function's time: it is
    answered 503 with Retry-After before the function's timeout, not after the calls (each of
    them 2 s) nor by the platform's timeout (API Gateway's bare 500)."""
    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    handler = Caller().functions["tweets"].handler
    request = HttpRequest(
        "POST",
        "/v1/tweets",
        headers=[("content-type", "application/json"), ("authorization", f"Bearer {alice.token}")],
        body=b'{"text": "in the brownout"}',
    )
    event = http_api_event(request, route_key=POST[0], api_id="api")

    # when every DynamoDB call is slow and a post has 3 s left (its deadline rings at 2.7 s)
    faults(latency_ms=2000)
    started = time.monotonic()
    answer = handler(event, ShortContext(3000))
    took = time.monotonic() - started
    faults()

    # then it is API.md's 503 with Retry-After, inside the function's time
    headers = {k.lower(): v for k, v in answer.get("headers", {}).items()}
    assert _unavailable(answer["statusCode"], json.loads(answer["body"]), headers), answer
    assert took < 3.0, took


def test_in_a_brownout_a_socket_send_is_told_unavailable_before_its_timeout(
    accounts, faults, monkeypatch
):
    """A message sent over the WebSocket API while every DynamoDB call takes 2 s, with 3 s of
    the function's time: the sender gets API.md's ``unavailable`` error frame (its client_id:
    it sends again) before the timeout, not an ack it waits for in vain after the timeout."""
    from warble.entrypoints import websocket

    from tests.integration.test_sample_events import _authorized, _event, _on

    alice = accounts.signup("alice", "alice@example.com", "password1", None, "laptop")
    bob = accounts.signup("bob", "bob@example.com", "password1", None, "phone")
    services.graph().follow(alice.user["id"], bob.user["id"])
    services.graph().follow(bob.user["id"], alice.user["id"])
    conversation, _ = services.conversations().open(alice.user["id"], bob.user["id"])
    ws = _load_function("websocket").handler
    authorizer = _authorized(alice)
    assert ws(_on(_event("websocket/connect.json"), authorizer), Context())["statusCode"] == 200
    frames: list[dict[str, Any]] = []
    monkeypatch.setattr(websocket, "_reply", lambda event, frame: frames.append(frame))
    send = _on(_event("websocket/send-message.json"), authorizer)
    body = {**json.loads(send["body"]), "conversation_id": str(conversation.id)}
    send["body"] = json.dumps(body)

    # when every DynamoDB call is slow and the send has 3 s left (its deadline rings at 2.7 s)
    faults(latency_ms=2000)
    started = time.monotonic()
    answer = ws(send, ShortContext(3000))
    took = time.monotonic() - started
    faults()

    # then the sender is told unavailable, with its client_id, inside the function's time
    assert answer["statusCode"] == 200
    assert frames == [
        {
            "type": "error",
            "data": {
                "code": "unavailable",
                "message": frames[0]["data"]["message"] if frames else None,
                "client_id": body["client_id"],
            },
        }
    ], frames
    assert took < 3.0, took
