"""The fields the pages' forms share: a document body, a reason, the secret and
hidden-character acknowledgements, a JSON object typed into a textarea, a moment."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django import forms

from agentdocs.core.errors import InvalidInput
from agentdocs.core.moments import FORMS, parse_moment
from agentdocs.core.numbers import MAX_VERSION
from agentdocs.core.storable import MAX_DEPTH, refuse_unstorable_text

# No recipe value is a number this long; Python's int() refuses over 4,300 digits.
MAX_INTEGER_DIGITS = 100


REASON_HELP = "Say why, in a sentence: it is shown in the history beside your change."


def normalise_newlines(text: str) -> str:
    # Browsers send textarea lines as CRLF; documents are stored with LF.
    return text.replace("\r\n", "\n").replace("\r", "\n")


class BodyField(forms.CharField):
    widget = forms.Textarea

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, strip=False, **kwargs)

    def clean(self, value: Any) -> str:
        return normalise_newlines(super().clean(value))


class ReasonField(forms.CharField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", REASON_HELP)
        super().__init__(required=False, max_length=500, **kwargs)


class _AcknowledgeField(forms.ChoiceField):
    """Offered after a check refused a save: why the text may be saved anyway.

    Not validated against its choices here: the service names a bad value."""

    reasons: list[tuple[str, str]] = []

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            required=False,
            choices=[("", "No: let me change the text"), *self.reasons],
            help_text="Save anyway, recorded in the history with your reason.",
            **kwargs,
        )

    def valid_value(self, value: Any) -> bool:
        return True


class AcknowledgeSecretField(_AcknowledgeField):
    """After the secret check refused a save."""

    reasons = [
        ("false_positive", "It is not a secret (a false positive)"),
        ("test_value", "It is a test value, not a real credential"),
    ]


class AcknowledgeHiddenField(_AcknowledgeField):
    """After a save was refused for hidden characters."""

    reasons = [("intended", "They are intended")]


class JSONObjectField(forms.CharField):
    """A JSON object typed into a textarea; parse errors name the line and column."""

    widget = forms.Textarea

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value, indent=2, ensure_ascii=False)
        return value

    def clean(self, value: Any) -> dict[str, Any]:
        text = (super().clean(value) or "").strip()
        if not text:
            return {}
        try:
            parsed = json.loads(
                text, parse_constant=_refuse_constant, parse_int=_refuse_long_integer
            )
        except json.JSONDecodeError as error:
            raise forms.ValidationError(
                f"Not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}."
            ) from None
        except RecursionError:
            raise forms.ValidationError(
                f"Nested more than {MAX_DEPTH} levels deep; no recipe is shaped like that."
            ) from None
        except ValueError as error:  # a number past any limit, NaN, Infinity
            raise forms.ValidationError(f"Not a value a recipe can hold: {error}") from None
        if not isinstance(parsed, dict):
            raise forms.ValidationError("Must be a JSON object, like {}.")
        try:
            # The API's rule: no NUL, no lone surrogate (`"\ud800"`), no deep nesting.
            refuse_unstorable_text(parsed)
        except InvalidInput as error:
            raise forms.ValidationError(error.detail) from None
        return parsed


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON can store.")


def _refuse_long_integer(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ValueError(f"a number with more than {MAX_INTEGER_DIGITS} digits.")
    return int(digits)


class MomentField(forms.CharField):
    """A `since` or `until`, read as the API reads it (`agentdocs.core.moments`)."""

    def to_python(self, value: Any) -> datetime | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return None
        moment = parse_moment(text)
        if moment is None:
            raise forms.ValidationError(f"Must be {FORMS}.", code="invalid")
        return moment


def version_field(**kwargs: object) -> forms.IntegerField:
    """A version (or record) number a page posts back: positive and within what every
    database stores, so a forged one is a form error, never a failed query."""
    return forms.IntegerField(min_value=1, max_value=MAX_VERSION, **kwargs)  # type: ignore[arg-type]
