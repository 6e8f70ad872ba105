"""WebSocket connect tickets: what a client puts in the socket's URL instead of its session
token (issue 47 item 15), since a URL is what a browser's console, a proxy and API Gateway's
access logs keep.

A ticket is asked for over HTTP with the session's token, stands for that session, and opens
one connection within ``ttl`` of its issue: the socket's authorizer takes it (once: a second
connect with it, racing or later, finds nothing) and then checks the session as it checks a
token's, so a ticket outliving its session opens nothing.
"""

from __future__ import annotations

from datetime import timedelta

from warble import clock, security
from warble.domain.accounts.answers import Principal, SocketTicket
from warble.domain.accounts.ports import SocketTickets, TicketClaim
from warble.errors import Unauthorized

# Long enough for a slow network between the ticket's answer and the socket's handshake; short
# enough that one read from a log is of no use.
TICKET_TTL = timedelta(seconds=30)


class ConnectTickets:
    def __init__(self, store: SocketTickets, ttl: timedelta = TICKET_TTL) -> None:
        self._store = store
        self._ttl_ms = int(ttl.total_seconds() * 1000)

    def issue(self, principal: Principal, token: str) -> SocketTicket:
        """A ticket for the caller's session; ``token`` is the bearer token the gate admitted
        as ``principal`` (its hash is what the socket's later frames are checked by)."""
        ticket = security.new_ticket(principal.user_id)
        expires_at_ms = clock.epoch_ms() + self._ttl_ms
        claim = TicketClaim(
            user_id=principal.user_id,
            session_id=principal.session_id,
            token_hash=security.token_hash(token),
            names_user=security.token_user(token) is not None,
            expires_at_ms=expires_at_ms,
        )
        self._store.put(security.token_hash(ticket), claim, self._ttl_ms)
        return SocketTicket(ticket=ticket, expires_at=clock.rfc3339_ms(expires_at_ms))

    def redeem(self, ticket: str) -> TicketClaim:
        """The session a ticket stands for, the ticket used up; 401 (Unauthorized) for a ticket
        that is malformed, unknown, used or expired, as for a bad token. The session itself is
        the caller's to check (it may have ended since)."""
        user_id = security.ticket_user(ticket)
        if user_id is None:
            raise Unauthorized()
        claim = self._store.take(security.token_hash(ticket), user_id)
        # The store's expiry is the rule; the claim's own is checked too, so a store that keeps
        # a key past its time (a lagging expiry) does not stretch the ticket's life.
        if claim is None or claim.user_id != user_id or claim.expires_at_ms <= clock.epoch_ms():
            raise Unauthorized()
        return claim
