"""The local stand-in of a CloudFront distribution in front of a bucket (infra/local/buckets.py):
GET and HEAD of a key answer the object from moto with what CloudFront sends: the object's own
Cache-Control, Content-Type, ETag and Last-Modified (the managed CachingOptimized policy passes
them on), the response headers policy's headers, and X-Cache / Via. A key that is not there, or
that the bucket's policy does not let CloudFront read (it grants media/* only), is S3's 403
through an origin access control without ListBucket; `/` is a 404. Other methods are 403, as a
distribution that allows only GET and HEAD answers them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC
from email.utils import format_datetime
from typing import Any

from aiohttp import web
from botocore.exceptions import ClientError

from infra.local.buckets import DistributionSpec
from infra.local.http_gateway import _bound_port
from infra.local.moto_server import aws_client
from infra.local.s3_endpoint import error_response

log = logging.getLogger("infra.local.cdn")

VIA = "1.1 local.cloudfront.net (CloudFront)"


class CdnHost:
    def __init__(
        self, spec: DistributionSpec, bucket: str, moto_url: str, region: str, host: str, port: int
    ) -> None:
        self.spec = spec
        self.bucket = bucket
        self.moto_url = moto_url
        self.region = region
        self.host, self.port = host, port
        self._s3: Any = None
        self._seen: set[str] = set()
        self._runner: web.AppRunner | None = None
        self.app = web.Application()
        self.app.router.add_route("*", "/{key:.*}", self._handle)

    @property
    def domain(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.domain}"

    async def start(self) -> None:
        self._s3 = aws_client("s3", self.moto_url, self.region)
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        self.port = _bound_port(self._runner, self.port)
        log.info("%s (CDN of bucket %s) on %s", self.spec.logical_id, self.bucket, self.url)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _headers(self, more: dict[str, str]) -> dict[str, str]:
        return {**more, **self.spec.headers, "Via": VIA}

    def _error(self, status: int, code: str, message: str) -> web.Response:
        answer = error_response(status, code, message)
        answer.headers.update(self._headers({"X-Cache": "Error from cloudfront"}))
        return answer

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        key = request.match_info["key"]
        if request.method not in ("GET", "HEAD"):
            return self._error(403, "MethodNotAllowed", "Only GET and HEAD are allowed.")
        if not key:  # no default root object: nothing to serve (S3 would want a key)
            return self._error(404, "NotFound", "Not Found")
        if not self.spec.may_read(key):  # the bucket policy grants CloudFront media/* only
            return self._error(403, "AccessDenied", "Access Denied")
        try:
            found = await asyncio.to_thread(self._s3.get_object, Bucket=self.bucket, Key=key)
        except ClientError:
            return self._error(403, "AccessDenied", "Access Denied")
        body = await asyncio.to_thread(found["Body"].read)
        hit = key in self._seen
        self._seen.add(key)
        headers = {
            "Content-Type": found.get("ContentType", "binary/octet-stream"),
            "ETag": found["ETag"],
            "Last-Modified": format_datetime(found["LastModified"].astimezone(UTC), usegmt=True),
            "Accept-Ranges": "bytes",
            "X-Cache": "Hit from cloudfront" if hit else "Miss from cloudfront",
        }
        if found.get("CacheControl"):
            headers["Cache-Control"] = found["CacheControl"]
        if request.headers.get("If-None-Match") == found["ETag"]:
            return web.Response(status=304, headers=self._headers(headers))
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(body))
            return web.Response(status=200, headers=self._headers(headers))
        return web.Response(status=200, body=body, headers=self._headers(headers))
