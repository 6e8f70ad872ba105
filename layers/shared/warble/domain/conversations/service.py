"""Direct messages (API.md "Conversations"): one conversation per pair of users who are friends
or matched, history newest first, unread counts from read positions, and the real-time push of
every message to the recipient's connections and the sender's other ones.

Nothing lost, nothing twice: a message is stored (one DynamoDB transaction, see
``warble.dal.conversations``) before it is acknowledged or pushed, and the push is best effort
(the Pusher never raises), so a failed push never fails a send: the recipient finds the message
in history. A resend with the same ``client_id`` (a lost ``message_ack``) finds the message
stored the first time and answers it again, without storing or pushing a second one.

Unread counts live twice: durably as each membership's ``unread`` counter, and in the per-user
``dm_unread`` hash in Redis that the notifications feature sums (``warble.dal.dm_unread``).
The hash is raised after each send and loses a conversation's field when it is read; when it
is missing, ``unread_counts`` rebuilds it from the memberships. A send and a read of the same
conversation racing within a few milliseconds can leave its field off by one message until the
conversation is next read or the hash rebuilt: it is a cache, the memberships are the truth.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from warble import clock
from warble.domain.accounts.ports import Profiles
from warble.domain.blocks.ports import PairBlocked
from warble.domain.conversations.answers import Conversation, ConversationPage, Message, MessagePage
from warble.domain.conversations.ports import (
    BlockChecks,
    ConversationStore,
    DuplicateClientId,
    Membership,
    MessageRaced,
    Relationships,
    StoredMessage,
    UnreadMessages,
)
from warble.domain.counters.ports import TransactionRetry
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.push.ports import Pushes
from warble.domain.shared import IdGenerator, user_summary
from warble.domain.text import normalise_text
from warble.errors import FieldError, NotAllowed, NotFound, Unavailable, ValidationFailed

MAX_TEXT = 2000  # API.md: 1 to 2000 characters after NFC, not only white space
SEND_ATTEMPTS = 5
MARK_READ_ATTEMPTS = 10


@dataclass(frozen=True)
class Sent:
    """A stored message; ``created`` is False for a resend answered with the first one."""

    message: StoredMessage
    recipient: int
    created: bool

    def view(self) -> Message:
        return self.message.answer()


class ConversationService:
    def __init__(
        self,
        store: ConversationStore,
        unread: UnreadMessages,
        profiles: Profiles,
        graph: Relationships,
        ids: IdGenerator,
        pusher: Pushes,
        shields: BlockChecks,
    ) -> None:
        self._shields = shields
        self._store = store
        self._unread = unread
        self._profiles = profiles
        self._graph = graph
        self._ids = ids
        self._pusher = pusher

    # ---- permission ----------------------------------------------------------------------
    def may_converse(self, a: int, b: int) -> bool:
        """Friends (follow each other) or matched by Discover, and no block either way (the
        send transaction checks the block records again, so a block acknowledged before a
        message commits refuses it); never with a suspended account (it has no profile)."""
        if self._shields.blocked_between(a, b):
            return False
        if b not in self._profiles.profiles([b]):
            return False
        if dict(self._graph.relationships(a, [b])).get(b) == "friends":
            return True
        return self._store.matched(a, b)

    def _require_allowed(self, me: int, other: int) -> None:
        if not self.may_converse(me, other):
            raise NotAllowed()

    def _member(self, me: int, conversation_id: int) -> Membership:
        membership = self._store.membership(me, conversation_id)
        if membership is None:  # unknown, or not mine: the same answer (API.md)
            raise NotFound("No such conversation.")
        return membership

    # ---- conversations -------------------------------------------------------------------
    def open(self, me: int, other: int) -> tuple[Conversation, bool]:
        """The pair's conversation, and whether it was created now."""
        if other == me:
            raise ValidationFailed(
                [FieldError("participant_id", "must be another user")],
                "A conversation with oneself is not possible.",
            )
        self._profiles.profile(other)  # NotFound for an unknown user
        self._require_allowed(me, other)
        conversation_id = self._store.conversation_of(me, other)
        created = False
        if conversation_id is None:
            minted = self._ids.next_id()
            conversation_id = self._open_new(minted, me, other)
            created = conversation_id == minted
        return self.conversation(me, conversation_id), created

    def _open_new(self, minted: int, a: int, b: int) -> int:
        for _ in range(SEND_ATTEMPTS):
            try:
                return self._store.create(minted, a, b)
            except TransactionRetry:
                continue
        raise Unavailable()

    def match(self, a: int, b: int) -> int:
        """Discover's hook (issue 11): record the match of a and b, and give them their one
        conversation (the existing one if they had it already)."""
        self._store.record_match(a, b, clock.epoch_ms())
        existing = self._store.conversation_of(a, b)
        return existing if existing is not None else self._open_new(self._ids.next_id(), a, b)

    def open_for_match(self, a: int, b: int) -> str:
        """``ConversationOpener`` for Discover: the match's conversation id."""
        return str(self.match(a, b))

    def conversation(self, me: int, conversation_id: int) -> Conversation:
        return self._render(me, [self._member(me, conversation_id)])[0]

    def latest(self, me: int, limit: int, cursor: str | None) -> ConversationPage:
        """Latest activity first. The cursor pins the last activity seen: a conversation that
        gets a message meanwhile moves to the top, where the client finds it on a refresh."""
        before = decode_cursor("conversations", cursor)
        found = self._store.memberships_page(me, before, limit + 1)
        page = found[:limit]
        more = len(found) > limit
        next_cursor = encode_cursor("conversations", page[-1].last_id) if more else None
        return ConversationPage(self._render(me, page), next_cursor)

    def _render(self, me: int, memberships: list[Membership]) -> list[Conversation]:
        people = self._profiles.profiles([me, *(m.other_id for m in memberships)])
        summaries = {uid: user_summary(record) for uid, record in people.items()}
        return [
            Conversation(
                str(m.conversation_id),
                [summaries[uid] for uid in sorted((me, m.other_id)) if uid in summaries],
                None if m.last_message is None else m.last_message.answer(),
                m.unread,
            )
            for m in memberships
        ]

    def history(self, me: int, conversation_id: int, limit: int, cursor: str | None) -> MessagePage:
        """Messages newest first; the cursor pins the last message seen."""
        self._member(me, conversation_id)
        before = decode_cursor("messages", cursor)
        found = self._store.history(conversation_id, before, limit + 1)
        page = found[:limit]
        more = len(found) > limit
        next_cursor = encode_cursor("messages", page[-1].id) if more else None
        return MessagePage([m.answer() for m in page], next_cursor)

    # ---- moderation (reports and cases) -----------------------------------------------------
    def message_of(self, member: int, message_id: int) -> StoredMessage | None:
        """A message of one of ``member``'s conversations, None for any other (a report names
        a message by its id alone, and only the reporter's own conversations are searched). A
        conversation is older than its messages: only those opened before the id can hold it."""
        held = [
            m.conversation_id
            for m in self._store.all_memberships(member)
            if m.conversation_id < message_id
        ]
        return self._store.find_message(held, message_id) if held else None

    def remove_message(self, conversation_id: int, message_id: int) -> None:
        """A moderator's removal: the message leaves the conversation for both people."""
        self._store.remove_message(conversation_id, message_id)

    # ---- messages ------------------------------------------------------------------------
    def send(
        self,
        me: int,
        conversation_id: int,
        text: str,
        client_id: str | None = None,
        look_first: bool = True,
    ) -> Sent:
        """Store a message (not pushed: see ``announce``). A resend of ``client_id`` answers
        the message stored the first time: looked up first (``look_first``: a WebSocket resend
        after a lost ack is common), else found by the send's own claim (an HTTP repeat gets
        here only when Redis lost its Idempotency-Key record: no round trip more)."""
        body = normalise_text(text, MAX_TEXT)
        membership = self._member(me, conversation_id)
        if client_id is not None and look_first:
            earlier = self._store.resent(conversation_id, me, client_id)
            if earlier is not None:
                return Sent(earlier, membership.other_id, created=False)
        self._require_allowed(me, membership.other_id)
        for _ in range(SEND_ATTEMPTS):
            message = StoredMessage.of(self._ids.next_id(), conversation_id, me, body)
            try:
                self._store.append(message, membership.other_id, client_id)
            except (MessageRaced, TransactionRetry):
                continue  # overtaken by a concurrent message: again, with a newer id
            except PairBlocked:
                raise NotAllowed() from None
            except DuplicateClientId:
                assert client_id is not None
                earlier = self._store.resent(conversation_id, me, client_id)
                if earlier is None:
                    continue
                return Sent(earlier, membership.other_id, created=False)
            self._unread.increment(membership.other_id, conversation_id)
            self._unread.clear(me, conversation_id)  # sending reads the conversation
            return Sent(message, membership.other_id, created=True)
        raise Unavailable()

    def announce(self, sent: Sent, skip: str | None = None) -> None:
        """Push a new message to the recipient's connections and the sender's other ones.
        A resend is not pushed again: its first send was."""
        if not sent.created:
            return
        # The frame's data is the Message as the HTTP answer writes it (its fields, in order).
        frame = {"type": "message", "data": dataclasses.asdict(sent.view())}
        self._pusher.push([sent.recipient, sent.message.sender_id], frame, skip=skip)

    # ---- reading -------------------------------------------------------------------------
    def read(self, me: int, conversation_id: int) -> None:
        self._read(self._member(me, conversation_id))

    def _read(self, membership: Membership) -> None:
        current: Membership | None = membership
        for _ in range(MARK_READ_ATTEMPTS):
            if current is None:
                return
            if current.unread == 0 and current.last_read == current.last_id:
                break
            if self._store.mark_read(current):
                break
            # A message arrived between the read and the write: read it too.
            current = self._store.membership(current.user_id, current.conversation_id)
        self._unread.clear(membership.user_id, membership.conversation_id)

    def read_all(self, me: int) -> None:
        """Every conversation read (durably), and ``dm_unread`` rebuilt from what remains (a
        message that arrived meanwhile stays unread)."""
        for membership in self._store.all_memberships(me):
            if membership.unread or membership.last_read != membership.last_id:
                self._read(membership)
        self._rebuild(me)

    def unread_counts(self, me: int) -> dict[int, int]:
        """Unread messages by conversation (nonzero only), from ``dm_unread``; rebuilt from
        the memberships when missing."""
        counts = self._unread.counts(me)
        return counts if counts is not None else self._rebuild(me)

    def _rebuild(self, me: int) -> dict[int, int]:
        return self._unread.rebuild(
            me, lambda: {m.conversation_id: m.unread for m in self._store.all_memberships(me)}
        )
