"""Settings from the environment as pydantic-settings read them: any case, ``env`` names,
text converted as pydantic converts it, bounds checked, overrides on top."""

from __future__ import annotations

import pytest
from warble.settings import Settings, SettingsError


def test_the_environment_gives_typed_values_in_any_case(monkeypatch):
    monkeypatch.setenv("redis_cluster", "TRUE")
    monkeypatch.setenv("TIMELINE_CAP", " 900 ")
    monkeypatch.setenv("Seen_Filter_Error", "0.05")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("DB_NAME", "warble_x")
    settings = Settings.from_environment(follow_limit=7)
    assert settings.redis_cluster is True
    assert settings.timeline_cap == 900
    assert settings.seen_filter_error == 0.05
    assert settings.aws_region == "eu-west-1"
    assert settings.db_name == "warble_x"
    assert settings.follow_limit == 7
    assert settings.celebrity_followers == 10_000  # the default


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("REDIS_CLUSTER", "maybe"),
        ("TIMELINE_CAP", "a lot"),
        ("TIMELINE_CAP", "1.5"),
        ("PASSWORD_HASH_ROUNDS", "3"),
        ("PASSWORD_HASH_ROUNDS", "32"),
        ("RATE_LIMIT_USER_REQUESTS", "0"),
    ],
)
def test_a_value_its_field_cannot_take_is_refused(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError):
        Settings.from_environment()


def test_an_unknown_override_is_refused():
    with pytest.raises(SettingsError):
        Settings.from_environment(no_such_setting=1)
