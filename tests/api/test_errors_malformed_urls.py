"""Every URL under `/api/`, however malformed, answers the API's JSON error.

A control character in a path segment (a newline: `.` in a route's pattern did not match
it) made 13 operations miss every API route and answer the site's HTML 404 page. Each
operation of the schema is sent with a control character in each of its path parameters,
in a fixed segment and in the query; each answer must be a 400 or 404 of the JSON error
shape. The paging parameters' bad values are refused the same way on every list.
"""

from __future__ import annotations

import re
from functools import cache
from urllib.parse import quote

import pytest
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db

CONTROL_CHARACTERS = ["%00", "%0a", "%0d", "%09", "%1b", "%7f"]
VALUES = {
    "tenant": "acme",
    "project": "web",
    "path": "agent.md",
    "username": "bob",
    "key": "memory.tone",
    "name": "coder",
}
PARAMETER = re.compile(r"\{(\w+)\}")


@cache
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations() -> list[tuple[str, str]]:
    return [
        (method.upper(), path)
        for path, item in schema()["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]


def paged() -> list[str]:
    """The lists: the GET operations taking `page_size`."""
    return [
        path
        for method, path in operations()
        if method == "GET"
        and "page_size" in {p["name"] for p in schema()["paths"][path]["get"].get("parameters", [])}
    ]


def answering_lists(client) -> list[str]:
    """The lists whose first page the admin reads here (a history of a recipe that does
    not exist is a 404 naming it, whatever the page)."""
    urls = [url_of(path) for path in paged()]
    found = [url for url in urls if client.get(url).status_code == 200]
    assert len(found) >= 15, found
    return found


def url_of(template: str, **given: str) -> str:
    return PARAMETER.sub(lambda m: given.get(m[1], VALUES.get(m[1], "1")), template)


def assert_json_error(answer, statuses=(400, 404, 405)) -> dict:
    """A JSON error of one of ``statuses``: by default 400 or 404, or 405 where the
    mangled URL still names a route (a path parameter took the character) of other
    methods."""
    assert answer.status_code in statuses, (answer.status_code, answer.content[:200])
    assert answer["Content-Type"].startswith("application/json"), answer.content[:200]
    body = answer.json()
    assert set(body) >= {"error", "detail", "field"}
    return body


@pytest.fixture
def client(api, admin, project, make_document):
    make_document(project, "agent.md", "# Rules\n")
    return api(admin)


def send(client, method: str, url: str):
    return client.generic(method, url, "{}", content_type="application/json")


PLACEMENTS = (
    lambda value, character: value + character,
    lambda value, character: character + value,
    lambda value, character: value[:1] + character + value[1:],
)


@pytest.mark.parametrize("character", CONTROL_CHARACTERS)
def test_a_control_character_in_any_path_parameter_is_a_json_error(client, character):
    """Each character in every path parameter, at its end, its start or inside it by
    turns: the six characters put each placement in every parameter twice (all three
    for each character took a minute of the suite and reached no route more)."""
    turn = CONTROL_CHARACTERS.index(character)
    for method, template in operations():
        for index, name in enumerate(PARAMETER.findall(template)):
            place = PLACEMENTS[(turn + index) % len(PLACEMENTS)]
            url = url_of(template, **{name: place(VALUES.get(name, "1"), character)})
            assert_json_error(send(client, method, url))


@pytest.mark.parametrize("character", CONTROL_CHARACTERS)
def test_a_control_character_in_a_fixed_segment_or_at_the_end_is_a_json_404(client, character):
    for method, template in operations():
        url = url_of(template)
        segments = url.split("/")
        # A character added to the last fixed segment ("projects", "history", …).
        fixed = max(i for i, part in enumerate(segments) if part and "{" not in part)
        segments[fixed] += character
        assert_json_error(send(client, method, "/".join(segments)))
        assert_json_error(send(client, method, url + character))


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/%0a",
        "/api/v1/tenants/acme/%0a/",
        "/api/schema/%0a",
        "/api/%0a",
        "/api/nothing-here",
        "/api/v1/tenants/acme/projects/web/documents/a%0ab.md",
        "/api/v1/tenants/acme/projects/web/documents/%0a",
        "/api/v1/tenants/acme/providers/team%0a/doc",
    ],
)
def test_the_urls_the_attack_found_answer_json(client, url):
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        assert_json_error(send(client, method, url))


@pytest.mark.parametrize("character", CONTROL_CHARACTERS)
def test_a_control_character_in_the_query_never_leaves_the_json_api(client, character):
    """In a value, a name or the page number, by turns as above."""
    turn = CONTROL_CHARACTERS.index(character)
    for index, (method, template) in enumerate(operations()):
        queries = (f"?x={character}", f"?{character}=1", f"?page={character}")
        query = queries[(turn + index) % len(queries)]
        answer = send(client, method, url_of(template) + query)
        assert answer.status_code < 500
        if answer.status_code >= 400:
            assert_json_error(answer, statuses=(answer.status_code,))


def test_a_nul_in_page_is_the_documented_400_naming_page(client):
    for url in answering_lists(client):
        body = assert_json_error(client.get(url + "?page=%00"), statuses=(400,))
        assert body["field"] == "page"


@pytest.mark.parametrize("page", ["abc", "0", "-1", "99", "1.5", " "])
def test_a_page_that_names_no_page_is_404_naming_page(client, page):
    for url in answering_lists(client):
        body = assert_json_error(client.get(url, {"page": page}), statuses=(404,))
        assert body["field"] == "page"


@pytest.mark.parametrize(
    "size", ["null", "abc", "0", "000", "-1", "+5", " 5", "5 ", "1.5", "5_0", "\u0665", "1e3"]
)
def test_a_page_size_that_is_not_a_whole_number_from_1_is_400_naming_it(client, size):
    for url in answering_lists(client):
        answer = client.get(url + "?page_size=" + quote(size))
        body = assert_json_error(answer, statuses=(400,))
        assert body["field"] == "page_size", url
        assert "whole number from 1" in body["detail"]


@pytest.mark.parametrize("size", ["", "1", "007", "200", "201", "99999999999999999999", "9" * 5000])
def test_a_page_size_from_1_is_answered_capped_at_200_and_an_empty_one_is_the_default(client, size):
    answer = client.get(
        url_of("/api/v1/tenants/{tenant}/projects/{project}/documents/"), {"page_size": size}
    )
    assert answer.status_code == 200
    assert len(answer.json()["results"]) == 1


def test_an_outsider_gets_the_same_json_404_for_a_malformed_url(
    api, outsider, other_tenant, project
):
    client = api(outsider)
    for url in [
        "/api/v1/tenants/acme/projects/web/documents/agent.md%0a",
        "/api/v1/tenants/acme%0a/projects/",
        "/api/v1/tenants/acme/projects/web/documents/?page_size=null",
    ]:
        body = assert_json_error(client.get(url), statuses=(404,))
        assert body["error"] == "not_found"
