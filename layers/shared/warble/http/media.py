"""Media routes (API.md "Media (images)"): the upload form, a Media, its alt text. The file
itself never passes through here: the client posts it to the bucket with the form."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from warble import services
from warble.domain.media.answers import Media, MediaUpload
from warble.http.app import principal
from warble.http.docs import responses
from warble.http.params import Id, id_or_404
from warble.schemas.media import CreateMedia, PatchMedia

router = Router()


@router.post(
    "/v1/media",
    summary="Start an upload: a Media (pending) and the form that sends the file to the store",
    responses=responses(201, MediaUpload, "Created"),
)
def create_media(body: Annotated[CreateMedia, Body()]) -> Response[Any]:
    upload = services.media().create(
        principal().user_id, body.content_type, body.size, body.alt_text
    )
    return Response(status_code=201, content_type="application/json", body=upload)


@router.get(
    "/v1/media/<media_id>",
    summary="A Media: mine, or one a tweet shows",
    responses=responses(200, Media, "The media", e404="not_found"),
)
def get_media(media_id: Id) -> Media:
    return services.media().get(principal().user_id, id_or_404(media_id, "media"))


@router.patch(
    "/v1/media/<media_id>",
    summary="Change my media's alt text (the tweets showing it follow)",
    responses=responses(200, Media, "The media", e404="not_found"),
)
def patch_media(media_id: Id, body: Annotated[PatchMedia, Body()]) -> Media:
    return services.media().set_alt_text(
        principal().user_id, id_or_404(media_id, "media"), body.alt_text
    )
