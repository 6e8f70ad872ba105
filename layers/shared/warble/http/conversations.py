"""Conversation routes (API.md "Conversations (direct messages)")."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from warble import services
from warble.domain.conversations.answers import Conversation, ConversationPage, Message, MessagePage
from warble.http.app import principal, request_key
from warble.http.docs import responses
from warble.http.params import Cursor, Id, Limit, id_or_404
from warble.schemas.conversations import OpenConversation, SendMessage

router = Router()


@router.post(
    "/v1/conversations",
    summary="Open the conversation with a friend or a match (201), or get it (200)",
    responses={
        **responses(201, Conversation, "Created", e403="not_allowed", e404="not_found"),
        **responses(200, Conversation, "It existed: the pair's one conversation"),
    },
)
def open_conversation(body: Annotated[OpenConversation, Body()]) -> Response[Any]:
    conversation, created = services.conversations().open(
        principal().user_id, int(body.participant_id)
    )
    return Response(
        status_code=201 if created else 200, content_type="application/json", body=conversation
    )


@router.get(
    "/v1/conversations",
    summary="My conversations, latest activity first",
    responses=responses(200, ConversationPage, "A page of conversations"),
)
def list_conversations(limit: Limit = 20, cursor: Cursor = None) -> ConversationPage:
    return services.conversations().latest(principal().user_id, limit, cursor)


@router.get(
    "/v1/conversations/<conversation_id>/messages",
    summary="A conversation's messages, newest first",
    responses=responses(200, MessagePage, "A page of messages", e404="not_found"),
)
def messages(conversation_id: Id, limit: Limit = 20, cursor: Cursor = None) -> MessagePage:
    cid = id_or_404(conversation_id, "conversation")
    return services.conversations().history(principal().user_id, cid, limit, cursor)


@router.post(
    "/v1/conversations/<conversation_id>/messages",
    summary="Send a message (pushed to the recipient's and my other WebSocket connections)",
    responses=responses(201, Message, "Sent", e403="not_allowed", e404="not_found"),
)
def send_message(conversation_id: Id, body: Annotated[SendMessage, Body()]) -> Response[Any]:
    service = services.conversations()
    cid = id_or_404(conversation_id, "conversation")
    # A keyed send claims its key durably, as a WebSocket resend's client_id (its own namespace).
    repeat = request_key()
    client_id = None if repeat is None else f"http:{repeat.key}"
    sent = service.send(principal().user_id, cid, body.text, client_id, look_first=False)
    service.announce(sent)
    return Response(status_code=201, content_type="application/json", body=sent.view())


@router.post(
    "/v1/conversations/<conversation_id>/read",
    summary="Mark a conversation read",
    responses=responses(204, None, "Read", e404="not_found"),
)
def read(conversation_id: Id) -> Response[Any]:
    cid = id_or_404(conversation_id, "conversation")
    services.conversations().read(principal().user_id, cid)
    return Response(status_code=204)
