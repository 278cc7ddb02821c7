"""The test files mirror the modules they test, so a module's tests are found by its name.

The rule: `tests/<path>/test_<module>.py` or `tests/<path>/test_<module>_<aspect>.py`
tests `agentdocs/<path>/<module>.py` (or the package `agentdocs/<path>/<module>/`):
tests/api/test_documents_merge.py tests agentdocs/api/documents.py. A file names the
module it mainly drives: the API view for HTTP tests through the client, the page view
(`agentdocs/web/views/`) for page tests, the service for service-level tests, the core
module for pure ones. Folders that are not a module, each for one reason:

- `tests/config/` mirrors `config/` (the Django project beside the package);
- `tests/browser/` drives the pages in a real Chromium (slow, and needs the browser), its
  files named after the page's view module: `tests/browser/test_<module>[_<aspect>].py`
  for `agentdocs/web/views/<module>.py` (or `agentdocs/web/<module>.py`);
- the top-level files of CROSS_CUTTING test the project as a whole, each for its reason;
- HELPERS hold no tests (data, the Node.js clients the tests run).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

# Folders of tests/ whose files are not tests of a module.
HELPERS = {
    "data": "inputs the tests read (corpora, forged documents)",
    "mcp_ts": "the TypeScript MCP SDK's client, run by tests/api/test_mcp_ts.py",
    "skills_ref": "the Agent Skills reference validator, run by tests/api/test_export_skills.py",
}

# Top-level test files that test the project as a whole, not one module.
CROSS_CUTTING = {
    "test_benchmarks_run.py": "every script of bench/ runs briefly, end to end",
    "test_conftest.py": "the suite's own machinery (tests/conftest.py)",
    "test_docs.py": "the documentation (README, docs/, mkdocs.yml) keeps up with the code",
    "test_large_tenant.py": "every hot endpoint of both faces on a large tenant",
    "test_layers.py": "the floors of the whole package: which may import which",
    "test_layout.py": "this file: the layout of tests/ itself",
    "test_newcomer.py": "what the README promises a newcomer: dev.py and the demo",
    "test_scaling_out.py": "two app servers on one PostgreSQL and one Redis as one deployment",
}

# Where the modules of a tests/ folder live, when not under agentdocs/ at the same path.
MODULE_ROOTS = {
    "config": [ROOT / "config"],
    "browser": [ROOT / "agentdocs" / "web" / "views", ROOT / "agentdocs" / "web"],
}


def module_roots(folder: tuple[str, ...]) -> list[Path]:
    if folder and folder[0] in MODULE_ROOTS:
        return [root.joinpath(*folder[1:]) for root in MODULE_ROOTS[folder[0]]]
    return [ROOT.joinpath("agentdocs", *folder)]


def named_module(test_file: Path) -> Path | None:
    """The module a test file names, or None: the longest `<module>` of
    `test_<module>[_<aspect>].py` that exists in the folder's module root."""
    relative = test_file.relative_to(TESTS)
    words = relative.stem.removeprefix("test_").split("_")
    for root in module_roots(relative.parts[:-1]):
        for end in range(len(words), 0, -1):
            name = "_".join(words[:end])
            for candidate in (root / f"{name}.py", root / name / "__init__.py"):
                if candidate.is_file():
                    return candidate
    return None


def layout_test_files() -> list[Path]:
    return sorted(
        path for path in TESTS.rglob("test_*.py") if path.relative_to(TESTS).parts[0] not in HELPERS
    )


def test_every_test_file_names_the_module_it_tests():
    unnamed = [
        str(path.relative_to(ROOT))
        for path in layout_test_files()
        if path.parent != TESTS or path.name not in CROSS_CUTTING
        if named_module(path) is None
    ]
    assert not unnamed, (
        "These test files name no module. Name each after the module it mainly drives, "
        "tests/<path>/test_<module>[_<aspect>].py for agentdocs/<path>/<module>.py "
        "(the API view for HTTP tests, the page view for pages, the service, the core "
        "module; tests/browser/ after agentdocs/web/views/; tests/config/ after config/), "
        "or list a top-level file that tests the project as a whole in CROSS_CUTTING of "
        "tests/test_layout.py with its reason:\n  " + "\n  ".join(unnamed)
    )


def test_the_cross_cutting_list_names_only_top_level_files_that_name_no_module():
    stale = [
        name
        for name in CROSS_CUTTING
        if not (TESTS / name).is_file() or named_module(TESTS / name) is not None
    ]
    assert not stale, f"CROSS_CUTTING lists files that are gone or name a module: {stale}"


def test_the_rule_reads_a_file_name_as_a_module_and_an_aspect():
    assert named_module(TESTS / "api" / "test_documents_merge.py") == (
        ROOT / "agentdocs" / "api" / "documents.py"
    )
    assert named_module(TESTS / "core" / "test_skill_index.py") == (
        ROOT / "agentdocs" / "core" / "skill_index.py"
    )
    assert named_module(TESTS / "browser" / "test_skills_in_chromium.py") == (
        ROOT / "agentdocs" / "web" / "views" / "skills.py"
    )
    assert named_module(TESTS / "config" / "test_settings.py") == ROOT / "config" / "settings.py"
    assert named_module(TESTS / "test_mcp_tools.py") == ROOT / "agentdocs" / "mcp" / "__init__.py"
    # A feature, a property or a folder that is no module names nothing.
    assert named_module(TESTS / "api" / "test_hidden_text_closed.py") is None
    assert named_module(TESTS / "skills" / "test_skill_admin.py") is None
    assert named_module(TESTS / "management" / "test_seed_demo.py") is None


def test_serial_groups_name_test_files_that_exist():
    """tests/conftest.py's SERIAL_GROUPS names test files by path: a renamed file would
    silently leave its group and run beside the tests it must not share a worker with."""
    from tests.conftest import SERIAL_GROUPS

    missing = [path for path in SERIAL_GROUPS if not (ROOT / path).is_file()]
    assert not missing, f"SERIAL_GROUPS names test files that do not exist: {missing}"
