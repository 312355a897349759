"""The rulebook: every rule loads, every ``spec`` citation resolves to the section of the page it names
and finds its words and its strength there, every citation in the course names a real rule, and no
course text states a rule by hand (an upper-case MUST / SHOULD / MAY outside a rule macro).

The citation checks need the specification pages, which a clone of the project does not have (they
are reference text, see ``mcp_sim/protocol/schemas/SOURCE.md``): they skip with a reason where
:func:`find_pages_dir` finds none, and they are marked ``spec_pages`` so CI runs them beside the
pages after running the whole suite in a bare clone.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_sim.course import CHAPTERS
from mcp_sim.course.notebooks import read_cells, render_markdown
from mcp_sim.course.predict import PREDICTIONS_DIR, load_questions
from mcp_sim.protocol import rulebook
from mcp_sim.protocol.schema import find_pages_dir

ROOT = Path(__file__).resolve().parents[1]
PAGES = find_pages_dir()
RULES = rulebook.all_rules()
SPEC_RULES = [r for r in RULES if r.provenance == "spec"]


def _plain(text: str) -> str:
    """Page text as a reader sees it: no emphasis or code marks, links reduced to their words, one
    space between words."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*`_]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def section_text(page: Path, section: str) -> str | None:
    """The text under the heading ``section`` of ``page`` (its subsections included), or ``None``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    start = level = None
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced  # a "# comment" inside a code block is not a heading
        m = None if fenced else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        if start is None and _plain(m.group(2)) == _plain(section):
            start, level = i, len(m.group(1))
        elif start is not None and level is not None and len(m.group(1)) <= level:
            return "\n".join(lines[start + 1:i])
    return "\n".join(lines[start + 1:]) if start is not None else None


STRENGTH_WORDS = {
    "MUST": ("MUST", "REQUIRED", "SHALL"),
    "MUST NOT": ("MUST NOT", "SHALL NOT"),
    "SHOULD": ("SHOULD", "RECOMMENDED"),
    "SHOULD NOT": ("SHOULD NOT", "NOT RECOMMENDED"),
    "MAY": ("MAY", "OPTIONAL"),
}


@pytest.mark.spec_pages
def test_the_pages_are_here_where_ci_requires_them() -> None:
    # CI's second step runs the spec_pages tests beside the pages: there a skip would hide a citation
    # that no longer resolves, so a missing folder fails instead.
    if os.environ.get("MCP_SIM_REQUIRE_PAGES") and PAGES is None:
        pytest.fail("MCP_SIM_REQUIRE_PAGES is set but no specification pages were found")
    if PAGES is None:
        pytest.skip("the specification pages are not on this machine")
    assert (PAGES / "2025-11-25" / "basic" / "transports.mdx").is_file()


# -- the rulebook itself ------------------------------------------------------------------------------
def test_the_rulebook_loads_and_has_the_rules_the_course_relies_on() -> None:
    assert len(RULES) >= 100, f"only {len(RULES)} rules"
    assert len({r.id for r in RULES}) == len(RULES)
    chapters = {c.number for c in CHAPTERS}
    for rule in RULES:
        assert set(rule.chapters) <= chapters, f"{rule.id}: unknown chapter in {rule.chapters}"


def test_every_rule_is_in_the_course_s_own_words() -> None:
    # The text is the course's paraphrase: it states the rule in lower case words ("must", "may"),
    # and the strength is a field, so that no rule text restates a keyword the badge already shows.
    for rule in RULES:
        assert not rulebook.bare_keywords(rule.text), f"{rule.id}: upper-case keyword in its text"
        assert len(rule.text) >= 30, f"{rule.id}: say the rule in a sentence"


@pytest.mark.parametrize("rule", SPEC_RULES, ids=lambda r: r.id)
@pytest.mark.spec_pages
@pytest.mark.skipif(PAGES is None, reason="the specification pages are not on this machine "
                    "(MCP_SIM_SPEC_PAGES, or ../shared/spec/pages beside the checkout)")
def test_a_spec_rule_s_source_section_says_it_at_its_strength(rule: rulebook.Rule) -> None:
    assert PAGES is not None and rule.source is not None
    page = PAGES / rule.source.page
    assert page.is_file(), f"{rule.id}: no page {rule.source.page}"
    text = section_text(page, rule.source.section)
    assert text is not None, f"{rule.id}: no heading {rule.source.section!r} on {rule.source.page}"
    keyword = _plain(rule.source.keyword)
    assert keyword.lower() in _plain(text).lower(), (
        f"{rule.id}: {rule.source.keyword!r} is not in § {rule.source.section} of {rule.source.page}")
    if not rule.source.also.startswith("schema"):
        words = STRENGTH_WORDS[rule.strength]
        assert any(re.search(rf"\b{w}\b", keyword) for w in words), (
            f"{rule.id}: its keyword should hold the spec's own {rule.strength} ({' / '.join(words)})")
        if rule.strength in ("MUST", "SHOULD"):
            assert not re.search(rf"\b{rule.strength} NOT\b", keyword), f"{rule.id}: the keyword says {rule.strength} NOT"


def test_page_urls_follow_the_public_site() -> None:
    assert rulebook.page_url("2025-11-25/basic/transports.mdx", "Session Management") == (
        "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management")
    assert rulebook.page_url("2026-07-28/basic/authorization/index.mdx") == (
        "https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization")
    assert rulebook.page_url("2026-07-28/best-practices/security.mdx").endswith("/security_best_practices")
    assert rulebook.page_url("ext-tasks/tasks.md").startswith("https://github.com/modelcontextprotocol/ext-tasks/")


def test_a_choice_of_the_simulator_says_why_and_what_else_complies() -> None:
    for rule in RULES:
        if rule.provenance == "simulator":
            assert rule.reason and rule.alternatives, rule.id
        if rule.provenance == "spec":
            assert rule.source is not None, rule.id


# -- citations in the course ----------------------------------------------------------------------------
def _notebook_sources() -> list[Path]:
    return sorted((ROOT / "notebooks" / "src").glob("*.py"))


def _markdown_cells(source: Path) -> list[str]:
    return [c.source for c in read_cells(source.read_text(encoding="utf-8")) if c.cell_type == "markdown"]


def _course_texts() -> list[tuple[str, str]]:
    """Every course text that may cite rules: (where, text)."""
    out = []
    for source in _notebook_sources():
        out += [(f"{source.name} markdown", cell) for cell in _markdown_cells(source)]
    for q in load_questions().values():
        out.append((f"question {q.id}", " ".join([q.why, *q.wrong_because.values()])))
    return out


def test_every_cited_rule_exists() -> None:
    unknown = [(where, rid) for where, text in _course_texts() for rid in rulebook.cited(text)
               if not rulebook.exists(rid)]
    assert not unknown, unknown


@pytest.mark.parametrize("source", _notebook_sources(), ids=lambda p: p.stem)
def test_a_chapter_s_rule_table_lists_every_rule_it_cites(source: Path) -> None:
    chapter = source.stem[:2]
    cited = set()
    for cell in _markdown_cells(source):
        cited |= set(rulebook.cited(cell))
    for q in load_questions().values():
        if q.id.startswith(f"{chapter}-"):
            cited |= set(q.rules)
    filed = {r.id for r in rulebook.select(chapter=chapter)}
    missing = sorted(i for i in cited if rulebook.exists(i) and i not in filed)
    assert not missing, f"chapter {chapter} cites rules the rulebook does not file under it: {missing}"


@pytest.mark.parametrize("source", _notebook_sources(), ids=lambda p: p.stem)
def test_no_chapter_states_a_rule_by_hand(source: Path) -> None:
    found = []
    for cell in _markdown_cells(source):
        for line in cell.splitlines():
            if rulebook.bare_keywords(line):
                found.append(line.strip())
    assert not found, f"cite the rule with [[rule ID]] or [[ref ID]] instead: {found[:5]}"


@pytest.mark.parametrize("path", sorted(PREDICTIONS_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_no_prediction_states_a_rule_by_hand(path: Path) -> None:
    for q in load_questions().values():
        if q.id.startswith(f"{path.stem}-"):
            for text in (q.why, *q.wrong_because.values()):
                assert not rulebook.bare_keywords(text), f"{q.id}: cite the rule instead: {text[:120]}"
            rulebook.expand(q.why)  # every macro resolves


def test_markdown_macros_render_with_strength_and_link() -> None:
    rule = RULES[0]
    out = render_markdown(f"See [[rule {rule.id}]] and [[ref {rule.id}]].\n\n[[rules-table]]",
                          rule.chapters[0] if rule.chapters else "00")
    assert f"**{rule.strength}**" in out and "[[" not in out
    if rule.url:
        assert rule.url in out


# -- exercise READMEs, grader feedback and lab lessons -------------------------------------------------
README_CITATION = re.compile(r"rule `([a-z0-9]+(?:[.-][a-z0-9]+)*)`")


def _readmes() -> list[Path]:
    return [*sorted((ROOT / "exercises").glob("*/README.md")), ROOT / "exercises" / "README.md"]


@pytest.mark.parametrize("path", _readmes(), ids=lambda p: p.parent.name)
def test_an_exercise_readme_states_rules_only_by_citing_them(path: Path) -> None:
    # A README is read as it is (no macros): a line that states a rule in upper case names it as
    # rule `ID`, and the keyword it uses is that rule's strength.
    problems = []
    for line in path.read_text(encoding="utf-8").splitlines():
        ids = README_CITATION.findall(line)
        for rid in ids:
            if not rulebook.exists(rid):
                problems.append(f"unknown rule {rid}")
        words = rulebook.bare_keywords(line)
        if not words:
            continue
        strengths = {rulebook.get(i).strength for i in ids if rulebook.exists(i)}
        allowed = {w for s in strengths for w in STRENGTH_WORDS[s]}
        for word in words:
            if word not in allowed:
                problems.append(f"{word!r} without a rule of that strength: {line.strip()[:100]}")
    assert not problems, problems[:8]


def _literal_strings(path: Path) -> list[tuple[int, str]]:
    """String literals of a module that are not docstrings: what it shows a learner."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


FEEDBACK_MODULES = sorted((ROOT / "mcp_sim" / "grading" / "exercises").glob("*.py")) + sorted(
    (ROOT / "mcp_sim" / "scenarios" / "security").glob("*.py"))


@pytest.mark.parametrize("path", FEEDBACK_MODULES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_grader_feedback_and_lab_lessons_cite_rules_instead_of_stating_them(path: Path) -> None:
    found = [(line, text[:100]) for line, text in _literal_strings(path) if rulebook.bare_keywords(text)]
    assert not found, f"state the rule in the rulebook and cite its id: {found[:5]}"


def test_every_exercise_names_its_rules_by_id() -> None:
    from mcp_sim.grading.exercises import EXERCISES

    problems = []
    for ex in EXERCISES.values():
        for rid in ex.rules:
            if not rulebook.exists(rid):
                problems.append(f"{ex.id}: rules has {rid[:60]!r}")
        for check in ex.checks:
            if not rulebook.exists(check.rule):
                problems.append(f"{ex.id}: check {check.name!r} has rule {check.rule[:60]!r}")
        for hint in ex.hints:
            if hint.rule and not rulebook.exists(hint.rule):
                problems.append(f"{ex.id}: a hint has rule {hint.rule[:60]!r}")
    assert not problems, f"{len(problems)} rule texts where rulebook ids belong: {problems[:6]}"


# -- the command ----------------------------------------------------------------------------------------
def test_rules_json_lists_every_rule_with_its_source() -> None:
    out = subprocess.run([sys.executable, "-m", "mcp_sim.cli", "rules", "--json"], capture_output=True,
                         text=True, check=True).stdout
    data = json.loads(out)["rules"]
    assert [r["id"] for r in data] == [r.id for r in RULES]
    for row in data:
        assert set(row) >= {"id", "text", "strength", "revisions", "provenance", "source", "roles", "reason"}
        assert row["provenance"] in ("spec", "simulator", "course")
        if row["provenance"] == "spec":
            assert set(row["source"]) >= {"page", "section", "url"} and row["source"]["url"].startswith("https://")


def test_rules_filters_by_chapter_and_revision() -> None:
    def run(*args: str) -> list[str]:
        out = subprocess.run([sys.executable, "-m", "mcp_sim.cli", "rules", "--json", *args],
                             capture_output=True, text=True, check=True).stdout
        return [r["id"] for r in json.loads(out)["rules"]]

    chapter = RULES[0].chapters[0] if RULES[0].chapters else "06"
    assert run("--chapter", chapter) == [r.id for r in rulebook.select(chapter=chapter)]
    modern = run("--revision", "2026-07-28")
    assert modern == [r.id for r in RULES if "2026-07-28" in r.revisions]
    bad = subprocess.run([sys.executable, "-m", "mcp_sim.cli", "rules", "--id", "no.such-rule"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no rule 'no.such-rule'" in bad.stderr
