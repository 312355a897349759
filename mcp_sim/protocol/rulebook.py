"""The rulebook: every rule the course teaches, at its true strength, with where it comes from.

A rule's words live here and nowhere else. Grader feedback, exercise READMEs, lab lessons, trace
captions, prediction explanations and chapter prose cite a rule by its **id**; this module turns the id
into the sentence, its strength and its source. That keeps three things true at once:

* **strength** — the spec's own keyword (RFC 2119/8174): ``MUST``, ``MUST NOT``, ``SHOULD``,
  ``SHOULD NOT`` or ``MAY``. A rule the spec states as a SHOULD is never taught as a MUST;
* **revisions** — the revisions where the rule holds, and, in ``other_era``, what the other era says
  instead (often: nothing, or the opposite);
* **provenance** — ``spec`` (with the page and section of the specification that says it, and its
  public address), ``simulator`` (a choice this simulator makes where the spec leaves one open: the
  rule says why the spec leaves it open in ``reason`` and what else would comply in ``alternatives``)
  or ``course`` (a convention of the course, for teaching; ``reason`` says why).

The rules themselves are data: one TOML file per area of the course in ``mcp_sim/protocol/rules/``
(``[[rule]]`` tables with the field names of :class:`Rule`). This module reads them once, checks them
(every field, every revision name, no id twice) and answers look-ups. It does no other I/O and knows
nothing of the layers above.

A ``spec`` rule's ``source.page`` is a path under the specification pages (``2025-11-25/...``,
``2026-07-28/...``, ``ext-tasks/tasks.md``), ``source.section`` the text of a heading on that page and
``source.keyword`` words that stand in that section — a test opens the page, finds the section and the
words, so a citation cannot drift from what the spec says.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Strength = Literal["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"]
Provenance = Literal["spec", "simulator", "course"]
Role = Literal["client", "server", "host", "authorization-server", "user"]

STRENGTHS: Final[tuple[str, ...]] = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
RULE_REVISIONS: Final[tuple[str, ...]] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
"""The revisions a rule can name (the tasks extension's rules name ``2026-07-28``, its base)."""

RULES_DIR: Final = Path(__file__).resolve().parent / "rules"
_ID = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")

SITE: Final = "https://modelcontextprotocol.io"
EXT_TASKS_URL: Final = ("https://github.com/modelcontextprotocol/ext-tasks/blob/"
                        "e4345978be1f602f1fc48d89051e8559dd5302a6/specification/draft/tasks.md")
_BEST_PRACTICES: Final = {
    "best-practices/security.mdx": "/docs/tutorials/security/security_best_practices",
    "best-practices/clients.mdx": "/docs/develop/clients/client-best-practices",
}


def heading_anchor(section: str) -> str:
    """The anchor a documentation site makes of a heading: lower case, words joined by ``-``, most
    punctuation dropped (``"Session Management"`` -> ``session-management``)."""
    text = re.sub(r"[`*_]", "", section).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"\s+", "-", text)


def page_url(page: str, section: str = "") -> str:
    """The public address of a specification page (and section) named as a path under the pages."""
    anchor = f"#{heading_anchor(section)}" if section else ""
    if page.startswith("ext-tasks/"):
        return EXT_TASKS_URL + anchor
    revision, _, rest = page.partition("/")
    if rest in _BEST_PRACTICES:
        return SITE + _BEST_PRACTICES[rest] + anchor
    path = re.sub(r"(^|/)index\.mdx$", "", rest)
    path = re.sub(r"\.mdx?$", "", path)
    return f"{SITE}/specification/{revision}" + (f"/{path}" if path else "") + anchor


class Source(BaseModel):
    """Where the specification says it: a page under the spec pages, the heading of the section, and
    words of that section (checked by a test). ``also`` names an RFC or another document the page
    relies on, for the learner who wants to read further."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page: str
    section: str
    keyword: str
    also: str = ""

    @property
    def url(self) -> str:
        return page_url(self.page, self.section)


class Rule(BaseModel):
    """One rule as the course teaches it (see the module docstring for each field's meaning)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    text: str
    strength: Strength
    revisions: tuple[str, ...]
    provenance: Provenance
    roles: tuple[Role, ...]
    chapters: tuple[str, ...] = ()
    source: Source | None = None
    other_era: str = ""
    reason: str = ""
    alternatives: str = ""

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"rule id {value!r}: lower-case words joined by '.' or '-'")
        return value

    @field_validator("revisions")
    @classmethod
    def _known_revisions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [r for r in value if r not in RULE_REVISIONS]
        if unknown or not value:
            raise ValueError(f"revisions must be some of {RULE_REVISIONS}, got {value}")
        return value

    @model_validator(mode="after")
    def _provenance_fits(self) -> Rule:
        if self.provenance == "spec" and self.source is None:
            raise ValueError(f"{self.id}: a spec rule needs its source (page, section, keyword)")
        if self.provenance != "spec" and not self.reason:
            raise ValueError(f"{self.id}: a {self.provenance} rule needs the reason the spec leaves it open")
        if self.provenance == "simulator" and not self.alternatives:
            raise ValueError(f"{self.id}: a simulator choice needs what else would comply (alternatives)")
        return self

    # -- how a rule is shown --------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.source.url if self.source else ""

    @property
    def where(self) -> str:
        """Where it comes from, in a few words: the page and section, or whose choice it is."""
        if self.source is not None:
            page = re.sub(r"(/index)?\.mdx?$", "", self.source.page)
            return f"spec {page.replace('/', ' ', 1)} § {self.source.section}"
        return "this simulator's choice" if self.provenance == "simulator" else "a course convention"

    @property
    def era_label(self) -> str:
        """The revisions in a short form: ``2025-11-25``, ``2025-06-18 – 2025-11-25``, ``every revision``."""
        revs = [r for r in RULE_REVISIONS if r in self.revisions]
        if revs == list(RULE_REVISIONS):
            return "every revision"
        return revs[0] if len(revs) == 1 else f"{revs[0]} – {revs[-1]}"

    def cite(self) -> str:
        """One line for feedback and plain text: strength, id, text, where it comes from."""
        tail = f" ({self.where}; {self.url})" if self.url else f" ({self.where})"
        return f"[{self.strength}] {self.id}: {self.text}{tail}"

    def as_json(self) -> dict[str, object]:
        """The rule as ``mcp-sim rules --json`` prints it."""
        source = None
        if self.source is not None:
            source = {"page": self.source.page, "section": self.source.section, "url": self.source.url,
                      "keyword": self.source.keyword, "also": self.source.also}
        return {"id": self.id, "text": self.text, "strength": self.strength, "revisions": list(self.revisions),
                "other_era": self.other_era, "provenance": self.provenance, "source": source,
                "roles": list(self.roles), "chapters": list(self.chapters), "reason": self.reason,
                "alternatives": self.alternatives}


class RuleFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule: list[Rule] = Field(default_factory=list)


class UnknownRule(KeyError):
    """A rule id that is not in the rulebook (a typo in a citation, most often)."""


@cache
def _load(folder: Path = RULES_DIR) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as fh:
            data = RuleFile.model_validate(tomllib.load(fh))
        for rule in data.rule:
            if rule.id in rules:
                raise ValueError(f"rule {rule.id!r} is defined twice (again in {path.name})")
            rules[rule.id] = rule
    return rules


def all_rules() -> list[Rule]:
    """Every rule, sorted by id."""
    return sorted(_load().values(), key=lambda r: r.id)


def get(rule_id: str) -> Rule:
    """The rule with this id; :class:`UnknownRule` names the id when there is none."""
    try:
        return _load()[rule_id]
    except KeyError:
        raise UnknownRule(f"no rule {rule_id!r} in the rulebook (see `mcp-sim rules`)") from None


def exists(rule_id: str) -> bool:
    return rule_id in _load()


def select(*, chapter: str | None = None, revision: str | None = None,
           ids: Iterable[str] | None = None) -> list[Rule]:
    """The rules taught in ``chapter`` and/or holding in ``revision`` (or the given ``ids``, in order)."""
    rules = [get(i) for i in ids] if ids is not None else all_rules()
    if chapter is not None:
        rules = [r for r in rules if chapter in r.chapters]
    if revision is not None:
        rules = [r for r in rules if revision in r.revisions]
    return rules


# -- citing rules in text ---------------------------------------------------------------------------
MACRO: Final = re.compile(r"\[\[(rule|ref) ([a-z0-9]+(?:[.-][a-z0-9]+)*)\]\]")
"""How prose cites a rule: ``[[rule ID]]`` shows the whole rule (strength, text, revisions, source);
``[[ref ID]]`` a short mention inside a sentence (strength and a link to the source)."""

RULE_KEYWORDS: Final = re.compile(r"\b(MUST(?: NOT)?|SHOULD(?: NOT)?|MAY|SHALL(?: NOT)?|REQUIRED|RECOMMENDED|OPTIONAL)\b")
"""The RFC 2119 keywords in upper case: where they stand in course text, a rule is being stated."""

Format = Literal["text", "markdown", "html"]


def _notes(rule: Rule, note: Callable[[str, str], str]) -> str:
    """What follows a whole rule, each part through ``note(label, text)``: what the other era says,
    and for a choice the spec leaves open, why it is one and what else complies."""
    parts = [("Other era", rule.other_era)]
    if rule.provenance != "spec":
        parts += [("Why it is a choice", rule.reason), ("Also compliant", rule.alternatives)]
    return "".join(note(label, text) for label, text in parts if text)


def _render(kind: str, rule: Rule, fmt: Format) -> str:
    import html as _html

    if fmt == "html":
        esc = _html.escape
        link = (f"<a href='{esc(rule.url)}' target='_blank' rel='noopener'>{esc(rule.where)}</a>" if rule.url
                else f"<i>{esc(rule.where)}</i>")
        badge = (f"<span class='mcp-sim-rule-strength' style='font-weight:bold;border:1px solid;"
                 f"border-radius:3px;padding:0 3px'>{esc(rule.strength)}</span>")
        if kind == "ref":
            return f"{badge} ({link})"
        notes = _notes(rule, lambda label, text: f" <i>{label}:</i> {esc(text)}")
        return (f"<span class='mcp-sim-rule'>{badge} {esc(rule.text)} "
                f"<small>({esc(rule.era_label)}; {link}; <code>{esc(rule.id)}</code>){notes}</small></span>")
    if fmt == "markdown":
        link = f"[{rule.where}]({rule.url})" if rule.url else f"*{rule.where}*"
        if kind == "ref":
            return f"**{rule.strength}** ({link})"
        notes = _notes(rule, lambda label, text: f" *{label}:* {text}")
        return f"**{rule.strength}** — {rule.text} ({rule.era_label}; {link}; `{rule.id}`){notes}"
    if kind == "ref":
        return f"[{rule.strength}: {rule.id}]"
    return rule.cite()


def expand(text: str, fmt: Format = "text") -> str:
    """``text`` with every ``[[rule ID]]`` and ``[[ref ID]]`` replaced by the rule, rendered for
    ``fmt``. In ``html`` the text around the macros is escaped; an unknown id raises
    :class:`UnknownRule`, so a typo is caught when the text is first shown (and by the tests)."""
    if fmt == "html":
        import html as _html

        out, last = [], 0
        for m in MACRO.finditer(text):
            out.append(_html.escape(text[last:m.start()]))
            out.append(_render(m.group(1), get(m.group(2)), fmt))
            last = m.end()
        out.append(_html.escape(text[last:]))
        return "".join(out)
    return MACRO.sub(lambda m: _render(m.group(1), get(m.group(2)), fmt), text)


def cited(text: str) -> list[str]:
    """The rule ids ``text`` cites through macros, in order of first appearance."""
    seen: list[str] = []
    for m in MACRO.finditer(text):
        if m.group(2) not in seen:
            seen.append(m.group(2))
    return seen


def bare_keywords(text: str) -> list[str]:
    """The upper-case RFC 2119 keywords that stand in ``text`` outside rule macros: a rule stated by
    hand, which the tests refuse in course text (cite the rule instead)."""
    return RULE_KEYWORDS.findall(MACRO.sub("", text))


def table(rules: Iterable[Rule], fmt: Format = "markdown") -> str:
    """A "rules this chapter taught" table: strength, rule, revisions, source."""
    rows = list(rules)
    if fmt == "markdown":
        lines = ["| strength | rule | revisions | source |", "|---|---|---|---|"]
        for r in rows:
            where = f"[{r.where}]({r.url})" if r.url else f"*{r.where}*"
            text = r.text.replace("|", "\\|")
            lines.append(f"| **{r.strength}** | {text} (`{r.id}`) | {r.era_label} | {where} |")
        return "\n".join(lines)
    return "\n".join(r.cite() for r in rows)
