"""Regenerate events/ from `sam local generate-event` output, so every sample keeps AWS's shape.

HTTP events start from `sam local generate-event apigateway http-api-proxy` and change only what
a route changes (routeKey, path, method, body, Authorization header; the API has no authorizer,
so no authorizer context). SAM has no WebSocket event generator; those follow the shapes in AWS's
documentation, which Powertools' parser models encode (tests/integration/test_sample_events.py
checks them against the models).

    .venv-sam/bin/python scripts/generate_events.py   # or any Python with `sam` on PATH
"""

from __future__ import annotations

import base64
import copy
import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAM = shutil.which("sam") or str(ROOT / ".venv-sam/bin/sam")
PLACEHOLDER_USER = {
    "user_id": "382808519642415104",
    "session_id": "382808519684358144",
    "expires_at_ms": "4102444800000",
}


def sam_event(*args: str) -> dict:
    out = subprocess.run(
        [SAM, "local", "generate-event", *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "SAM_CLI_TELEMETRY": "0"},
    ).stdout
    return json.loads(out)


def http_event(
    base: dict,
    method: str,
    route: str,
    path: str,
    body: dict | None = None,
    params: dict | None = None,
    auth: bool = True,
) -> dict:
    event = copy.deepcopy(base)
    route_key = route if route == "$default" else f"{method} {route}"
    event["routeKey"] = route_key
    event["rawPath"] = path
    event["rawQueryString"] = ""
    event.pop("queryStringParameters", None)
    event.pop("cookies", None)
    event.pop("stageVariables", None)
    event["headers"] = {
        "content-type": "application/json",
        "host": "api.example.com",
        "user-agent": "warble-client/1.0",
    }
    if auth:
        event["headers"]["authorization"] = "Bearer wbl_sample-token-replaced-in-tests"
    ctx = event["requestContext"]
    ctx["routeKey"] = route_key
    ctx["http"].update(method=method, path=path)
    ctx.pop("authentication", None)
    ctx.pop("authorizer", None)  # no authorizer: the handler checks the token itself
    if body is None:
        event.pop("body", None)
        event["isBase64Encoded"] = False
    else:
        event["body"] = base64.b64encode(json.dumps(body).encode()).decode()
        event["isBase64Encoded"] = True
    if params:
        event["pathParameters"] = params
    else:
        event.pop("pathParameters", None)
    return event


def websocket_event(route: str, event_type: str, body: str | None = None) -> dict:
    ctx = {
        "routeKey": route,
        "eventType": event_type,
        "extendedRequestId": "L0SM9FJSoAMFdNw=",
        "requestTime": "22/Nov/2026:06:00:00 +0000",
        "messageDirection": "IN",
        "stage": "live",
        "connectedAt": 1795327200000,
        "requestTimeEpoch": 1795327200000,
        "identity": {"sourceIp": "192.0.2.1", "userAgent": "warble-client/1.0"},
        "requestId": "L0SM9FJSoAMFdNw=",
        "domainName": "abcdef1234.execute-api.us-east-1.amazonaws.com",
        "connectionId": "L0SM9cOFvHcCIhw=",
        "apiId": "abcdef1234",
    }
    event: dict = {"requestContext": ctx, "isBase64Encoded": False}
    if event_type == "CONNECT":
        headers = {
            "Host": ctx["domainName"],
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "User-Agent": "warble-client/1.0",
        }
        event["headers"] = headers
        event["multiValueHeaders"] = {k: [v] for k, v in headers.items()}
        event["queryStringParameters"] = {"token": "wbl_sample-token-replaced-in-tests"}
        event["multiValueQueryStringParameters"] = {"token": ["wbl_sample-token-replaced-in-tests"]}
    elif event_type == "DISCONNECT":
        ctx["disconnectStatusCode"] = 1000
        ctx["disconnectReason"] = "Client-side close frame status code 1000"
        event["headers"] = {"Host": ctx["domainName"]}
        event["multiValueHeaders"] = {"Host": [ctx["domainName"]]}
    else:
        ctx["messageId"] = "L0SM9cOFvHcCIhw="
        event["body"] = body
    return event


def graph_stream_event(base: dict) -> dict:
    """`sam local generate-event dynamodb update`, re-keyed as the graph table's stream: B gains
    follower A (INSERT of I#A under U#B), a friend flag flips (MODIFY), then A leaves (REMOVE)."""
    arn = (
        "arn:aws:dynamodb:us-east-1:123456789012:table/warble-local-graph"
        "/stream/2026-11-22T06:00:00.000"
    )
    a, b = PLACEHOLDER_USER["user_id"], "382808519642415105"
    keys = {"pk": {"S": f"U#{b}"}, "sk": {"S": f"I#{int(a):019d}"}}
    image = {**keys, "uid": {"N": a}, "seq": {"N": "382808519684358150"}}
    records = []
    for record, name in zip(base["Records"], ("INSERT", "MODIFY", "REMOVE"), strict=True):
        record = copy.deepcopy(record)
        record["eventName"] = name
        record["eventSourceARN"] = arn
        change = record["dynamodb"]
        change["Keys"] = keys
        change.pop("NewImage", None)
        change.pop("OldImage", None)
        if name != "REMOVE":
            change["NewImage"] = {**image, "friend": {"BOOL": name == "MODIFY"}}
        if name != "INSERT":
            change["OldImage"] = {**image, "friend": {"BOOL": name == "REMOVE"}}
        records.append(record)
    return {"Records": records}


def graph_events(base: dict) -> dict[str, dict]:
    """GraphFunction's routes (user 382808519642415105 as the other user) and its stream."""
    other = "382808519642415105"

    def route(method: str, route: str, path: str, user_id: str | None = other) -> dict:
        params = None if user_id is None else {"user_id": user_id}
        return http_event(base, method, route, path, params=params)

    relationships = route("GET", "/v1/users/me/relationships", "/v1/users/me/relationships", None)
    relationships["rawQueryString"] = f"ids={other},1"
    relationships["queryStringParameters"] = {"ids": f"{other},1"}
    return {
        "graph/follow.json": route(
            "PUT", "/v1/users/me/following/{user_id}", f"/v1/users/me/following/{other}"
        ),
        "graph/unfollow.json": route(
            "DELETE", "/v1/users/me/following/{user_id}", f"/v1/users/me/following/{other}"
        ),
        "graph/followers.json": route(
            "GET", "/v1/users/{user_id}/followers", f"/v1/users/{other}/followers"
        ),
        "graph/following.json": route(
            "GET", "/v1/users/{user_id}/following", "/v1/users/me/following", "me"
        ),
        "graph/friends.json": route(
            "GET", "/v1/users/{user_id}/friends", "/v1/users/me/friends", "me"
        ),
        "graph/relationships.json": relationships,
        "graph/mutual-friends.json": route(
            "GET", "/v1/users/me/mutual-friends/{user_id}", f"/v1/users/me/mutual-friends/{other}"
        ),
        "graph/degree.json": route(
            "GET", "/v1/users/me/degree/{user_id}", f"/v1/users/me/degree/{other}"
        ),
        "counters/graph-stream.json": graph_stream_event(sam_event("dynamodb", "update")),
    }


def search_events(base: dict) -> dict[str, dict]:
    """SearchFunction's routes: people search, a hashtag's page, trends."""

    def route(route: str, path: str, query: dict[str, str] | None = None, **params: str) -> dict:
        event = http_event(base, "GET", route, path, params=params or None)
        if query:
            event["rawQueryString"] = "&".join(f"{k}={v}" for k, v in query.items())
            event["queryStringParameters"] = query
        return event

    return {
        "search/users.json": route("/v1/search/users", "/v1/search/users", {"q": "jose"}),
        "search/hashtag.json": route(
            "/v1/hashtags/{tag}/tweets", "/v1/hashtags/warble/tweets", tag="warble"
        ),
        "search/trends.json": route("/v1/trends", "/v1/trends"),
    }


def stream_event(base: dict, table: str, items: list[tuple[str, dict, dict]]) -> dict:
    """`sam local generate-event dynamodb update`, re-keyed as ``table``'s stream: one record per
    (eventName, Keys, image); INSERT carries NewImage, REMOVE OldImage."""
    arn = f"arn:aws:dynamodb:us-east-1:123456789012:table/{table}/stream/2026-11-22T06:00:00.000"
    records = []
    for n, (name, keys, image) in enumerate(items):
        record = copy.deepcopy(base["Records"][n % len(base["Records"])])
        record["eventName"] = name
        record["eventSourceARN"] = arn
        change = record["dynamodb"]
        change["Keys"] = keys
        change.pop("NewImage", None)
        change.pop("OldImage", None)
        change["NewImage" if name == "INSERT" else "OldImage"] = {**keys, **image}
        records.append(record)
    return {"Records": records}


CONVERSATION = "382808519700000100"


def conversation_events(base: dict) -> dict[str, dict]:
    """ConversationsFunction's routes (conversation 382808519700000100 with user ...105)."""
    conversation = CONVERSATION
    messages = f"/v1/conversations/{conversation}/messages"
    by_id = "/v1/conversations/{conversation_id}"

    def route(method: str, route: str, path: str, body: dict | None = None, **params: str) -> dict:
        return http_event(base, method, route, path, body, params=params or None)

    return {
        "conversations/open.json": route(
            "POST",
            "/v1/conversations",
            "/v1/conversations",
            {"participant_id": "382808519642415105"},
        ),
        "conversations/list.json": route("GET", "/v1/conversations", "/v1/conversations"),
        "conversations/messages.json": route(
            "GET", f"{by_id}/messages", messages, conversation_id=conversation
        ),
        "conversations/send.json": route(
            "POST", f"{by_id}/messages", messages, {"text": "hello"}, conversation_id=conversation
        ),
        "conversations/read.json": route(
            "POST",
            f"{by_id}/read",
            f"/v1/conversations/{conversation}/read",
            conversation_id=conversation,
        ),
    }


def report_events(base: dict) -> dict[str, dict]:
    """ReportsFunction's routes (a report of tweet ...200; case 382808519700000300)."""
    case = "382808519700000300"
    cases = http_event(base, "GET", "/v1/admin/cases", "/v1/admin/cases")
    cases["rawQueryString"] = "status=open"
    cases["queryStringParameters"] = {"status": "open"}
    return {
        "reports/report.json": http_event(
            base,
            "POST",
            "/v1/reports",
            "/v1/reports",
            {"target_type": "tweet", "target_id": "382808519700000200", "reason": "spam"},
        ),
        "reports/list.json": http_event(base, "GET", "/v1/reports", "/v1/reports"),
        "reports/cases.json": cases,
        "reports/resolve.json": http_event(
            base,
            "POST",
            "/v1/admin/cases/{case_id}/resolve",
            f"/v1/admin/cases/{case}/resolve",
            {"action": "dismiss", "note": "not spam"},
            params={"case_id": case},
        ),
    }


def tweet_events(base: dict) -> dict[str, dict]:
    """TweetsFunction's routes (tweet 382808519700000000 by user ...105), and the streams of
    the tweets and likes tables as their consumers receive them."""
    other, tweet = "382808519642415105", "382808519700000000"

    def route(method: str, route: str, path: str, body: dict | None = None, **params: str) -> dict:
        return http_event(base, method, route, path, body, params=params or None)

    home = route("GET", "/v1/timeline/home", "/v1/timeline/home")
    home["rawQueryString"] = "limit=20"
    home["queryStringParameters"] = {"limit": "20"}
    tweet_keys = {"author_id": {"N": other}, "tweet_id": {"N": tweet}}
    tweet_image = {"text": {"S": "hello"}, "created_at_ms": {"N": "1795327200000"}}
    like_keys = {"pk": {"S": f"U#{PLACEHOLDER_USER['user_id']}"}, "sk": {"S": f"T#{tweet}"}}
    like_image = {"seq": {"N": "382808519700000001"}, "author_id": {"N": other}}
    sam_stream = sam_event("dynamodb", "update")
    tweets_stream = stream_event(
        sam_stream,
        "warble-local-tweets",
        [("INSERT", tweet_keys, tweet_image), ("REMOVE", tweet_keys, tweet_image)],
    )
    return {
        "tweets/post.json": route("POST", "/v1/tweets", "/v1/tweets", {"text": "hello"}),
        "tweets/get.json": route(
            "GET", "/v1/tweets/{tweet_id}", f"/v1/tweets/{tweet}", tweet_id=tweet
        ),
        "tweets/delete.json": route(
            "DELETE", "/v1/tweets/{tweet_id}", f"/v1/tweets/{tweet}", tweet_id=tweet
        ),
        "tweets/replies.json": route(
            "GET", "/v1/tweets/{tweet_id}/replies", f"/v1/tweets/{tweet}/replies", tweet_id=tweet
        ),
        "tweets/user-tweets.json": route(
            "GET", "/v1/users/{user_id}/tweets", f"/v1/users/{other}/tweets", user_id=other
        ),
        "tweets/retweet.json": route(
            "POST", "/v1/tweets/{tweet_id}/retweet", f"/v1/tweets/{tweet}/retweet", tweet_id=tweet
        ),
        "tweets/unretweet.json": route(
            "DELETE",
            "/v1/tweets/{tweet_id}/retweet",
            f"/v1/tweets/{tweet}/retweet",
            tweet_id=tweet,
        ),
        "tweets/home.json": home,
        "tweets/like.json": route(
            "PUT", "/v1/tweets/{tweet_id}/like", f"/v1/tweets/{tweet}/like", tweet_id=tweet
        ),
        "tweets/unlike.json": route(
            "DELETE", "/v1/tweets/{tweet_id}/like", f"/v1/tweets/{tweet}/like", tweet_id=tweet
        ),
        "tweets/likers.json": route(
            "GET", "/v1/tweets/{tweet_id}/likes", f"/v1/tweets/{tweet}/likes", tweet_id=tweet
        ),
        "tweets/user-likes.json": route(
            "GET", "/v1/users/{user_id}/likes", "/v1/users/me/likes", user_id="me"
        ),
        "timeline/tweets-stream.json": tweets_stream,
        "cleanup/tweets-stream.json": {"Records": tweets_stream["Records"][1:]},
        "counters/likes-stream.json": stream_event(
            sam_stream,
            "warble-local-likes",
            [("INSERT", like_keys, like_image), ("REMOVE", like_keys, like_image)],
        ),
    }


def upload_event() -> dict:
    """`sam local generate-event s3 put` for an upload under uploads/ of the media bucket."""
    event = sam_event(
        "s3", "put", "--bucket", "warble-local-media-123456789012-us-east-1",
        "--key", "uploads/382808519700000009",
    )  # fmt: skip
    event["Records"][0]["eventName"] = "ObjectCreated:Post"
    return event


def main() -> None:
    base = sam_event("apigateway", "http-api-proxy")
    events = {
        "accounts/signup.json": http_event(
            base,
            "POST",
            "/v1/auth/signup",
            "/v1/auth/signup",
            {"username": "alice", "email": "alice@example.com", "password": "correct horse"},
            auth=False,
        ),
        "accounts/login.json": http_event(
            base,
            "POST",
            "/v1/auth/login",
            "/v1/auth/login",
            {"login": "alice", "password": "correct horse", "device": "laptop"},
            auth=False,
        ),
        "accounts/logout.json": http_event(base, "POST", "/v1/auth/logout", "/v1/auth/logout"),
        "accounts/list-sessions.json": http_event(
            base, "GET", "/v1/auth/sessions", "/v1/auth/sessions"
        ),
        "accounts/revoke-session.json": http_event(
            base,
            "DELETE",
            "/v1/auth/sessions/{session_id}",
            "/v1/auth/sessions/382808519684358145",
            params={"session_id": "382808519684358145"},
        ),
        "accounts/get-me.json": http_event(base, "GET", "/v1/users/me", "/v1/users/me"),
        "accounts/change-password.json": http_event(
            base,
            "PUT",
            "/v1/users/me/password",
            "/v1/users/me/password",
            {"current_password": "correct horse", "password": "battery staple"},
        ),
        "accounts/password-reset.json": http_event(
            base,
            "POST",
            "/v1/auth/password-reset",
            "/v1/auth/password-reset",
            {"email": "alice@example.com"},
            auth=False,
        ),
        "accounts/password-reset-confirm.json": http_event(
            base,
            "POST",
            "/v1/auth/password-reset/confirm",
            "/v1/auth/password-reset/confirm",
            {"token": "the-token-of-the-emails-link-0123456789ab", "password": "battery staple"},
            auth=False,
        ),
        "export/export.json": http_event(base, "GET", "/v1/users/me/export", "/v1/users/me/export"),
        "accounts/patch-me.json": http_event(
            base, "PATCH", "/v1/users/me", "/v1/users/me", {"display_name": "Alice", "bio": "hello"}
        ),
        "accounts/get-user.json": http_event(
            base,
            "GET",
            "/v1/users/{user_id}",
            "/v1/users/382808519642415104",
            params={"user_id": "382808519642415104"},
        ),
        "accounts/get-user-by-username.json": http_event(
            base,
            "GET",
            "/v1/users/by-username/{username}",
            "/v1/users/by-username/alice",
            params={"username": "alice"},
        ),
        "meta/health.json": http_event(base, "GET", "/v1/health", "/v1/health", auth=False),
        "meta/openapi.json": http_event(
            base, "GET", "/v1/openapi.json", "/v1/openapi.json", auth=False
        ),
        "meta/unknown-path.json": http_event(
            base, "GET", "$default", "/v1/nothing-here", auth=False
        ),
        "meta/wrong-method.json": http_event(base, "PUT", "$default", "/v1/health", auth=False),
        "websocket/connect.json": websocket_event("$connect", "CONNECT"),
        "websocket/disconnect.json": websocket_event("$disconnect", "DISCONNECT"),
        "websocket/ping.json": websocket_event("ping", "MESSAGE", '{"action":"ping"}'),
        "websocket/default.json": websocket_event("$default", "MESSAGE", '{"action":"dance"}'),
        "websocket/send-message.json": websocket_event(
            "sendMessage",
            "MESSAGE",
            json.dumps(
                {
                    "action": "sendMessage",
                    "conversation_id": CONVERSATION,
                    "text": "hello",
                    "client_id": "5b0f4a52-3c1d-4e57-9a43-2f6a1c9d8e10",
                },
                separators=(",", ":"),
            ),
        ),
        "schedule/scheduled.json": {"version": "0", **sam_event("cloudwatch", "scheduled-event")},
        # MediaFunction: the media bucket's ObjectCreated notification for an upload (the local
        # stack's bucket name; S3 names a browser upload's event ObjectCreated:Post).
        "media/upload-created.json": upload_event(),
    }
    events.update(graph_events(base))
    events.update(search_events(base))
    events.update(tweet_events(base))
    events.update(conversation_events(base))
    events.update(report_events(base))
    for name, event in events.items():
        path = ROOT / "events" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(event, indent=2) + "\n")
        print("wrote", path.relative_to(ROOT))


if __name__ == "__main__":
    main()
