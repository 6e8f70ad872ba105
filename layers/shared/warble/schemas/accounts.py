"""Accounts and sessions (API.md "Accounts"): signup, login, profiles, sessions."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    field_validator,
)

from warble.schemas.base import USERNAME_PATTERN, _Model, _password, _Request


def _email(value: str) -> str:
    """An address in the form ``format: email`` says (signup and a password reset alike), in
    its normal form; else the field's 400."""
    # Imported here: every HTTP function loads these models, only these two check an email.
    from email_validator import EmailNotValidError, validate_email

    try:
        return validate_email(value, check_deliverability=False).normalized
    except EmailNotValidError as exc:
        raise ValueError("is not a valid email address") from exc


class SignupRequest(_Request):
    username: str = Field(pattern=USERNAME_PATTERN, description="1-15 of A-Z a-z 0-9 _")
    email: str = Field(
        min_length=3,
        max_length=254,
        json_schema_extra={"format": "email"},
        description="a deliverable-looking address; compared without case",
    )
    password: str = Field(
        min_length=8, max_length=72, description="8 to 72 bytes of UTF-8 (bcrypt's limit)"
    )
    display_name: str | None = Field(default=None, max_length=50)
    device: str = Field(default="", max_length=100)

    _check_email = field_validator("email")(_email)
    _check_password = field_validator("password")(_password)


class LoginRequest(_Request):
    login: str = Field(min_length=1, max_length=254, description="username or email")
    password: str = Field(min_length=1, max_length=1024)
    device: str = Field(default="", max_length=100)


class DeleteAccountRequest(_Request):
    """The account's password, asked again: deleting an account is final."""

    password: str = Field(min_length=1, max_length=1024)


class ProfilePatch(_Request):
    """The fields to change; an absent one stays, and neither may be null."""

    display_name: str = Field(default="", max_length=50)
    bio: str = Field(default="", max_length=160)


class HealthOut(_Model):
    status: Literal["ok"]


class PasswordChange(_Request):
    current_password: str = Field(min_length=1, max_length=1024)
    password: str = Field(
        min_length=8, max_length=72, description="8 to 72 bytes of UTF-8 (bcrypt's limit)"
    )

    _check_password = field_validator("password")(_password)


class PasswordResetRequest(_Request):
    email: str = Field(
        min_length=3,
        max_length=254,
        json_schema_extra={"format": "email"},
        description="a malformed address is a 400; a well-formed one a 202, known or not",
    )

    _check_email = field_validator("email")(_email)


class PasswordResetConfirm(_Request):
    token: str = Field(min_length=1, max_length=1024, description="the token of the email's link")
    password: str = Field(
        min_length=8, max_length=72, description="8 to 72 bytes of UTF-8 (bcrypt's limit)"
    )

    _check_password = field_validator("password")(_password)
