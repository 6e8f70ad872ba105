"""WebSocket connect tickets' rules (docs/accounts.md "Connect tickets"): what a ticket looks
like, what it stands for, and that it opens at most one connection within its time, on the
unit tier's World (the production builder on an in-memory store)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from warble import clock, security
from warble.domain.accounts.answers import Principal
from warble.domain.accounts.ports import TicketClaim
from warble.errors import Unauthorized

from tests.unit.fakes import World

pytestmark = pytest.mark.unit

ALICE = Principal(user_id=42, session_id=7001)
TOKEN = security.new_token(ALICE.user_id)


def test_a_ticket_is_256_url_safe_random_bits_naming_its_user(world: World):
    # when the session asks for two tickets
    first = world.tickets.issue(ALICE, TOKEN)
    second = world.tickets.issue(ALICE, TOKEN)
    # then each is wst_<user>_<43 URL-safe characters> (256 bits), and they differ
    for issued in (first, second):
        assert re.fullmatch(r"wst_42_[A-Za-z0-9_-]{43}", issued.ticket)
        assert security.ticket_user(issued.ticket) == 42
    assert first.ticket != second.ticket
    # and no token is a ticket, nor a ticket a token
    assert security.ticket_user(TOKEN) is None
    assert not security.looks_like_token(first.ticket)


def test_a_ticket_expires_30_seconds_after_its_issue_and_only_its_hash_is_stored(world: World):
    before = clock.epoch_ms()
    issued = world.tickets.issue(ALICE, TOKEN)
    after = clock.epoch_ms()
    expires = datetime.strptime(issued.expires_at, "%Y-%m-%dT%H:%M:%S.%f%z").astimezone(UTC)
    assert before + 30_000 <= expires.timestamp() * 1000 <= after + 30_000
    assert world.socket_tickets.ttls == [30_000]
    ((user, stored_as),) = world.socket_tickets.claims
    assert (user, stored_as) == (42, security.token_hash(issued.ticket))
    assert issued.ticket not in repr(world.socket_tickets.claims)


def test_a_ticket_stands_for_the_session_that_asked_for_it(world: World):
    issued = world.tickets.issue(ALICE, TOKEN)
    claim = world.tickets.redeem(issued.ticket)
    assert (claim.user_id, claim.session_id) == (42, 7001)
    # the token's hash: what the connection's frames are checked by, as a token's would be
    assert claim.token_hash == security.token_hash(TOKEN)
    assert claim.names_user is True


def test_a_session_of_an_old_form_token_gets_a_ticket_too(world: World):
    legacy = "wbl_" + "a" * 43
    claim = world.tickets.redeem(world.tickets.issue(ALICE, legacy).ticket)
    assert (claim.user_id, claim.token_hash, claim.names_user) == (
        42,
        security.token_hash(legacy),
        False,
    )


def test_a_ticket_opens_one_connect_only(world: World):
    issued = world.tickets.issue(ALICE, TOKEN)
    world.tickets.redeem(issued.ticket)
    with pytest.raises(Unauthorized):
        world.tickets.redeem(issued.ticket)


@pytest.mark.parametrize(
    "forged",
    [
        "",
        "nope",
        TOKEN,  # a session token is no ticket
        "wst_42_" + "A" * 43,  # well formed, never issued
        "wst_0_" + "A" * 43,
        "wst_42_" + "A" * 42,
    ],
    # ids of their own: the token is random, and xdist's workers must collect the same names
    ids=["empty", "nonsense", "session-token", "never-issued", "user-0", "short"],
)
def test_a_forged_ticket_is_refused(world: World, forged: str):
    world.tickets.issue(ALICE, TOKEN)
    with pytest.raises(Unauthorized):
        world.tickets.redeem(forged)
    assert len(world.socket_tickets.claims) == 1  # the real one still stands


def test_a_ticket_renamed_to_another_user_is_refused(world: World):
    issued = world.tickets.issue(ALICE, TOKEN)
    secret = issued.ticket.rsplit("_", 1)[1]
    with pytest.raises(Unauthorized):
        world.tickets.redeem(f"wst_43_{secret}")


def test_an_expired_ticket_is_refused_whether_or_not_the_store_still_holds_it(world: World):
    # the store's expiry dropped it
    dropped = world.tickets.issue(ALICE, TOKEN)
    world.socket_tickets.drop()
    with pytest.raises(Unauthorized):
        world.tickets.redeem(dropped.ticket)
    # a store lagging behind its expiry still gives the claim: its own time has passed
    lapsed = world.tickets.issue(ALICE, TOKEN)
    world.socket_tickets.lapse()
    with pytest.raises(Unauthorized):
        world.tickets.redeem(lapsed.ticket)
    assert world.socket_tickets.claims == {}  # used up all the same


def test_the_claim_names_no_secret():
    """What the store keeps: the session's id and its token's hash, never a ticket or token."""
    claim = TicketClaim(42, 7001, security.token_hash(TOKEN), True, 1)
    assert TOKEN not in repr(claim)
