"""Mutation testing of the graders: does each exercise's check reject every small change of its reference?

A check is as good as the mistakes it catches. This script makes *mutants* of each reference solution
(``exercises/solutions/<id>.py``) — one small change each, the kind a learner makes by accident — and
grades every one with the exercise's own checks on several base seeds. A mutant the checks reject on
every seed is **killed**; one rejected on some seeds only is **seed-dependent** (a hole: coverage
depends on the seed, which issue #30 forbids); one accepted on every seed **survived** (a hole, or an
*equivalent* mutant — a change that does not change behaviour — recorded with its reason in
``benchmarks/mutants/<id>.toml``)::

    [[equivalent]]
    id = "12:15:cmp:1a2b3c"
    reason = "the list is never empty here, so < and <= select the same items"

A mutant whose file does not load is **invalid** and does not count. The score is
killed-on-every-seed / (valid − equivalent); the target is 1.0 for every exercise.

The mutator is an AST mutator (stdlib :mod:`ast`; ``mutmut`` and ``cosmic-ray`` run a test command per
mutant, and the graders' learner runs each file in its own sandboxed process instead). Its operators:

=========  ===========================================================================================
``cmp``    a comparison swapped: ``<`` ↔ ``<=`` / ``>``, ``==`` ↔ ``!=``, ``in`` ↔ ``not in``, ``is`` ↔ ``is not``
``bool``   ``and`` ↔ ``or``
``not``    a ``not`` dropped
``num``    an integer constant ±1
``true``   ``True`` ↔ ``False``
``str``    a string constant emptied (docstrings aside)
``ret``    ``return X`` → ``return None``
``if``     an ``if`` (or conditional expression) condition forced ``True`` / ``False``
``slice``  a slice bound ±1
``arith``  an arithmetic operator swapped (``+`` ↔ ``-``, ``*`` → ``/`` …)
``stmt``   a statement replaced by ``pass``
``key``    one key of a dict literal removed
=========  ===========================================================================================

Each mutant has a stable id ``line:col:operator:hash`` (the hash is of the source line and the
replacement, so the id survives unrelated edits of other lines except for its line number; the toml
is matched on ``operator:hash`` too) and a one-line diff. Two mutations that give the same program are
one mutant.

Run: ``python benchmarks/mutation.py [EXERCISE ...] [--seeds 0,1,2] [--json FILE] [--list-survivors]``.
It prints a table (and the mutants per second); with ``--list-survivors`` each surviving or
seed-dependent mutant with its diff, so a chapter's grader can be fixed where it has a hole.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
EQUIVALENTS_DIR: Final = Path(__file__).resolve().parent / "mutants"
DEFAULT_SEEDS: Final = (0, 1, 2)

_CMP_SWAPS: Final[dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]]] = {
    ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt, ast.GtE), ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE), ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,), ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,), ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,),
}
_ARITH_SWAPS: Final[dict[type[ast.operator], type[ast.operator]]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitOr, ast.LShift: ast.RShift, ast.RShift: ast.LShift,
}


# --- the mutator ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mutant:
    """One small change of a source file: where, which operator, the one-line diff, the new program."""

    id: str
    line: int
    col: int
    operator: str
    diff: str
    source: str = field(repr=False)

    @property
    def key(self) -> str:
        """The line-independent part of the id (``operator:hash``)."""
        return self.id.split(":", 2)[2]


def _docstrings(tree: ast.AST) -> set[int]:
    """``id`` s of the string constants that are docstrings (not worth emptying)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _not_code(tree: ast.AST) -> set[int]:
    """``id`` s of the nodes that are not behaviour: parts of f-strings (their text) and annotations."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            roots.append(node)
        elif isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            roots.append(node.returns)
    return {id(v) for root in roots for v in ast.walk(root)}


Edit = Callable[[Any], Any]
"""Applied to the copy of a node; returns the replacement node (or the node itself, changed)."""


def _edits(node: ast.AST, skip: set[int]) -> Iterator[tuple[str, Edit]]:
    """The mutations of one node: (operator, edit)."""
    if id(node) in skip:
        return
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for new in _CMP_SWAPS.get(type(op), ()):
                def swap(n: Any, i: int = i, new: type[ast.cmpop] = new) -> Any:
                    n.ops[i] = new()
                    return n
                yield "cmp", swap
    elif isinstance(node, ast.BoolOp):
        def flip(n: Any) -> Any:
            n.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()
            return n
        yield "bool", flip
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not", lambda n: n.operand
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            yield "true", lambda n: ast.Constant(not n.value)
        elif isinstance(value, int):
            yield "num", lambda n: ast.Constant(n.value + 1)
            yield "num", lambda n: ast.Constant(n.value - 1)
        elif isinstance(value, str) and value:
            yield "str", lambda n: ast.Constant("")
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        def none(n: Any) -> Any:
            n.value = ast.Constant(None)
            return n
        yield "ret", none
    elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _ARITH_SWAPS:
        def arith(n: Any) -> Any:
            n.op = _ARITH_SWAPS[type(n.op)]()
            return n
        yield "arith", arith
    elif isinstance(node, ast.Slice):
        for bound in ("lower", "upper"):
            if getattr(node, bound) is not None:
                for delta in (ast.Add, ast.Sub):
                    def shift(n: Any, bound: str = bound, delta: type[ast.operator] = delta) -> Any:
                        setattr(n, bound, ast.BinOp(getattr(n, bound), delta(), ast.Constant(1)))
                        return n
                    yield "slice", shift
    elif isinstance(node, ast.Dict) and len(node.keys) > 0:
        for i, k in enumerate(node.keys):
            if k is not None:
                def drop(n: Any, i: int = i) -> Any:
                    del n.keys[i], n.values[i]
                    return n
                yield "key", drop
    if isinstance(node, ast.If | ast.IfExp):
        for forced in (True, False):
            def force(n: Any, forced: bool = forced) -> Any:
                n.test = ast.Constant(forced)
                return n
            yield "if", force


def _statement_edits(node: ast.AST) -> Iterator[tuple[int, str]]:
    """(index in the body, field) of each statement of ``node`` that can become ``pass``."""
    for name in ("body", "orelse", "finalbody"):
        body = getattr(node, name, None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import
                          | ast.ImportFrom | ast.Pass | ast.Global | ast.Nonlocal):
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring
            if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and name == "body" and i == len(body) - 1
                    and isinstance(stmt, ast.Return) and (stmt.value is None or (
                        isinstance(stmt.value, ast.Constant) and stmt.value.value is None))):
                continue  # a function's last `return None` and `pass` are the same program
            yield i, name


def _segment(source: str, node: ast.AST) -> str:
    text = ast.get_source_segment(source, node) or ast.unparse(node)
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 70 else first[:69] + "…"


def _short(node: ast.AST) -> str:
    text = (ast.unparse(node).splitlines() or [""])[0]
    return text if len(text) <= 70 else text[:69] + "…"


def mutants(source: str) -> list[Mutant]:
    """Every mutant of ``source``, in source order (deterministic: same source, same ids).

    Each mutation puts an edited copy of one node in the tree, unparses the tree and puts the original
    back: only the node is copied, never the whole tree."""
    tree = ast.parse(source)
    lines = source.splitlines()
    nodes = list(ast.walk(tree))
    parents: dict[int, tuple[ast.AST, str, int | None]] = {}
    for parent in nodes:
        for name, value in ast.iter_fields(parent):
            if isinstance(value, ast.AST):
                parents[id(value)] = (parent, name, None)
            elif isinstance(value, list):
                for j, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        parents[id(item)] = (parent, name, j)
    skip = _docstrings(tree) | _not_code(tree)
    seen = {ast.unparse(tree)}
    occurrences: dict[str, int] = {}
    out: list[Mutant] = []

    def put(node: ast.AST, replacement: ast.AST) -> None:
        parent, name, j = parents[id(node)]
        if j is None:
            setattr(parent, name, replacement)
        else:
            getattr(parent, name)[j] = replacement

    def add(where: ast.AST, operator: str, before: ast.AST, after: ast.AST) -> None:
        put(before, after)
        try:  # a program that does not compile is graded as one that does not load ("invalid")
            text = ast.unparse(tree)
        except (ValueError, TypeError):
            return
        finally:
            put(after, before)
        if text in seen:
            return
        seen.add(text)
        line, col = getattr(where, "lineno", 0), getattr(where, "col_offset", 0)
        old = _segment(source, before)
        new = _short(after)
        line_text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        base = f"{line_text}|{col}|{operator}|{old}|{new}"
        nth = occurrences.get(base, 0)  # the same change on an identical line elsewhere: counted
        occurrences[base] = nth + 1
        digest = hashlib.sha256(f"{base}|{nth}".encode()).hexdigest()[:6]
        mid = f"{line}:{col}:{operator}:{digest}"
        out.append(Mutant(mid, line, col, operator, f"L{line}: {old}  →  {new}", text))

    for node in nodes:
        for operator, edit in _edits(node, skip):
            if id(node) not in parents:
                continue
            replacement = edit(copy.deepcopy(node))
            parents[id(replacement)] = parents[id(node)]
            add(node, operator, node, replacement)
        for i, name in _statement_edits(node):
            stmt = getattr(node, name)[i]
            blank = ast.copy_location(ast.Pass(), stmt)
            parents[id(blank)] = (node, name, i)
            add(stmt, "stmt", stmt, blank)
    out.sort(key=lambda m: (m.line, m.col, m.operator, m.id))
    return out


# --- grading the mutants -------------------------------------------------------------------------------

@dataclass
class MutantResult:
    """How the checks treated one mutant: ``status`` is killed / seed-dependent / survived / equivalent
    / invalid; ``killed_by`` the first failing check on each seed (``""`` where it passed)."""

    id: str
    operator: str
    diff: str
    status: str
    killed_by: list[str]
    reason: str = ""


@dataclass
class ExerciseReport:
    exercise: str
    seeds: list[int]
    mutants: int = 0
    invalid: int = 0
    killed: int = 0
    seed_dependent: int = 0
    survived: int = 0
    equivalent: int = 0
    seconds: float = 0.0
    stale_equivalents: list[str] = field(default_factory=list)
    results: list[MutantResult] = field(default_factory=list)

    @property
    def score(self) -> float | None:
        scored = self.mutants - self.invalid - self.equivalent
        return round(self.killed / scored, 3) if scored > 0 else None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["score"] = self.score
        return out


def equivalents(exercise_id: str, folder: Path = EQUIVALENTS_DIR) -> dict[str, str]:
    """The equivalent mutants recorded for ``exercise_id``: id → reason."""
    path = folder / f"{exercise_id}.toml"
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {str(e["id"]): str(e["reason"]) for e in data.get("equivalent", [])}


def _equivalent_reason(mutant: Mutant, known: dict[str, str]) -> str | None:
    if mutant.id in known:
        return known[mutant.id]
    for mid, reason in known.items():
        if mid.split(":", 2)[-1] == mutant.key:
            return reason
    return None


def grade_mutant(exercise_id: str, mutant: Mutant, seeds: Sequence[int], folder: Path,
                 case_time_limit: float = 1.0) -> tuple[bool, list[str]]:
    """Grade one mutant on ``seeds``: (whether it loaded, the first failing check per seed or "")."""
    from mcp_sim.grading import get_exercise
    from mcp_sim.grading.runner import grade_seeds

    path = folder / f"{exercise_id}.py"
    path.write_text(mutant.source + "\n", encoding="utf-8")
    results = grade_seeds(get_exercise(exercise_id), path, path.name, list(seeds), stop_at_first_failure=True,
                          case_time_limit=case_time_limit)
    if any(r.load_error for r in results):
        return False, []
    killed_by = []
    for r in results:
        first = r.first_failure
        killed_by.append(first.name if first is not None else "")
    return True, killed_by


def run_exercise(exercise_id: str, seeds: Sequence[int], *, case_time_limit: float = 1.0,
                 only: Sequence[str] = ()) -> ExerciseReport:
    """Make and grade every mutant of ``exercise_id``'s reference (or only the ids in ``only``)."""
    from mcp_sim.grading.runner import reference_path

    source = reference_path(exercise_id).read_text(encoding="utf-8")
    known = equivalents(exercise_id)
    report = ExerciseReport(exercise_id, list(seeds))
    start = time.perf_counter()
    made = mutants(source)
    if only:
        made = [m for m in made if m.id in only or m.key in only]
    matched: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        for mutant in made:
            report.mutants += 1
            reason = _equivalent_reason(mutant, known)
            if reason is not None:
                matched.update(k for k in known if k == mutant.id or k.split(":", 2)[-1] == mutant.key)
            loaded, killed_by = grade_mutant(exercise_id, mutant, seeds, Path(tmp), case_time_limit)
            if not loaded:
                status = "invalid"
                report.invalid += 1
            elif all(killed_by):
                status = "killed"
                report.killed += 1
            elif reason is not None:
                status = "equivalent"
                report.equivalent += 1
            elif any(killed_by):
                status = "seed-dependent"
                report.seed_dependent += 1
            else:
                status = "survived"
                report.survived += 1
            report.results.append(MutantResult(mutant.id, mutant.operator, mutant.diff, status, killed_by,
                                               reason or ""))
    report.stale_equivalents = sorted(set(known) - matched) if not only else []
    report.seconds = round(time.perf_counter() - start, 2)
    return report


# --- the command -----------------------------------------------------------------------------------------

def _table(reports: Sequence[ExerciseReport]) -> str:
    head = ("exercise", "mutants", "invalid", "killed", "seed-dep", "survived", "equiv", "score", "s", "mut/s")
    rows = [head]
    for r in reports:
        rate = f"{r.mutants / r.seconds:.1f}" if r.seconds else "–"
        rows.append((r.exercise, str(r.mutants), str(r.invalid), str(r.killed), str(r.seed_dependent),
                     str(r.survived), str(r.equivalent), "–" if r.score is None else f"{r.score:.3f}",
                     f"{r.seconds:.1f}", rate))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _survivors(reports: Sequence[ExerciseReport]) -> str:
    lines = []
    for r in reports:
        holes = [m for m in r.results if m.status in ("survived", "seed-dependent")]
        if not holes and not r.stale_equivalents:
            continue
        lines.append(f"\n{r.exercise}:")
        for m in holes:
            seeds = "" if m.status == "survived" else (
                " (killed on seeds " + ", ".join(str(s) for s, k in zip(r.seeds, m.killed_by, strict=True) if k)
                + " only)")
            lines.append(f"  {m.status:<15} {m.id:<24} {m.diff}{seeds}")
        for stale in r.stale_equivalents:
            lines.append(f"  stale equivalent {stale} (no such mutant: update benchmarks/mutants/{r.exercise}.toml)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from mcp_sim.grading import EXERCISES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exercises", nargs="*", metavar="EXERCISE", help="exercise ids (default: all)")
    parser.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)),
                        help="base seeds, comma-separated (default 0,1,2)")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON to FILE")
    parser.add_argument("--list-survivors", action="store_true", help="list surviving and seed-dependent mutants")
    parser.add_argument("--list-mutants", action="store_true", help="only list the mutants (no grading)")
    parser.add_argument("--only", default="", help="grade only these mutant ids, comma-separated")
    parser.add_argument("--case-time-limit", type=float, default=1.0, help="seconds per learner call (default 1)")
    ns = parser.parse_args(argv)
    ids = ns.exercises or list(EXERCISES)
    unknown = [i for i in ids if i not in EXERCISES]
    if unknown:
        parser.error(f"unknown exercise(s): {', '.join(unknown)}")
    if ns.list_mutants:
        from mcp_sim.grading.runner import reference_path

        for exercise_id in ids:
            for m in mutants(reference_path(exercise_id).read_text(encoding="utf-8")):
                sys.stdout.write(f"{exercise_id}  {m.id:<24} {m.diff}\n")
        return 0
    seeds = [int(s) for s in ns.seeds.split(",") if s.strip()]
    only = [s for s in ns.only.split(",") if s]
    reports = []
    for exercise_id in ids:
        reports.append(run_exercise(exercise_id, seeds, case_time_limit=ns.case_time_limit, only=only))
        sys.stderr.write(f"{exercise_id}: {reports[-1].mutants} mutants in {reports[-1].seconds:.1f} s\n")
        if ns.json:  # written as it goes, so a long run can be read before it ends
            _write(Path(ns.json), seeds, reports)
    sys.stdout.write(_table(reports) + "\n")
    total = sum(r.mutants for r in reports)
    seconds = sum(r.seconds for r in reports)
    sys.stdout.write(f"\n{total} mutants in {seconds:.1f} s ({total / seconds if seconds else 0:.1f} mutants/s)\n")
    if ns.list_survivors:
        sys.stdout.write(_survivors(reports) + "\n")
    return 0


def _write(path: Path, seeds: Sequence[int], reports: Sequence[ExerciseReport]) -> None:
    payload = {"benchmark": "mutation", "seeds": list(seeds), "exercises": [r.to_dict() for r in reports]}
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
