"""The README's generated parts and examples stay true to the code."""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import List

import pytest
import yaml

from lint_h2d import config, docs
from lint_h2d.rules import all_rules
from tests.conftest import REPO, run_cli

README = (REPO / "README.md").read_text(encoding="utf-8")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert match, f"README has no `## {title}` section"
    return match.group(1)


def _blocks(text: str, lang: str) -> List[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_readme_rule_table_is_generated() -> None:
    assert docs.readme_block(README) == docs.rules_table_markdown(), (
        "README rule table is stale: run `python -m lint_h2d.docs --write`"
    )
    assert docs.replace_table(README) == README


def test_rule_table_lists_every_rule() -> None:
    table = docs.rules_table_markdown()
    for rule in all_rules():
        assert f"| {rule.code} | {rule.name} | {rule.summary} |" in table


def test_docs_write_updates_a_stale_readme(tmp_path: Path) -> None:
    stale = tmp_path / "README.md"
    stale.write_text(f"# x\n\n{docs.START}\n| old |\n{docs.END}\n\nrest\n")
    assert docs.main(["--check", "--readme", str(stale)]) == 1
    assert docs.main(["--write", "--readme", str(stale)]) == 0
    text = stale.read_text()
    assert docs.readme_block(text) == docs.rules_table_markdown()
    assert text.startswith("# x\n\n") and text.endswith(f"{docs.END}\n\nrest\n")
    assert docs.main(["--check", "--readme", str(stale)]) == 0


def test_docs_module_runs_as_script() -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "lint_h2d.docs", "--check"], cwd=str(REPO),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_rule_command_uses_the_same_docs() -> None:
    listing = run_cli("rule", "--all")
    assert listing.returncode == 0
    for rule in all_rules():
        assert f"{rule.code}  {rule.name}  {rule.summary}" in listing.stdout
        one = run_cli("rule", rule.code)
        assert one.stdout == rule.doc.render(rule.code, rule.name)


def test_configuration_documents_every_key() -> None:
    section = _section("Configuration")
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", section, re.M))
    assert documented == config._KEYS


def test_configuration_example_is_valid() -> None:
    snippets = [b for b in _blocks(_section("Configuration"), "toml") if "[tool.lint-h2d]" in b]
    assert snippets
    for snippet in snippets:
        table = tomllib.loads(snippet)["tool"]["lint-h2d"]
        assert set(table) == config._KEYS  # the example shows every key
        config.from_table(table, Path("pyproject.toml"), REPO)


def test_configuration_defaults_match_code() -> None:
    section = _section("Configuration")
    defaults = config.Settings()
    assert '`select` | `["H2D"]`' in section and defaults.select == ("H2D",)
    assert '`fix-gate` | `"auto"`' in section and defaults.fix_gate == "auto"
    assert "`respect-gitignore` | `true`" in section and defaults.respect_gitignore is True
    capture = ", ".join(f'"{c}"' for c in defaults.capture_functions)
    assert f"`capture-functions` | `[{capture}]`" in section


def test_pre_commit_snippets() -> None:
    section = _section("pre-commit")
    shipped = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    hook_ids = {h["id"] for h in shipped}
    blocks = [yaml.safe_load(b) for b in _blocks(section, "yaml")]
    remote = [b[0] for b in blocks if b[0]["repo"] != "local"]
    local = [b[0] for b in blocks if b[0]["repo"] == "local"]
    assert remote and local
    assert {h["id"] for h in remote[0]["hooks"]} <= hook_ids
    hook = local[0]["hooks"][0]
    # The local hook runs what the shipped `lint-h2d` hook runs.
    assert hook["entry"] == next(h["entry"] for h in shipped if h["id"] == "lint-h2d")
    assert "--force-exclude" in hook["entry"]
    assert hook["language"] == "python"
    assert hook["types"] == ["python"]
    # Not published yet: the local hook installs the package from a clone (a PEP 508 file URL).
    (dependency,) = hook["additional_dependencies"]
    assert dependency.startswith("lint-h2d @ file:///")
    # Both are valid pre-commit configuration.
    import cfgv
    from pre_commit.clientlib import CONFIG_SCHEMA

    for b in blocks:
        cfgv.validate({"repos": b}, CONFIG_SCHEMA)


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "json-lines", "github", "sarif"])
def test_usage_lists_every_output_format(fmt: str) -> None:
    assert fmt in _section("Usage")
