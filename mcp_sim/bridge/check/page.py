"""The ``--html`` page of ``mcp-sim check``: the verdict, the findings by rule and era, and the run
drawn twice: in the course's trace player, one per era, and as sequence diagrams, one per link; each
finding links to its step in the player and to its place in the diagram (chapter 12).

The player (:mod:`.page_player`) is the notebooks' own, exported step by step: each finding's
``player`` link (``#p<seq>``) opens it at the finding's event, and its buttons step on from there.
One diagram per link (the era's workload, its second process) keeps each readable: two lanes, the
checker's client and the server. Each finding links to the row of the diagram where it shows
(``#d<seq>``) and to that frame's text in the table below it (``#e<seq>``); each rule links to its
text and its source in the specification. The page has no external assets and the same report and
trace give the same bytes.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from mcp_sim.bridge.check.findings import CheckReport, Finding
from mcp_sim.bridge.check.page_player import PLAYER_CSS, PLAYER_SCRIPT, player_html, step_id
from mcp_sim.bridge.check.run import eras_of_links
from mcp_sim.protocol import rulebook
from mcp_sim.trace.event import TraceEvent
from mcp_sim.trace.events import Trace
from mcp_sim.trace.sequence import SequenceDiagram

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.5rem; color: #111; }
table { border-collapse: collapse; font-size: 0.9rem; margin-bottom: 1rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
thead th { background: #f0f0f0; }
.MUST { color: #a00; font-weight: bold; } .SHOULD { color: #a60; } .MAY { color: #555; }
.diagram { overflow: auto; max-height: 80vh; border: 1px solid #ccc; margin-bottom: 1rem; }
g:target line, g:target path { stroke: #c00 !important; stroke-width: 3; }
g:target text { fill: #c00 !important; font-weight: bold; }
tr:target { background: #fee; }
pre { background: #f7f7f7; padding: 0.5rem; overflow: auto; white-space: pre-wrap; max-width: 90vw; }
.passed { color: #070; } .failed { color: #a00; }
"""


def _rule_cell(rule_id: str) -> str:
    rule = rulebook.get(rule_id)
    esc = html.escape
    source = f" <a href='{esc(rule.url)}'>{esc(rule.where)}</a>" if rule.url else f" ({esc(rule.provenance)})"
    return (f"<details><summary><code>{esc(rule.id)}</code></summary><p>{esc(rule.text)}</p>"
            f"<p>Source:{source}</p></details>")


def _finding_row(f: Finding) -> str:
    esc = html.escape
    seq = f.evidence.get("seq")
    where = (f"<a href='#{step_id(seq)}'>player</a> · <a href='#d{seq}'>diagram</a> · "
             f"<a href='#e{seq}'>frame #{seq}</a>" if seq is not None else "")
    return (f"<tr><td class='{f.strength}'>{f.strength}</td><td>{esc(f.category)}</td><td>{esc(f.era)}</td>"
            f"<td>{_rule_cell(f.rule)}</td><td>{esc(f.message)}</td><td>{where}</td></tr>")


def _diagram(link: str, events: list[TraceEvent], marked: set[int]) -> str:
    svg = SequenceDiagram(Trace(events, title=link), title=link).to_svg()
    for seq in sorted(marked):
        svg = svg.replace(f'data-seq="{seq}"', f'id="d{seq}" data-seq="{seq}"', 1)
    return svg


def _event_rows(events: Sequence[TraceEvent], marked: set[int]) -> str:
    esc = html.escape
    rows = []
    for e in events:
        text = e.raw if e.raw is not None else e.text or ""
        body = json.dumps(e.message, indent=2, ensure_ascii=False) if e.message is not None else text
        flag = " ⚑" if e.seq in marked else ""
        rows.append(f"<tr id='e{e.seq}'><th scope='row'><a href='#{step_id(e.seq)}'>{e.seq}</a>{flag}</th><td>{e.t_ms:.0f} ms</td>"
                    f"<td>{esc(e.sender)} → {esc(e.receiver)}</td><td>{esc(e.kind)}</td>"
                    f"<td>{esc(', '.join(e.marks))}</td><td><details><summary>{esc(e.caption or text[:80])}"
                    f"</summary><pre>{esc(body[:20000])}</pre></details></td></tr>")
    return "".join(rows)


def report_page(report: CheckReport, trace: Trace | Sequence[TraceEvent]) -> str:
    """The page's HTML text."""
    esc = html.escape
    events = list(Trace.of(trace))
    marked = {int(f.evidence["seq"]) for f in report.findings if isinstance(f.evidence.get("seq"), int)}
    verdict = ("<p class='passed'>Passed: no rule of MUST strength is broken.</p>" if report.passed
               else "<p class='failed'>Failed: a rule of MUST strength is broken.</p>")
    eras = "".join(
        f"<tr><td>{esc(era)}</td><td>{esc(s.revision or '—')}</td>"
        f"<td>{esc(s.skipped or ('passed' if s.passed else 'failed'))}</td><td>{s.requests}</td>"
        + "".join(f"<td>{s.findings.get(k, 0)}</td>" for k in ("MUST", "SHOULD", "MAY")) + "</tr>"
        for era, s in report.eras.items())
    by_rule = "".join(f"<tr><td class='{s}'>{s}</td><td>{esc(era)}</td><td>{_rule_cell(r)}</td><td>{n}</td></tr>"
                      for r, s, era, n in report.by_rule())
    links: list[str] = []
    for e in events:
        if e.link not in links:
            links.append(e.link)
    sections = []
    for link in links:
        mine = [e for e in events if e.link == link]
        sections.append(f"<h3 id='link-{esc(link)}'>{esc(link)}</h3><div class='diagram'>"
                        f"{_diagram(link, mine, marked)}</div><details><summary>The {len(mine)} events of "
                        f"{esc(link)}</summary><table><thead><tr><th>#</th><th>time</th><th>between</th>"
                        f"<th>kind</th><th>marks</th><th>frame</th></tr></thead><tbody>"
                        f"{_event_rows(mine, marked)}</tbody></table></details>")
    by_era: dict[str, list[TraceEvent]] = {}
    eras_of = eras_of_links(events)
    for e in events:
        by_era.setdefault(eras_of.get(e.link, "other"), []).append(e)
    players = [player_html(mine, key=era, title=f"{era} era" if era != "other" else "other links")
               for era, mine in by_era.items()]
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'>", "<head>", "<meta charset='utf-8'>",
        f"<title>mcp-sim check: {esc(report.target)}</title>", f"<style>{_CSS}{PLAYER_CSS}</style>", "</head>", "<body>",
        f"<h1>mcp-sim check of <code>{esc(report.target)}</code></h1>", verdict,
        f"<p>Seed {report.seed}; nemesis {esc(', '.join(report.nemesis) or 'none')}.</p>",
        "<h2>Eras</h2><table><thead><tr><th>era</th><th>revision</th><th>verdict</th><th>requests</th>"
        f"<th>MUST</th><th>SHOULD</th><th>MAY</th></tr></thead><tbody>{eras}</tbody></table>",
        "<h2>By rule</h2><table><thead><tr><th>strength</th><th>era</th><th>rule</th><th>count</th></tr></thead>"
        f"<tbody>{by_rule}</tbody></table>",
        f"<h2>Findings ({len(report.findings)})</h2><table><thead><tr><th>strength</th><th>category</th>"
        "<th>era</th><th>rule</th><th>what happened</th><th>where</th></tr></thead><tbody>"
        + "".join(_finding_row(f) for f in report.findings) + "</tbody></table>",
        "<h2>Nemesis schedule</h2><ol>" + "".join(f"<li>{esc(s)}</li>" for s in report.schedule) + "</ol>",
        "<h2>The run in the trace player</h2><p>One player per era: the buttons step through the run, a row "
        "of the diagram goes to its step, and each finding's <em>player</em> link opens its step.</p>", *players,
        "<h2>The run, link by link</h2>", *sections,
        "<p>Generated by mcp-sim check.</p>", f"<script>{PLAYER_SCRIPT}</script>", "</body>", "</html>", "",
    ])
