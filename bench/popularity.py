"""The celebrities' popularity, as a law (bench/celebrities.py's graph, which the capacity model
reads too): a Zipf law of the accounts' follower shares over 1M users standing for 100M, and each
user's activity (lognormal, mean 1; 10% follow no celebrity)."""

from __future__ import annotations

from typing import Any

USERS = 1_000_000
STANDS_FOR = 100_000_000
TOP_FOLLOWED = 0.30  # the top account's followers, as a share of the users
ZIPF = 0.7  # the celebrities' follower shares fall as rank^-ZIPF
NO_CELEBRITIES = 0.10  # users who follow no celebrity
ACTIVITY_SIGMA = 1.0  # lognormal spread of how many celebrities a user follows


# ---- the law -------------------------------------------------------------------------------
def draw_activity(users: int, seed: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(seed)
    activity = rng.lognormal(-(ACTIVITY_SIGMA**2) / 2, ACTIVITY_SIGMA, users)
    activity[rng.random(users) < NO_CELEBRITIES] = 0.0
    return activity


def top_share() -> float:
    """The Zipf law's share at rank 1 that has TOP_FOLLOWED of the users follow the top account
    (a user follows it with min(1, activity x share)): bisected on 100,000 users."""
    import numpy as np

    activity = draw_activity(100_000, 3)
    low, high = TOP_FOLLOWED, 1.0 / max(float(np.percentile(activity, 50)), 1e-3)
    for _ in range(40):
        mid = (low + high) / 2
        if float(np.minimum(1.0, activity * mid).mean()) < TOP_FOLLOWED:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def celebrity_shares(threshold: int) -> list[float]:
    """The Zipf law's share of each celebrity, by rank, down to the threshold."""
    top = top_share()
    shares = []
    rank = 1
    while True:
        share = top * rank**-ZIPF
        if share * STANDS_FOR <= threshold:
            return shares
        shares.append(share)
        rank += 1
