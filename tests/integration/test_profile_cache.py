"""The profile cache never keeps a stale copy (seed 000's stale-set race).

The forced interleaving: a reader misses the cache and reads the old row; before it can fill
the cache, a writer commits the new row and invalidates; then the reader fills. With fill leases
the late fill is refused. The naive set-after-read cache, driven through the very same steps,
keeps the stale row, which shows that the test can tell the two apart.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from warble import keys
from warble.dal.accounts import UserRepository
from warble.dal.cache import LeasedCache
from warble.domain.accounts.answers import Principal
from warble.domain.accounts.service import profile_record

pytestmark = [pytest.mark.integration, pytest.mark.redis]


class NaiveCache(LeasedCache[int]):
    """Set-after-read cache-aside with invalidation on write: the variant seed 000 warns about."""

    def get_or_load(self, subject: int, loader: Callable[[], Any]) -> Any:
        cached = self.get(subject)
        if cached is not None:
            return cached
        value = loader()
        if value is not None:
            self._redis.set(self._key(subject).value, json.dumps(value), ex=self._ttl)
        return value


def _signup(accounts, name: str = "carol") -> int:
    return accounts.signup(name, f"{name}@example.com", "password1", None, "").user["id"]


def _interleaved_read(accounts, cache: LeasedCache, user_id: int) -> dict:
    """Read through ``cache`` with a writer committing+invalidating between DB read and fill."""
    users = accounts._users
    me = Principal(user_id, 0)

    def loader() -> dict | None:
        old_row = users.get(user_id)  # the reader has fetched v1 ...
        # ... and now the writer runs to completion: commit v2, then invalidate.
        users.update_profile(user_id, {"bio": "v2"})
        cache.invalidate(user_id)
        return profile_record(old_row)

    assert me.user_id == user_id
    return cache.get_or_load(user_id, loader)


@pytest.mark.parametrize("cache_class, stays_stale", [(LeasedCache, False), (NaiveCache, True)])
def test_forced_stale_set_interleaving(accounts, redis, cache_class, stays_stale):
    # Given a user whose bio is v1 and an empty cache
    user_id = _signup(accounts)
    accounts.update_profile(Principal(user_id, 0), {"bio": "v1"})
    redis.flushdb()
    cache = cache_class(accounts._profiles._redis, ttl_seconds=3600, key=keys.profile)

    # When a read and a write interleave as in seed 000 (reader: miss, read v1; writer: write
    # v2, invalidate; reader: fill)
    returned = _interleaved_read(accounts, cache, user_id)

    # Then the reader itself returned what it read (v1), and what the cache now holds is ...
    assert returned["bio"] == "v1"
    cached = cache.get(user_id)
    if stays_stale:
        assert cached is not None and cached["bio"] == "v1"  # the naive cache kept a stale row
    else:
        assert cached is None  # the late fill was refused
        assert accounts.profile(user_id)["bio"] == "v2"  # and the next read sees v2


def test_lease_holder_fills_when_no_write_intervenes(accounts, redis):
    user_id = _signup(accounts)
    redis.flushdb()
    assert accounts.profile(user_id)["username"] == "carol"
    assert json.loads(redis.get(keys.profile(user_id).value))["username"] == "carol"
    assert redis.get(keys.profile(user_id).lease) is None


def test_readers_and_writers_hammer_one_profile(accounts, redis):
    """After the last write settles, no read is stale."""
    user_id = _signup(accounts, "dave")
    me = Principal(user_id, 0)
    stop = threading.Event()
    errors: list[BaseException] = []
    writes = 200

    def reader() -> None:
        try:
            while not stop.is_set():
                accounts.profile(user_id)
                if random.random() < 0.3:  # cache evictions make the fill path frequent
                    redis.delete(keys.profile(user_id).value)
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    readers = [threading.Thread(target=reader) for _ in range(6)]
    for thread in readers:
        thread.start()
    try:
        writer_threads = []

        def writer(offset: int) -> None:
            for i in range(offset, writes, 2):
                accounts.update_profile(me, {"bio": f"bio-{i}"})

        for offset in (0, 1):
            writer_threads.append(threading.Thread(target=writer, args=(offset,)))
            writer_threads[-1].start()
        for thread in writer_threads:
            thread.join()
        final = accounts._users.get(user_id)["bio"]
    finally:
        stop.set()
        for thread in readers:
            thread.join()
    assert not errors
    # Every read after the last write settles sees the database's value.
    for _ in range(20):
        assert accounts.profile(user_id)["bio"] == final
    cached = redis.get(keys.profile(user_id).value)
    assert cached is None or json.loads(cached)["bio"] == final


class PausingUsers(UserRepository):
    """The real repository, whose next ``get`` stops after reading until released: the window
    between a cache miss's database read and its fill, held open on purpose."""

    def __init__(self, db: Any) -> None:
        super().__init__(db)
        self.armed = False
        self.read_done = threading.Event()
        self.release = threading.Event()

    def get(self, user_id: int) -> dict[str, Any] | None:
        row = super().get(user_id)
        if self.armed:
            self.armed = False
            self.read_done.set()
            assert self.release.wait(10)
        return row


@pytest.mark.parametrize("cache_class, stays_stale", [(LeasedCache, False), (NaiveCache, True)])
def test_forced_interleaving_through_the_real_read_and_write_paths(
    accounts, redis, cache_class, stays_stale
):
    """The same interleaving, with the service's own profile read and update_profile (commit,
    then invalidate) racing in two threads."""
    from warble import services
    from warble.domain.accounts.service import AccountService

    user_id = _signup(accounts, "erin")
    live = services.accounts()
    users = PausingUsers(services.container().database)
    service = AccountService(
        users=users,
        sessions=live._sessions,
        profiles=cache_class(services.container().redis, ttl_seconds=3600, key=keys.profile),
        session_cache=live._session_cache,
        throttle=live._throttle,
        lookups=live._lookups,
        ids=services.ids(),
        policy=live._policy,
        connections=live._connections,
        failures=live._failures,
    )
    me = Principal(user_id, 0)
    service.update_profile(me, {"bio": "v1"})
    redis.flushdb()

    users.armed = True
    with ThreadPoolExecutor(1) as pool:
        reading = pool.submit(service.profile, user_id)  # miss, lease, read v1 ... paused
        assert users.read_done.wait(10)
        service.update_profile(me, {"bio": "v2"})  # the writer: commit v2, invalidate
        users.release.set()  # the reader now tries to fill v1
        assert reading.result()["bio"] == "v1"

    cached = redis.get(keys.profile(user_id).value)
    if stays_stale:
        assert cached is not None and json.loads(cached)["bio"] == "v1"
    else:
        assert cached is None or json.loads(cached)["bio"] == "v2"
        assert service.profile(user_id)["bio"] == "v2"
