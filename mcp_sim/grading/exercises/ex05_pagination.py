"""Exercise ex05_pagination (chapter 05): a paginating list handler with opaque cursors.

The learner implements ``list_page(items, cursor, page_size)``, the heart of ``tools/list``,
``resources/list`` and ``prompts/list``. Every seed tries every case kind — several pages, an exact
multiple of the page size, one page, an empty list, pages of one; cursors the server never issued
(random text, an empty string, JSON, a cursor issued for a longer list); a cursor used in a fresh
process — and the seed picks only the names, the list's length and the page size.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from mcp_sim.capabilities.pagination import paginate
from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint

R_WALK = "pagination.stable-cursors"
R_LAST = "pagination.missing-cursor-ends"
R_BAD = "pagination.invalid-cursor-32602"
R_OPAQUE = "pagination.cursor-opaque"
R_ANY_PROCESS = "pagination.position-in-the-cursor"

_NAMES = ("forecast", "alerts", "convert", "search", "translate", "summarise", "lookup", "schedule", "remind",
          "archive", "tag", "share", "export", "import", "backup", "restore", "notify", "rename", "merge", "split")


def _items(rng: Any, count: int) -> list[dict[str, Any]]:
    names = rng.sample(_NAMES, count)  # deliberately not sorted: the order given is the order to keep
    return [{"name": n, "description": f"{n.capitalize()} things."} for n in names]


def _page(ctx: CheckContext, items: list[dict[str, Any]], cursor: str | None, size: int) -> dict[str, Any]:
    got, after = ctx.call_and_inspect("list_page", [copy.deepcopy(items), cursor, size])
    if after[0] != items:
        raise CheckFailed("list_page() changed the list it was given; serve pages without modifying the server's "
                          "list (other requests read it too).", R_WALK)
    if not isinstance(got, dict) or not ("items" in got or "error" in got):
        raise CheckFailed(f'list_page() must return {{"items": [...], "nextCursor"?: "..."}} or {{"error": {{...}}}}; '
                          f"got {got!r}.")
    if "nextCursor" in got and not isinstance(got["nextCursor"], str):
        raise CheckFailed(f"nextCursor must be a string (an opaque token); got {got['nextCursor']!r}.", R_OPAQUE)
    return got


def walk(ctx: CheckContext, items: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """Follow the learner's cursors from the first page to the last; the list of pages."""
    pages, cursor = [], None
    for _ in range(len(items) + 2):
        page = _page(ctx, items, cursor, size)
        if "error" in page:
            raise CheckFailed(f"With a cursor your own server issued ({cursor!r}) list_page() answered "
                              f"{page['error']!r}.", R_WALK)
        if len(page["items"]) > size:
            raise CheckFailed(f"A page has {len(page['items'])} items; the page size is {size}.", R_WALK)
        pages.append(page)
        if "nextCursor" not in page:
            return pages
        cursor = page["nextCursor"]
    raise CheckFailed(f"Following nextCursor never ended: {len(items)} items, {size} per page, and still a "
                      f"nextCursor after {len(pages)} pages.", R_LAST)


_SHAPES = {"several pages": (7, 3), "exact multiple": (6, 3), "one page": (4, 10), "empty list": (0, 5),
           "pages of one": (3, 1)}


def _shape(ctx: CheckContext, kind: str) -> tuple[list[dict[str, Any]], int]:
    count, size = _SHAPES[kind]
    count += ctx.rng.randint(0, 2) * size if count > size else 0  # more pages, same remainder
    return _items(ctx.rng, count), size


def check_walk(ctx: CheckContext, kind: str) -> None:
    items, size = _shape(ctx, kind)
    seen = [it for page in walk(ctx, items, size) for it in page["items"]]
    if seen != items:
        raise CheckFailed(f"{len(items)} items, {size} per page. Following the cursors gave\n"
                          f"{[i['name'] for i in seen]}\ninstead of\n{[i['name'] for i in items]}.", R_WALK)


def check_last(ctx: CheckContext, kind: str) -> None:
    items, size = _shape(ctx, kind)
    pages = walk(ctx, items, size)
    want = max(1, -(-len(items) // size))
    if len(pages) != want:
        raise CheckFailed(f"{len(items)} items, {size} per page make {want} page(s); you served {len(pages)} — "
                          f"a nextCursor on a page with nothing after it sends the client to an empty page.",
                          R_LAST)


def check_bad_cursor(ctx: CheckContext, kind: str) -> None:
    items, size = _items(ctx.rng, ctx.rng.randint(4, 6)), 2
    if kind == "cursor from a longer list":
        longer = _items(ctx.rng, 16)
        cursor = walk(ctx, longer, 3)[-2]["nextCursor"]  # names item 15: not in this list
    else:
        cursor = {"random text": ctx.rng.choice(("page-2", "abc", "zzzz", "next")), "empty string": "",
                  "json text": json.dumps({"offset": ctx.rng.randint(1, 3)})}[kind]
    got = _page(ctx, items, cursor, size)
    error = got.get("error")
    if not isinstance(error, dict) or error.get("code") != -32602:
        raise CheckFailed(f"The cursor {cursor!r} was never issued for this list ({len(items)} items), and "
                          f"list_page() returned {got!r}: not an invalid-params error.", R_BAD,
                          case=f"cursor {cursor!r}, {len(items)} items", expected="an error with code -32602")
    if not isinstance(error.get("message"), str):
        raise CheckFailed("A JSON-RPC error object needs a message string.", R_BAD)


def check_fresh_process(ctx: CheckContext, kind: str) -> None:
    items, size = _items(ctx.rng, ctx.rng.randint(5, 9)), 2
    first = _page(ctx, items, None, size)
    cursor = first.get("nextCursor")
    if cursor is None:
        raise CheckFailed(f"{len(items)} items, {size} per page: the first page needs a nextCursor.", R_LAST)
    here = _page(ctx, items, cursor, size)
    with ctx.fresh_process() as other:
        there, _ = other.call("list_page", [copy.deepcopy(items), cursor, size], return_args=True)
    if there != here:
        raise CheckFailed(f"The cursor {cursor!r} gave {here!r} here and {there!r} in another process. Keep the "
                          f"position where any process finds it (in this exercise: inside the cursor), not in "
                          f"the memory of one process.", R_ANY_PROCESS)
    if here.get("items") != items[size:2 * size]:
        raise CheckFailed(f"The page after the first one is {here!r}: it does not start where the first "
                          f"page stopped.", R_WALK, expected=repr(items[size:2 * size]))


# --- generated: any list, any page size, against the simulator's own paginate() ---------------------------

def _oracle_walk(items: list[dict[str, Any]], size: int) -> list[list[str]]:
    """The pages the simulator's ``paginate`` serves for ``items`` (names only)."""
    pages, cursor = [], None
    while True:
        page, cursor = paginate(items, cursor, size, "tools")
        pages.append([it["name"] for it in page])
        if cursor is None:
            return pages


def _learner_walk(ctx: CheckContext, items: list[dict[str, Any]], size: int) -> list[list[str]] | str:
    """The learner's pages for the same list, or the reason the walk broke."""
    try:
        return [[it["name"] for it in page["items"]] for page in walk(ctx, items, size)]
    except CheckFailed as exc:
        return str(exc)


_LISTS = st.tuples(st.integers(0, len(_NAMES)), st.integers(1, 12)).map(
    lambda t: ([{"name": n, "description": f"{n.capitalize()} things."} for n in _NAMES[:t[0]]], t[1]))


def _compare(case: tuple[list[dict[str, Any]], int], got: Any, want: list[list[str]]) -> Mismatch | None:
    items, size = case
    if got == want:
        return None
    if isinstance(got, str):
        return Mismatch(got, R_WALK)
    rule = R_LAST if len(got) != len(want) and [n for p in got for n in p] == [n for p in want for n in p] else R_WALK
    return Mismatch(f"{len(items)} items, {size} per page: following your cursors gave {len(got)} page(s) "
                    f"{got}.", rule, expected=f"{len(want)} page(s) {want}")


def check_generated(ctx: CheckContext, kind: str) -> None:
    differential(ctx, _LISTS, learner=lambda case: _learner_walk(ctx, *case),
                 oracle=lambda case: _oracle_walk(*case), compare=_compare,
                 describe=lambda case: f"{len(case[0])} items, page size {case[1]}")


EXERCISE = Exercise(
    id="ex05_pagination",
    title="A paginating list handler with opaque cursors",
    chapter="05",
    summary="Serve a list page by page: nextCursor while there is more, none on the last page, -32602 for a "
            "cursor you never issued, and cursors that carry their own position.",
    rules=(R_WALK, R_LAST, R_BAD, R_OPAQUE, R_ANY_PROCESS),
    functions=("list_page",),
    checks=(
        Check("Following the cursors yields every item once, in order", R_WALK, check_walk, tuple(_SHAPES),
              hint="Each page starts where the previous one stopped; keep the order you were given."),
        Check("Only the last page has no nextCursor", R_LAST, check_last, ("exact multiple", "empty list", "one page"),
              hint="Is anything left after this page? Only then is there a next cursor."),
        Check("A cursor the server never issued is -32602", R_BAD, check_bad_cursor,
              ("random text", "empty string", "json text", "cursor from a longer list"),
              hint="Decode the cursor defensively, and check the position it names exists in this list."),
        Check("A cursor works in any process", R_ANY_PROCESS, check_fresh_process, ("fresh process",),
              hint="Put the position inside the cursor (encoded), not in a dictionary of the server's."),
        Check("Any list and page size pages like the simulator's", R_WALK, check_generated, ("generated",),
              hint="Each page starts where the previous one stopped; a nextCursor only when items remain."),
    ),
    hints=(
        Hint("A cursor only has to mean something to your server. Encode the offset of the next item (for example "
             "base64 of a small JSON object) and decode it on the next call.", R_ANY_PROCESS),
        Hint("Return {\"items\": page} and add \"nextCursor\" only when items remain after the page.", R_LAST),
        Hint("Any cursor you cannot decode, or whose offset is not inside the list, is answered with "
             "{\"error\": {\"code\": -32602, \"message\": ...}}.", R_BAD),
    ),
    forbidden=("mcp_sim.capabilities", "mcp_sim.roles"),
)
