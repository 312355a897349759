"""Exercise ex05_pagination (chapter 05): a paginating list handler with opaque cursors.

The learner implements ``list_page(items, cursor, page_size)``, the heart of ``tools/list``,
``resources/list`` and ``prompts/list``. Every seed tries every case kind — several pages, an exact
multiple of the page size, one page, an empty list, pages of one; cursors the server never issued
(random text, an empty string, JSON, a cursor issued for a longer list); a cursor used in a fresh
process — and the seed picks only the names, the list's length and the page size.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from hypothesis import strategies as st

from mcp_sim.capabilities.pagination import encode_cursor, paginate
from mcp_sim.grading.differential import Mismatch, differential
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.protocol.errors import McpError

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
    if "nextCursor" in got and got["nextCursor"] is None:
        raise CheckFailed(f"list_page() answered {len(items)} items, page size {size}, cursor {cursor!r} with "
                          f'"nextCursor": null. The last page has no nextCursor member at all; a client reads any '
                          f"value there as a cursor to send back.", R_LAST,
                          case=f"{len(items)} items, page size {size}, cursor {cursor!r}",
                          expected="no nextCursor member on the last page")
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
                          f"{[i['name'] for i in seen]}\n— not every item once, in the order given.", R_WALK,
                          case=f"{len(items)} items, page size {size}", expected=repr([i["name"] for i in items]))


def check_last(ctx: CheckContext, kind: str) -> None:
    items, size = _shape(ctx, kind)
    pages = walk(ctx, items, size)
    want = max(1, -(-len(items) // size))
    if len(pages) != want:
        raise CheckFailed(f"{len(items)} items, {size} per page: following your cursors served {len(pages)} "
                          f"page(s) — a nextCursor on a page with nothing after it sends the client to an empty "
                          f"page, and a missing one ends the walk early.", R_LAST,
                          case=f"{len(items)} items, page size {size}", expected=f"{want} page(s)")


def _own_cursor(ctx: CheckContext, offset: int) -> str | None:
    """A cursor the learner's own server issues at ``offset``: the first nextCursor of a list of
    ``offset`` + 3 items served ``offset`` per page (``None`` when it issued none)."""
    longer = _items_named(offset + 3)
    page = _page(ctx, longer, None, max(offset, 1))
    cursor = page.get("nextCursor")
    return cursor if isinstance(cursor, str) else None


def _items_named(count: int) -> list[dict[str, Any]]:
    names = [*_NAMES, *(f"{n}_{i}" for i in range(4) for n in _NAMES)][:count]
    return [{"name": n, "description": f"{n.capitalize()} things."} for n in names]


def forge(cursor: str, offset: int, new: Any) -> str | None:
    """``cursor`` (which names ``offset``) rewritten to name ``new``, for the common formats a learner picks —
    a decimal number, JSON with the offset in a member, base64 of either — or ``None`` if the format is not
    one of those (an opaque cursor stays opaque: the checks then cannot forge one)."""
    def rewrite(text: str) -> str | None:
        if text.strip() == str(offset):
            return str(new) if type(new) is int else None  # a number has no other types to forge
        try:
            body = json.loads(text)
        except ValueError:
            return None
        if isinstance(body, dict):
            keys = [k for k, v in sorted(body.items()) if v == offset and type(v) is int]
            if len(keys) == 1:
                return json.dumps({**body, keys[0]: new})
        return None

    direct = rewrite(cursor)
    if direct is not None:
        return direct
    for decode, encode in ((base64.urlsafe_b64decode, base64.urlsafe_b64encode), (base64.b64decode, base64.b64encode)):
        try:
            text = decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
        except (ValueError, UnicodeError):
            continue
        inner = rewrite(text)
        if inner is not None:
            out = encode(inner.encode()).decode("ascii")
            return out if cursor.endswith("=") or len(cursor) % 4 == 0 else out.rstrip("=")
    return None


_NEVER = {"random text": ("abc", "zzzz", "next", "%not-a-cursor%"), "empty string": ("",),
          "base64 of JSON that is no object": ("WzJd", "bnVsbA", "IjIi")}  # [2], null, "2"


def _expect_invalid(ctx: CheckContext, items: list[dict[str, Any]], cursor: str, size: int, why: str) -> None:
    got = _page(ctx, items, cursor, size)
    error = got.get("error")
    if not isinstance(error, dict) or error.get("code") != -32602 or not isinstance(error.get("message"), str):
        raise CheckFailed(f"The cursor {cursor!r} {why} ({len(items)} items), and list_page() did not answer it "
                          f"with an invalid-params error object.", R_BAD,
                          case=f"cursor {cursor!r}, {len(items)} items, page size {size}",
                          expected='{"error": {"code": -32602, "message": "..."}}')


def check_bad_cursor(ctx: CheckContext, kind: str) -> None:
    items, size = _items(ctx.rng, ctx.rng.randint(4, 6)), 2
    if kind == "cursor from a longer list":
        longer = _items(ctx.rng, 16)
        cursor = walk(ctx, longer, 3)[-2]["nextCursor"]  # names item 15: not in this list
        _expect_invalid(ctx, items, cursor, size, "names a position past the end of this list")
    elif kind in _NEVER:
        for cursor in _NEVER[kind]:
            _expect_invalid(ctx, items, cursor, size, "was never issued by any server")
    elif kind == "json naming a position outside the list":
        for offset in (-1, len(items) + ctx.rng.randint(1, 3)):  # outside the list in every cursor design
            _expect_invalid(ctx, items, json.dumps({"offset": offset}), size, "names a position outside the list")
    else:  # your own cursor, rewritten: negative, or past the end
        own = _own_cursor(ctx, 2)
        if own is None:
            raise CheckFailed("A list of 5 items served 2 per page needs a nextCursor on its first page.", R_LAST)
        offsets: tuple[Any, ...] = {"your own cursor, negative": (-1, -2),
                                    "your own cursor, past the end": (len(items) + 1, len(items) + 2),
                                    "your own cursor, offset not an integer": (True, "1", 1.5)}[kind]
        for offset in offsets:
            forged = forge(own, 2, offset)
            if forged is not None:  # a format the check cannot read is opaque: nothing to forge
                _expect_invalid(ctx, items, forged, size, f"is your own cursor format naming position {offset!r}")


def check_at_the_end(ctx: CheckContext, kind: str) -> None:
    """A cursor naming exactly the end of the list: an empty last page, or -32602 — never a nextCursor."""
    count = ctx.rng.randint(3, 6) if kind == "cursor at the end" else 0
    items = _items(ctx.rng, count)
    cursor = _own_cursor(ctx, count) if count else _own_cursor(ctx, 1)
    if cursor is None:
        raise CheckFailed(f"A list of {count + 3} items served {max(count, 1)} per page needs a nextCursor on its "
                          "first page.", R_LAST)
    if not count:  # a cursor of a longer list sent for an empty list: its position is past the end
        _expect_invalid(ctx, items, cursor, 2, "names a position past the end of this empty list")
        return
    got = _page(ctx, items, cursor, 2)
    if "error" in got:
        error = got["error"]
        if not isinstance(error, dict) or error.get("code") != -32602:
            raise CheckFailed(f"The cursor {cursor!r} names the end of this list ({count} items); list_page() "
                              f"answered an error that is not invalid params.", R_BAD,
                              case=f"cursor at offset {count}, {count} items", expected="-32602 (or an empty page)")
        return
    if got.get("items") != [] or "nextCursor" in got:
        raise CheckFailed(f"The cursor {cursor!r} names the end of this list ({count} items): nothing is left, so "
                          f"list_page() answered a page that is not an empty last page.", R_LAST,
                          case=f"cursor at offset {count}, {count} items",
                          expected='{"items": []} with no nextCursor (or -32602)')


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
        raise CheckFailed(f"{len(items)} items, {size} per page: the page after the first one does not start "
                          f"where the first page stopped.", R_WALK, expected=repr(items[size:2 * size]))


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


_POSITIONS = st.tuples(st.integers(0, 9), st.integers(1, 4), st.integers(-3, 12)).map(
    lambda t: (_items_named(t[0]), t[1], t[2]))


def _oracle_position(case: tuple[list[dict[str, Any]], int, int]) -> dict[str, Any]:
    """What the simulator's ``paginate`` answers for a cursor naming ``offset`` (names only)."""
    items, size, offset = case
    try:
        page, cursor = paginate(items, encode_cursor("tools", offset), size, "tools")
    except McpError as exc:
        return {"error": exc.code}
    return {"items": [it["name"] for it in page], "more": cursor is not None}


def _learner_position(ctx: CheckContext, own: str, case: tuple[list[dict[str, Any]], int, int]) -> Any:
    items, size, offset = case
    cursor = forge(own, 2, offset)
    if cursor is None:
        return None
    got = _page(ctx, items, cursor, size)
    if "error" in got:
        error = got["error"]
        return {"error": error.get("code") if isinstance(error, dict) else error, "cursor": cursor}
    return {"items": [it.get("name") if isinstance(it, dict) else it for it in got["items"]],
            "more": "nextCursor" in got, "cursor": cursor}


def _compare_position(case: tuple[list[dict[str, Any]], int, int], got: Any, want: dict[str, Any]) -> Mismatch | None:
    items, size, offset = case
    if got is None:
        return None  # a cursor format the check cannot rewrite: nothing to compare
    mine = {k: v for k, v in got.items() if k != "cursor"}
    if mine == want or (offset in (0, len(items)) and mine == {"error": -32602}):
        return None  # a position the server never issued (the start, the end) may also be refused
    where = f"your cursor {got['cursor']!r} names position {offset} of {len(items)} items, page size {size}"
    if "error" in want:
        return Mismatch(f"{where.capitalize()}: outside the list, and list_page() served it.", R_BAD,
                        expected="-32602")
    if "error" in mine:
        return Mismatch(f"{where.capitalize()}: inside the list, and list_page() refused it.", R_WALK,
                        expected=f"the page {want['items']}")
    rule = R_LAST if mine.get("items") == want["items"] else R_WALK
    return Mismatch(f"{where.capitalize()}: list_page() answered another page (or another nextCursor).", rule,
                    expected=f"the page {want['items']}, {'with' if want['more'] else 'without'} a nextCursor")


def check_generated_positions(ctx: CheckContext, kind: str) -> None:
    own = _own_cursor(ctx, 2)
    if own is None or forge(own, 2, 2) is None:
        return  # an opaque format: the walk and the fixed kinds are all that can be checked
    differential(ctx, _POSITIONS, learner=lambda case: _learner_position(ctx, own, case),
                 oracle=_oracle_position, compare=_compare_position,
                 describe=lambda case: f"{len(case[0])} items, page size {case[1]}, a cursor naming position {case[2]}")


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
              ("random text", "empty string", "base64 of JSON that is no object",
               "json naming a position outside the list", "cursor from a longer list", "your own cursor, negative",
               "your own cursor, past the end", "your own cursor, offset not an integer"),
              hint="Decode the cursor defensively, and check the position it names exists in this list."),
        Check("A cursor at exactly the end gets an empty last page (or -32602)", R_LAST, check_at_the_end,
              ("cursor at the end", "a longer list's cursor for an empty list"),
              hint="At the end nothing is left: no items, and so no nextCursor."),
        Check("A cursor works in any process", R_ANY_PROCESS, check_fresh_process, ("fresh process",),
              hint="Put the position inside the cursor (encoded), not in a dictionary of the server's."),
        Check("Any list and page size pages like the simulator's", R_WALK, check_generated, ("generated",),
              hint="Each page starts where the previous one stopped; a nextCursor only when items remain."),
        Check("A cursor at any position answers like the simulator's", R_BAD, check_generated_positions,
              ("generated positions",),
              hint="A position inside the list gives the page there; one outside it (negative, past the end) is "
                   "-32602."),
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
