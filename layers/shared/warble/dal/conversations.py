"""Conversations and direct messages in DynamoDB (pynamodb).

``MessagesTable``: partition ``conversation_id`` (N), sort ``message_id`` (N, Snowflake): a
conversation's history, newest first, is one Query from a cursor.

``ConversationsTable`` (``pk`` / ``sk``, strings), one table for everything else:

| pk                | sk       | attributes                           | answers                 |
|-------------------|----------|--------------------------------------|-------------------------|
| U#<user>          | C#<conv> | other_id, last_id, last_read,        | my conversations by     |
|                   |          | unread, last_message (JSON)          | activity (LSI), unread  |
| C#<conv>          | META     | a, b (a < b)                         | a conversation's pair   |
| P#<a>#<b>         | CONV     | conversation_id                      | one conversation a pair |
| P#<a>#<b>         | MATCH    | matched_at (ms)                      | matched by Discover     |
| K#<conv>#<sender> | <client> | message_id, expires_at (TTL)         | sendMessage resends     |

Why this shape:
- A user's list ordered by latest activity without a scan: the local secondary index
  ``activity`` sorts each user's membership items by ``last_id`` (the newest message's id, or
  the conversation's own id before any message). An LSI rather than a GSI because it can be
  read strongly consistent: the sender's next list shows the conversation on top. Its 10 GB
  item-collection cap applies per ``pk``; ``U#<user>`` holds only that user's memberships,
  and histories live in the other table, which has no index and so no cap.
- ``unread`` is a counter on the recipient's membership item, raised in the send's own
  transaction, and ``last_read`` the read position: ``unread_count`` never reads history.
  Marking read sets both on the condition that ``last_id`` did not move meanwhile (a message
  arriving between the read and the write is not lost from the count).
- One send is ONE TransactWriteItems: the message, the resend claim (``K#``), both
  memberships. The memberships' condition ``last_id < :id`` commits a conversation's messages
  in id order: a send whose id was overtaken by a concurrent one retries with a new id, so a
  history cursor never skips a message committed later with a smaller id.
- One conversation per pair: the ``P#<a>#<b> / CONV`` item is put with a condition in the
  transaction that creates the conversation; a racing open finds it and answers it.
- Matches (Discover, issue 11) are ``P#<a>#<b> / MATCH`` items: Discover writes them with
  ``record_match`` (or ``ConversationService.match``), the permission check reads them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, PutError, TransactWriteError, UpdateError
from pynamodb.indexes import AllProjection, LocalSecondaryIndex
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal import erasing
from warble.dal.dynamo import CONDITION_FAILED, bind, cancellation_codes, cancelled
from warble.dal.graph import GraphItem, check_not_blocked
from warble.domain.blocks.ports import PairBlocked
from warble.domain.conversations.ports import (
    DuplicateClientId,
    Membership,
    MessageRaced,
    StoredMessage,
)
from warble.domain.counters.ports import TransactionRetry
from warble.domain.deletion.ports import Conversations
from warble.settings import Settings, get_settings

CONDITION_FAILED_EXCEPTION = "ConditionalCheckFailedException"
RESEND_CLAIM_SECONDS = 7 * 86400  # how long a client_id keeps naming its message


def member_key(user_id: int, conversation_id: int) -> tuple[str, str]:
    return f"U#{user_id}", f"C#{conversation_id}"


def pair_pk(a: int, b: int) -> str:
    low, high = sorted((a, b))
    return f"P#{low}#{high}"


class ActivityIndex(LocalSecondaryIndex["ConversationItem"]):
    class Meta:
        index_name = "activity"
        projection = AllProjection()

    pk = UnicodeAttribute(hash_key=True)
    last_id = NumberAttribute(range_key=True)


class ConversationItem(Model):
    class Meta:
        table_name = "conversations"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    activity = ActivityIndex()
    # membership
    other_id = NumberAttribute(null=True)
    last_id = NumberAttribute(null=True)
    last_read = NumberAttribute(null=True)
    unread = NumberAttribute(null=True)
    last_message = UnicodeAttribute(null=True)
    # META
    a = NumberAttribute(null=True)
    b = NumberAttribute(null=True)
    # CONV, MATCH, K#
    conversation_id = NumberAttribute(null=True)
    matched_at = NumberAttribute(null=True)
    message_id = NumberAttribute(null=True)
    expires_at = TTLAttribute(null=True)


class MessageItem(Model):
    class Meta:
        table_name = "messages"  # replaced from settings on first use
        region = "us-east-1"

    conversation_id = NumberAttribute(hash_key=True)
    message_id = NumberAttribute(range_key=True)
    sender_id = NumberAttribute()
    text = UnicodeAttribute()
    client_id = UnicodeAttribute(null=True)


def _message(item: MessageItem) -> StoredMessage:
    return StoredMessage.of(
        int(item.message_id), int(item.conversation_id), int(item.sender_id), str(item.text)
    )


def _membership(item: ConversationItem) -> Membership:
    last = json.loads(item.last_message) if item.last_message else None
    return Membership(
        user_id=int(item.pk[2:]),
        conversation_id=int(item.sk[2:]),
        other_id=int(item.other_id or 0),
        last_id=int(item.last_id or 0),
        last_read=int(item.last_read or 0),
        unread=int(item.unread or 0),
        last_message=None if last is None else StoredMessage(**last),
    )


class ConversationStore:
    """The store behind ``warble.domain.conversations.ports.ConversationStore``."""

    def __init__(self, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._connection = bind(
            settings.aws_region,
            [
                (ConversationItem, settings.conversations_table),
                (MessageItem, settings.messages_table),
                (GraphItem, settings.graph_table),
            ],
        )

    # ---- pairs and matches -----------------------------------------------------------------
    def conversation_of(self, a: int, b: int) -> int | None:
        try:
            item = ConversationItem.get(pair_pk(a, b), "CONV", consistent_read=True)
        except DoesNotExist:
            return None
        return int(item.conversation_id)

    def create(self, conversation_id: int, a: int, b: int) -> int:
        """Create the pair's conversation unless one exists; returns the pair's conversation."""
        low, high = sorted((a, b))
        try:
            with TransactWrite(connection=self._connection) as tx:
                tx.save(
                    ConversationItem(pair_pk(a, b), "CONV", conversation_id=conversation_id),
                    condition=ConversationItem.pk.does_not_exist(),
                )
                tx.save(ConversationItem(f"C#{conversation_id}", "META", a=low, b=high))
                for me, other in ((low, high), (high, low)):
                    pk, sk = member_key(me, conversation_id)
                    tx.save(
                        ConversationItem(
                            pk, sk, other_id=other, last_id=conversation_id,
                            last_read=conversation_id, unread=0,
                        )
                    )  # fmt: skip
        except TransactWriteError as exc:
            if cancellation_codes(exc)[:1] == [CONDITION_FAILED]:
                existing = self.conversation_of(a, b)
                if existing is not None:
                    return existing
            if cancelled(exc):
                raise TransactionRetry() from exc
            raise
        return conversation_id

    def record_match(self, a: int, b: int, matched_at_ms: int) -> bool:
        """Discover's match of a and b; False if they were matched already."""
        try:
            ConversationItem(pair_pk(a, b), "MATCH", matched_at=matched_at_ms).save(
                condition=ConversationItem.pk.does_not_exist()
            )
        except PutError as exc:
            if exc.cause_response_code == CONDITION_FAILED_EXCEPTION:
                return False
            raise
        return True

    def matched(self, a: int, b: int) -> bool:
        try:
            ConversationItem.get(pair_pk(a, b), "MATCH", consistent_read=True)
        except DoesNotExist:
            return False
        return True

    # ---- memberships -----------------------------------------------------------------------
    def membership(self, user_id: int, conversation_id: int) -> Membership | None:
        try:
            item = ConversationItem.get(*member_key(user_id, conversation_id), consistent_read=True)
        except DoesNotExist:
            return None
        return _membership(item)

    def memberships_page(
        self, user_id: int, before_last_id: int | None, limit: int
    ) -> list[Membership]:
        """The user's conversations, latest activity first (the ``activity`` LSI)."""
        condition = None if before_last_id is None else ConversationItem.last_id < before_last_id
        return [
            _membership(item)
            for item in ConversationItem.activity.query(
                f"U#{user_id}",
                condition,
                scan_index_forward=False,
                limit=limit,
                consistent_read=True,
            )
        ]

    def all_memberships(self, user_id: int) -> Iterator[Membership]:
        for item in ConversationItem.query(
            f"U#{user_id}", ConversationItem.sk.startswith("C#"), consistent_read=True
        ):
            yield _membership(item)

    def mark_read(self, membership: Membership) -> bool:
        """Read up to ``membership.last_id``; False if a message arrived meanwhile."""
        pk, sk = member_key(membership.user_id, membership.conversation_id)
        try:
            ConversationItem(pk, sk).update(
                actions=[
                    ConversationItem.unread.set(0),
                    ConversationItem.last_read.set(membership.last_id),
                ],
                condition=ConversationItem.last_id == membership.last_id,
            )
        except UpdateError as exc:
            if exc.cause_response_code == CONDITION_FAILED_EXCEPTION:
                return False
            raise
        return True

    # ---- messages --------------------------------------------------------------------------
    def append(self, message: StoredMessage, recipient: int, client_id: str | None) -> None:
        """Store the message and move both memberships in one transaction.

        Raises MessageRaced when a message with a larger id committed first (retry with a new
        id), DuplicateClientId when ``client_id`` already names a message of this sender,
        PairBlocked when either of the two blocks the other."""
        conversation = message.conversation_id
        last = json.dumps(message.record(), separators=(",", ":"))
        try:
            with TransactWrite(connection=self._connection) as tx:
                # No block either way: a message racing a block lands before it or not at all.
                check_not_blocked(tx, message.sender_id, recipient)
                check_not_blocked(tx, recipient, message.sender_id)
                tx.save(
                    MessageItem(
                        conversation, message.id, sender_id=message.sender_id,
                        text=message.text, client_id=client_id,
                    )
                )  # fmt: skip
                if client_id is not None:
                    claim = ConversationItem(
                        f"K#{conversation}#{message.sender_id}", client_id, message_id=message.id
                    )
                    claim.expires_at = datetime.fromtimestamp(
                        message.created_at_ms / 1000 + RESEND_CLAIM_SECONDS, UTC
                    )
                    tx.save(claim, condition=ConversationItem.pk.does_not_exist())
                ordered = ConversationItem.last_id < message.id
                tx.update(
                    ConversationItem(*member_key(message.sender_id, conversation)),
                    actions=[
                        ConversationItem.last_id.set(message.id),
                        ConversationItem.last_read.set(message.id),
                        ConversationItem.unread.set(0),
                        ConversationItem.last_message.set(last),
                    ],
                    condition=ordered,
                )
                tx.update(
                    ConversationItem(*member_key(recipient, conversation)),
                    actions=[
                        ConversationItem.last_id.set(message.id),
                        ConversationItem.unread.add(1),
                        ConversationItem.last_message.set(last),
                    ],
                    condition=ordered,
                )
        except TransactWriteError as exc:
            # Condition checks come first (the two block records), then the puts (message,
            # claim), then the updates.
            codes = cancellation_codes(exc)
            if CONDITION_FAILED in codes[:2]:
                raise PairBlocked() from exc
            if client_id is not None and codes[3:4] == [CONDITION_FAILED]:
                raise DuplicateClientId() from exc
            if CONDITION_FAILED in codes:
                raise MessageRaced() from exc
            if cancelled(exc):
                raise TransactionRetry() from exc
            raise

    def resent(self, conversation_id: int, sender_id: int, client_id: str) -> StoredMessage | None:
        """The message a sender's ``client_id`` named before, if any."""
        try:
            claim = ConversationItem.get(
                f"K#{conversation_id}#{sender_id}", client_id, consistent_read=True
            )
        except DoesNotExist:
            return None
        try:
            item = MessageItem.get(conversation_id, int(claim.message_id), consistent_read=True)
        except DoesNotExist:
            return None
        return _message(item)

    def history(
        self, conversation_id: int, before_id: int | None, limit: int
    ) -> list[StoredMessage]:
        """Messages newest first, below ``before_id``."""
        condition = None if before_id is None else MessageItem.message_id < before_id
        return [
            _message(item)
            for item in MessageItem.query(
                conversation_id,
                condition,
                scan_index_forward=False,
                limit=limit,
                consistent_read=True,
            )
        ]

    # ---- moderation (warble.domain.reports) -------------------------------------------------
    def find_message(self, conversation_ids: list[int], message_id: int) -> StoredMessage | None:
        """The message of that id in one of these conversations (a report names a message by
        its id alone): one BatchGetItem per 100 conversations."""
        keys = [(conversation, message_id) for conversation in conversation_ids]
        for item in MessageItem.batch_get(keys, consistent_read=True):
            return _message(item)
        return None

    def remove_message(self, conversation_id: int, message_id: int) -> None:
        """Take a message out of its conversation for both members (a moderator's removal):
        the message goes, and a membership whose preview is that message shows none. Idempotent.
        Its unread count stays until the recipient reads the conversation (docs/moderation.md)."""
        try:
            meta = ConversationItem.get(f"C#{conversation_id}", "META", consistent_read=True)
        except DoesNotExist:
            return
        MessageItem(conversation_id, message_id).delete()
        for member in (int(meta.a), int(meta.b)):
            try:
                ConversationItem(*member_key(member, conversation_id)).update(
                    actions=[ConversationItem.last_message.remove()],
                    condition=ConversationItem.last_id == message_id,
                )
            except UpdateError as exc:
                if exc.cause_response_code != CONDITION_FAILED_EXCEPTION:
                    raise


class ConversationErasure:
    """An account's conversations (both members', the history, the pair item, the resend
    claims), a bounded slice at a time (the account deletion, ``warble.dal.erasure``)."""

    def __init__(self, items: erasing.Items) -> None:
        self._items = items

    def erase_own(self, user_id: int, limit: int) -> int:
        """A slice of what is left under the account's own key."""
        table = self._items.settings.conversations_table
        return erasing.erase_partition(self._items, table, f"U#{user_id}", limit)

    def match_item(self, a: int, b: int) -> erasing.Doomed:
        """The pair's MATCH item (written when a match let them converse)."""
        return self._items.settings.conversations_table, erasing.key(pair_pk(a, b), "MATCH")

    def conversations(self, user_id: int, limit: int) -> Conversations:
        """Conversation by conversation: its messages (``limit`` at most this slice; the rest
        the next), then its resend claims, pair item, META and both memberships."""
        s, items = self._items.settings, self._items
        me, table = f"U#{user_id}", s.conversations_table
        found, _more = items.query(table, me, "C#", 10, "sk, other_id")
        deleted, finished = 0, list[tuple[int, int]]()
        for item in found:
            sk, other = erasing.text(item, "sk"), erasing.num(item, "other_id") or 0
            conversation = int(sk[2:])
            messages, more = items.query(
                s.messages_table, str(conversation), None, max(limit - deleted, 1),
                "conversation_id, message_id", key_name="conversation_id", numeric=True,
            )  # fmt: skip
            deleted += items.delete(
                (s.messages_table, {
                    "conversation_id": m["conversation_id"], "message_id": m["message_id"],
                })
                for m in messages
            )  # fmt: skip
            if more:
                return Conversations(deleted, finished)
            doomed = [
                (table, erasing.key(pair_pk(user_id, other), "CONV")),
                (table, erasing.key(f"C#{conversation}", "META")),
                (table, erasing.key(*member_key(other, conversation))),
                (table, erasing.key(*member_key(user_id, conversation))),
            ]
            for sender in (user_id, other):
                claims, _ = items.query(table, f"K#{conversation}#{sender}", None, 1000, "pk, sk")
                doomed += [
                    (table, erasing.key(erasing.text(c, "pk"), erasing.text(c, "sk")))
                    for c in claims
                ]
            deleted += items.delete(doomed)
            finished.append((conversation, other))
            if deleted >= limit:
                break
        return Conversations(deleted, finished)
