"""Muted words' rules (API.md "Reports and moderation"): the list's validation, the matching
rule (NFKC, case-folded whole words, phrases, ``#tag``) and the home timeline that filters by it,
on the unit tier's World (the production builders on in-memory stores)."""

from __future__ import annotations

import pytest
from warble.domain.muted_words.matcher import compile_words
from warble.errors import ValidationFailed

from tests.unit.fakes import World

pytestmark = pytest.mark.unit


# ---- matching --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("muted", "text", "hidden"),
    [
        (["spoiler"], "Big SPOILER!", True),
        (["spoiler"], "no spoilers here", False),
        (["spoiler"], "a spoiler-free zone", True),  # a hyphen ends a word
        (["Straße"], "STRASSE ahead", True),  # case-folded: ß folds to ss
        (["ﬁnal"], "the FINAL cut", True),  # NFKC: the ligature is "fi"
        (["café"], "Cafe\u0301 au lait", True),  # NFKC: composed and decomposed are one
        (["game of thrones"], "I love Game of  Thrones.", True),
        (["game of thrones"], "a game of chess and thrones", False),
        (["#rust"], "learning #Rust today", True),
        (["#rust"], "rust never sleeps", False),  # a #tag hides the hashtag only
        (["rust"], "learning #rust today", True),  # a word also matches a hashtag's word
        (["!!!"], "wow!!!", False),  # no word in it: matches nothing
    ],
)
def test_the_matching_rule(muted: list[str], text: str, hidden: bool):
    from warble.domain.text import hashtags

    assert compile_words(muted).hides(text, hashtags(text)) is hidden


def test_an_empty_list_compiles_to_a_matcher_that_hides_nothing():
    matcher = compile_words([])
    assert not matcher
    assert matcher.hides("anything at all") is False


# ---- the list ---------------------------------------------------------------------------------
def test_a_list_is_stored_trimmed_without_repeats_and_read_back(world: World):
    me = world.user()
    stored = world.muted_words.replace(me, ["  spoiler ", "SPOILER", "#Rust", "game of thrones"])
    assert stored.words == ["spoiler", "#Rust", "game of thrones"]
    assert world.muted_words.words(me).words == stored.words


@pytest.mark.parametrize(
    "words",
    [[f"w{i}" for i in range(101)], ["ok", "   "], ["a" * 51]],
    ids=["101 words", "blank after trimming", "51 characters"],
)
def test_a_list_out_of_bounds_is_a_validation_error_and_writes_nothing(
    world: World, words: list[str]
):
    me = world.user()
    world.muted_words.replace(me, ["kept"])
    with pytest.raises(ValidationFailed):
        world.muted_words.replace(me, words)
    assert world.muted_words.words(me).words == ["kept"]


def test_the_bounds_themselves_are_accepted(world: World):
    me = world.user()
    words = [f"{i:02d}" + "a" * 48 for i in range(100)]
    assert world.muted_words.replace(me, words).words == words


# ---- the home timeline ------------------------------------------------------------------------
def follow(world: World, follower: int, followee: int) -> None:
    world.follow(follower, followee)
    world.timelines.followed(follower, followee)


def tweet(world: World, author: int, text: str) -> int:
    tweet_id = int(world.tweets.post(author, text, None, []).id)
    world.timelines.tweet_created(author, tweet_id)
    return tweet_id


def home_ids(world: World, viewer: int) -> list[int]:
    return [int(t.id) for t in world.timelines.home(viewer, 50, None).items]


def test_a_muted_word_leaves_the_home_timeline_on_the_next_read(world: World):
    # given: bob reads alice's two tweets
    alice, bob = world.user(), world.user()
    follow(world, bob, alice)
    plain = tweet(world, alice, "hello there")
    spoiler = tweet(world, alice, "Big SPOILER!")
    assert home_ids(world, bob) == [spoiler, plain]
    # when: bob mutes the word
    world.muted_words.replace(bob, ["spoiler"])
    # then: his next read leaves it out; unmuting brings it back
    assert home_ids(world, bob) == [plain]
    world.muted_words.replace(bob, [])
    assert home_ids(world, bob) == [spoiler, plain]


def test_a_retweet_of_a_muted_tweet_leaves_too(world: World):
    alice, carol, bob = world.user(), world.user(), world.user()
    follow(world, bob, carol)
    original = int(world.tweets.post(alice, "the #finale was wild", None, []).id)
    retweet = int(world.tweets.retweet(carol, original)[0].id)
    world.timelines.tweet_created(carol, retweet)
    assert home_ids(world, bob) == [retweet]
    world.muted_words.replace(bob, ["#finale"])
    assert home_ids(world, bob) == []


def test_the_viewers_own_tweets_are_never_hidden(world: World):
    bob = world.user()
    mine = tweet(world, bob, "my own spoiler")
    world.muted_words.replace(bob, ["spoiler"])
    assert home_ids(world, bob) == [mine]


def test_a_warm_home_read_does_not_read_the_table(world: World):
    alice, bob = world.user(), world.user()
    follow(world, bob, alice)
    tweet(world, alice, "hello")
    home_ids(world, bob)  # fills the cache (an empty list is cached too)
    reads = world.muted_word_store.reads
    home_ids(world, bob)
    assert world.muted_word_store.reads == reads
