"""Adding agentdocs' session hook to parsed hook settings and taking it out again."""

from __future__ import annotations

import copy

import pytest

from agentdocs.core import session_hooks, targets
from agentdocs.core.hook_settings import (
    HookSettingsError,
    hook_add,
    hook_installed,
    hook_remove,
)

CLAUDE = targets.SESSION_HOOKS["claude-code"].session_hook
CURSOR = targets.SESSION_HOOKS["cursor"].session_hook
assert CLAUDE is not None and CURSOR is not None


def test_every_hook_is_reachable_by_its_tool_and_its_format():
    for name, entry in targets.SESSION_HOOKS.items():
        assert entry.session_hook is not None and entry.session_hook.tool == name
        assert targets.named(name) is entry
        assert targets.named(entry.format) is entry
    assert targets.named("windsurf").session_hook is None
    assert targets.named("emacs") is None


def test_the_hook_reads_the_registrys_own_declarations():
    """`agentdocs hook context` reads `session_hooks` without the registry: the same
    hooks, the same objects, in the registry's order, and each entry's main file."""
    assert list(session_hooks.SESSION_HOOKS) == list(targets.SESSION_HOOKS)
    assert list(session_hooks.CONTEXT_HOOKS) == list(targets.CONTEXT_HOOKS)
    for name, entry in targets.SESSION_HOOKS.items():
        hook = session_hooks.SESSION_HOOKS[name]
        assert entry.session_hook is hook
        assert entry.main == hook.main


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"model": "opus"},
        {"hooks": {}},
        {"hooks": {"SessionStart": []}, "x": 1},
        {"hooks": {"SessionStart": [{"matcher": "startup", "hooks": []}]}},
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}},
    ],
)
def test_add_then_remove_gives_back_the_same_settings(settings):
    original = copy.deepcopy(settings)
    assert hook_add(settings, CLAUDE)
    assert hook_installed(settings, CLAUDE) == ["agentdocs hook session-start --tool claude-code"]
    assert not hook_add(settings, CLAUDE)
    assert hook_remove(settings, CLAUDE)
    if original in ({"hooks": {}}, {"hooks": {"SessionStart": []}, "x": 1}):
        # Containers left empty go with our handler: the tool reads both the same way.
        assert hook_installed(settings, CLAUDE) == []
    else:
        assert settings == original
    assert not hook_remove(settings, CLAUDE)


def test_an_older_install_is_replaced_where_it_stands_and_duplicates_go():
    old = {"type": "command", "command": "agentdocs hook session-start --tool claude-code --x"}
    settings = {
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "mine"}, old]},
                {"hooks": [dict(old)]},
            ]
        }
    }
    assert hook_add(settings, CLAUDE)
    assert settings["hooks"]["SessionStart"] == [
        {
            "hooks": [
                {"type": "command", "command": "mine"},
                {"type": "command", "command": "agentdocs hook session-start --tool claude-code"},
            ]
        }
    ]


def test_cursor_settings_get_a_version_only_when_they_have_none():
    settings = {"version": 2, "hooks": {"stop": [{"command": "s"}]}}
    hook_add(settings, CURSOR)
    assert settings["version"] == 2
    assert settings["hooks"]["sessionStart"] == [
        {"command": "agentdocs hook session-start --tool cursor"}
    ]
    hook_remove(settings, CURSOR)
    assert settings == {"version": 2, "hooks": {"stop": [{"command": "s"}]}}


@pytest.mark.parametrize(
    "settings", [{"hooks": []}, {"hooks": "x"}, {"hooks": {"SessionStart": {"hooks": []}}}]
)
def test_a_shape_the_tool_would_not_read_is_refused_untouched(settings):
    original = copy.deepcopy(settings)
    with pytest.raises(HookSettingsError):
        hook_add(settings, CLAUDE)
    assert settings == original
