"""Notifications: the table (pynamodb) and the unread counts in Redis.

Table items (all with ``expires_at``, DynamoDB TTL, ``notification_ttl_days`` after creation,
except the read positions):

| pk          | sk                  | what                                                    |
|-------------|---------------------|---------------------------------------------------------|
| U#<user>    | N#<19-digit id>     | a notification of the user (kind, actor, tweet)         |
| U#<user>    | D#<dedupe key>      | its cause, written in the same transaction (id)         |
| U#<user>    | READ                | durable read positions, one attribute per type          |
| SYSTEM      | N#<19-digit id>     | a system notification (title, body): the shared list    |

A user's notifications share one partition: the list is one Query, newest first. The partition's
write rate is bounded by the hot-recipient cap (``warble.domain.notifications``).

Redis (``warble.keys``): per user, a hash of read positions (and the ``built`` marker), one
sorted set of unread ids per type, and a rebuild lease, all under the user's tag ``{u:<id>}``,
the DM feature's ``dm_unread`` hash too; the home read position under ``{h:<id>}``; the shared
system list ``{sys}:notifications``. Ids are 19-digit zero-padded strings in Redis, so string
order is id order (a double score cannot hold a 63-bit id).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, TransactWriteError
from pynamodb.expressions.update import Action
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble import keys
from warble.dal.blocks import HIDDEN_SCRIPT, hidden_answer
from warble.dal.dynamo import CONDITION_FAILED, bind, cancellation_codes
from warble.dal.redis import ReadBatch, RedisClient, scripted
from warble.domain.ports import Notification, Snapshot
from warble.settings import Settings, get_settings

STORED_TYPES = ("follow", "like", "reply", "mention", "retweet", "match")
POSITION_TYPES = (*STORED_TYPES, "system", "home")
SYSTEM = "SYSTEM"
TOP = "N#9999999999999999999"


def padded(value: int) -> str:
    return f"{value:019d}"


class NotificationItem(Model):
    class Meta:
        table_name = "notifications"  # replaced from settings on first use
        region = "us-east-1"

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    kind = UnicodeAttribute(null=True)
    actor = NumberAttribute(null=True)
    tweet_id = NumberAttribute(null=True)
    tweet_author = NumberAttribute(null=True)
    title = UnicodeAttribute(null=True)
    body = UnicodeAttribute(null=True)
    notification_id = NumberAttribute(null=True)  # on a dedupe item: the id it stored
    expires_at = TTLAttribute(null=True)
    # Read positions (the READ item): a notification at or below its type's is read.
    pos_follow = NumberAttribute(null=True)
    pos_like = NumberAttribute(null=True)
    pos_reply = NumberAttribute(null=True)
    pos_mention = NumberAttribute(null=True)
    pos_retweet = NumberAttribute(null=True)
    pos_match = NumberAttribute(null=True)
    pos_system = NumberAttribute(null=True)
    pos_home = NumberAttribute(null=True)


def _notification(item: NotificationItem, recipient: int) -> Notification:
    return Notification(
        id=int(item.sk[2:]),
        recipient=recipient,
        kind=str(item.kind),
        actor=None if item.actor is None else int(item.actor),
        tweet_id=None if item.tweet_id is None else int(item.tweet_id),
        tweet_author=None if item.tweet_author is None else int(item.tweet_author),
        title=item.title,
        body=item.body,
    )


class NotificationTable:
    """``warble.domain.ports.NotificationStore`` on DynamoDB."""

    def __init__(self, ttl_days: int, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._ttl = timedelta(days=ttl_days)
        self._connection = bind(
            settings.aws_region, [(NotificationItem, settings.notifications_table)]
        )

    def create(self, notification: Notification, dedupe: str) -> tuple[int, bool]:
        pk = f"U#{notification.recipient}"
        cause = NotificationItem(pk, f"D#{dedupe}", notification_id=notification.id)
        cause.expires_at = self._ttl
        item = NotificationItem(
            pk, f"N#{padded(notification.id)}", kind=notification.kind, actor=notification.actor,
            tweet_id=notification.tweet_id, tweet_author=notification.tweet_author,
        )  # fmt: skip
        item.expires_at = self._ttl
        try:
            with TransactWrite(connection=self._connection) as tx:
                tx.save(cause, condition=NotificationItem.pk.does_not_exist())
                tx.save(item)
        except TransactWriteError as exc:
            if CONDITION_FAILED not in cancellation_codes(exc):
                raise
            found = self.existing(notification.recipient, dedupe)
            if found is None:  # expired between the two calls: its cause is gone
                raise
            return found, False
        return notification.id, True

    def existing(self, recipient: int, dedupe: str) -> int | None:
        try:
            item = NotificationItem.get(f"U#{recipient}", f"D#{dedupe}", consistent_read=True)
        except DoesNotExist:
            return None
        return None if item.notification_id is None else int(item.notification_id)

    def page(
        self, recipient: int, kinds: list[str], before_id: int | None, limit: int
    ) -> list[Notification]:
        upper = TOP if before_id is None else f"N#{padded(before_id - 1)}"
        condition = NotificationItem.sk.between("N#", upper)
        wanted = None if set(STORED_TYPES) <= set(kinds) else NotificationItem.kind.is_in(*kinds)
        items = NotificationItem.query(
            f"U#{recipient}", condition, filter_condition=wanted, scan_index_forward=False,
            limit=limit, page_size=max(limit, 25),
        )  # fmt: skip
        return [_notification(item, recipient) for item in items]

    def system_page(self, before_id: int | None, after_id: int, limit: int) -> list[Notification]:
        upper = TOP if before_id is None else f"N#{padded(before_id - 1)}"
        if before_id is not None and before_id <= after_id + 1:
            return []
        condition = NotificationItem.sk.between(f"N#{padded(after_id + 1)}", upper)
        items = NotificationItem.query(SYSTEM, condition, scan_index_forward=False, limit=limit)
        return [_notification(item, 0) for item in items]

    def post_system(self, notification: Notification) -> None:
        item = NotificationItem(
            SYSTEM, f"N#{padded(notification.id)}", kind="system", title=notification.title,
            body=notification.body,
        )  # fmt: skip
        item.expires_at = self._ttl
        item.save()

    def system_ids(self) -> list[int]:
        condition = NotificationItem.sk.between("N#", TOP)
        return [
            int(item.sk[2:])
            for item in NotificationItem.query(
                SYSTEM, condition, attributes_to_get=["sk"], consistent_read=True
            )
        ]

    def unread_ids(
        self, recipient: int, positions: dict[str, int], cap: int
    ) -> dict[str, list[int]]:
        """Per type, the newest ``cap`` ids above its position (consistent: a rebuild must see
        every notification stored before it began)."""
        lowest = min(positions.get(k, 0) for k in STORED_TYPES)
        condition = NotificationItem.sk.between(f"N#{padded(lowest + 1)}", TOP)
        found: dict[str, list[int]] = {k: [] for k in STORED_TYPES}
        for item in NotificationItem.query(
            f"U#{recipient}", condition, scan_index_forward=False, consistent_read=True,
            attributes_to_get=["sk", "kind"],
        ):  # fmt: skip
            kind, nid = str(item.kind), int(item.sk[2:])
            if kind in found and nid > positions.get(kind, 0) and len(found[kind]) < cap:
                found[kind].append(nid)
        return found

    def positions(self, user_id: int) -> dict[str, int]:
        try:
            item = NotificationItem.get(f"U#{user_id}", "READ", consistent_read=True)
        except DoesNotExist:
            return {}
        values = {kind: getattr(item, f"pos_{kind}") for kind in POSITION_TYPES}
        return {kind: int(v) for kind, v in values.items() if v is not None}

    def save_positions(self, user_id: int, positions: dict[str, int]) -> None:
        if not positions:
            return
        attributes = NotificationItem.get_attributes()
        actions: list[Action] = [
            attributes[f"pos_{kind}"].set(value) for kind, value in positions.items()
        ]
        NotificationItem(f"U#{user_id}", "READ").update(actions=actions)


# ---- Redis ------------------------------------------------------------------------------------
# KEYS: positions hash, one unread set per stored type, dm_unread. One call: every count of the
# user's own tag; the DM sum is false (nil) when dm_unread is not built.
_USER_COUNTS = """
local out = {redis.call('HGET', KEYS[1], 'built') or false,
             redis.call('HGET', KEYS[1], 'system') or false}
for i = 2, #KEYS - 1 do out[#out + 1] = redis.call('ZCARD', KEYS[i]) end
local sum = false
if redis.call('HEXISTS', KEYS[#KEYS], 'built') == 1 then
  sum = 0
  for _, v in ipairs(redis.call('HVALS', KEYS[#KEYS])) do sum = sum + (tonumber(v) or 0) end
end
out[#out + 1] = sum
return out
"""

# KEYS: home timeline, home read position, followed celebrities; ARGV: the user's id. Counts the
# timeline's entries above the position that are not the user's own, and how many of them each
# author has (flat: author, n, ...), so the reader can take out the blocked and muted ones.
_HOME_COUNT = """
local pos = redis.call('GET', KEYS[2])
local built = redis.call('EXISTS', KEYS[1])
local celebs = redis.call('GET', KEYS[3])
local count = 0
local per = {}
local authors = {}
if pos and built == 1 then
  local suffix = ':' .. ARGV[1]
  for _, m in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], '(' .. pos .. ';', '+')) do
    if string.sub(m, -#suffix) ~= suffix then
      count = count + 1
      local author = string.match(m, ':(%d+)$')
      if per[author] == nil then
        per[author] = 0
        authors[#authors + 1] = author
      end
      per[author] = per[author] + 1
    end
  end
end
local flat = {}
for _, a in ipairs(authors) do
  flat[#flat + 1] = a
  flat[#flat + 1] = per[a]
end
return {pos or false, built, count, celebs or false, flat}
"""

# KEYS: positions hash, the type's unread set, the rebuild lease; ARGV: type, id, cap.
_ADD = """
if redis.call('HEXISTS', KEYS[1], 'built') == 0 then
  redis.call('DEL', KEYS[3])
  return -1
end
local pos = redis.call('HGET', KEYS[1], ARGV[1])
if pos and pos >= ARGV[2] then return 0 end
local added = redis.call('ZADD', KEYS[2], 0, ARGV[2])
if added == 1 then redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[3]) + 1)) end
return added
"""

# KEYS: positions hash, one unread set per type in ARGV[2..]; ARGV[1]: the new position. Each
# position moves to the newest id counted if that is higher (so nothing counted stays unread
# behind a zero count), never backwards.
_MARK_READ = """
if redis.call('HEXISTS', KEYS[1], 'built') == 0 then return false end
local out = {}
for i = 2, #ARGV do
  local pos = ARGV[1]
  local top = redis.call('ZREVRANGEBYLEX', KEYS[i], '+', '-', 'LIMIT', 0, 1)[1]
  if top and top > pos then pos = top end
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  if old and old > pos then pos = old end
  redis.call('HSET', KEYS[1], ARGV[i], pos)
  redis.call('DEL', KEYS[i])
  out[#out + 1] = pos
end
return out
"""

# KEYS: positions hash, lease, one unread set per type; ARGV: token, then per type:
# name, position, n, n ids. Fills only while the lease is held.
_FILL = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
local a = 2
for k = 3, #KEYS do
  redis.call('HSET', KEYS[1], ARGV[a], ARGV[a + 1])
  redis.call('DEL', KEYS[k])
  local n = tonumber(ARGV[a + 2])
  for j = 1, n do redis.call('ZADD', KEYS[k], 0, ARGV[a + 2 + j]) end
  a = a + 3 + n
end
while a <= #ARGV do
  redis.call('HSET', KEYS[1], ARGV[a], ARGV[a + 1])
  a = a + 2
end
redis.call('HSET', KEYS[1], 'built', '1')
return 1
"""

# KEYS: the system list; ARGV: an id. Only a built list takes it (a rebuild reads the table).
_ADD_SYSTEM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('ZADD', KEYS[1], 0, ARGV[1])
"""

SENTINEL = "0"
RATE_KEY_SECONDS = 2 * 3600  # outlives any window (a minute by default)


class RedisUnread:
    """``warble.domain.ports.UnreadStore``: the counts, read in at most two round trips."""

    def __init__(self, redis: RedisClient, cap: int, lease_ms: int = keys.LEASE_MS) -> None:
        self._redis = redis
        self.cap = cap
        self._lease_ms = lease_ms
        self._user_counts = redis.register_script(_USER_COUNTS)
        self._home_count = redis.register_script(_HOME_COUNT)
        self._hidden = redis.register_script(HIDDEN_SCRIPT)
        self._add = redis.register_script(_ADD)
        self._mark = redis.register_script(_MARK_READ)
        self._fill = redis.register_script(_FILL)
        self._add_system = redis.register_script(_ADD_SYSTEM)

    # ---- the consumer ---------------------------------------------------------------------
    def admit(self, recipient: int, window: int, cap: int) -> bool:
        key = keys.notif_rate(recipient, window)
        pipe = self._redis.pipeline(transaction=False)
        pipe.incr(key)
        pipe.expire(key, RATE_KEY_SECONDS)
        stored, _ = pipe.execute()
        return int(stored) <= cap

    def release(self, recipient: int, window: int) -> None:
        self._redis.decr(keys.notif_rate(recipient, window))

    def add(self, recipient: int, kind: str, notification_id: int) -> int:
        return int(
            self._add(
                keys=[keys.notif_positions(recipient), keys.notif_unread(recipient, kind),
                      keys.notif_lease(recipient)],
                args=[kind, padded(notification_id), self.cap],
            )
        )  # fmt: skip

    # ---- reading the counts ---------------------------------------------------------------
    def snapshot(self, user_id: int) -> Snapshot:
        """Round trip 1: the user's own counts, the DM hash, the home count and the followed
        celebrities. Round trip 2 (one pipeline): the system list above the user's position and
        each celebrity's recent tweets above the home position."""
        batch = ReadBatch(self._redis)
        read = self.snapshot_later(batch, user_id)
        batch.run()
        return read()

    def snapshot_later(self, batch: ReadBatch, user_id: int) -> Callable[[], Snapshot]:
        """``snapshot`` with round trip 1 queued in ``batch`` (three read-only scripts: in the
        gate's round trip when the HTTP skeleton sends them with it); its reader sends round
        trip 2."""
        calls = [
            (
                self._user_counts,
                [keys.notif_positions(user_id)]
                + [keys.notif_unread(user_id, kind) for kind in STORED_TYPES]
                + [keys.dm_unread(user_id)],
                [],
            ),
            (
                self._home_count,
                [keys.home_timeline(user_id), keys.home_read(user_id),
                 keys.home_celebrities(user_id)],
                [user_id],
            ),
            (self._hidden, [keys.memberships("blocks", user_id).value], []),
        ]  # fmt: skip
        readers = [scripted(batch, script, call_keys, args) for script, call_keys, args in calls]
        return lambda: self._snapshot(user_id, *(read() for read in readers))

    def _snapshot(self, user_id: int, mine: Any, home: Any, shield: Any) -> Snapshot:
        snap = Snapshot(
            built=mine[0] is not None,
            counts={kind: int(n) for kind, n in zip(STORED_TYPES, mine[2:-1], strict=True)},
            system_position=None if mine[1] is None else int(mine[1]),
            message=None if mine[-1] is None else int(mine[-1]),
            home_position=None if home[0] is None else int(home[0]),
            home_built=bool(home[1]),
            home=int(home[2]),
            celebrities=None if home[3] is None else [int(x) for x in str(home[3]).split(",") if x],
        )
        held = hidden_answer(shield)
        if held is not None:
            snap.hidden = held.hidden
            per_author = home[4] or []
            snap.home -= sum(
                int(n)
                for author, n in zip(per_author[::2], per_author[1::2], strict=True)
                if int(author) in held.hidden
            )
        system_from = snap.system_position if snap.system_position is not None else user_id
        pipe = self._redis.pipeline(transaction=False)
        pipe.exists(keys.system_notifications())
        pipe.zlexcount(keys.system_notifications(), f"({padded(system_from)}", "+")
        celebrities = snap.celebrities or [] if snap.home_position is not None else []
        celebrities = [c for c in celebrities if c not in (snap.hidden or ())]
        for celebrity in celebrities:
            pipe.exists(keys.author_recent(celebrity))
            pipe.zlexcount(
                keys.author_recent(celebrity), f"({padded(snap.home_position or 0)};", "+"
            )
        answers = pipe.execute()
        snap.system = int(answers[1]) if answers[0] else None
        built, counted = answers[2::2], answers[3::2]
        snap.home += sum(int(n) for n in counted)
        snap.celebrities_unbuilt = [c for c, b in zip(celebrities, built, strict=True) if not b]
        return snap

    def positions(self, user_id: int) -> dict[str, int] | None:
        raw = self._redis.hgetall(keys.notif_positions(user_id))
        if not raw or "built" not in raw:
            return None
        return {k: int(v) for k, v in raw.items() if k in POSITION_TYPES}

    # ---- rebuilding after a flush ---------------------------------------------------------
    def lease(self, user_id: int) -> str | None:
        token = secrets.token_hex(8)
        taken = self._redis.set(keys.notif_lease(user_id), token, nx=True, px=self._lease_ms)
        return token if taken else None

    def fill(
        self, user_id: int, token: str, positions: dict[str, int], unread: dict[str, list[int]]
    ) -> bool:
        args: list[str | int] = [token]
        for kind in STORED_TYPES:
            ids = unread.get(kind, [])
            args += [kind, padded(positions[kind]), len(ids), *(padded(i) for i in ids)]
        args += ["system", padded(positions["system"])]
        filled = self._fill(
            keys=[keys.notif_positions(user_id), keys.notif_lease(user_id)]
            + [keys.notif_unread(user_id, kind) for kind in STORED_TYPES],
            args=args,
        )
        self._redis.set(keys.home_read(user_id), padded(positions["home"]))
        return bool(filled)

    def rebuild_system(self, load: Callable[[], list[int]]) -> None:
        """Create the list (sentinel) before reading the table, so a notification posted
        meanwhile lands in it; adding an id twice is a no-op."""
        key = keys.system_notifications()
        self._redis.zadd(key, {SENTINEL: 0})
        ids = load()
        if ids:
            self._redis.zadd(key, {padded(i): 0 for i in ids})

    # ---- writes from requests -------------------------------------------------------------
    def mark_read(self, user_id: int, kinds: list[str], position: int) -> dict[str, int] | None:
        moved = self._mark(
            keys=[keys.notif_positions(user_id)] + [keys.notif_unread(user_id, k) for k in kinds],
            args=[padded(position), *kinds],
        )
        if moved is None:
            return None
        return {kind: int(value) for kind, value in zip(kinds, moved, strict=True)}

    def set_home_position(self, user_id: int, position: int) -> None:
        self._redis.set(keys.home_read(user_id), padded(position))

    def add_system(self, notification_id: int) -> None:
        self._add_system(keys=[keys.system_notifications()], args=[padded(notification_id)])
