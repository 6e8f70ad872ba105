"""The export route (API.md "Accounts", ``GET /v1/users/me/export``).

The document is answered whole, in one synchronous answer (API.md: ``200`` with it; a 10,000-
tweet account takes about 5 s on the local stack, docs/accounts.md). What bounds it is Lambda's
answer of 6 MB: about 12,000 tweets of 120 characters as plain JSON. So the answer is gzipped
for every client that accepts it (browsers and HTTP libraries do, and undo it themselves): the
answer is then about a sixth of its plain size, base64 included, and the bound moves to about
75,000 such tweets, past the largest accounts the product names (50,000). A client that does
not accept gzip and asks for a document over the bound is told so (``406``) instead of failing
with a 502.
"""

from __future__ import annotations

import zlib
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from warble import services
from warble.domain.export.answers import Export
from warble.errors import ExportTooLarge
from warble.http.app import principal, request_header
from warble.http.docs import responses
from warble.http.render import render

router = Router()

# Lambda's synchronous answer is at most 6 MB (6,291,456 bytes) of JSON: the document's bytes,
# base64 encoded (4/3) when compressed, escaped as a string when not; 200 KB for the rest.
ANSWER_LIMIT = 6_291_456 - 200_000
GZIP_LEVEL = 6  # zlib's default: about level 9's size here, in a third of its time


@router.get(
    "/v1/users/me/export",
    summary="Everything Warble holds about me, as one JSON document (every list complete)",
    responses=responses(200, Export, "The export", e406="not_acceptable"),
)
def export_me() -> Response[Any]:
    me = principal()
    document = render(services.export().export(me.user_id, me.session_id)).encode()
    accepted = request_header("accept-encoding") or ""
    return answer(document, accepts_gzip="gzip" in accepted.lower())


def answer(document: bytes, accepts_gzip: bool) -> Response[Any]:
    """The document as it is, or gzipped for a client that accepts it (``Vary`` says which)."""
    headers = {"Vary": "Accept-Encoding"}
    if accepts_gzip:
        packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS | 16)
        packed = packer.compress(document) + packer.flush()
        headers["Content-Encoding"] = "gzip"
        return Response(200, "application/json", packed, headers)
    if len(document) * 1.1 > ANSWER_LIMIT:  # quotes escaped in the answer's string: about 10%
        raise ExportTooLarge()
    return Response(200, "application/json", document.decode(), headers)
