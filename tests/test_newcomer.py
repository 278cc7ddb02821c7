"""A newcomer's two commands: what the README promises, dev.py and the demo's setup."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType

import pytest

from tests.config.test_settings import settings_environment_variables
from tests.conftest import need_service
from tests.management.commands.test_seed_demo import parse_credentials, parse_token

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
DEV_PY = ROOT / "dev.py"


def first_code_block(markdown: str) -> list[str]:
    match = re.search(r"^```[^\n]*\n(.*?)^```", markdown, re.M | re.S)
    assert match, "README.md has no code block"
    return [line.strip() for line in match.group(1).splitlines() if line.strip()]


@pytest.fixture
def dev(monkeypatch, tmp_path) -> ModuleType:
    """dev.py as a module, with its files pointed into a temporary folder."""
    spec = importlib.util.spec_from_file_location("dev_under_test", DEV_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "VENV", tmp_path / ".venv")
    monkeypatch.setattr(module, "INSTALL_STAMP", tmp_path / ".venv" / ".agentdocs-installed")
    monkeypatch.setattr(module, "SECRET_KEY_FILE", tmp_path / ".secret_key")
    return module


def test_readme_opens_with_exactly_the_two_commands():
    readme = README.read_text()

    assert first_code_block(readme) == ["python3 dev.py demo", "python3 dev.py test"]
    # "Near the top": the block is in the first lines a reader sees.
    assert readme.index("python3 dev.py demo") < 400
    assert "http://127.0.0.1:8000" in readme[:1000]


def test_dev_py_exists_and_needs_only_the_standard_library():
    tree = ast.parse(DEV_PY.read_text())

    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert imported, "dev.py imports nothing?"
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)


def test_dev_py_without_a_command_prints_its_usage():
    result = subprocess.run(
        [sys.executable, str(DEV_PY)], capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 2
    assert "python3 dev.py demo" in result.stderr and "python3 dev.py test" in result.stderr


def test_dev_py_manage_runs_a_command_with_the_demos_settings():
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DATABASE_URL")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    checked = subprocess.run(
        [sys.executable, str(DEV_PY), "manage", "check"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert checked.returncode == 0, checked.stderr
    assert "System check identified no issues" in checked.stdout
    missing = subprocess.run(
        [sys.executable, str(DEV_PY), "manage"], capture_output=True, text=True, timeout=60
    )
    assert missing.returncode == 2
    assert "token_create" in missing.stderr


def test_the_secret_key_is_generated_once_kept_and_git_ignored(dev):
    env: dict[str, str] = {}
    dev.ensure_secret_key(env)
    first = env["SECRET_KEY"]

    again: dict[str, str] = {}
    dev.ensure_secret_key(again)

    assert len(first) >= 50 and again["SECRET_KEY"] == first
    assert dev.SECRET_KEY_FILE.stat().st_mode & 0o077 == 0
    assert "/.secret_key" in (ROOT / ".gitignore").read_text().split()


def test_a_secret_key_in_the_environment_wins(dev):
    env = {"SECRET_KEY": "from-the-environment"}

    dev.ensure_secret_key(env)

    assert env["SECRET_KEY"] == "from-the-environment"
    assert not dev.SECRET_KEY_FILE.exists()


def test_the_install_is_skipped_until_pyproject_changes(dev, monkeypatch):
    installs: list[list[str]] = []
    monkeypatch.setattr(dev, "run", lambda command, env: installs.append(command))
    python = dev.venv_python()
    python.parent.mkdir(parents=True)
    python.touch()

    dev.ensure_venv({})
    dev.ensure_venv({})

    assert len(installs) == 1 and installs[0][-2:] == ["-e", ".[dev]"]
    dev.INSTALL_STAMP.write_text("an older pyproject.toml\n")
    dev.ensure_venv({})
    assert len(installs) == 2


def test_the_demo_installs_the_product_alone_and_a_test_run_adds_the_development_tools(
    dev, monkeypatch
):
    installs: list[list[str]] = []
    monkeypatch.setattr(dev, "run", lambda command, env: installs.append(command))
    python = dev.venv_python()
    python.parent.mkdir(parents=True)
    python.touch()

    dev.ensure_venv({}, dev=False)  # the demo's
    dev.ensure_venv({}, dev=False)
    assert [command[-2:] for command in installs] == [["-e", "."]]

    dev.ensure_venv({})  # a test run's, on the demo's .venv: the tools are added
    dev.ensure_venv({})
    dev.ensure_venv({}, dev=False)  # and the demo needs nothing more
    assert [command[-2:] for command in installs] == [["-e", "."], ["-e", ".[dev]"]]


def test_a_stamp_of_an_older_dev_py_counts_as_the_development_install(dev, monkeypatch):
    installs: list[list[str]] = []
    monkeypatch.setattr(dev, "run", lambda command, env: installs.append(command))
    python = dev.venv_python()
    python.parent.mkdir(parents=True)
    python.touch()
    dev.INSTALL_STAMP.write_text(dev.install_fingerprint() + "\n")  # no kind: `.[dev]`

    dev.ensure_venv({})
    dev.ensure_venv({}, dev=False)

    assert installs == []


def test_dev_py_test_runs_on_workers_unless_told_otherwise(dev, monkeypatch):
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 2)
    assert dev.test_workers([]) == ["-n", "3"]
    assert dev.test_workers(["-x", "-k", "documents"]) == ["-n", "3"]
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 64)
    assert dev.test_workers([])[:2] == ["-n", str(dev.MAX_TEST_WORKERS)]
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 1)
    assert dev.test_workers([])[:2] == ["-n", "2"]
    for chosen in (["-n", "0"], ["-n0"], ["-n", "3"], ["--numprocesses=3"], ["--pdb"]):
        assert dev.test_workers(["tests/core", *chosen]) == [], chosen
    assert dev.test_workers(["-p", "no:xdist"]) == []
    # Options that only start like one of those are the caller's, not a choice of workers.
    assert dev.test_workers(["--color=yes", "--no-header"]) != []


def test_dev_py_test_keeps_the_rewritten_test_modules(dev, monkeypatch):
    ran: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(dev, "ensure_venv", lambda env: None)
    monkeypatch.setattr(
        dev.subprocess,
        "run",
        lambda command, cwd, env, check: (
            ran.append((command, env)) or subprocess.CompletedProcess(command, 0)
        ),
    )
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "config.settings")

    assert dev.test(["-n", "0", "tests/core"]) == 0

    [(command, env)] = ran
    assert command[1:] == ["-m", "pytest", "-n", "0", "tests/core"]
    assert "PYTHONDONTWRITEBYTECODE" not in env and "DJANGO_SETTINGS_MODULE" not in env


def test_the_configuration_page_lists_every_environment_variable_settings_reads():
    page = (DOCS / "configuration.md").read_text()

    missing = {name for name in settings_environment_variables() if f"`{name}`" not in page}
    assert not missing, f"docs/configuration.md does not document {sorted(missing)}"


def test_the_readmes_examples_take_the_demos_address_and_values():
    """`--port 8001` serves the demo elsewhere: the examples read the address the demo
    printed, and the MCP example names the demo's tenant and project, not a placeholder
    host."""
    readme = README.read_text()
    blocks = re.findall(r"^```(?:sh|text)\n(.*?)^```", readme, re.M | re.S)
    examples = "\n".join(blocks[1:])  # after the two commands
    assert "127.0.0.1:8000" not in examples
    assert "example.com" not in examples
    assert '"$AGENTDOCS_URL/api/v1/ping"' in examples
    assert '"$AGENTDOCS_URL/mcp/demo/website/"' in examples


def test_readme_links_the_screenshots_page():
    assert "](docs/screenshots.md)" in README.read_text()


_LOGIN_CHECK = """
import json, os
from django.http import HttpRequest
from django.test import Client
credentials = json.loads(os.environ["DEMO_CREDENTIALS"])
for username, password in credentials.items():
    # The sign-in throttle (django-axes) counts attempts per request: give it one.
    login = Client().login(request=HttpRequest(), username=username, password=password)
    assert login, username
response = Client().get(
    "/api/v1/ping", HTTP_AUTHORIZATION="Token " + os.environ["DEMO_TOKEN"]
)
assert response.status_code == 200 and response.json() == {"ok": True}, response.content
print("LOGIN OK")
"""


@pytest.mark.slow
def test_demo_setup_runs_twice_and_its_printed_credentials_sign_in(tmp_path, migrated_sqlite):
    """What `python3 dev.py demo` does before serving: migrate, seed_demo; run twice.

    The database starts as the run's migrated SQLite template (`migrated_sqlite`, built
    by migrating a blank file once per run, which proves the first migrate): a second
    migrate of this file then finds nothing to do, as the demo's second start does."""
    settings_names = settings_environment_variables()
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in settings_names and name != "DJANGO_SETTINGS_MODULE"
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        DEBUG="1",
        ALLOWED_HOSTS="testserver,127.0.0.1,localhost",
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}",
    )

    def manage(*args: str, extra: dict[str, str] | None = None) -> str:
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env={**env, **(extra or {})},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, f"{args}: {result.stdout}\n{result.stderr}"
        return result.stdout

    shutil.copyfile(migrated_sqlite, tmp_path / "demo.sqlite3")
    outputs = []
    for _ in range(2):
        manage("migrate", "--no-input")
        outputs.append(manage("seed_demo"))

    credentials = parse_credentials(outputs[1])
    assert set(credentials) == {"admin", "writer", "reader"}
    assert credentials == parse_credentials(outputs[0])
    token = parse_token(outputs[1])
    checked = manage(
        "shell",
        "-c",
        _LOGIN_CHECK,
        extra={"DEMO_CREDENTIALS": json.dumps(credentials), "DEMO_TOKEN": token},
    )
    assert "LOGIN OK" in checked


def test_demo_on_a_port_in_use_stops_before_installing_migrating_or_seeding(
    dev, monkeypatch, capsys
):
    steps: list[object] = []
    monkeypatch.setattr(dev, "run", lambda command, env: steps.append(command))
    monkeypatch.setattr(dev, "ensure_venv", lambda env: steps.append("install"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]

        with pytest.raises(SystemExit) as stopped:
            dev.demo(["--port", str(port)])

    assert stopped.value.code == 1 and steps == []
    error = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is in use" in error
    assert f"--port {port + 1}" in error


# The README's examples and the lines the demo prints, run against a demo served as
# `python3 dev.py demo` serves it: its settings, migrate, seed_demo, runserver --insecure.

_DEMO_URL = "http://127.0.0.1:8000"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory, migrated_sqlite):
    # The demo's database starts as the run's migrated SQLite template (its build proves
    # a blank file migrates); the demo's own migrate and seed_demo then run on it.
    spec = importlib.util.spec_from_file_location("dev_for_the_demo", DEV_PY)
    dev_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev_module)
    folder = tmp_path_factory.mktemp("demo")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    settings_names = settings_environment_variables()
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in settings_names and name != "DJANGO_SETTINGS_MODULE"
    }
    env.update(
        dev_module.DEMO_SETTINGS,
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL=f"sqlite:///{folder / 'demo.sqlite3'}",
        MEDIA_ROOT=str(folder / "media"),
    )
    shutil.copyfile(migrated_sqlite, folder / "demo.sqlite3")
    manage = [sys.executable, str(ROOT / "manage.py")]
    for step in (["migrate", "--no-input"], ["seed_demo", "--base-url", url]):
        done = subprocess.run(
            [*manage, *step], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{step}: {done.stdout}\n{done.stderr}"
    printed = done.stdout
    log = (folder / "server.log").open("w")
    server = subprocess.Popen(
        [*manage, "runserver", f"127.0.0.1:{port}", "--insecure", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/login/", timeout=2).close()
                break
            except OSError:
                assert server.poll() is None, (folder / "server.log").read_text()
                assert time.monotonic() < deadline, "the demo did not start in 60 s"
                time.sleep(0.3)
        yield {"url": url, "token": parse_token(printed), "printed": printed, "folder": folder}
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _shell(
    script: str, *, cwd: Path, token: str, bin_dir: Path, tmpdir: Path | None = None
) -> subprocess.CompletedProcess:
    """Run ``script`` with bash as a newcomer's shell would: `agentdocs` on PATH (this
    checkout's client), no AGENTDOCS_* from the caller; ``tmpdir`` as its TMPDIR."""
    bin_dir.mkdir(exist_ok=True)
    agentdocs = bin_dir / "agentdocs"
    agentdocs.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentdocs.cli "$@"\n')
    agentdocs.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDOCS_")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT))
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _printed_commands(printed: str) -> list[str]:
    after = printed[printed.index("Try it") :]
    return [line.strip() for line in after.splitlines() if line.startswith("  ")]


@pytest.mark.slow
def test_the_commands_the_demo_prints_run_as_printed(demo_server, tmp_path):
    need_service("curl", shutil.which("curl") is not None, "no curl on PATH")
    commands = _printed_commands(demo_server["printed"])
    assert [c.split()[0] for c in commands] == [
        "curl",
        "curl",
        "export",
        "agentdocs",
        "mkdir",
        "agentdocs",
    ]
    assert commands[-1].startswith("agentdocs mcp --tenant demo --project website")

    # As a newcomer runs them: in the agentdocs checkout, a git repository with a remote.
    checkout, temporary = tmp_path / "checkout", tmp_path / "tmp"
    checkout.mkdir()
    temporary.mkdir()
    git = shutil.which("git")
    need_service("git", git is not None, "no git on PATH")
    for step in (["init", "-q"], ["remote", "add", "origin", "https://example.com/agentdocs.git"]):
        subprocess.run([git, "-C", str(checkout), *step], check=True, capture_output=True)
    (checkout / "README.md").write_text("the checkout\n")
    subprocess.run([git, "-C", str(checkout), "add", "README.md"], check=True)

    ran = _shell(
        "\n".join(commands),
        cwd=checkout,
        token=demo_server["token"],
        bin_dir=tmp_path / "bin",
        tmpdir=temporary,
    )

    assert ran.returncode == 0, ran.stderr
    # The sync wrote outside the checkout, left nothing untracked in it, and reported
    # no repository to the server (the checkout is no repository of the project's).
    status = subprocess.run(
        [git, "-C", str(checkout), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout.splitlines() == ["A  README.md"], status.stdout
    assert "not reported" not in ran.stderr, ran.stderr
    listed = urllib.request.urlopen(
        urllib.request.Request(
            demo_server["url"] + "/api/v1/tenants/demo/projects/website/repositories/",
            headers={"Authorization": f"Bearer {demo_server['token']}"},
        ),
        timeout=30,
    )
    assert json.load(listed)["results"] == []
    assert "# Website agent notes" in ran.stdout  # the document, the block, agentdocs block
    assert ran.stdout.count("## Agent Notes (agent.md)") == 2  # the curl and agentdocs block
    # Each render is its process's first turn, so both carry the text, not stubs: the
    # document, the curl's block and agentdocs block's.
    assert ran.stdout.count("Components are PascalCase, one per file") == 3, ran.stdout
    assert "unchanged from an earlier turn" not in ran.stdout
    assert (temporary / "agentdocs-demo-website" / "AGENTS.md").exists()
    assert (temporary / "agentdocs-demo-website" / "CLAUDE.md").exists()


def _documented_text() -> str:
    """The README, then every docs page in the order of mkdocs.yml's nav (the order a
    reader follows them, and the one the examples' exports rely on)."""
    from tests.test_docs import nav_pages

    return "\n".join([README.read_text(), *((DOCS / page).read_text() for page in nav_pages())])


def _readme_shell_examples() -> list[str]:
    """The sh blocks of the README and docs/ that talk to a running agentdocs: curl and
    agentdocs."""
    blocks = re.findall(r"^```sh\n(.*?)^```", _documented_text(), re.M | re.S)
    return [
        block
        for block in blocks
        if re.search(r"^(curl|agentdocs) ", block, re.M)
        and not re.search(r"^python3 ", block, re.M)
    ]


@pytest.mark.slow
def test_the_documented_examples_run_as_written_against_the_demo(demo_server, tmp_path):
    need_service("curl", shutil.which("curl") is not None, "no curl on PATH")
    examples = _readme_shell_examples()
    assert len(examples) >= 4, examples  # ping, the Memory Block, the CLI, sync, MCP
    token = demo_server["token"]
    script = "\n".join(examples)
    script = re.sub(r"<(token|the token [^>]*)>", token, script).replace(
        _DEMO_URL, demo_server["url"]
    )
    script = re.sub(r"<the address [^>]*>", demo_server["url"], script)
    # The CI example checks what the sync example wrote, as CI would after it.
    ci_check = re.search(r"^\s*(agentdocs sync --check .*)$", _documented_text(), re.M)
    assert ci_check, "the docs lost their CI example"
    script += f"\nexport AGENTDOCS_URL={demo_server['url']} AGENTDOCS_TOKEN={token}\n"
    script += ci_check.group(1)

    ran = _shell(script, cwd=tmp_path, token=token, bin_dir=tmp_path / "bin")

    assert ran.returncode == 0, f"{script}\n{ran.stdout}\n{ran.stderr}"
    assert '{"ok":true}' in ran.stdout.replace(" ", "")  # the ping
    assert "## Agent Notes (agent.md)" in ran.stdout
    assert (tmp_path / "AGENTS.md").exists() and (tmp_path / "agentdocs.lock.json").exists()


@pytest.mark.slow
def test_the_demo_answers_404_with_its_own_page_and_serves_the_favicon(demo_server):
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(demo_server["url"] + "/no-such-page/", timeout=10)
    assert missing.value.code == 404
    page = missing.value.read().decode()
    assert "Page not found at" not in page and "DEBUG = True" not in page
    with urllib.request.urlopen(demo_server["url"] + "/favicon.ico", timeout=10) as icon:
        assert icon.status == 200 and b"<svg" in icon.read()
    with urllib.request.urlopen(demo_server["url"] + "/login/", timeout=10) as login:
        css = re.search(r'href="(/static/agentdocs/app\.css)"', login.read().decode())
    assert css, "the sign-in page links no stylesheet"
    with urllib.request.urlopen(demo_server["url"] + css.group(1), timeout=10) as sheet:
        assert sheet.status == 200
