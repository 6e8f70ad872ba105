"""The population generator's plan (infra/local/seed.py): its shape, with no store at all."""

from __future__ import annotations

from collections import Counter

from infra.local.seed import Sizes, Written, manifest, plan_population


def test_the_plan_is_a_function_of_sizes_and_seed() -> None:
    sizes = Sizes.small()
    first, again, other = (plan_population(sizes, 1000, s) for s in (3, 3, 4))
    assert (first.follows, first.tweets, first.likes) == (again.follows, again.tweets, again.likes)
    assert first.follows != other.follows


def test_follows_are_power_law_capped_and_distinct() -> None:
    # given 3,000 users who follow 60,000 times, at most 200 each
    plan = plan_population(Sizes(users=3000, follows=60_000, tweets=10, likes=10), 200, 1)

    following = Counter(a for a, _ in plan.follows)
    followers = Counter(b for _, b in plan.follows)
    assert len(set(plan.follows)) == len(plan.follows)
    assert all(a != b for a, b in plan.follows)
    assert max(following.values()) == 200  # the follow limit caps the heaviest followers
    assert abs(len(plan.follows) - 60_000) < 60_000 * 0.05
    # most follow a few tens; a few accounts are followed by a large share of everyone
    assert sorted(following.values())[len(following) // 2] < 20
    top = [count for _, count in followers.most_common(3)]
    assert top[0] > 1500 and sorted(followers.values())[len(followers) // 2] < 10


def test_replies_and_retweets_follow_their_targets_and_retweets_are_unique() -> None:
    plan = plan_population(Sizes(users=200, follows=2000, tweets=3000, likes=3000), 1000, 2)

    retweets = [(t.author, t.retweet_of) for t in plan.tweets if t.retweet_of is not None]
    assert len(set(retweets)) == len(retweets) > 0
    for index, tweet in enumerate(plan.tweets):
        target = tweet.reply_to if tweet.reply_to is not None else tweet.retweet_of
        if target is not None:
            assert target < index and plan.tweets[target].retweet_of is None
    assert len(set(plan.likes)) == len(plan.likes) == 3000
    assert all(plan.tweets[t].retweet_of is None for _, t in plan.likes)
    follows = set(plan.follows)
    assert all((a, b) in follows and (b, a) in follows for a, b, _ in plan.conversations)


def test_the_manifest_ranks_everyone_by_followers_for_the_load_test() -> None:
    # given a plan written with ids
    plan = plan_population(Sizes(users=300, follows=3000, tweets=10, likes=10), 200, 5)
    ids = list(range(1000, 1300))
    written = Written("1", ids, [f"u{i}" for i in ids],
                      conversation_ids=list(range(len(plan.conversations))))  # fmt: skip

    # when its manifest is made
    ranked = manifest(written, plan, full=False)["by_followers"]

    # then it names everyone once, most followed first
    followers = Counter(ids[b] for _, b in plan.follows)
    assert sorted(ranked) == sorted(str(i) for i in ids)
    counts = [followers[int(uid)] for uid in ranked]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
