"""The API's JSON renderer writes what DRF's does, only faster."""

from __future__ import annotations

import datetime
import decimal
import uuid

import pytest
from django.utils.translation import gettext_lazy
from rest_framework import renderers

from agentdocs.api.renderers import JSONRenderer

VALUES = [
    {"text": "Grüße, 日本語 and an emoji 🙂", "n": 3, "f": 1.5, "none": None, "ok": True},
    {"line separators": "a\u2028b\u2029c", "quote": 'say "hi"\n\ttab'},
    {"near separators": "an ellipsis… and a dash — but no separator"},
    {"when": datetime.datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=datetime.UTC)},
    {
        "when": datetime.datetime(2026, 11, 30, 12, 0, tzinfo=datetime.UTC),
        "day": datetime.date(2026, 1, 2),
    },
    {"at": datetime.time(8, 30), "span": datetime.timedelta(seconds=90)},
    {"price": decimal.Decimal("1.10"), "id": uuid.UUID(int=7), "lazy": gettext_lazy("Hello")},
    {1: "a non-string key", "nested": [{"x": [1, 2, {"y": ()}]}]},
    {"wide": 2**70},
    [],
    "plain",
]


@pytest.mark.parametrize("value", VALUES)
def test_it_writes_the_bytes_drf_writes(value):
    expected = renderers.JSONRenderer().render(value, "application/json")
    assert JSONRenderer().render(value, "application/json") == expected


def test_an_indent_asked_for_is_honoured():
    value = {"a": [1, 2]}
    pretty = JSONRenderer().render(value, "application/json; indent=2")
    assert pretty == renderers.JSONRenderer().render(value, "application/json; indent=2")
    assert b"\n  " in pretty


def test_nothing_renders_as_nothing():
    assert JSONRenderer().render(None) == b""


def test_an_encoded_part_is_written_as_it_is():
    from agentdocs.api.renderers import Encoded

    part = {"dropped": [{"path": ".AGENTS/a.md", "bytes": 3}], "note": "ü\u2028"}
    import orjson

    with_part = {"text": "x", "context": Encoded(orjson.dumps(part))}
    plain = {"text": "x", "context": part}
    assert JSONRenderer().render(with_part) == JSONRenderer().render(plain)
    indented = "application/json; indent=2"
    assert JSONRenderer().render(with_part, indented) == JSONRenderer().render(plain, indented)
