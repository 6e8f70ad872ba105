"""Notifications: the table (pynamodb); the unread counts in Redis are warble.dal.unread's.

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

"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.exceptions import DoesNotExist, TransactWriteError
from pynamodb.expressions.update import Action
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from warble.dal import erasing
from warble.dal.dynamo import CONDITION_FAILED, bind, cancellation_codes

# The counts in Redis live in warble.dal.unread (no pynamodb there); named here as before.
from warble.dal.unread import POSITION_TYPES, STORED_TYPES, RedisUnread, padded
from warble.domain.deletion.ports import Unread
from warble.domain.notifications.ports import StoredNotification
from warble.settings import Settings, get_settings

__all__ = ["POSITION_TYPES", "STORED_TYPES", "NotificationTable", "RedisUnread", "padded"]

SYSTEM = "SYSTEM"
TOP = "N#9999999999999999999"
TRANSACT_LIMIT = 100  # actions per TransactWriteItems (DynamoDB's limit): 50 notifications
BATCH_GET_LIMIT = 100  # keys per BatchGetItem


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


def _notification(item: NotificationItem, recipient: int) -> StoredNotification:
    return StoredNotification(
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
    """``warble.domain.notifications.ports.NotificationStore`` on DynamoDB."""

    def __init__(self, ttl_days: int, settings: Settings | None = None) -> None:
        settings = settings or get_settings()
        self._ttl = timedelta(days=ttl_days)
        self._connection = bind(
            settings.aws_region, [(NotificationItem, settings.notifications_table)]
        )

    def create(self, notification: StoredNotification, dedupe: str) -> tuple[int, bool]:
        cause, item = self._items(notification, dedupe)
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

    def create_many(
        self, drafts: list[tuple[StoredNotification, str]], attempts: int = 4
    ) -> list[tuple[int, bool] | None]:
        """``create`` for a batch: the notifications and their dedupe items in transactions of
        ``TRANSACT_LIMIT`` actions. A transaction cancelled by dedupe items that exist (a
        redelivery) is sent again without those notifications, whose stored ids are read back
        in one BatchGetItem. Per draft: (the stored id, whether stored now), or None where
        its transaction kept failing (conflicts, throttling): those records are retried."""
        answers: list[tuple[int, bool] | None] = [None] * len(drafts)
        per = TRANSACT_LIMIT // 2
        taken: list[int] = []
        for start in range(0, len(drafts), per):
            chunk = list(range(start, min(start + per, len(drafts))))
            for attempt in range(attempts):
                if not chunk:
                    break
                try:
                    with TransactWrite(connection=self._connection) as tx:
                        for index in chunk:
                            cause, item = self._items(*drafts[index])
                            tx.save(cause, condition=NotificationItem.pk.does_not_exist())
                            tx.save(item)
                except TransactWriteError as exc:
                    # Puts in request order: reason 2k is draft k's dedupe item.
                    codes = cancellation_codes(exc)
                    lost = {chunk[i // 2] for i in range(0, len(codes), 2)
                            if codes[i] == CONDITION_FAILED}  # fmt: skip
                    if lost:
                        taken += sorted(lost)
                        chunk = [index for index in chunk if index not in lost]
                    else:  # a conflict or throttling: again, after a pause
                        time.sleep(0.02 * 2**attempt)
                    continue
                for index in chunk:
                    answers[index] = (drafts[index][0].id, True)
                break
        if taken:
            found = self.existing_many([(drafts[i][0].recipient, drafts[i][1]) for i in taken])
            for index in taken:
                stored = found.get((drafts[index][0].recipient, drafts[index][1]))
                # None: expired between the two calls; the record is retried.
                answers[index] = None if stored is None else (stored, False)
        return answers

    def _items(
        self, notification: StoredNotification, dedupe: str
    ) -> tuple[NotificationItem, NotificationItem]:
        pk = f"U#{notification.recipient}"
        cause = NotificationItem(pk, f"D#{dedupe}", notification_id=notification.id)
        cause.expires_at = self._ttl
        item = NotificationItem(
            pk, f"N#{padded(notification.id)}", kind=notification.kind, actor=notification.actor,
            tweet_id=notification.tweet_id, tweet_author=notification.tweet_author,
        )  # fmt: skip
        item.expires_at = self._ttl
        return cause, item

    def existing_many(self, causes: list[tuple[int, str]]) -> dict[tuple[int, str], int]:
        """``existing`` for many (recipient, dedupe) pairs: consistent BatchGetItems."""
        keys = list(dict.fromkeys((f"U#{r}", f"D#{d}") for r, d in causes))
        found: dict[tuple[int, str], int] = {}
        for start in range(0, len(keys), BATCH_GET_LIMIT):
            for item in NotificationItem.batch_get(
                keys[start : start + BATCH_GET_LIMIT], consistent_read=True,
                attributes_to_get=["pk", "sk", "notification_id"],
            ):  # fmt: skip
                if item.notification_id is not None:
                    found[(int(item.pk[2:]), item.sk[2:])] = int(item.notification_id)
        return found

    def existing(self, recipient: int, dedupe: str) -> int | None:
        try:
            item = NotificationItem.get(f"U#{recipient}", f"D#{dedupe}", consistent_read=True)
        except DoesNotExist:
            return None
        return None if item.notification_id is None else int(item.notification_id)

    def page(
        self, recipient: int, kinds: list[str], before_id: int | None, limit: int
    ) -> list[StoredNotification]:
        upper = TOP if before_id is None else f"N#{padded(before_id - 1)}"
        condition = NotificationItem.sk.between("N#", upper)
        wanted = None if set(STORED_TYPES) <= set(kinds) else NotificationItem.kind.is_in(*kinds)
        items = NotificationItem.query(
            f"U#{recipient}", condition, filter_condition=wanted, scan_index_forward=False,
            limit=limit, page_size=max(limit, 25),
        )  # fmt: skip
        return [_notification(item, recipient) for item in items]

    def system_page(
        self, before_id: int | None, after_id: int, limit: int
    ) -> list[StoredNotification]:
        upper = TOP if before_id is None else f"N#{padded(before_id - 1)}"
        if before_id is not None and before_id <= after_id + 1:
            return []
        condition = NotificationItem.sk.between(f"N#{padded(after_id + 1)}", upper)
        items = NotificationItem.query(SYSTEM, condition, scan_index_forward=False, limit=limit)
        return [_notification(item, 0) for item in items]

    def post_system(self, notification: StoredNotification) -> None:
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


class NotificationErasure:
    """The notifications an account caused and its own, for the account deletion
    (``warble.dal.erasure``)."""

    def __init__(self, items: erasing.Items) -> None:
        self._items = items
        self._table = items.settings.notifications_table

    def erase_own(self, user_id: int, limit: int) -> int:
        """A slice of what is left under the account's own key (its notifications)."""
        return erasing.erase_partition(self._items, self._table, f"U#{user_id}", limit)

    def caused(self, causes: Sequence[tuple[int, str, str]]) -> list[Unread]:
        """The dedupe items of (recipient, cause, kind) read in BatchGetItem calls; each found
        goes with the notification it names."""
        table = self._table
        wanted = list(dict.fromkeys(causes))
        kinds = {(f"U#{r}", f"D#{c}"): (r, k) for r, c, k in wanted}
        found: list[Unread] = []
        doomed: list[erasing.Doomed] = []
        for start in range(0, len(wanted), BATCH_GET_LIMIT):
            keys = [
                erasing.key(f"U#{r}", f"D#{c}")
                for r, c, _ in wanted[start : start + BATCH_GET_LIMIT]
            ]
            for item in self._items.batch_get(table, keys, "pk, sk, notification_id"):
                pk, sk = erasing.text(item, "pk"), erasing.text(item, "sk")
                recipient, kind = kinds[(pk, sk)]
                doomed.append((table, erasing.key(pk, sk)))
                notification = erasing.num(item, "notification_id")
                if notification is not None:
                    doomed.append((table, erasing.key(pk, f"N#{padded(notification)}")))
                    found.append(Unread(recipient, kind, notification))
        self._items.delete(doomed)
        return found


# ---- bulk import (the seed, infra/local/seed.py: items written as they are) ----------------
def import_notification(
    settings: Settings, recipient: int, dedupe: str, notification_id: int, kind: str,
    actor: int | None, tweet_id: int | None, tweet_author: int | None,
) -> list[tuple[str, dict[str, Any]]]:  # fmt: skip
    """A notification and its dedupe item, as ``NotificationTable`` stores them."""
    pk = f"U#{recipient}"
    cause = NotificationItem(pk, f"D#{dedupe}", notification_id=notification_id)
    item = NotificationItem(
        pk, f"N#{padded(notification_id)}", kind=kind, actor=actor,
        tweet_id=tweet_id, tweet_author=tweet_author,
    )  # fmt: skip
    cause.expires_at = item.expires_at = timedelta(days=settings.notification_ttl_days)
    return [(settings.notifications_table, cause.serialize()),
            (settings.notifications_table, item.serialize())]  # fmt: skip
