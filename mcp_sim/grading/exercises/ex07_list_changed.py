"""Exercise ex07_list_changed (chapter 07): what a client does when a server says a list changed.

The learner writes ``on_notification(lists, capabilities, notification, fetch)``: the client holds
whole lists (``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list``) and a
notification arrives from the server. A ``list_changed`` carries no list, so the client lists again —
from the first page, following every ``nextCursor`` through ``fetch`` — but only the lists that
notification is about, only lists it holds, and only when the server declared ``listChanged`` for
that kind; every other notification leaves the lists alone.

Every case is played by the simulator: a seeded catalog server and the real Client, in the case's
revision (both eras); the lists, the capabilities, the notification and the pages ``fetch`` serves
are what went over the wire. The expected lists follow the simulator's own client cache
(:data:`mcp_sim.roles.cache.INVALIDATES`) and capability test
(:func:`mcp_sim.protocol.lifecycle.has_capability`).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import anyio

from mcp_sim.grading.exercises.ex07_world import (
    FILE_NAMES,
    LEGACY_REVISIONS,
    LIST_FIELD,
    MODERN,
    PROMPT_NAMES,
    TEMPLATE_NAMES,
    TOOL_NAMES,
    Connect,
    add_prompt,
    add_resource,
    add_template,
    add_tool,
    add_worker,
    catalog,
    list_everything,
    list_pages,
    record,
    unused,
    whole_list,
)
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.lifecycle import has_capability
from mcp_sim.roles.cache import INVALIDATES
from mcp_sim.roles.server import Server

R_RELIST = "change.list-changed-carries-no-list"
R_WHICH = "change.resources-list-changed-covers-templates"
R_DECLARED = "change.sim-ignores-undeclared-list-changed"
R_UNRELATED = "change.only-list-changed-means-relist"
R_CURSOR = "pagination.cursor-opaque"

_KIND_OF = {"notifications/tools/list_changed": "tools", "notifications/prompts/list_changed": "prompts",
            "notifications/resources/list_changed": "resources"}


@dataclass
class Case:
    """One notification, with what the client held before it and what the server lists after it."""

    revision: str
    capabilities: dict[str, Any]
    lists: dict[str, list[dict[str, Any]]]
    notification: dict[str, Any]
    pages: dict[tuple[str, str | None], dict[str, Any]]
    rule: str
    """The rule a wrong fetch breaks in this case."""

    def expected(self) -> dict[str, list[dict[str, Any]]]:
        """The lists after the notification, as the simulator's client cache and capability test say."""
        method = self.notification["method"]
        kind = _KIND_OF.get(method)
        declared = kind is not None and has_capability(self.capabilities, f"{kind}.listChanged")
        stale = INVALIDATES.get(method, ()) if declared else ()
        return {m: whole_list(self.pages, m) if m in stale else items for m, items in self.lists.items()}


def build(rng: Any, seed: int, *, change: str, revision: str, page_size: int | None,
          held: tuple[str, ...], rule: str) -> Case:
    """Play the case in the simulator. ``change`` is ``tools``/``prompts``/``resources`` (a list
    changes) or ``resources/updated``/``log message``/``progress`` (something else happens)."""
    server = catalog(rng, page_size=page_size)
    watched = sorted(server.resources)[0]
    if change in ("log message", "progress"):
        add_worker(server)
    modern = revision == MODERN

    async def story(connect: Connect, srv: Server) -> None:
        client = await connect(None)
        if modern:
            client.log_level = "info"
            await client.listen({"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True,
                                 "resourceSubscriptions": [watched]})
        elif change == "resources/updated":
            await client.subscribe_resource(watched)
        await list_everything(client, held)
        if change == "tools":
            add_tool(srv, unused(rng, TOOL_NAMES, srv.tools))
        elif change == "prompts":
            add_prompt(srv, unused(rng, PROMPT_NAMES, srv.prompts))
        elif change == "resources":  # a resource and a template: both lists change
            add_resource(srv, unused(rng, FILE_NAMES, {u.rsplit("/", 1)[1] for u in srv.resources}))
            folder = unused(rng, TEMPLATE_NAMES, {t.split(":")[0] for t in srv.templates})
            add_template(srv, folder)
        elif change == "resources/updated":
            srv.resource_updated(watched)
        else:
            await client.call_tool("work", {"steps": rng.randint(2, 3)}, on_progress=lambda *_: None)
        await anyio.sleep(1)
        # The server's lists after the change: the pages fetch() serves (other lists are never due).
        await list_everything(client, tuple(m for m in LIST_FIELD if m.startswith(f"{change}/")))

    messages = record(seed, revision, server, story)
    method = {"tools": "notifications/tools/list_changed", "prompts": "notifications/prompts/list_changed",
              "resources": "notifications/resources/list_changed", "resources/updated":
              "notifications/resources/updated", "log message": "notifications/message",
              "progress": "notifications/progress"}[change]
    at = next(i for i, m in enumerate(messages) if m["from"] == "server" and m["message"].get("method") == method)
    opened = next(r for m in messages if "result" in m["message"] and "capabilities" in (r := m["message"]["result"]))
    before = list_pages(messages[:at])
    return Case(revision, copy.deepcopy(opened["capabilities"]), {m: whole_list(before, m) for m in held},
                messages[at]["message"], list_pages(messages[at:]), rule)


def _names(items: Any) -> list[str]:
    if not isinstance(items, list):
        return [repr(items)]
    return [str(i.get("name") if isinstance(i, dict) else i) for i in items]


def run_case(ctx: CheckContext, case: Case) -> None:
    """Give the learner the case and compare the lists returned with the expected ones."""
    want = case.expected()
    stale = {m for m in want if want[m] != case.lists[m]}
    fetched: list[tuple[str, str | None]] = []
    note = json.dumps(case.notification)

    def fetch(method: Any, cursor: Any = None) -> dict[str, Any]:
        if method not in LIST_FIELD:
            raise CheckFailed(f"fetch() was called with {method!r}; it takes a list method: "
                              f"{', '.join(LIST_FIELD)}.")
        if method not in stale:
            kind = _KIND_OF.get(case.notification["method"], "")
            if method not in case.lists:
                why = "the client does not hold that list"
            elif case.rule == R_DECLARED:
                why = (f"the server never declared {kind}.listChanged true (its {kind} capability: "
                       f"{json.dumps(case.capabilities.get(kind))}), so it offered no such notification")
            else:
                why = "nothing in this notification says that list changed"
            raise CheckFailed(f"After {note} your code fetched {method} — but {why}. No request was due.", case.rule)
        if (method, cursor) not in case.pages:
            raise CheckFailed(f"fetch({method!r}, {cursor!r}): the server never issued that cursor for {method}. "
                              f"Start with None and pass each page's nextCursor back unchanged.", R_CURSOR)
        fetched.append((method, cursor))
        return copy.deepcopy(case.pages[(method, cursor)])

    got = ctx.function("on_notification")(copy.deepcopy(case.lists), copy.deepcopy(case.capabilities),
                                          copy.deepcopy(case.notification), fetch)
    if not isinstance(got, dict):
        raise CheckFailed(f"on_notification() must return the client's lists as a dict (method → items); got "
                          f"{type(got).__name__}.")
    for method in want:
        if method not in got:
            raise CheckFailed(f"After {note} the client no longer holds {method}: it must keep every list it held "
                              f"(listed again when stale, unchanged otherwise).", R_RELIST if method in stale
                              else case.rule)
    extra = sorted(set(got) - set(want))
    if extra:
        raise CheckFailed(f"The client held {sorted(want)}; after {note} it also holds {extra}. A list nobody "
                          f"fetched before is not fetched now.", R_WHICH)
    for method, items in want.items():
        if got[method] == items:
            continue
        if method in stale:
            pages = sum(1 for m, _ in fetched if m == method)
            if not pages:
                raise CheckFailed(f"{note} makes {method} stale too, but you did not list it again: it should be "
                                  f"{_names(items)}; you kept {_names(got[method])}.", R_WHICH)
            raise CheckFailed(f"After {note} {method} should be the whole new list {_names(items)}; you returned "
                              f"{_names(got[method])} (after fetching {pages} page(s) of it).", R_RELIST)
        raise CheckFailed(f"After {note} {method} should stay {_names(items)}; you returned "
                          f"{_names(got[method])}.", case.rule)


def _revision(rng: Any, kind: str) -> str:
    return MODERN if "2026-07-28" in kind else str(rng.choice((*LEGACY_REVISIONS, MODERN)))


def _seed(ctx: CheckContext) -> int:
    return ctx.rng.randint(0, 2**31)


def check_relist(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    change = kind.split(",")[0]
    revision = MODERN if "2026-07-28" in kind else str(rng.choice(LEGACY_REVISIONS))
    page_size = None if "one page" in kind else rng.choice((1, 2, 3))
    run_case(ctx, build(rng, _seed(ctx), change=change, revision=revision, page_size=page_size,
                        held=tuple(LIST_FIELD), rule=R_WHICH))


_WHICH = {"resources: templates too": ("resources", tuple(LIST_FIELD)),
          "resources: templates held alone": ("resources", ("tools/list", "resources/templates/list")),
          "tools: never fetched": ("tools", ("prompts/list", "resources/list")),
          "prompts: the others stay": ("prompts", ("tools/list", "prompts/list", "resources/list"))}


def check_which(ctx: CheckContext, kind: str) -> None:
    change, held = _WHICH[kind]
    run_case(ctx, build(ctx.rng, _seed(ctx), change=change, revision=_revision(ctx.rng, kind), page_size=2,
                        held=held, rule=R_WHICH))


def check_declared(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    change = rng.choice(("tools", "prompts", "resources"))
    held = tuple(m for m in LIST_FIELD if kind != "kind not declared" or not m.startswith(change))
    case = build(rng, _seed(ctx), change=change, revision=_revision(rng, kind), page_size=2, held=tuple(LIST_FIELD),
                 rule=R_DECLARED)
    caps = case.capabilities
    if kind == "listChanged false":
        caps[change]["listChanged"] = False
    elif kind == "listChanged missing":
        caps[change].pop("listChanged", None)
    else:  # the server never declared the kind at all, so the client holds none of its lists
        caps.pop(change)
        case.lists = {m: items for m, items in case.lists.items() if m in held}
    run_case(ctx, case)


def check_unrelated(ctx: CheckContext, kind: str) -> None:
    run_case(ctx, build(ctx.rng, _seed(ctx), change=kind, revision=_revision(ctx.rng, kind), page_size=2,
                        held=tuple(LIST_FIELD), rule=R_UNRELATED))


EXERCISE = Exercise(
    id="ex07_list_changed",
    title="A list changed: list it again, and only that",
    chapter="07",
    summary="Handle a server's notifications: re-list (every page) exactly the lists a list_changed names, "
            "only for kinds the server declared with listChanged, and nothing for any other notification.",
    rules=(R_RELIST, R_WHICH, R_DECLARED, R_UNRELATED, R_CURSOR),
    functions=("on_notification",),
    checks=(
        Check("A list_changed re-lists that list, every page", R_RELIST, check_relist,
              ("tools, one page", "tools, several pages", "prompts, several pages",
               "resources, several pages, 2026-07-28"),
              hint="The notification has no items: ask for the list again, and keep asking while a page has a "
                   "nextCursor."),
        Check("Only the lists the notification names, and only lists you hold", R_WHICH, check_which,
              tuple(_WHICH),
              hint="Map the notification's method to the list methods it covers; resources covers templates too."),
        Check("A kind the server did not declare with listChanged is ignored", R_DECLARED, check_declared,
              ("listChanged false", "listChanged missing", "kind not declared"),
              hint="Look up capabilities[kind][\"listChanged\"] before you act: only true counts."),
        Check("Other notifications change no list", R_UNRELATED, check_unrelated,
              ("resources/updated", "log message", "progress"),
              hint="Which notification methods are about lists? Everything else needs no request."),
    ),
    hints=(
        Hint("Start from the method: notifications/tools/list_changed is about tools/list, prompts about "
             "prompts/list, resources about resources/list and resources/templates/list. Any other method: return "
             "the lists unchanged.", R_WHICH),
        Hint("Before acting, check the server declared the kind: capabilities.get(kind, {}).get(\"listChanged\") "
             "is True.", R_DECLARED),
        Hint("Re-list a list the client holds with fetch(method, None), then fetch(method, page[\"nextCursor\"]) "
             "until a page has no nextCursor; the items are under tools / prompts / resources / "
             "resourceTemplates.", R_RELIST),
        Hint("Never build a cursor: the only cursors that work are the nextCursor values fetch() gave you.",
             R_CURSOR),
    ),
    forbidden=("mcp_sim.roles", "mcp_sim.capabilities", "mcp_sim.grading"),
)
