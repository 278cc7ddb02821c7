"""The Agent Skills specification and the stored-text checks, on a bundle as plain data
(`agentdocs.core.skills.check_skill`)."""

from __future__ import annotations

import pytest

from agentdocs.core.errors import (
    BinaryFile,
    ConfusablePath,
    HiddenCharacters,
    InvalidInput,
    InvalidSkill,
    SecretDetected,
    TooLarge,
)
from agentdocs.core.skills import bundle_sha256, check_skill, validate_skill_name
from tests.skill_bundles import skill_md


def check(
    files: dict[str, str], *, name: str = "handoff", file_cap: int = 10_000, cap: int = 50_000
):
    return check_skill(name=name, files=files, max_file_bytes=file_cap, max_bytes=cap)


def refusal(files: dict[str, str], **kwargs) -> Exception:
    with pytest.raises(Exception) as caught:
        check(files, **kwargs)
    return caught.value


def test_a_valid_bundle_comes_back_sorted_with_its_description_size_and_digest():
    files = {"scripts/run.sh": "echo hi\n", "SKILL.md": skill_md("handoff", "Do the handoff.")}
    checked = check(files)
    assert list(checked.files) == ["SKILL.md", "scripts/run.sh"]
    assert checked.description == "Do the handoff."
    assert checked.size == sum(len(t.encode()) for t in files.values())
    assert checked.sha256 == bundle_sha256(dict(reversed(list(files.items()))))
    assert checked.warnings == []


@pytest.mark.parametrize(
    "name",
    [
        "PDF",
        "pdf_processing",
        "-pdf",
        "pdf-",
        "pdf--processing",
        "",
        "a" * 65,
        "pdf processing",
        "pdf/x",
    ],
)
def test_names_outside_the_specification_are_refused(name):
    with pytest.raises(InvalidSkill) as caught:
        validate_skill_name(name)
    assert caught.value.status == 422
    assert caught.value.field == "name"


@pytest.mark.parametrize("name", ["pdf", "pdf-processing", "a" * 64, "v2-tool"])
def test_names_of_the_specification_are_accepted(name):
    assert validate_skill_name(name) == name


def test_the_frontmatter_name_must_match_the_skill():
    error = refusal({"SKILL.md": skill_md("other")})
    assert isinstance(error, InvalidSkill)
    assert error.field == "files/SKILL.md#name"


@pytest.mark.parametrize(
    ("frontmatter", "field"),
    [
        ("name: handoff\n", "files/SKILL.md#description"),
        ("name: handoff\ndescription: ''\n", "files/SKILL.md#description"),
        (f"name: handoff\ndescription: {'x' * 1025}\n", "files/SKILL.md#description"),
        ("description: d\n", "files/SKILL.md#name"),
        ("name: Handoff\ndescription: d\n", "files/SKILL.md#name"),
        ("name: handoff\ndescription: d\nversion: 2\n", "files/SKILL.md#version"),
        (
            "name: handoff\ndescription: d\ncompatibility: " + "x" * 501 + "\n",
            "files/SKILL.md#compatibility",
        ),
        ("name: handoff\ndescription: d\nmetadata:\n  version: 1.0\n", "files/SKILL.md#metadata"),
        ("name: handoff\ndescription: d\nmetadata: [a]\n", "files/SKILL.md#metadata"),
        ("name: handoff\ndescription: [d]\n", "files/SKILL.md#description"),
        ("- a list\n", "files/SKILL.md"),
        ("name: [unclosed\n", "files/SKILL.md"),
    ],
)
def test_frontmatter_outside_the_specification_is_refused_naming_file_and_field(frontmatter, field):
    error = refusal({"SKILL.md": f"---\n{frontmatter}---\nbody\n"})
    assert isinstance(error, InvalidSkill), error
    assert error.status == 422
    assert error.field == field


def test_every_optional_field_of_the_specification_is_accepted():
    text = (
        "---\nname: handoff\ndescription: d\nlicense: Apache-2.0\ncompatibility: Needs git\n"
        "metadata:\n  author: acme\n  version: '1.0'\nallowed-tools: Bash(git:*) Read\n---\nbody\n"
    )
    assert check({"SKILL.md": text}).description == "d"


def test_a_skill_without_skill_md_or_frontmatter_is_refused():
    assert refusal({"scripts/run.sh": "x"}).field == "files/SKILL.md"
    error = refusal({"SKILL.md": "# No frontmatter\n"})
    assert isinstance(error, InvalidSkill) and error.field == "files/SKILL.md"


@pytest.mark.parametrize(
    "path", ["README.md", "run.sh", "scripts", "other/x.md", "scripts/../SKILL.md"]
)
def test_files_outside_the_bundle_folders_are_refused(path):
    error = refusal({"SKILL.md": skill_md("handoff"), path: "x"})
    # A path that is not one is the documents' 400; a path outside the layout, 422.
    expected = InvalidSkill if ".." not in path else InvalidInput
    assert type(error) is expected
    assert error.field == f"files/{path}"


def test_a_look_alike_path_is_refused_as_documents_are():
    error = refusal({"SKILL.md": skill_md("handoff"), "references/аpi.md": "x"})  # Cyrillic а
    assert isinstance(error, ConfusablePath)
    assert error.field == "files/references/аpi.md"


@pytest.mark.parametrize(
    ("path", "text"),
    [("assets/logo.png", "PNG"), ("scripts/tool", "ELF\x00\x01"), ("assets/x.txt", "a\x07b")],
)
def test_binary_files_are_refused_with_422_naming_the_file(path, text):
    error = refusal({"SKILL.md": skill_md("handoff"), path: text})
    assert isinstance(error, BinaryFile)
    assert error.status == 422
    assert error.field == f"files/{path}"


def test_a_secret_in_any_file_is_refused_naming_the_file():
    key = "AKIA" + "Z7Q2M4R8T6V3X5N9"
    error = refusal(
        {"SKILL.md": skill_md("handoff"), "scripts/run.sh": f"export AWS_ACCESS_KEY_ID={key}\n"}
    )
    assert isinstance(error, SecretDetected)
    assert (error.status, error.field) == (422, "files/scripts/run.sh")
    assert key not in error.detail


def test_hidden_characters_in_any_file_are_refused_naming_the_file():
    error = refusal({"SKILL.md": skill_md("handoff", body="Run it\u202e now\n")})
    assert isinstance(error, HiddenCharacters)
    assert (error.status, error.field) == (422, "files/SKILL.md")


def test_size_caps_per_file_and_per_skill():
    big = "x" * 2_000
    error = refusal({"SKILL.md": skill_md("handoff"), "references/a.md": big}, file_cap=1_000)
    assert isinstance(error, TooLarge) and error.field == "files/references/a.md"
    assert error.extra["limit"] == 1_000
    files = {"SKILL.md": skill_md("handoff"), **{f"references/{i}.md": big for i in range(5)}}
    error = refusal(files, file_cap=5_000, cap=8_000)
    assert isinstance(error, TooLarge) and error.field == "files"
    assert check(files, file_cap=5_000, cap=20_000).size > 8_000


def test_a_long_body_is_a_warning_not_a_refusal():
    body = "".join(f"Step {i}.\n" for i in range(600))
    checked = check({"SKILL.md": skill_md("handoff", body=body)})
    assert len(checked.warnings) == 1
    assert "600 lines" in checked.warnings[0]
