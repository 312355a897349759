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
import functools
import json
import random
from dataclasses import dataclass
from typing import Any

import anyio
from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch, differential
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

    def stale(self) -> set[str]:
        """The held lists this notification makes stale, as the simulator's client cache and capability
        test say (each is listed again, even when it comes back the same)."""
        method = self.notification["method"]
        kind = _KIND_OF.get(method)
        declared = kind is not None and has_capability(self.capabilities, f"{kind}.listChanged")
        return {m for m in (INVALIDATES.get(method, ()) if declared else ()) if m in self.lists}

    def expected(self) -> dict[str, list[dict[str, Any]]]:
        """The lists after the notification."""
        stale = self.stale()
        return {m: whole_list(self.pages, m) if m in stale else items for m, items in self.lists.items()}


def build(rng: Any, seed: int, *, change: str, revision: str, page_size: int | None,
          held: tuple[str, ...], rule: str) -> Case:
    """:func:`played` for a surface drawn from ``rng``: a fresh copy every time (checks change cases)."""
    return copy.deepcopy(played(rng.randint(0, 2**31), seed, change, revision, page_size, held, rule))


@functools.lru_cache(maxsize=256)
def played(surface: int, seed: int, change: str, revision: str, page_size: int | None, held: tuple[str, ...],
           rule: str) -> Case:
    """Play the case in the simulator. ``change`` is ``tools``/``prompts``/``resources`` (a list
    changes: an item is added), ``tools removed`` (a tool goes away), or
    ``resources/updated``/``log message``/``progress`` (something else happens)."""
    rng = random.Random(surface)  # kept for a while: grading the same seed again replays it from memory
    removed, empty = change == "tools removed", change == "prompts from none"
    change = "tools" if removed else "prompts" if empty else change
    server = catalog(rng, page_size=page_size)
    if empty:  # the client lists an empty prompts list; then a prompt comes
        for name in sorted(server.prompts):
            server.remove_prompt(name)
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
        if removed:  # a re-list that only adds would pass a client that merges old and new
            srv.remove_tool(sorted(srv.tools)[rng.randrange(len(srv.tools))])
        elif change == "tools":
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
    stale = case.stale()
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
                raise CheckFailed(f"{note} makes {method} stale too, but you did not list it again: you kept "
                                  f"{_names(got[method])}.", R_WHICH if method == "resources/templates/list"
                                  else R_RELIST, expected=f"{method}: {_names(items)}")
            raise CheckFailed(f"After {note} you returned {method} as {_names(got[method])} (after fetching "
                              f"{pages} page(s) of it): not the whole list the server now has.", R_RELIST,
                              expected=f"{method}: {_names(items)}")
        raise CheckFailed(f"After {note} you returned {method} as {_names(got[method])}: it was "
                          f"{_names(case.lists[method])}, and nothing in this notification changes it.", case.rule,
                          expected=f"{method}: {_names(items)}")


def _revision(kind: str) -> str:
    """The revision a kind names (every kind names one: the seed never picks the era)."""
    return kind.rsplit(" in ", 1)[1]


def _seed(ctx: CheckContext) -> int:
    return ctx.rng.randint(0, 2**31)


RELIST_KINDS = ("tools, one page in 2025-06-18", "tools, several pages in 2025-11-25",
                "tools, several pages in 2026-07-28", "prompts, several pages in 2025-11-25",
                "prompts, several pages in 2026-07-28", "resources, several pages in 2025-06-18",
                "resources, several pages in 2026-07-28", "tools removed, several pages in 2025-11-25",
                "tools removed, one page in 2026-07-28", "prompts from none, one page in 2026-07-28",
                "prompts from none, one page in 2025-11-25")


def check_relist(ctx: CheckContext, kind: str) -> None:
    rng = ctx.rng
    change = kind.split(",")[0]
    page_size = None if "one page" in kind else rng.choice((1, 2, 3))
    run_case(ctx, build(rng, _seed(ctx), change=change, revision=_revision(kind), page_size=page_size,
                        held=tuple(LIST_FIELD), rule=R_WHICH))


_WHICH = {"resources: templates too in 2025-11-25": ("resources", tuple(LIST_FIELD)),
          "resources: templates held alone in 2026-07-28": ("resources", ("tools/list", "resources/templates/list")),
          "resources: resources held without templates in 2025-06-18": ("resources", ("prompts/list",
                                                                                       "resources/list")),
          "tools: never fetched in 2026-07-28": ("tools", ("prompts/list", "resources/list")),
          "tools: nothing held in 2025-11-25": ("tools", ()),
          "prompts: the others stay in 2025-11-25": ("prompts", ("tools/list", "prompts/list", "resources/list"))}


def check_which(ctx: CheckContext, kind: str) -> None:
    change, held = _WHICH[kind]
    case = build(ctx.rng, _seed(ctx), change=change, revision=_revision(kind), page_size=2,
                 held=held or (f"{change}/list",), rule=R_WHICH)
    if not held:  # the client dropped what it had listed: the news reaches a client that holds nothing
        case.lists = {}
    run_case(ctx, case)


DECLARED_KINDS = ("tools: listChanged false in 2025-11-25", "prompts: listChanged false in 2026-07-28",
                  "resources: listChanged false in 2025-06-18", "prompts: listChanged missing in 2025-11-25",
                  "resources: listChanged missing in 2026-07-28", "tools: kind not declared in 2026-07-28",
                  "resources: kind not declared in 2025-11-25")


def check_declared(ctx: CheckContext, kind: str) -> None:
    change, _, how = kind.rsplit(" in ", 1)[0].partition(": ")
    held = tuple(m for m in LIST_FIELD if how != "kind not declared" or not m.startswith(change))
    case = build(ctx.rng, _seed(ctx), change=change, revision=_revision(kind), page_size=2, held=tuple(LIST_FIELD),
                 rule=R_DECLARED)
    caps = case.capabilities
    if how == "listChanged false":
        caps[change]["listChanged"] = False
    elif how == "listChanged missing":
        caps[change].pop("listChanged", None)
    else:  # the server never declared the kind at all, so the client holds none of its lists
        caps.pop(change)
        case.lists = {m: items for m, items in case.lists.items() if m in held}
    run_case(ctx, case)


UNRELATED_KINDS = ("resources/updated in 2025-11-25", "resources/updated in 2026-07-28", "log message in 2025-06-18",
                   "log message in 2026-07-28", "progress in 2025-11-25", "progress in 2026-07-28")


def check_unrelated(ctx: CheckContext, kind: str) -> None:
    run_case(ctx, build(ctx.rng, _seed(ctx), change=kind.rsplit(" in ", 1)[0], revision=_revision(kind),
                        page_size=2, held=tuple(LIST_FIELD), rule=R_UNRELATED))


# --- generated: any lists held, any capabilities, any notification, any new pages ----------------------

_POOL = {"tools/list": TOOL_NAMES, "prompts/list": PROMPT_NAMES, "resources/list": FILE_NAMES,
         "resources/templates/list": TEMPLATE_NAMES}
_NOTIFICATIONS = ("notifications/tools/list_changed", "notifications/prompts/list_changed",
                  "notifications/resources/list_changed", "notifications/resources/updated",
                  "notifications/message", "notifications/progress")
_DECLARATIONS = ("true", "false", "missing", "kind absent")


def _item(method: str, name: str) -> dict[str, Any]:
    if method == "resources/list":
        return {"uri": f"notes://files/{name}", "name": name, "mimeType": "text/markdown"}
    if method == "resources/templates/list":
        return {"uriTemplate": f"{name}://items/{{id}}", "name": name}
    return {"name": name, "description": f"{name.replace('_', ' ').capitalize()}."}


@st.composite
def _cases(draw: Any) -> Case:
    """A synthetic case over every axis: which lists are held (none, some, all; empty ones too), how
    each kind is declared (listChanged true, false, missing, the kind absent), which notification,
    and the server's new lists (items added, removed or all gone) cut into pages of 1–3."""
    revision = draw(st.sampled_from((*LEGACY_REVISIONS, MODERN)))
    held = [m for m in LIST_FIELD if draw(st.booleans())]
    capabilities: dict[str, Any] = {}
    for kind in ("tools", "prompts", "resources"):
        how = draw(st.sampled_from(_DECLARATIONS))
        if how != "kind absent":
            capabilities[kind] = {} if how == "missing" else {"listChanged": how == "true"}
    lists, pages = {}, {}
    for method in LIST_FIELD:
        pool = _POOL[method]
        before, after, size = draw(st.tuples(st.integers(0, 2 ** 4 - 1), st.integers(0, 2 ** 5 - 1), st.integers(1, 3)))
        if method in held:  # bit i set: the pool's i-th item is in the list
            lists[method] = [_item(method, n) for i, n in enumerate(pool[:4]) if before >> i & 1]
        names = [n for i, n in enumerate(pool[:5]) if after >> i & 1]
        chunks = [names[i:i + size] for i in range(0, len(names), size)] or [[]]
        cursors = [None] + [f"{method.split('/')[-2]}-{revision[-2:]}-{i}" for i in range(1, len(chunks))]
        for i, chunk in enumerate(chunks):
            page: dict[str, Any] = {LIST_FIELD[method]: [_item(method, n) for n in chunk]}
            if i + 1 < len(chunks):
                page["nextCursor"] = cursors[i + 1]
            pages[(method, cursors[i])] = page
    method = draw(st.sampled_from(_NOTIFICATIONS))
    params: dict[str, Any] = {}
    if method == "notifications/resources/updated":
        params["uri"] = "notes://files/todo.md"
    elif method == "notifications/message":
        params.update(level="info", data="working")
    elif method == "notifications/progress":
        params.update(progressToken=1, progress=1, total=2)
    if revision == MODERN and method != "notifications/progress":
        params["_meta"] = {"io.modelcontextprotocol/subscriptionId": draw(st.integers(1, 9))}
    notification: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params:
        notification["params"] = params
    about = _KIND_OF.get(method)
    rule = R_UNRELATED if about is None else R_DECLARED if not has_capability(capabilities, f"{about}.listChanged") \
        else R_WHICH
    return Case(revision, capabilities, lists, notification, pages, rule)


def _describe(case: Case) -> str:
    held = {m: _names(items) for m, items in case.lists.items()}
    new = {m: _names(whole_list(case.pages, m)) for m in LIST_FIELD}
    return (f"{case.revision}: the client holds {json.dumps(held)}; capabilities {json.dumps(case.capabilities)}; "
            f"notification {json.dumps(case.notification)}; the server's lists now {json.dumps(new)}")


def _never_differs(case: Case, got: Any, want: Any) -> Mismatch | None:
    return None  # run_case raises at the first wrong request or list


def check_generated(ctx: CheckContext, kind: str) -> None:
    differential(ctx, _cases(), learner=lambda case: run_case(ctx, case), oracle=lambda case: None,
                 compare=_never_differs, describe=_describe, raises_rule=R_RELIST, examples=25)


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
              RELIST_KINDS, seeds=1,
              hint="The notification has no items: ask for the list again, and keep asking while a page has a "
                   "nextCursor."),
        Check("Only the lists the notification names, and only lists you hold", R_WHICH, check_which,
              tuple(_WHICH), seeds=1,
              hint="Map the notification's method to the list methods it covers; resources covers templates too."),
        Check("A kind the server did not declare with listChanged is ignored", R_DECLARED, check_declared,
              DECLARED_KINDS, seeds=1,
              hint="Look up capabilities[kind][\"listChanged\"] before you act: only true counts."),
        Check("Other notifications change no list", R_UNRELATED, check_unrelated,
              UNRELATED_KINDS, seeds=1,
              hint="Which notification methods are about lists? Everything else needs no request."),
        Check("Any lists, capabilities and notification: the simulator's client's lists", R_RELIST, check_generated,
              ("generated",),
              hint="Work through the smallest case by hand: which notification, is its kind declared with "
                   "listChanged true, which of the lists it covers does the client hold?"),
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
