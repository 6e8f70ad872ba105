"""Notifications and unread counts (API.md "Notifications and unread counts", seed 004).

- **Produced from the streams.** A notification type is one registered producer: a function
  from an event to the notifications it causes (``Producers.on``, wired in
  ``warble.services.notifications.producers``). Discover adds ``match`` with one line there.
- **Exactly once.** Each notification has a dedupe key derived from what caused it (a follow of
  B by A, A's like of T, reply R, ...). The store writes the dedupe item and the notification
  in one transaction, so a redelivered record finds the dedupe item and gets the id stored the
  first time. Counting then adds that id to the recipient's unread set in Redis (a set: adding
  an id twice counts once), in one Lua step that also compares it with the read position.
  A re-follow or re-like within the TTL notifies nobody again.
- **Counts in memory.** Per-type unread counts are the sizes of the unread sets; ``system``
  counts the shared system list above the user's position; ``home`` counts the home timeline
  above the user's home position, plus the followed celebrities' recent tweets (they are not
  fanned out); ``message`` sums the DM feature's ``dm_unread`` hash. Two Redis round trips.
- **Durable positions.** Read positions live in DynamoDB too. After a Redis flush, the unread
  sets are rebuilt from the stored notifications above the durable positions (a lease makes a
  rebuild that raced a new notification start again), and the system list from its partition.
- **Positions are ids.** A user's position starts at the user's own id (a Snowflake made at
  signup), so a new user counts exactly the notifications made after signing up, without any
  write at signup. Marking read moves a position to a fresh id (or the newest counted one).
- **Hot recipients.** At most ``cap_per_window`` (600) notifications are stored for one
  recipient in a window (a minute); the rest of that window are dropped (a metric counts them).
  The cap bounds the writes to the recipient's partition (DynamoDB's 1,000 writes per second
  per partition) and the consumer's work for a viral tweet.
- **Deleted tweets.** A notification is never withdrawn; one whose tweet is gone is listed with
  ``tweet_id: null`` (and ``tweet_deleted: true``), so no client follows it to a 404.
- **A stream batch at a time** (``notify_all``): the mentions' names in one query, the
  recipients' connections in one BatchGetItem, one Redis round trip for the blocks, the cap and
  what a push renders, the notifications and their dedupe items in transactions of 100 items,
  one round trip to count them (and start the connected recipients' counts), one to finish the
  counts, then one ``@connections`` post per connection and notification (API.md: every
  notification is pushed; the per-recipient cap per window bounds a burst, and the posts to
  one connection go in order while the connections are posted to concurrently).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from warble import clock
from warble.domain.accounts.ports import Profiles
from warble.domain.logins import login_key
from warble.domain.notifications.answers import (
    Notification,
    NotificationOfDeletedTweet,
    NotificationPage,
    NotificationType,
    UnreadCounts,
)
from warble.domain.notifications.ports import (
    BatchPushes,
    Directory,
    HomeTimelines,
    MessageReads,
    MutedWordLists,
    NotificationStore,
    Separations,
    Snapshot,
    StoredNotification,
    UnreadStore,
    follow_cause,
    like_cause,
    match_cause,
    mention_cause,
    reply_cause,
    retweet_cause,
)
from warble.domain.pagination import decode_cursor, encode_cursor
from warble.domain.shared import IdGenerator, Later, ReadBatch, user_summary
from warble.domain.text import mentioned
from warble.errors import FieldError, Forbidden, ValidationFailed
from warble.events import Followed, Liked, Matched, TweetPosted
from warble.ids import decompose

# Types stored per recipient (a producer each; ``match`` from Discover's matches stream).
STORED_TYPES = ("follow", "like", "reply", "mention", "retweet", "match")
# What a list can be filtered by; ``message`` is a count only.
LIST_TYPES = (*STORED_TYPES, "system")
# Every field of the unread-counts answer but ``total``; each can be marked read.
COUNT_TYPES = (*STORED_TYPES, "message", "system", "home")
# Types whose read position is kept (``message`` reads are the conversations' own).
POSITION_TYPES = (*STORED_TYPES, "system", "home")


@dataclass(frozen=True)
class Draft:
    """A notification a producer wants made; ``dedupe`` names its cause."""

    recipient: int
    kind: str
    actor: int | None
    dedupe: str
    tweet_id: int | None = None
    tweet_author: int | None = None
    # A mention's or reply's tweet: its recipient's muted words are matched with it.
    text: str | None = None
    hashtags: tuple[str, ...] = ()


E = TypeVar("E")
Producer = Callable[[Any, Directory], list[Draft]]


class Producers:
    """Event type -> the producers of the notifications it causes."""

    def __init__(self) -> None:
        self._producers: dict[type, list[Producer]] = {}

    def on(self, event_type: type[E], producer: Callable[[E, Directory], list[Draft]]) -> None:
        self._producers.setdefault(event_type, []).append(producer)

    @property
    def event_types(self) -> list[type]:
        return list(self._producers)

    def drafts(self, event: object, directory: Directory) -> list[Draft]:
        return [d for p in self._producers.get(type(event), ()) for d in p(event, directory)]


# ---- producers: one per type -------------------------------------------------------------------
def follow_notified(event: Followed, _: Directory) -> list[Draft]:
    return [Draft(event.followee, "follow", event.follower, follow_cause(event.follower))]


def match_notified(event: Matched, _: Directory) -> list[Draft]:
    """Each matched user gets one (the match record decodes to one event per user)."""
    return [Draft(event.user_id, "match", event.other_id, match_cause(event.other_id))]


def like_notified(event: Liked, _: Directory) -> list[Draft]:
    if event.author_id is None:
        return []
    return [
        Draft(event.author_id, "like", event.user_id, like_cause(event.user_id, event.tweet_id),
              event.tweet_id, event.author_id)
    ]  # fmt: skip


def reply_notified(event: TweetPosted, _: Directory) -> list[Draft]:
    if event.reply_to is None or event.reply_to_author is None:
        return []
    return [
        Draft(event.reply_to_author, "reply", event.author_id, reply_cause(event.tweet_id),
              event.tweet_id, event.author_id, event.text, event.hashtags)
    ]  # fmt: skip


def retweet_notified(event: TweetPosted, _: Directory) -> list[Draft]:
    if event.retweet_of is None or event.retweet_of_author is None:
        return []
    # One per user and original: retweeting again after an undo notifies nobody again.
    return [
        Draft(event.retweet_of_author, "retweet", event.author_id,
              retweet_cause(event.author_id, event.retweet_of), event.retweet_of,
              event.retweet_of_author)
    ]  # fmt: skip


def mention_notified(event: TweetPosted, directory: Directory) -> list[Draft]:
    names = mentioned(event.text) if event.retweet_of is None else []
    if not names:
        return []
    found = directory.ids_by_usernames(names)
    return [
        Draft(uid, "mention", event.author_id, mention_cause(event.tweet_id), event.tweet_id,
              event.author_id, event.text, event.hashtags)
        for uid in dict.fromkeys(found[n] for n in names if n in found)
        # The author of the tweet replied to gets the reply, not a second notification.
        if uid != event.reply_to_author
    ]  # fmt: skip


# ---- the service ------------------------------------------------------------------------------
@dataclass(frozen=True)
class NotificationPolicy:
    cap_per_window: int
    admins: frozenset[str]
    cap_window_seconds: int = 60
    # An author with more followers is not announced follower by follower (home_posted).
    home_push_most: int = 1_000


@dataclass
class Delivery:
    """What one event did (for the consumer's metrics)."""

    created: int = 0
    capped: int = 0


@dataclass
class BatchDelivery:
    """What a batch of events did: counts for the metrics, and the events whose notifications
    could not all be stored (their records are retried)."""

    created: int = 0
    capped: int = 0
    failed: set[int] = field(default_factory=set)


class _Known:
    """A Directory answering from the names one query found (a batch's mentions)."""

    def __init__(self, found: dict[str, int]) -> None:
        self._found = found

    def ids_by_usernames(self, usernames: list[str]) -> dict[str, int]:
        return {n: self._found[n] for n in usernames if n in self._found}


def parse_types(raw: str | None, allowed: Iterable[str], name: str = "types") -> list[str]:
    """``a,b`` -> the named types; an unknown or empty one is a 400."""
    if raw is None:
        return []
    kinds = [part.strip() for part in raw.split(",")]
    return validate_types(kinds, allowed, name)


def validate_types(kinds: list[str], allowed: Iterable[str], name: str = "types") -> list[str]:
    known = tuple(allowed)
    bad = [k for k in kinds if k not in known]
    if bad or not kinds:
        raise ValidationFailed(
            [FieldError(name, f"must name some of: {', '.join(known)}")],
            f"Unknown notification type: {', '.join(bad) or '(none)'}.",
        )
    return list(dict.fromkeys(kinds))


def created_at(notification_id: int) -> str:
    timestamp_ms, _, _ = decompose(notification_id)
    return clock.rfc3339_ms(timestamp_ms)


class NotStored(Exception):
    """A notification's transaction kept failing (conflicts, throttling)."""


class NotificationService:
    def __init__(
        self,
        store: NotificationStore,
        unread: UnreadStore,
        producers: Producers,
        directory: Directory,
        profiles: Profiles,
        existing_tweets: Callable[[list[tuple[int, int]]], set[int]],
        home: HomeTimelines,
        messages: MessageReads,
        ids: IdGenerator,
        push: Callable[[list[int], dict[str, Any]], Any],
        policy: NotificationPolicy,
        push_each: Callable[[Iterable[int], Callable[[list[int]], dict[int, Any]]], Any],
        shields: Separations,
        muted: MutedWordLists,
        pushes: BatchPushes | None = None,
        existing_later: Callable[[ReadBatch, list[tuple[int, int]]], Later[set[int]]] | None = None,
    ) -> None:
        self._shields = shields
        self._muted = muted
        self._pushes = pushes
        self._existing_later = existing_later
        self._store = store
        self._unread = unread
        self._producers = producers
        self._directory = directory
        self._profiles = profiles
        self._existing_tweets = existing_tweets
        self._home = home
        self._messages = messages
        self._ids = ids
        self._push = push
        self._push_each = push_each
        self._policy = policy

    # ---- stream: make notifications, a batch at a time ---------------------------------------
    def notify_all(self, events: Sequence[object]) -> BatchDelivery:
        """The notifications a batch of events causes, each made, counted and pushed once, in
        a constant number of round trips (the module docstring)."""
        outcome = BatchDelivery()
        directory = self._directory_for(events)
        unique: dict[tuple[int, str], tuple[int, Draft]] = {}
        for index, event in enumerate(events):
            for draft in self._producers.drafts(event, directory):
                if draft.actor != draft.recipient:  # nobody is notified of their own action
                    unique.setdefault((draft.recipient, draft.dedupe), (index, draft))
        drafts = list(unique.values())  # a cause twice in a batch is one notification
        if not drafts:
            return outcome
        wanted = Counter(d.recipient for _, d in drafts)
        connected = self._pushes.connected(list(wanted)) if self._pushes is not None else {}
        shown = [d for _, d in drafts if connected.get(d.recipient)]
        window = clock.epoch_ms() // (self._policy.cap_window_seconds * 1000)
        # Round trip 1: blocks and mutes, places under the cap, what the pushes render.
        batch = self._unread.batch()
        pairs = [(d.recipient, d.actor) for _, d in drafts if d.actor is not None]
        separated = self._shields.hidden_pairs_later(batch, pairs)
        texted = list(dict.fromkeys(d.recipient for _, d in drafts if d.text is not None))
        muted = self._muted.many_later(batch, texted) if texted else dict
        admitted = {r: self._unread.admit_later(batch, r, window, n) for r, n in wanted.items()}
        actors = self._profiles.profiles_later(
            batch, [d.actor for d in shown if d.actor], fill=False
        )
        pointed = [(d.tweet_author, d.tweet_id) for d in shown if d.tweet_id and d.tweet_author]
        alive = (
            self._existing_later(batch, pointed)
            if self._existing_later is not None and pointed
            else (lambda: self._existing_tweets(pointed) if pointed else set())
        )
        batch.run()
        hidden, words = separated(), muted()
        places = {
            r: max(0, self._policy.cap_per_window - (taken() - wanted[r]))
            for r, taken in admitted.items()
        }
        live: list[tuple[int, Draft]] = []
        over: list[tuple[int, Draft]] = []
        for index, draft in drafts:
            if draft.actor is not None and (draft.recipient, draft.actor) in hidden:
                continue
            held = words.get(draft.recipient) if draft.text is not None else None
            if held is not None and held.hides(draft.text or "", draft.hashtags):
                continue  # a muted word of the recipient's: neither stored nor counted
            if places[draft.recipient] > 0:
                places[draft.recipient] -= 1
                live.append((index, draft))
            else:  # over the cap: only a redelivery of one stored earlier goes on
                over.append((index, draft))
        release = Counter(wanted)
        release.subtract(Counter(d.recipient for _, d in live))
        made = [
            StoredNotification(self._ids.next_id(), d.recipient, d.kind, d.actor, d.tweet_id,
                               d.tweet_author)
            for _, d in live
        ]  # fmt: skip
        stored = self._store.create_many(
            [(n, d.dedupe) for n, (_, d) in zip(made, live, strict=True)]
        )
        earlier = self._store.existing_many([(d.recipient, d.dedupe) for _, d in over])
        counted: list[tuple[Draft, int, bool]] = []
        for (index, draft), result in zip(live, stored, strict=True):
            if result is None:
                outcome.failed.add(index)
                release[draft.recipient] += 1  # its place is taken again when it comes again
            else:
                counted.append((draft, *result))
                if not result[1]:  # a redelivery: it takes no place under the cap
                    release[draft.recipient] += 1
        for _, draft in over:
            found = earlier.get((draft.recipient, draft.dedupe))
            if found is None:
                outcome.capped += 1
            else:
                counted.append((draft, found, False))
        # Round trip 2: count them, give back the places not used, start the pushed counts.
        batch = self._unread.batch()
        for recipient, places_back in release.items():
            if places_back > 0:
                self._unread.release_later(batch, recipient, window, places_back)
        adds = [
            self._unread.add_later(batch, d.recipient, d.kind, stored_id)
            for d, stored_id, _ in counted
        ]
        snapshots = self._unread.snapshots_later(batch, [r for r in wanted if connected.get(r)])
        batch.run()
        pushed: dict[int, list[StoredNotification]] = {}
        for (draft, stored_id, created), add in zip(counted, adds, strict=True):
            outcome.created += created
            times = add()
            # Pushed by the delivery that first stored or counted it (a redelivery pushes none).
            if (times == 1 or (times < 0 and created)) and connected.get(draft.recipient):
                pushed.setdefault(draft.recipient, []).append(
                    StoredNotification(stored_id, draft.recipient, draft.kind, draft.actor,
                                       draft.tweet_id, draft.tweet_author)
                )  # fmt: skip
        if pushed:
            self._push_batch(pushed, connected, snapshots(), actors(), alive())
        return outcome

    def _directory_for(self, events: Sequence[object]) -> Directory:
        """The batch's mentioned names resolved in one query."""
        names = list(
            dict.fromkeys(
                name
                for e in events
                if isinstance(e, TweetPosted) and e.retweet_of is None
                for name in mentioned(e.text)
            )
        )
        return _Known(self._directory.ids_by_usernames(names) if names else {})

    def _push_batch(
        self,
        pushed: dict[int, list[StoredNotification]],
        connected: dict[int, list[str]],
        snapshots: dict[int, Snapshot],
        actors: dict[int, dict[str, Any]],
        alive: set[int],
    ) -> None:
        posts: list[tuple[str, dict[str, Any]]] = []
        for recipient, items in pushed.items():
            snap = snapshots[recipient]
            if self._warm_up(recipient, snap):
                snap = self._unread.snapshot(recipient)
            counts = dataclasses.asdict(self._counts(recipient, snap))
            for view in self._render_known(items, {}, actors, alive):
                frame = {"type": "notification",
                         "data": {**dataclasses.asdict(view), "unread_counts": counts}}  # fmt: skip
                posts += [(connection, frame) for connection in connected[recipient]]
        if posts and self._pushes is not None:
            self._pushes.post_all(posts)

    def notify(self, event: object) -> Delivery:
        """The notifications one event causes (``notify_all`` of a batch of one)."""
        done = self.notify_all([event])
        if done.failed:
            raise NotStored("a notification could not be stored; the record is retried")
        return Delivery(done.created, done.capped)

    def _push_counts(self, user_id: int, notification: Notification | None = None) -> None:
        """The ``notification`` frame: the Notification's fields (as the HTTP answer writes
        them) and the recipient's ``unread_counts``; the counts alone after a mark-read."""
        data = dataclasses.asdict(notification) if notification is not None else {}
        data["unread_counts"] = dataclasses.asdict(self.counts(user_id))
        self._push([user_id], {"type": "notification", "data": data})

    # ---- stream: the home count -------------------------------------------------------------
    def home_posted(self, reached: Mapping[int, Sequence[int]]) -> int:
        """After the fan-out of a batch of tweets: the ``home`` count pushed to the followers
        it reached (each author's, as the fan-out found them), as the other counts are (a
        counts-only ``notification`` frame), so a client need not poll it. Returns the frames
        delivered.

        Bounded whatever the batch: one frame per open connection for the whole batch, the
        counts of only the users with one; an author with more than ``home_push_most``
        followers is not announced follower by follower, and their followers see the count at
        their next read."""
        most = self._policy.home_push_most
        audience = {
            f for followers in reached.values() if len(followers) <= most for f in followers
        }
        if not audience:
            return 0

        def frames(users: list[int]) -> dict[int, Any]:
            batch = self._unread.batch()
            reads = {user: self.counts_later(batch, user) for user in users}
            batch.run()
            return {
                user: {
                    "type": "notification",
                    "data": {"unread_counts": dataclasses.asdict(read())},
                }
                for user, read in reads.items()
            }

        return int(self._push_each(audience, frames).delivered)

    # ---- unread counts ----------------------------------------------------------------------
    def counts(self, user_id: int) -> UnreadCounts:
        """API.md's unread counts: two Redis round trips when warm; warmed up when not."""
        return self._counts(user_id, self._unread.snapshot(user_id))

    def counts_later(self, batch: ReadBatch, user_id: int) -> Later[UnreadCounts]:
        """``counts`` with its first round trip queued in ``batch`` (the gate's)."""
        snap = self._unread.snapshot_later(batch, user_id)
        return lambda: self._counts(user_id, snap())

    def _counts(self, user_id: int, snap: Snapshot) -> UnreadCounts:
        if self._warm_up(user_id, snap):
            snap = self._unread.snapshot(user_id)
        stored = {kind: snap.counts.get(kind, 0) for kind in STORED_TYPES}
        # dm_unread is built on its first read (a new user's first message finds it missing).
        message = snap.message
        if message is None:
            message = sum(self._messages.unread_counts(user_id).values())
        system, home = snap.system or 0, snap.home
        total = sum(stored.values()) + message + system + home
        return UnreadCounts(**stored, message=message, system=system, home=home, total=total)

    def _warm_up(self, user_id: int, snap: Snapshot) -> bool:
        """Rebuild what the snapshot found missing; True if anything was."""
        missing = False
        if not snap.built or snap.home_position is None:
            self._rebuild(user_id)
            missing = True
        if snap.system is None:
            self._unread.rebuild_system(self._store.system_ids)
            missing = True
        if not snap.home_built:
            self._home.rebuild(user_id)
            missing = True
        if snap.hidden is None:  # the blocks hash, which the home count leaves out
            self._shields.rebuild(user_id)
            missing = True
        if snap.celebrities is None:
            self._home.ensure_recent(self._home.celebrities_followed(user_id))
            missing = True
        elif snap.celebrities_unbuilt:
            self._home.ensure_recent(snap.celebrities_unbuilt)
            missing = True
        return missing

    def _positions(self, user_id: int) -> dict[str, int]:
        """The durable read positions; never read: the user's own notifications all count (none
        predates the account, though one made by a container whose ids run behind the signup's
        may carry a lower id: the Snowflake floor after a cache loss), the shared system list
        and the home timeline from the signup on."""
        stored = self._store.positions(user_id)
        return {
            kind: stored.get(kind) or (0 if kind in STORED_TYPES else user_id)
            for kind in POSITION_TYPES
        }

    def _rebuild(self, user_id: int) -> None:
        """The unread sets from the stored notifications above the durable positions."""
        token = self._unread.lease(user_id)
        positions = self._positions(user_id)
        unread = self._store.unread_ids(user_id, positions, self._unread.cap)
        if token is not None:
            self._unread.fill(user_id, token, positions, unread)

    # ---- marking read -----------------------------------------------------------------------
    def mark_read(self, user_id: int, kinds: list[str]) -> None:
        now = self._ids.next_id()
        positioned = [k for k in kinds if k in POSITION_TYPES and k != "home"]
        if positioned:
            moved = self._unread.mark_read(user_id, positioned, now)
            if moved is None:  # not in Redis: rebuild, then mark
                self._rebuild(user_id)
                moved = self._unread.mark_read(user_id, positioned, now) or {
                    k: now for k in positioned
                }
            self._store.save_positions(user_id, moved)
        if "home" in kinds:
            self._store.save_positions(user_id, {"home": now})
            self._unread.set_home_position(user_id, now)
        if "message" in kinds:
            self._messages.read_all(user_id)
        self._push_counts(user_id)

    # ---- listing ----------------------------------------------------------------------------
    def page(
        self, user_id: int, kinds: list[str], limit: int, cursor: str | None
    ) -> NotificationPage:
        before = decode_cursor("notifications", cursor)
        wanted = kinds or list(LIST_TYPES)
        stored_kinds = [k for k in wanted if k != "system"]
        items = self._store.page(user_id, stored_kinds, before, limit) if stored_kinds else []
        if "system" in wanted:
            # Only those sent after the user signed up (ids above the user's own).
            items += self._store.system_page(before, user_id, limit)
        items = sorted(items, key=lambda n: n.id, reverse=True)[:limit]
        positions = self._unread.positions(user_id) or self._positions(user_id)
        next_cursor = encode_cursor("notifications", items[-1].id) if len(items) >= limit else None
        return NotificationPage(self._render(items, positions), next_cursor)

    def _render(
        self, items: list[StoredNotification], positions: dict[str, int]
    ) -> list[Notification | NotificationOfDeletedTweet]:
        actors = self._profiles.profiles([n.actor for n in items if n.actor is not None])
        pointed = [(n.tweet_author, n.tweet_id) for n in items if n.tweet_id and n.tweet_author]
        alive = self._existing_tweets(pointed) if pointed else set()
        return self._render_known(items, positions, actors, alive)

    def _render_known(
        self,
        items: list[StoredNotification],
        positions: dict[str, int],
        actors: dict[int, dict[str, Any]],
        alive: set[int],
    ) -> list[Notification | NotificationOfDeletedTweet]:
        views: list[Notification | NotificationOfDeletedTweet] = []
        for n in items:
            actor = actors.get(n.actor) if n.actor is not None else None
            who = None if actor is None else user_summary(actor)
            kind = cast(NotificationType, n.kind)
            common = (str(n.id), kind, who)
            at, read = created_at(n.id), n.id <= positions.get(n.kind, 0)
            if n.tweet_id is None:
                views.append(Notification(*common, None, n.title, n.body, at, read))
            elif n.tweet_id in alive:
                views.append(Notification(*common, str(n.tweet_id), n.title, n.body, at, read))
            else:  # the tweet is gone: pointing at nothing
                views.append(
                    NotificationOfDeletedTweet(*common, None, n.title, n.body, at, read, True)
                )
        return views

    # ---- system notifications ---------------------------------------------------------------
    def post_system(self, user_id: int, title: str, body: str) -> Notification:
        """One item in the shared list, whatever the number of users (admins only)."""
        username = login_key(str(self._profiles.profile(user_id)["username"]))
        if username not in self._policy.admins:
            raise Forbidden("Only admins may post system notifications.")
        notification = StoredNotification(self._ids.next_id(), 0, "system", title=title, body=body)
        self._store.post_system(notification)
        self._unread.add_system(notification.id)
        return self._render([notification], positions={})[0]
