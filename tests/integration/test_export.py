"""The export against real PostgreSQL, Redis and moto (API.md "Accounts", Export): every list
complete past a page, each item in its route's shape, and nothing secret in it."""

from __future__ import annotations

import json

import pytest
from warble import services
from warble.http.render import render

pytestmark = [pytest.mark.integration, pytest.mark.redis]

TWEETS = 130  # three reads of 50 (the test's page): the export reads on to the end


@pytest.fixture
def people(accounts):
    def make(name: str):
        return accounts.signup(name, f"{name}@example.com", "password1", None, "phone")

    return make


def test_the_export_holds_everything_complete_and_nothing_secret(people, accounts, monkeypatch):
    # its reads are PAGE items each (5,000): here 50, so every list is read past its first read
    from warble.domain.export import service as export_service

    monkeypatch.setattr(export_service, "PAGE", 50)
    me, friend, fan, pest, bore = (people(n) for n in ("ivy", "jon", "kim", "lou", "max"))
    named = {"me": me, "friend": friend, "fan": fan, "pest": pest, "bore": bore}
    ids = {name: int(issued.user["id"]) for name, issued in named.items()}
    laptop = accounts.login("ivy", "password1", "laptop")
    tweets, likes, graph = services.tweets(), services.likes(), services.graph()
    posted = [tweets.post(ids["me"], f"tweet {i} #export", None, []) for i in range(TWEETS)]
    theirs = tweets.post(ids["friend"], "a friend's tweet", None, [])
    likes.like(ids["me"], int(theirs.id))
    likes.like(ids["me"], int(posted[0].id))
    graph.follow(ids["me"], ids["friend"])
    graph.follow(ids["friend"], ids["me"])
    graph.follow(ids["fan"], ids["me"])
    services.blocks().block(ids["me"], ids["pest"])
    services.blocks().mute(ids["me"], ids["bore"])
    services.muted_words().replace(ids["me"], ["spoiler", "#finale"])
    mine, _ = services.reports().report(ids["me"], "user", ids["pest"], "spam", "loud")
    services.reports().report(ids["friend"], "user", ids["me"], "abuse", "about me")
    dms = services.conversations()
    conversation, _ = dms.open(ids["me"], ids["friend"])
    for i in range(3):
        dms.send(ids["me"] if i % 2 == 0 else ids["friend"], int(conversation.id), f"dm {i}")
    upload = services.media().create(ids["me"], "image/png", 1000, "a picture")
    services.discover().set_location(ids["me"], 48.8566, 2.3522)

    export = services.export().export(ids["me"], laptop.session.id)
    document = json.loads(render(export))

    assert set(document) == {
        "user", "sessions", "tweets", "likes", "following", "followers", "blocks", "mutes",
        "muted_words", "reports", "conversations", "notifications", "media", "location",
    }  # fmt: skip
    assert document["user"]["email"] == "ivy@example.com"
    assert document["user"]["tweet_count"] >= 0 and "password_hash" not in document["user"]
    assert [s["current"] for s in document["sessions"]].count(True) == 1
    assert {s["device"] for s in document["sessions"]} == {"phone", "laptop"}
    assert [t["id"] for t in document["tweets"]] == [t.id for t in reversed(posted)]
    assert {t["id"] for t in document["likes"]} == {theirs.id, posted[0].id}
    assert [u["id"] for u in document["following"]] == [str(ids["friend"])]
    assert {u["id"] for u in document["followers"]} == {str(ids["friend"]), str(ids["fan"])}
    assert [u["id"] for u in document["blocks"]] == [str(ids["pest"])]
    assert [u["id"] for u in document["mutes"]] == [str(ids["bore"])]
    assert document["muted_words"] == ["spoiler", "#finale"]
    # the reports ivy made, never those about her
    assert [(r["id"], r["comment"]) for r in document["reports"]] == [(mine.id, "loud")]
    [exported] = document["conversations"]
    assert exported["id"] == conversation.id
    assert [m["text"] for m in exported["messages"]] == ["dm 2", "dm 1", "dm 0"]
    assert [m["id"] for m in document["media"]] == [upload.media.id]
    assert document["location"] == {"lat": 48.8566, "lon": 2.3522}

    # nothing secret: no hash, no token, no other person's email
    text = json.dumps(document)
    for secret in (me.token, laptop.token, "$2b$", "jon@example.com", "kim@example.com",
                   "about me"):  # fmt: skip
        assert secret not in text


def test_a_new_account_exports_empty_lists(people, accounts):
    issued = people("nia")
    user_id = int(issued.user["id"])
    document = json.loads(render(services.export().export(user_id, issued.session.id)))
    assert document["user"]["username"] == "nia" and document["location"] is None
    for key in ("tweets", "likes", "following", "followers", "blocks", "mutes", "muted_words",
                "reports", "conversations", "notifications", "media"):  # fmt: skip
        assert document[key] == [], key
