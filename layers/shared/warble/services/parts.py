"""What a feature's builder (``warble.services.<feature>``) may use of the container: the
settings, the adapters (``stores``), the shared pieces and the other features' services. The
builders name this Protocol, never ``Container``, so the root imports its builders and none of
them imports the root back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from warble.services.stores import Clients

if TYPE_CHECKING:
    from warble.domain.accounts.ports import Profiles
    from warble.domain.accounts.service import AccountService
    from warble.domain.blocks.service import BlockService, Shields
    from warble.domain.conversations.service import ConversationService
    from warble.domain.counters.listener import CountersChanged
    from warble.domain.counters.service import CounterRules
    from warble.domain.deletion.service import AccountDeletion
    from warble.domain.discover.service import DiscoverService
    from warble.domain.graph.service import GraphService
    from warble.domain.hashtags.service import HashtagService
    from warble.domain.likes.service import LikeService
    from warble.domain.media.service import MediaService
    from warble.domain.muted_words.service import MutedWordService
    from warble.domain.notifications.service import NotificationService
    from warble.domain.push.service import Pusher
    from warble.domain.rate_limits import RateLimits
    from warble.domain.reports.service import ReportService
    from warble.domain.search.service import SearchService
    from warble.domain.shared import IdGenerator
    from warble.domain.suspensions.service import SuspensionService
    from warble.domain.timelines.service import TimelineService
    from warble.domain.tweets.service import TweetService
    from warble.services.stores import Stores


class Parts(Clients, Protocol):
    """The container as its builders see it (``warble.services.Container`` is one): the shared
    clients (``Clients``), the adapters, the shared pieces and every feature's service."""

    @property
    def stores(self) -> Stores: ...
    @property
    def ids(self) -> IdGenerator: ...
    @property
    def profiles(self) -> Profiles: ...
    @property
    def admin_usernames(self) -> frozenset[str]: ...
    @property
    def rate_limits(self) -> RateLimits: ...
    @property
    def pusher(self) -> Pusher: ...
    @property
    def accounts(self) -> AccountService: ...
    @property
    def deletion(self) -> AccountDeletion: ...
    @property
    def graph(self) -> GraphService: ...
    @property
    def shields(self) -> Shields: ...
    @property
    def blocks(self) -> BlockService: ...
    @property
    def muted_words(self) -> MutedWordService: ...
    @property
    def reports(self) -> ReportService: ...
    @property
    def suspensions(self) -> SuspensionService: ...
    @property
    def tweets(self) -> TweetService: ...
    @property
    def media(self) -> MediaService: ...
    @property
    def likes(self) -> LikeService: ...
    @property
    def timelines(self) -> TimelineService: ...
    @property
    def conversations(self) -> ConversationService: ...
    @property
    def discover(self) -> DiscoverService: ...
    @property
    def hashtags(self) -> HashtagService: ...
    @property
    def search(self) -> SearchService: ...
    @property
    def notifications(self) -> NotificationService: ...
    @property
    def counter_rules(self) -> CounterRules: ...
    @property
    def counters_changed(self) -> CountersChanged: ...
