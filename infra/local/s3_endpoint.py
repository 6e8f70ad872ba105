"""The local S3 endpoint: moto's S3 behind the rules S3 keeps and moto does not.

Functions reach it through the standard AWS_ENDPOINT_URL_S3; clients post their uploads to it
(an upload form's `url`). In front of moto it:
- checks the SigV4 signature of every request but a browser POST upload (whose policy is
  signed instead), with the local dummy secret, as S3 checks every request to a private bucket:
  an unsigned one is 403 AccessDenied, a wrong or expired one 403 SignatureDoesNotMatch or
  AccessDenied (issue 47 item 7: a header that only looked like a signature listed every key
  and wrote text/html);
- takes browser POST uploads only as S3 does: the policy's signature (SigV4, the local dummy
  secret), its expiration, every condition (exact, `starts-with`, `content-length-range`) and no
  form field the policy does not name; a refused upload keeps nothing (moto would store any
  POST, whatever its policy says);
- answers CORS preflights and adds CORS headers by the bucket's CorsConfiguration;
- after an object is created (POST, PUT, copy), sends the event S3 would to each function whose
  `Type: S3` event wants it, asynchronously, retried twice on error as Lambda retries an
  asynchronous invocation (after 1 s and 2 s here; a minute and two on AWS).
Everything else is passed to moto as it is.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import logging
import secrets
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, quote_plus, unquote

import aiohttp
from aiohttp import web
from botocore.exceptions import ClientError

from infra.local.buckets import BucketSpec, S3Notification, buckets, notifications
from infra.local.http_gateway import _bound_port
from infra.local.moto_server import aws_client

if TYPE_CHECKING:
    from infra.local.lambdas import LambdaRuntime
    from infra.local.template import ResolveContext, Template

log = logging.getLogger("infra.local.s3")

SECRET_KEY = "testing"  # the dummy credentials every local worker signs with
RETRY_DELAYS = (1.0, 2.0)
_HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection"}
# Form fields the policy need not name (S3's rule).
_UNCOVERED = {"file", "policy", "x-amz-signature"}
POLICY_FAILED = "Invalid according to Policy: Policy Condition failed: "
TOO_LARGE = "Your proposed upload exceeds the maximum allowed size"
TOO_SMALL = "Your proposed upload is smaller than the minimum allowed size"


class _Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(status: int, code: str, message: str) -> web.Response:
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        f"<RequestId>{secrets.token_hex(8).upper()}</RequestId></Error>"
    )
    return web.Response(status=status, text=body, content_type="application/xml")


def _signing_key(date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + SECRET_KEY).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def check_post_policy(
    bucket: str, fields: dict[str, str], size: int, now: datetime | None = None
) -> None:
    """Raise _Refused as S3 would for a browser POST with these form fields (names lower
    case) and a file of ``size`` bytes."""
    encoded = fields.get("policy")
    if not encoded:
        raise _Refused(403, "AccessDenied", "Access Denied")
    credential = fields.get("x-amz-credential", "").split("/")
    if len(credential) != 5 or fields.get("x-amz-algorithm") != "AWS4-HMAC-SHA256":
        raise _Refused(400, "InvalidArgument", "Invalid x-amz-credential or x-amz-algorithm")
    _, date, region, service, _ = credential
    expected = hmac.new(
        _signing_key(date, region, service), encoded.encode(), hashlib.sha256
    ).hexdigest()
    if not hmac.compare_digest(expected, fields.get("x-amz-signature", "")):
        raise _Refused(
            403, "SignatureDoesNotMatch", "The request signature we calculated does not match"
        )
    try:
        policy = json.loads(base64.b64decode(encoded))
        expiration = datetime.fromisoformat(str(policy["expiration"]).replace("Z", "+00:00"))
    except (ValueError, KeyError, TypeError):
        raise _Refused(400, "InvalidPolicyDocument", "Invalid Policy: malformed") from None
    if (now or datetime.now(UTC)) > expiration:
        raise _Refused(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
    values = {**fields, "bucket": bucket}
    covered: set[str] = set()
    for condition in policy.get("conditions") or []:
        failed = json.dumps(condition)
        if isinstance(condition, dict):
            for name, value in condition.items():
                covered.add(name.lower())
                if values.get(name.lower()) != value:
                    raise _Refused(403, "AccessDenied", POLICY_FAILED + failed)
            continue
        op = str(condition[0]).lower()
        if op == "content-length-range":
            low, high = int(condition[1]), int(condition[2])
            if size > high:
                raise _Refused(400, "EntityTooLarge", TOO_LARGE)
            if size < low:
                raise _Refused(400, "EntityTooSmall", TOO_SMALL)
            continue
        name = str(condition[1]).lstrip("$").lower()
        covered.add(name)
        actual = values.get(name, "")
        ok = actual == condition[2] if op == "eq" else actual.startswith(str(condition[2]))
        if op not in ("eq", "starts-with") or not ok:
            raise _Refused(403, "AccessDenied", POLICY_FAILED + failed)
    extra = sorted(
        name
        for name in fields
        if name not in covered and name not in _UNCOVERED and not name.startswith("x-ignore-")
    )
    if extra:
        extras = ", ".join(extra)
        raise _Refused(
            403, "AccessDenied", f"Invalid according to Policy: Extra input fields: {extras}"
        )


def s3_event(
    context: ResolveContext, bucket: str, key: str, size: int, etag: str, event_name: str
) -> dict[str, Any]:
    """An S3 event notification record, in S3's shape (the key URL-encoded as S3 does)."""
    now = datetime.now(UTC)
    return {
        "Records": [
            {
                "eventVersion": "2.1",
                "eventSource": "aws:s3",
                "awsRegion": context.region,
                "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
                "eventName": event_name,
                "userIdentity": {"principalId": "AWS:LOCALUSER"},
                "requestParameters": {"sourceIPAddress": "127.0.0.1"},
                "responseElements": {
                    "x-amz-request-id": secrets.token_hex(8).upper(),
                    "x-amz-id-2": secrets.token_urlsafe(48),
                },
                "s3": {
                    "s3SchemaVersion": "1.0",
                    "configurationId": "local",
                    "bucket": {
                        "name": bucket,
                        "ownerIdentity": {"principalId": "LOCALOWNER"},
                        "arn": f"arn:aws:s3:::{bucket}",
                    },
                    "object": {
                        "key": quote_plus(key, safe="/"),
                        "size": size,
                        "eTag": etag.strip('"'),
                        "sequencer": f"{int(now.timestamp() * 1e6):016X}",
                    },
                },
            }
        ]
    }


def cors_headers(
    rules: tuple[dict[str, Any], ...], origin: str | None, method: str, headers: list[str]
) -> dict[str, str] | None:
    """The CORS headers the first matching rule gives (None: no rule allows it)."""
    if not origin:
        return None
    for rule in rules:
        origins = rule.get("AllowedOrigins") or []
        allowed_headers = [h.lower() for h in rule.get("AllowedHeaders") or []]
        if "*" not in origins and origin not in origins:
            continue
        if method not in (rule.get("AllowedMethods") or []):
            continue
        if "*" not in allowed_headers and any(h.lower() not in allowed_headers for h in headers):
            continue
        answer = {
            "Access-Control-Allow-Origin": "*" if "*" in origins else origin,
            "Access-Control-Allow-Methods": ", ".join(rule.get("AllowedMethods") or []),
            "Vary": "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
        }
        if headers:
            answer["Access-Control-Allow-Headers"] = ", ".join(headers)
        if "MaxAge" in rule:
            answer["Access-Control-Max-Age"] = str(rule["MaxAge"])
        return answer
    return None


class S3Endpoint:
    def __init__(
        self,
        template: Template,
        context: ResolveContext,
        moto_url: str,
        host: str,
        port: int,
    ) -> None:
        self.template = template
        self.context = context
        self.moto_url = moto_url.rstrip("/")
        self.host, self.port = host, port
        self.buckets: dict[str, BucketSpec] = {b.name: b for b in buckets(template, context)}
        self.notifications: list[S3Notification] = notifications(template)
        self.runtime: LambdaRuntime | None = None  # set once the Lambda runtime exists
        self.delivered: list[tuple[str, dict[str, Any]]] = []  # (function, event): for tests
        self._tasks: set[asyncio.Task[None]] = set()
        self._s3: Any = None
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self.app = web.Application(client_max_size=64 * 1024 * 1024)
        self.app.router.add_route("*", "/{path:.*}", self._handle)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._s3 = aws_client("s3", self.moto_url, self.context.region)
        self._session = aiohttp.ClientSession(auto_decompress=False)
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        self.port = _bound_port(self._runner, self.port)
        log.info("S3 endpoint on %s (moto behind it)", self.url)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ---- requests ---------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        bucket, _, key = request.match_info["path"].partition("/")
        spec = self.buckets.get(bucket)
        origin = request.headers.get("Origin")
        if request.method == "OPTIONS":
            asked = request.headers.get("Access-Control-Request-Headers", "")
            found = cors_headers(
                spec.cors_rules if spec else (),
                origin,
                request.headers.get("Access-Control-Request-Method", ""),
                [h.strip() for h in asked.split(",") if h.strip()],
            )
            if found is None:
                return error_response(
                    403, "AccessForbidden", "CORSResponse: This CORS request is not allowed."
                )
            return web.Response(status=200, headers=found)
        if request.method == "POST" and not key and request.content_type == "multipart/form-data":
            answer = await self._form_upload(request, bucket)
        else:
            body = await request.read()
            try:
                check_signature(
                    request.method, request.rel_url.raw_path, request.rel_url.raw_query_string,
                    request.headers, body,
                )  # fmt: skip
            except _Refused as refused:
                log.info("%s %s refused: %s", request.method, request.path, refused.code)
                answer = error_response(refused.status, refused.code, refused.message)
            else:
                answer = await self._forward(request, bucket, key, body)
        cors = cors_headers(spec.cors_rules if spec else (), origin, request.method, [])
        if cors:
            answer.headers.update(cors)
        return answer

    async def _form_upload(self, request: web.Request, bucket: str) -> web.Response:
        form = await request.post()
        fields = {
            name.lower(): str(value) for name, value in form.items() if name.lower() != "file"
        }
        upload = form.get("file")
        if upload is None or not hasattr(upload, "file"):
            return error_response(
                400, "InvalidArgument", "POST requires exactly one file upload per request."
            )
        data = upload.file.read()
        try:
            check_post_policy(bucket, fields, len(data))
        except _Refused as refused:
            log.info("upload to %s refused: %s %s", bucket, refused.code, refused.message)
            return error_response(refused.status, refused.code, refused.message)
        key = fields.get("key", "")
        content_type = fields.get("content-type", "binary/octet-stream")
        try:
            answer = await asyncio.to_thread(
                self._s3.put_object, Bucket=bucket, Key=key, Body=data, ContentType=content_type
            )
        except ClientError as failed:  # S3 itself failing (the fault switch): its answer, as S3's
            error = failed.response.get("Error", {})
            status = int(failed.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 500))
            return error_response(
                status, error.get("Code", "InternalError"), error.get("Message", "")
            )
        etag = answer["ETag"]
        self._created(bucket, key, len(data), etag, "ObjectCreated:Post")
        status = int(fields.get("success_action_status", "204"))
        if status not in (200, 201):
            status = 204
        location = f"{self.url}/{bucket}/{quote_plus(key, safe='/')}"
        headers = {"ETag": etag, "Location": location}
        if status == 201:
            body = (
                f"<PostResponse><Location>{location}</Location><Bucket>{bucket}</Bucket>"
                f"<Key>{key}</Key><ETag>{etag}</ETag></PostResponse>"
            )
            return web.Response(
                status=201, text=body, content_type="application/xml", headers=headers
            )
        return web.Response(status=status, headers=headers)

    async def _forward(
        self, request: web.Request, bucket: str, key: str, body: bytes
    ) -> web.Response:
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        url = f"{self.moto_url}{request.rel_url}"
        async with self._session.request(request.method, url, headers=headers, data=body) as got:
            payload = await got.read()
            answer = web.Response(
                status=got.status,
                body=payload,
                headers={k: v for k, v in got.headers.items() if k.lower() not in _HOP_HEADERS},
            )
        if request.method == "PUT" and key and 200 <= got.status < 300 and _creates(request):
            copied = "x-amz-copy-source" in request.headers
            event = "ObjectCreated:Copy" if copied else "ObjectCreated:Put"
            size = len(body) if not copied else 0
            self._created(bucket, key, size, got.headers.get("ETag", ""), event)
        return answer

    # ---- notifications ----------------------------------------------------------------------
    def _created(self, bucket: str, key: str, size: int, etag: str, event_name: str) -> None:
        spec = self.buckets.get(bucket)
        if spec is None:
            return
        for notification in self.notifications:
            if notification.wants(spec.logical_id, event_name, key):
                event = s3_event(self.context, bucket, key, size, etag, event_name)
                task = asyncio.ensure_future(self._deliver(notification, event))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _deliver(self, notification: S3Notification, event: dict[str, Any]) -> None:
        if self.runtime is None:
            log.warning("%s: no Lambda runtime yet, event dropped", notification.function_name)
            return
        for delay in (*RETRY_DELAYS, None):
            result = await self.runtime.ainvoke(notification.function_name, event)
            if result.ok:
                self.delivered.append((notification.function_name, event))
                return
            log.warning("%s: S3 event failed: %s", notification.function_name, result.error)
            if delay is None:
                await asyncio.to_thread(
                    self._dead_letter, notification.function_name, event, result.error or {}
                )
                return
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(delay)

    def _dead_letter(self, function: str, event: dict[str, Any], error: dict[str, Any]) -> None:
        """The event of an asynchronous invocation given up, to the function's DeadLetterQueue
        (as Lambda sends it: the event as the body, the error in message attributes)."""
        spec = self.template.functions.get(function)
        queue = (spec.properties.get("DeadLetterQueue") or {}) if spec else {}
        if not queue:
            return
        arn = self.template.resolve(queue["TargetArn"], self.context)
        url = next(
            (v["Ref"] for v in self.context.values.values() if v.get("Arn") == arn and "Ref" in v),
            None,
        )
        if url is None:
            log.warning("%s: dead-letter queue %s not found", function, arn)
            return
        aws_client("sqs", self.moto_url, self.context.region).send_message(
            QueueUrl=url,
            MessageBody=json.dumps(event),
            MessageAttributes={
                "RequestID": {"DataType": "String", "StringValue": secrets.token_hex(16)},
                "ErrorCode": {"DataType": "Number", "StringValue": "200"},
                "ErrorMessage": {
                    "DataType": "String",
                    "StringValue": str(error.get("errorMessage") or "function error")[:1000],
                },
            },
        )


_UNRESERVED = "-_.~"
PRESIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"


def _query_pairs(raw_query: str) -> list[tuple[str, str]]:
    """The query's parameters, decoded, in the order sent (``?tagging`` is ``tagging=``)."""
    pairs = []
    for part in raw_query.split("&") if raw_query else []:
        name, _, value = part.partition("=")
        pairs.append((unquote(name), unquote(value)))
    return pairs


def canonical_request(
    method: str,
    raw_path: str,
    query: list[tuple[str, str]],
    headers: Any,
    signed_headers: list[str],
    payload_hash: str,
) -> str:
    """SigV4's canonical request as S3 computes it: the path as sent (S3 does not normalise
    it), each query name and value URI-encoded, sorted; the signed headers' values trimmed."""
    encoded = sorted((quote(k, safe=_UNRESERVED), quote(v, safe=_UNRESERVED)) for k, v in query)
    canonical_query = "&".join(f"{k}={v}" for k, v in encoded)
    lines = [
        f"{name}:{','.join(' '.join(v.split()) for v in headers.getall(name, []))}"
        for name in signed_headers
    ]
    return "\n".join(
        [method, raw_path or "/", canonical_query, *lines, "", ";".join(signed_headers),
         payload_hash]
    )  # fmt: skip


def _signature(amz_date: str, scope: str, canonical: str) -> str:
    date, region, service, _ = scope.split("/")
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    return hmac.new(
        _signing_key(date, region, service), to_sign.encode(), hashlib.sha256
    ).hexdigest()


def check_signature(
    method: str, raw_path: str, raw_query: str, headers: Any, body: bytes,
    now: datetime | None = None,
) -> None:  # fmt: skip
    """Raise _Refused as S3 would for a request whose SigV4 signature (an Authorization header
    or a presigned URL's query) is missing, malformed, expired or not the one the local dummy
    secret gives: S3 checks every request to a private bucket, whatever its method."""
    query = _query_pairs(raw_query)
    given = dict(query)
    authorization = headers.get("Authorization", "")
    if authorization.startswith("AWS4-HMAC-SHA256 "):
        parts = dict(
            item.strip().partition("=")[::2]
            for item in authorization[len("AWS4-HMAC-SHA256 ") :].split(",")
        )
        credential = parts.get("Credential", "").split("/")
        signed = [h for h in parts.get("SignedHeaders", "").split(";") if h]
        signature = parts.get("Signature", "")
        amz_date = headers.get("x-amz-date", "")
        payload = headers.get("x-amz-content-sha256") or hashlib.sha256(body).hexdigest()
    elif "X-Amz-Signature" in given:
        if given.get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256":
            raise _Refused(400, "AuthorizationQueryParametersError", "Unsupported algorithm")
        credential = given.get("X-Amz-Credential", "").split("/")
        signed = [h for h in given.get("X-Amz-SignedHeaders", "").split(";") if h]
        signature = given["X-Amz-Signature"]
        amz_date = given.get("X-Amz-Date", "")
        payload = PRESIGNED_PAYLOAD
        query = [(k, v) for k, v in query if k != "X-Amz-Signature"]
        try:
            signed_at = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
            expires = int(given.get("X-Amz-Expires", "0"))
        except ValueError:
            raise _Refused(403, "AccessDenied", "Invalid date or expiry") from None
        if (now or datetime.now(UTC)).timestamp() > signed_at.timestamp() + expires:
            raise _Refused(403, "AccessDenied", "Request has expired")
    else:
        raise _Refused(403, "AccessDenied", "Access Denied")
    if len(credential) != 5 or not signed or "host" not in signed or not amz_date:
        raise _Refused(400, "AuthorizationHeaderMalformed", "The authorization is malformed")
    canonical = canonical_request(method, raw_path, query, headers, signed, payload)
    expected = _signature(amz_date, "/".join(credential[1:]), canonical)
    if not hmac.compare_digest(expected, signature):
        raise _Refused(
            403, "SignatureDoesNotMatch", "The request signature we calculated does not match"
        )


def _creates(request: web.Request) -> bool:
    """A PUT that writes an object (not its tags, ACL, retention, a multipart part...)."""
    return not any(
        name in request.query
        for name in ("tagging", "acl", "retention", "legal-hold", "partNumber", "uploadId")
    )
