"""The checks a document's body passes before it is stored: UTF-8 text without NUL,
at most 256 KiB, no secret-like value and no character a reader cannot see (each
refusal naming the field and the line), and the acknowledgements that override the
secret and hidden-character checks (with a reason, where the tenant allows it).

The write path (`services.documents`), change requests (`services.changes`) and
imports run their bodies through these, as do the faces that take a body before they
call them; they write nothing. The reason every write of a document or a skill takes
is checked here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NamedTuple

from agentdocs.core import policy as policy_rules
from agentdocs.core.errors import HiddenCharacters, InvalidInput, SecretDetected
from agentdocs.core.hidden_characters import refuse_hidden
from agentdocs.core.secret_scan import find_secret
from agentdocs.models.documents import HiddenAcknowledgement, SecretAcknowledgement

MAX_BODY_BYTES = 256 * 1024


def validate_body(body: object, *, field: str = "body") -> str:
    """Return ``body`` if it may be stored, else raise with the field and line."""
    text = _validate_text(body, field=field)
    refuse_hidden(text, field=field)
    _refuse_secret(text, field=field)
    return text


def validate_proposed_body(
    body: object, *, acknowledge_hidden: object, reason: str, overridable: Overridable
) -> CheckedBody:
    """A change request's body, checked as a write's; its hidden characters may be
    acknowledged as for a write (the merge's write records it), a secret may not."""
    return checked_body(
        body,
        acknowledge_secret="",
        acknowledge_hidden=acknowledge_hidden,
        reason=reason,
        overridable=overridable,
    )


def _validate_text(body: object, *, field: str) -> str:
    if not isinstance(body, str):
        raise InvalidInput("The body must be a string of UTF-8 text.", field=field)
    if "\x00" in body:
        raise InvalidInput("The body contains a NUL character; documents are text.", field=field)
    try:
        size = len(body.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput("The body is not valid UTF-8 text.", field=field) from None
    if size > MAX_BODY_BYTES:
        raise InvalidInput(
            f"The body is {size} bytes; at most {MAX_BODY_BYTES} bytes (256 KiB) are allowed.",
            field=field,
        )
    return body


def _refuse_secret(body: str, *, field: str) -> None:
    finding = find_secret(body)
    if finding is not None:
        hidden = " once its invisible characters are removed" if finding.hidden else ""
        raise SecretDetected(
            f"Line {finding.line} looks like {finding.kind}{hidden}. Documents go into prompts "
            "verbatim: reference the secret (for example its vault path) instead of its value.",
            field=field,
            line=finding.line,
        )


def validate_secret_acknowledgement(acknowledge_secret: object) -> str:
    if acknowledge_secret is None or acknowledge_secret == "":
        return ""
    if acknowledge_secret not in SecretAcknowledgement.values:
        raise InvalidInput(
            "`acknowledge_secret` is `false_positive` or `test_value` (or left out).",
            field="acknowledge_secret",
        )
    return str(acknowledge_secret)


def validate_hidden_acknowledgement(acknowledge_hidden: object) -> str:
    if acknowledge_hidden is None or acknowledge_hidden == "":
        return ""
    if acknowledge_hidden not in HiddenAcknowledgement.values:
        raise InvalidInput(
            "`acknowledge_hidden` is `intended` (or left out).", field="acknowledge_hidden"
        )
    return str(acknowledge_hidden)


# What becomes of an acknowledgement the text does not need (see `checked_body`).
Unneeded = Literal["refuse", "keep", "drop"]
# Whether the tenant allows overriding the check a `security.*Override` setting names.
Overridable = Callable[[str], bool]


class CheckedBody(NamedTuple):
    """A body that may be stored, and the acknowledgements to record with it ("" for
    each check the text passed on its own)."""

    text: str
    secret_acknowledgement: str
    hidden_acknowledgement: str


def checked_body(
    body: object,
    *,
    acknowledge_secret: object,
    acknowledge_hidden: object = "",
    reason: str,
    overridable: Overridable,
    unneeded: Unneeded = "refuse",
) -> CheckedBody:
    """``validate_body``, where an acknowledgement may override the secret check and
    another the hidden-character check.

    An acknowledgement needs a reason and a tenant that allows overrides; one sent
    for a text the check passes is refused, so nobody marks ordinary writes.
    ``overridable(key)`` says whether the tenant allows overriding the check its
    setting ``key`` names (`agentdocs.selectors.policy.overrides`); it is called only
    when an acknowledgement meets a refusal: ordinary writes read no setting.
    ``unneeded`` says what becomes of an acknowledgement the text does not need:
    refused; kept, for a text that may yet be merged with another (the merged text is
    checked again); or dropped, for that merged text."""
    text = _validate_text(body, field="body")
    acknowledgement = validate_secret_acknowledgement(acknowledge_secret)
    hidden = validate_hidden_acknowledgement(acknowledge_hidden)
    # The secret check first: a key split by a hidden character is named as the
    # secret it is, and acknowledging the hidden character never lets it through.
    acknowledgement = _overridable(
        lambda: _refuse_secret(text, field="body"),
        acknowledgement=acknowledgement,
        field="acknowledge_secret",
        overridable=overridable,
        key=policy_rules.SECRET_OVERRIDE_KEY,
        what="secret check",
        reason=reason,
        needs_reason="Saving a text the secret check refused needs a reason: say why "
        "the value is not a real secret.",
        nothing="Nothing to acknowledge: the secret check finds no secret in this text.",
        unneeded=unneeded,
    )
    hidden = _overridable(
        lambda: refuse_hidden(text, field="body"),
        acknowledgement=hidden,
        field="acknowledge_hidden",
        overridable=overridable,
        key=policy_rules.HIDDEN_OVERRIDE_KEY,
        what="hidden-character check",
        reason=reason,
        needs_reason="Saving a text holding hidden characters needs a reason: say why "
        "they are intended.",
        nothing="Nothing to acknowledge: the text holds no hidden characters.",
        unneeded=unneeded,
    )
    return CheckedBody(text, acknowledgement, hidden)


def _overridable(
    check: Callable[[], None],
    *,
    acknowledgement: str,
    field: str,
    overridable: Overridable,
    key: str,
    what: str,
    reason: str,
    needs_reason: str,
    nothing: str,
    unneeded: Unneeded,
) -> str:
    """Run ``check``; an ``acknowledgement`` (with a reason, where the tenant allows it
    by ``key``: ``overridable(key)``) overrides its refusal. Returns the acknowledgement
    to record."""
    try:
        check()
    except (SecretDetected, HiddenCharacters) as refusal:
        if not acknowledgement:
            raise
        if not overridable(key):
            raise type(refusal)(
                f"{refusal.detail} The tenant forbids overriding the {what} (`{key}: off`).",
                field=refusal.field,
                **refusal.extra,
            ) from None
        if not reason:
            raise InvalidInput(needs_reason, field="reason") from None
        return acknowledgement
    if acknowledgement and unneeded == "refuse":
        raise InvalidInput(nothing, field=field)
    return acknowledgement if unneeded == "keep" else ""


def validate_reason(reason: object) -> str:
    if reason is None:
        return ""
    if not isinstance(reason, str):
        raise InvalidInput("The reason must be a string.", field="reason")
    if len(reason) > 500:
        raise InvalidInput("The reason is longer than 500 characters.", field="reason")
    return reason.strip()
