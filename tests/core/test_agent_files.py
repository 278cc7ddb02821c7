"""Which agent file becomes which document, with what frontmatter and text."""

from __future__ import annotations

import frontmatter
import pytest

from agentdocs.core.agent_files import (
    NOT_AN_AGENT_FILE,
    SourceFile,
    is_collected,
    map_file,
    map_files,
    map_frontmatter,
    strip_provenance,
    target_for,
)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("AGENTS.md", "agent.md"),
        ("CLAUDE.md", "agent.md"),
        ("GEMINI.md", "agent.md"),
        (".github/copilot-instructions.md", "agent.md"),
        (".cursor/rules/api.mdc", ".AGENTS/api.md"),
        (".cursor/rules/db-schema.mdc", ".AGENTS/db-schema.md"),
        (".github/instructions/python.instructions.md", ".AGENTS/python.md"),
        ("README.md", None),
        ("docs/AGENTS.md", ".AGENTS/docs.md"),  # a folder's file: the document of docs/
        ("docs/README.md", None),
        ("agents.md", None),
        (".cursor/rules/api.md", None),
        (".cursor/rules/frontend/api.mdc", None),  # a subfolder: not one level deep
        (".cursor/rules/.mdc", None),
        (".github/instructions/python.md", None),
        (".github/instructions/.instructions.md", None),
        (".github/copilot-instructions.txt", None),
    ],
)
def test_each_source_maps_to_its_target(source, target):
    assert target_for(source) == target
    assert is_collected(source) == (target is not None)


def test_other_files_are_skipped_saying_why():
    mapped = map_file(SourceFile("README.md", "# Readme\n"))
    assert mapped.skipped and mapped.target is None
    assert mapped.skip_reason == NOT_AN_AGENT_FILE


def test_an_agent_notes_file_is_taken_as_it_is():
    text = "---\ntitle: kept as written\n---\n# Rules\n\n- one\n"
    mapped = map_file(SourceFile("CLAUDE.md", text))
    assert (mapped.target, mapped.text, mapped.notes) == ("agent.md", text, ())


# Frontmatter


def test_cursor_frontmatter_maps_to_ours_and_parses_back():
    rule = (
        "---\ndescription: API layout\nglobs: src/api/**, *.sql\nalwaysApply: false\n---\n"
        "\n\n# API\n\nThin views.\n"
    )
    mapped = map_file(SourceFile(".cursor/rules/api.mdc", rule))
    post = frontmatter.loads(mapped.text)
    assert post.metadata == {
        "description": "API layout",
        "globs": ["src/api/**", "*.sql"],
        "alwaysApply": False,
    }
    assert list(post.metadata) == ["description", "globs", "alwaysApply"]
    assert mapped.text.endswith("---\n\n# API\n\nThin views.\n")


def test_cursor_globs_may_be_a_list_and_empty_fields_are_left_out():
    rule = '---\ndescription: ""\nglobs: ["a/**", "b/*.py"]\n---\nBody\n'
    mapped = map_file(SourceFile(".cursor/rules/x.mdc", rule))
    assert mapped.text == "---\nglobs:\n- a/**\n- b/*.py\n---\n\nBody\n"


def test_cursor_always_apply_without_globs_keeps_only_that():
    rule = "---\ndescription:\nglobs:\nalwaysApply: true\n---\nAlways.\n"
    mapped = map_file(SourceFile(".cursor/rules/x.mdc", rule))
    assert mapped.text == "---\nalwaysApply: true\n---\n\nAlways.\n"


def test_a_rule_without_frontmatter_is_its_body():
    mapped = map_file(SourceFile(".cursor/rules/x.mdc", "\nJust text.\n"))
    assert mapped.text == "Just text.\n"


def test_copilot_apply_to_becomes_globs_and_unknown_keys_are_named():
    text = (
        '---\napplyTo: "**/*.ts, **/*.tsx"\ndescription: TS\nexcludeAgent: code-review\n---\nTS\n'
    )
    mapped = map_file(SourceFile(".github/instructions/ts.instructions.md", text))
    assert frontmatter.loads(mapped.text).metadata == {
        "description": "TS",
        "globs": ["**/*.ts", "**/*.tsx"],
    }
    assert "frontmatter not imported: excludeAgent" in mapped.notes


def test_copilot_apply_to_every_file_always_applies():
    ours, notes = map_frontmatter({"applyTo": "**"}, format="copilot")
    assert (ours, notes) == ({"alwaysApply": True}, [])


def test_copilot_has_no_always_apply_of_its_own():
    ours, notes = map_frontmatter({"applyTo": "src/**", "alwaysApply": True}, format="copilot")
    assert ours == {"globs": ["src/**"]}
    assert notes == ["frontmatter not imported: alwaysApply"]


def test_wrong_types_are_not_imported_and_said():
    ours, notes = map_frontmatter(
        {"description": ["x"], "globs": {"a": 1}, "alwaysApply": "sometimes"}, format="cursor"
    )
    assert ours == {}
    assert len(notes) == 3


def test_unquoted_cursor_globs_that_are_not_yaml_are_still_read():
    rule = "---\ndescription: Styles\nglobs: *.css,*.scss\nalwaysApply: false\n---\nCSS\n"
    mapped = map_file(SourceFile(".cursor/rules/styles.mdc", rule))
    assert frontmatter.loads(mapped.text).metadata == {
        "description": "Styles",
        "globs": ["*.css", "*.scss"],
        "alwaysApply": False,
    }
    assert any("not valid YAML" in note for note in mapped.notes)


def test_a_lone_rule_line_is_not_frontmatter():
    mapped = map_file(SourceFile(".cursor/rules/x.mdc", "---\nNot frontmatter.\n"))
    assert mapped.text == "---\nNot frontmatter.\n"


# Provenance


def test_the_provenance_comment_is_stripped_with_its_newline():
    text = "<!-- generated by agentdocs: acme/web agent.md v3; edit it there -->\n# Rules\n"
    assert strip_provenance(text) == ("# Rules\n", True)


def test_a_multi_line_provenance_comment_ends_at_the_first_close():
    text = (
        "<!-- generated by agentdocs: tenant acme, project web\n"
        "     sources: agent.md v3 1a2b3c4d -->\n"
        "Body <!-- a comment of the author's -->\n"
    )
    assert strip_provenance(text) == ("Body <!-- a comment of the author's -->\n", True)


def test_the_provenance_comment_after_frontmatter_is_stripped_and_the_frontmatter_kept():
    text = "---\nglobs: a/**\n---\n\n<!-- generated by agentdocs: x -->\r\nBody\n"
    assert strip_provenance(text) == ("---\nglobs: a/**\n---\nBody\n", True)
    mapped = map_file(SourceFile(".cursor/rules/a.mdc", text))
    assert mapped.text == "---\nglobs:\n- a/**\n---\n\nBody\n"
    assert "agentdocs provenance comment stripped" in mapped.notes


@pytest.mark.parametrize(
    "text",
    [
        "# Rules\n<!-- generated by agentdocs: x -->\n",  # not at the top
        "<!-- generated by someone else: x -->\n# Rules\n",
        "<!-- generated by agentdocs: never closed\n# Rules\n",
        "Text <!-- generated by agentdocs: x -->\n",
    ],
)
def test_other_comments_are_left_alone(text):
    assert strip_provenance(text) == (text, False)


def test_our_own_exported_cursor_rule_is_not_imported_again():
    text = "---\nalwaysApply: true\n---\n<!-- generated by agentdocs: x -->\n## Policy\n"
    mapped = map_file(SourceFile(".cursor/rules/agentdocs.mdc", text))
    assert mapped.skipped and mapped.target is None
    # It points at the round trip, not at importing AGENTS.md (which is the same export).
    assert "agentdocs propose" in mapped.skip_reason and "AGENTS.md" not in mapped.skip_reason
    hand_written = map_file(SourceFile(".cursor/rules/agentdocs.mdc", "Mine.\n"))
    assert hand_written.target == ".AGENTS/agentdocs.md"


# Precedence


def test_the_first_agent_notes_file_in_order_wins_whatever_order_they_come_in():
    mapped = map_files(
        [
            SourceFile("GEMINI.md", "g"),
            SourceFile(".github/copilot-instructions.md", "c"),
            SourceFile("CLAUDE.md", "cl"),
        ]
    )
    assert [(m.source, m.skipped) for m in mapped] == [
        ("GEMINI.md", True),
        (".github/copilot-instructions.md", True),
        ("CLAUDE.md", False),
    ]
    assert mapped[0].skip_reason == "not used: CLAUDE.md is imported as agent.md (it comes first)"


def test_a_cursor_rule_wins_over_copilot_instructions_of_the_same_name():
    mapped = map_files(
        [
            SourceFile(".github/instructions/api.instructions.md", "copilot"),
            SourceFile(".cursor/rules/api.mdc", "cursor"),
        ]
    )
    assert [m.skipped for m in mapped] == [True, False]
    assert ".cursor/rules/api.mdc is imported as .AGENTS/api.md" in mapped[0].skip_reason
