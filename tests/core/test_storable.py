"""`strict_json_storable`: when a strict JSON body need not be walked for unstorable text."""

from __future__ import annotations

import json

import orjson
import pytest

from agentdocs.core.errors import InvalidInput
from agentdocs.core.storable import MAX_DEPTH, refuse_unstorable_text, strict_json_storable

BODIES = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_memory_block",'
    b'"arguments":{"process":"p","recipe":"coder"}}}',
    '{"a": "ü — 日本"}'.encode(),
    b'{"a": "\\u0000"}',
    b'{"a\\u0000": 1}',
    b'{"a": "\\ud83d\\ude00"}',  # an escaped pair: storable, but walked
    b'["\\\\u0000"]',  # an escaped backslash: no NUL, but walked all the same
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)).encode(),
    ("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)).encode(),
    json.dumps({"k": [{"x": [1, 2, {"y": "z"}]}] * 20}).encode(),
]


@pytest.mark.parametrize("body", BODIES)
def test_a_body_said_storable_passes_the_walk(body):
    data = orjson.loads(body)
    if strict_json_storable(body):
        refuse_unstorable_text(data)  # never raises


def test_what_could_hold_unstorable_text_is_walked():
    assert strict_json_storable(BODIES[0]) and strict_json_storable(BODIES[1])
    for body in (BODIES[2], BODIES[3], BODIES[6]):
        assert not strict_json_storable(body)
        with pytest.raises(InvalidInput):
            refuse_unstorable_text(orjson.loads(body))
    assert strict_json_storable(BODIES[7])
    refuse_unstorable_text(orjson.loads(BODIES[7]))
