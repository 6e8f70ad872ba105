"""The README's walk-through, run as a newcomer pastes it: every ```bash block of the README's
"Walk-through with curl" section, then of the "Walk-through" section of each feature page in
docs/ that goes on from it, in order, in one shell, against a stack of its own; then the README's
own section once more after a restart (every `serve` starts empty).

Each command's trailing comment is what the README promises, and is checked: a status (`# 204`,
`# 401 unauthorized`), a JSON object (`# {"matched":false,...}`, `...` for any value) or a bare
value (`# 1`); a command with prose or no comment must not answer an error. A variable a
command sets (`TOKEN=$(...)`) must not be empty or `null`. Reads of derived data (counters,
unread counts) are retried for a while, as a reader would run them again.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DB_PREFIX, REDIS_PORT, ROOT, TEST_ENV, _worker_index
from tests.support.local_stack import start_serve, stop_serve

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("readme_stack")]

README = ROOT / "README.md"
# The walk-through in the order a newcomer follows it, each page going on with the variables the
# ones before it set: (file, the heading of its section).
WALKTHROUGH = (
    (README, "## Walk-through with curl"),
    (ROOT / "docs/accounts.md", "## Walk-through"),
    (ROOT / "docs/notifications.md", "## Walk-through"),
    (ROOT / "docs/discover.md", "## Walk-through"),
    (ROOT / "docs/messages.md", "## Walk-through"),
    (ROOT / "docs/blocks.md", "## Walk-through"),
)
DROPPED = ("AWS_", "DB_", "REDIS_", "POWERTOOLS_", "RATE_LIMIT_")
SETTLE_SECONDS = 20.0  # how long a read of derived data may take to show what the README says


@dataclass
class Command:
    text: str
    expect: str  # the trailing comment ("" when none)
    assigns: str | None  # the variable it sets, if any

    @property
    def is_read(self) -> bool:
        """A GET that changes nothing, safe to run again."""
        # (Discover's reads are not: each page marks the people it shows as seen.)
        reads = self.text.startswith(("curl", "sleep 1; curl")) and " -X " not in self.text
        return reads and "/discover" not in self.text


def section(markdown: str, heading: str) -> str:
    """The section under `heading` (a line of its own), up to the next heading of its level or
    above; a `#` line inside a fenced block is a shell comment, not a heading."""
    lines = markdown.splitlines(keepends=True)
    start = lines.index(heading + "\n")  # a missing section fails here, by name
    level = len(heading) - len(heading.lstrip("#"))
    fenced = False
    for end in range(start + 1, len(lines)):
        line = lines[end]
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(rf"^#{{1,{level}}} ", line):
            return "".join(lines[start:end])
    return "".join(lines[start:])


def walkthrough() -> list[Command]:
    """Every command of the walk-through, across the README and the pages that go on from it."""
    return [
        command
        for path, heading in WALKTHROUGH
        for command in walkthrough_commands(section(path.read_text(encoding="utf-8"), heading))
    ]


def walkthrough_commands(body: str) -> list[Command]:
    commands: list[Command] = []
    for block in re.findall(r"^```bash\n(.*?)^```", body, flags=re.S | re.M):
        pending = ""
        for line in block.splitlines():
            stripped = line.strip()
            if not pending and (not stripped or stripped.startswith("#")):
                # A comment line right under a command is its expected answer.
                if stripped.startswith("# {") and commands and not commands[-1].expect:
                    commands[-1].expect = stripped[2:]
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            code, expect = _split_comment(pending + line)
            pending = ""
            assigned = re.match(r"^([A-Z_]+)=\$\(", code)
            commands.append(Command(code, expect, assigned.group(1) if assigned else None))
    return commands


def _split_comment(line: str) -> tuple[str, str]:
    """(command, trailing comment): a comment starts at `#` after two spaces, outside quotes."""
    quote = None
    escaped = False
    for i, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif char in "'\"" and quote in (None, char):
            quote = None if quote else char
        elif char == "#" and quote is None and line[i - 2 : i] == "  ":
            return line[:i].strip(), line[i + 1 :].strip()
    return line.strip(), ""


def check(command: Command, output: str) -> str | None:
    """What is wrong with `output` for `command`, or None when it is what the README says."""
    text = output.strip()
    expect = command.expect
    status = re.match(r"^(\d{3})\b\s*([a-z_]+)?", expect)
    if status and "%{http_code}" in command.text:
        return None if text.splitlines()[-1:] == [status.group(1)] else f"status {text!r}"
    if status and int(status.group(1)) >= 400:
        code = status.group(2)
        try:
            error = json.loads(text)["error"]
        except (ValueError, KeyError, TypeError):
            return f"not an error: {text[:300]!r}"
        return None if code is None or error["code"] == code else f"error {error}"
    if expect.startswith("{"):
        return _json_subset(expect, text)
    quoted = re.match(r'^("[^"]*")', expect)
    if quoted:
        return None if quoted.group(1) in text.splitlines() else f"no {quoted.group(1)} in {text!r}"
    bare = re.match(r"^(-?\d+|true|false|null)\b", expect)
    if bare and not status:
        return None if text == bare.group(1) else f"{text[:300]!r} is not {bare.group(1)}"
    if '"error"' in text:
        return f"an error: {text[:300]!r}"
    return None


def _json_subset(expect: str, text: str) -> str | None:
    wanted: dict[str, Any] = json.loads(expect)
    try:
        got = json.loads(text)
    except ValueError:
        return f"not JSON: {text[:300]!r}"
    wrong = {
        key: got.get(key)
        for key, value in wanted.items()
        if ((got.get(key) is None) if value == "..." else (got.get(key) != value))
    }
    return f"{wrong} (whole answer {got})" if wrong else None


class Shell:
    """One bash process that keeps its variables between commands, as a terminal does."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, cwd=ROOT, env=env,
        )  # fmt: skip

    def run(self, command: str) -> str:
        marker = f"@@done-{uuid.uuid4().hex}"
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{command}\nprintf '\\n%s\\n' {marker}\n")
        self.process.stdin.flush()
        lines = []
        for line in self.process.stdout:
            if line.rstrip("\n") == marker:
                return "".join(lines)
            lines.append(line)
        raise AssertionError(f"the shell ended during {command!r}: {''.join(lines)}")

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def walk_through(commands: list[Command], served: Any, env_file: Path, stack_name: str) -> None:
    # A newcomer's shell: none of this process's settings for the code under test.
    env = {k: v for k, v in os.environ.items() if k not in TEST_ENV and not k.startswith(DROPPED)}
    shell = Shell({**env, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    try:
        for command in commands:
            text = command.text.replace("http://127.0.0.1:3000", served.http)
            text = text.replace(".venv/bin/python", sys.executable)
            if "-m infra.local.seed_nearby" in text:
                # The stack's stores; 100 people instead of 1,000 are as many within 5 km.
                text = text.replace("--count 1000", "--count 100")
                text += (
                    f" --endpoint-url {served.moto} --env-vars {env_file} --stack-name {stack_name}"
                )
            deadline = time.monotonic() + (SETTLE_SECONDS if command.is_read else 0)
            while True:
                output = shell.run(text)
                problem = check(command, output)
                if problem is None or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert problem is None, f"walk-through: {command.text}\n  # {command.expect}\n{problem}"
            if command.assigns:
                value = shell.run(f'printf "%s" "${command.assigns}"').strip()
                assert value not in ("", "null"), f"walk-through: {command.text} left it {value!r}"
    finally:
        shell.close()


@pytest.fixture(scope="module")
def readme_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    # What `make run` serves (infra/local/env.json), on a database and Redis index of its own.
    local = json.loads((ROOT / "infra/local/env.json").read_text())["Parameters"]
    parameters = {
        **local,
        "DB_NAME": f"{DB_PREFIX}_readme_{_worker_index()}",
        "REDIS_URL": f"redis://127.0.0.1:{REDIS_PORT}/{4 + _worker_index()}",
        "PASSWORD_HASH_ROUNDS": "4",
    }
    return tmp_path_factory.mktemp("readme") / "env.json", {"Parameters": parameters}


def test_the_readme_walkthrough_answers_what_it_says_twice(readme_env):
    commands = walkthrough()
    assert len(commands) > 40 and any(c.expect for c in commands)
    # A second `make run` starts empty: the README's own section signs the same names up again
    # (the feature pages add nothing a restart could break, and would double the test's time).
    again = walkthrough_commands(section(README.read_text(encoding="utf-8"), WALKTHROUGH[0][1]))
    assert any(c.assigns for c in again) and len(again) < len(commands)
    env_file, env_vars = readme_env
    for run in (commands, again):
        stack_name = f"warble-readme-{uuid.uuid4().hex[:6]}"
        served = start_serve(
            env_file,
            env_vars,
            extra_args=["--stack-name", stack_name, "--no-schedules"],
            drop_env_prefixes=("AWS_", "DB_", "REDIS_"),
        )
        try:
            walk_through(run, served, env_file, stack_name)
        finally:
            stop_serve(served, timeout=120)


def test_the_walkthrough_parser_reads_commands_comments_and_continuations():
    readme = (
        '## Walk-through\n```bash\nA=$(curl -s x \\\n  -d \'{"a":"#"}\' | jq -r .id)\n'
        "# a comment line\ncurl -s y -w '%{http_code}\\n'  # 204\ncurl -s z\n"
        '# {"total":4}\n```\n'
        "### A subsection\n```bash\n```\n"
        "## The next section\n```bash\ncurl -s not-this-one\n```\n"
    )
    first, second, third = walkthrough_commands(section(readme, "## Walk-through"))
    assert first.assigns == "A" and first.expect == "" and '-d \'{"a":"#"}\'' in first.text
    assert second.expect == "204" and check(second, "204\n") is None
    assert check(second, "409\n") is not None
    assert third.expect == '{"total":4}' and check(third, '{"total":4,"home":0}') is None
    assert check(third, '{"total":3}') is not None
    assert check(Command("curl", "401 unauthorized", None), '{"error":{"code":"x"}}')
    assert check(Command("curl", "", None), '{"error":{"code":"x"}}') is not None
    assert check(Command("curl", "201 Notification", None), '{"id":"1"}') is None
    assert check(Command("curl", '"hi" (pushed)', None), '"hi"\n"ho"') is None
    assert check(Command("curl", '"hi" (pushed)', None), '"ho"') is not None
    quoted = 'curl -d "{\\"a\\":\\"$B\\"}"  # {"x":null}'
    assert _split_comment(quoted) == ('curl -d "{\\"a\\":\\"$B\\"}"', '{"x":null}')
