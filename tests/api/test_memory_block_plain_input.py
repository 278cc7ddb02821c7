"""The render's input and answer on its hot path (`plain_input`, the JSON written without
DRF's rendering): the same values, refusals and bytes as the serializer and renderer."""

from __future__ import annotations

import json
import uuid

import orjson
import pytest
from rest_framework.exceptions import ValidationError

from agentdocs.api.memory_block import MemoryBlockView, plain_input
from agentdocs.api.renderers import JSONRenderer
from agentdocs.api.serializers import validated
from agentdocs.core.errors import AgentdocsError

URL = "/api/v1/tenants/acme/projects/web/memory-block/"
CLIENT = {"name": "CLAUDE.md", "body": "Use the staging box.\n"}

PAYLOADS = [
    {"process": "p-1"},
    {"process": "p-1", "recipe": "coder", "profile": "cli", "client_document": CLIENT},
    {"process": "p-1", "recipe": None, "profile": None, "client_document": None},
    {"process": "p-1", "recipe": "", "profile": "", "label": ""},
    {"process": "p-1", "reset": True, "paths": ["src/a.py", "src/a.py", "docs/b.md"]},
    {"process": "p-1", "paths": None},
    {"process": "p-1", "paths": []},
    {"process": "p-1", "label": "canary"},
    {"process": "p-1", "label": "latest"},
    # What the serializer refuses, and plain_input leaves to it.
    {},
    {"process": None},
    {"process": ""},
    {"process": "   "},
    {"process": 7},
    {"process": "p-1\x00"},
    {"process": "line\nbreak"},
    {"process": "x" * 201},
    {"process": "p-\ud800"},
    {"process": "p-1", "recipe": 3},
    {"process": "p-1", "recipe": "co\x00der"},
    {"process": "p-1", "profile": ["cli"]},
    {"process": "p-1", "reset": "yes"},
    {"process": "p-1", "reset": None},
    {"process": "p-1", "reset": 1},
    {"process": "p-1", "paths": "src/a.py"},
    {"process": "p-1", "paths": ["/etc/passwd"]},
    {"process": "p-1", "paths": ["../up.py"]},
    {"process": "p-1", "paths": [3]},
    {"process": "p-1", "paths": ["a\x00b"]},
    {"process": "p-1", "label": "Not A Label"},
    {"process": "p-1", "label": 5},
    {"process": "p-1", "client_document": {"name": "CLAUDE.md"}},
    {"process": "p-1", "client_document": {**CLIENT, "extra": 1}},
    {"process": "p-1", "client_document": {"name": "", "body": "x"}},
    {"process": "p-1", "client_document": {"name": "a\nb", "body": "x"}},
    {"process": "p-1", "client_document": {"name": "CLAUDE.md", "body": None}},
    {"process": "p-1", "client_document": {"name": "CLAUDE.md", "body": "x" * 262_145}},
    {"process": "p-1", "client_document": "CLAUDE.md"},
    {"process": "p-1", "unknown": 1},
    ["process", "p-1"],
    "p-1",
    None,
]


def _serializer_answer(payload: object) -> object:
    try:
        return ("valid", dict(validated(MemoryBlockView.PostInputSerializer, payload)))
    except (ValidationError, AgentdocsError) as error:
        return ("refused", type(error).__name__)


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_plain_input_gives_the_serializers_values_or_leaves_the_input_to_it(payload):
    plain = plain_input(payload)
    expected = _serializer_answer(payload)
    if plain is None:
        # Left to the serializer: only what it refuses.
        assert expected[0] == "refused"
    else:
        assert expected == ("valid", plain)


def test_every_valid_payload_takes_the_plain_path():
    valid = [payload for payload in PAYLOADS if _serializer_answer(payload)[0] == "valid"]
    assert len(valid) == 9
    assert all(plain_input(payload) is not None for payload in valid)


@pytest.mark.django_db
class TestOverHttp:
    @pytest.fixture
    def process(self) -> str:
        return f"process-{uuid.uuid4()}"

    def _post(self, client, body: bytes, content_type: str = "application/json", **headers):
        return client.generic("POST", URL, body, content_type=content_type, **headers)

    def test_the_answer_is_byte_for_byte_what_the_renderer_writes(
        self, api, reader, project, process
    ):
        body = json.dumps({"process": process, "client_document": CLIENT}).encode()
        response = self._post(api(reader), body)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert response["Vary"] == "Accept"
        assert response["Agentdocs-Signature"] == response.json()["signature"]
        assert response.content == JSONRenderer().render(orjson.loads(response.content))

    def test_an_indented_answer_is_still_drfs(self, api, reader, project, process):
        body = json.dumps({"process": process}).encode()
        response = self._post(api(reader), body, HTTP_ACCEPT="application/json; indent=2")
        assert response.status_code == 200
        assert response.content.startswith(b'{\n  "text"')

    def test_a_charset_parameter_goes_through_the_parsers_and_renders(
        self, api, reader, project, process
    ):
        body = json.dumps({"process": process}).encode()
        response = self._post(api(reader), body, content_type="application/json; charset=utf-8")
        assert response.status_code == 200
        assert response.json()["process"] == process

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            (b'{"process": "p\\u0000"}', "process"),
            (b'{"process": "p-1", "recipe": "a\\u0000"}', "recipe"),
            (b'{"process": "p-1", "paths": ["a\\u0000"]}', "paths[0]"),
            (b'{"process": "\\ud800"}', "process"),
        ],
    )
    def test_unstorable_text_is_the_parsers_400_even_for_an_outsider(
        self, api, reader, outsider, other_tenant, project, body, field
    ):
        # The parsers judge the body before the view checks access: a 400, never a 404.
        for member in (reader, outsider):
            response = self._post(api(member), body)
            assert response.status_code == 400, response.json()
            assert response.json()["field"] == field

    def test_a_body_that_is_not_json_is_a_400(self, api, reader, project):
        response = self._post(api(reader), b'{"process": ')
        assert response.status_code == 400
        assert response.json()["error"] == "parse_error"

    def test_a_bad_process_is_refused_after_access_as_before(
        self, api, reader, outsider, other_tenant, project
    ):
        body = json.dumps({"process": "line\nbreak"}).encode()
        assert self._post(api(reader), body).json()["field"] == "process"
        assert self._post(api(reader), body).status_code == 400
        assert self._post(api(outsider), body).status_code == 404
