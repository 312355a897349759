"""The class's submissions and results, in a real database (SQLite by default, PostgreSQL by URL).

One table, ``submissions``: who submitted which exercise, the source they submitted, when, and — once a
worker has graded it — the verdict and the whole result as JSON. Nothing else is kept: identities come
from JupyterHub, the exercises from the package. The store speaks SQLAlchemy Core, so the same code runs
on ``sqlite:///grades.sqlite`` (one machine) and ``postgresql+psycopg://…`` (a large class).

Queued work survives a restart: a submission stays ``queued`` until a worker claims it (``grading``)
and sets its result; :meth:`Store.requeue_unfinished` puts back what a stopped service was grading.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa

STATUSES: Final = ("queued", "grading", "graded", "error")

_META = sa.MetaData()
SUBMISSIONS = sa.Table(
    "submissions", _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("user", sa.String(200), nullable=False, index=True),
    sa.Column("exercise", sa.String(100), nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("submitted_at", sa.Float, nullable=False),
    sa.Column("status", sa.String(20), nullable=False, default="queued"),
    sa.Column("passed", sa.Boolean, nullable=True),
    sa.Column("checks_passed", sa.Integer, nullable=True),
    sa.Column("checks_total", sa.Integer, nullable=True),
    sa.Column("result", sa.Text, nullable=True),
)


@dataclass(frozen=True)
class Submission:
    """One row, as the service shows it (without the source unless asked)."""

    id: int
    user: str
    exercise: str
    submitted_at: float
    status: str
    passed: bool | None
    checks_passed: int | None
    checks_total: int | None
    result: dict[str, Any] | None

    def summary(self) -> dict[str, Any]:
        """What the learner's list shows: everything but the full result."""
        return {"id": self.id, "user": self.user, "exercise": self.exercise, "submitted_at": self.submitted_at,
                "status": self.status, "passed": self.passed, "checks_passed": self.checks_passed,
                "checks_total": self.checks_total}


def _row(row: Any) -> Submission:
    return Submission(row.id, row.user, row.exercise, row.submitted_at, row.status, row.passed, row.checks_passed,
                      row.checks_total, json.loads(row.result) if row.result else None)


class Store:
    """The submissions database at ``url`` (created on first use)."""

    def __init__(self, url: str) -> None:
        options: dict[str, Any] = {}
        if url.startswith("sqlite"):
            options["connect_args"] = {"check_same_thread": False, "timeout": 30}
        self.engine = sa.create_engine(url, **options)
        _META.create_all(self.engine)
        self._claim = threading.Lock()  # SQLite has no SELECT … FOR UPDATE; one claimer at a time

    def submit(self, user: str, exercise: str, source: str, now: float | None = None) -> int:
        """Queue a submission; its id."""
        with self.engine.begin() as db:
            done = db.execute(SUBMISSIONS.insert().values(user=user, exercise=exercise, source=source,
                                                          submitted_at=time.time() if now is None else now,
                                                          status="queued"))
            key = done.inserted_primary_key
            assert key is not None
            return int(key[0])

    def claim(self) -> tuple[int, str, str] | None:
        """The oldest queued submission, marked ``grading``: (id, exercise, source), or ``None``."""
        with self._claim, self.engine.begin() as db:
            row = db.execute(sa.select(SUBMISSIONS.c.id, SUBMISSIONS.c.exercise, SUBMISSIONS.c.source)
                             .where(SUBMISSIONS.c.status == "queued").order_by(SUBMISSIONS.c.id).limit(1)
                             .with_for_update(skip_locked=True)).first()
            if row is None:
                return None
            db.execute(SUBMISSIONS.update().where(SUBMISSIONS.c.id == row.id).values(status="grading"))
            return int(row.id), str(row.exercise), str(row.source)

    def finish(self, submission_id: int, result: dict[str, Any], *, error: bool = False) -> None:
        """Record a worker's verdict (``result`` is a :class:`GradeResult` as a dict)."""
        checks = result.get("checks", [])
        with self.engine.begin() as db:
            db.execute(SUBMISSIONS.update().where(SUBMISSIONS.c.id == submission_id).values(
                status="error" if error else "graded", passed=bool(result.get("passed")) and not error,
                checks_passed=sum(1 for c in checks if c.get("status") == "passed"), checks_total=len(checks),
                result=json.dumps(result, sort_keys=True)))

    def requeue_unfinished(self) -> int:
        """Put back what was being graded when the service stopped; how many."""
        with self.engine.begin() as db:
            return int(db.execute(SUBMISSIONS.update().where(SUBMISSIONS.c.status == "grading")
                                  .values(status="queued")).rowcount)

    def requeue_all(self) -> int:
        """Queue every submission again (after the grader changed): the service grades them anew."""
        with self.engine.begin() as db:
            return int(db.execute(SUBMISSIONS.update().values(status="queued")).rowcount)

    def get(self, submission_id: int) -> Submission | None:
        with self.engine.connect() as db:
            row = db.execute(sa.select(SUBMISSIONS).where(SUBMISSIONS.c.id == submission_id)).first()
        return _row(row) if row is not None else None

    def for_user(self, user: str) -> list[Submission]:
        """A learner's own submissions, newest first."""
        with self.engine.connect() as db:
            rows = db.execute(sa.select(SUBMISSIONS).where(SUBMISSIONS.c.user == user)
                              .order_by(SUBMISSIONS.c.id.desc())).all()
        return [_row(r) for r in rows]

    def pending(self) -> int:
        with self.engine.connect() as db:
            return int(db.execute(sa.select(sa.func.count()).select_from(SUBMISSIONS)
                                  .where(SUBMISSIONS.c.status.in_(("queued", "grading")))).scalar_one())

    def gradebook(self) -> list[dict[str, Any]]:
        """One row per learner and exercise: attempts, whether any attempt passed, the best number of
        checks passed and the latest status (sorted by learner, then exercise)."""
        with self.engine.connect() as db:
            rows = db.execute(sa.select(SUBMISSIONS.c.user, SUBMISSIONS.c.exercise, SUBMISSIONS.c.status,
                                        SUBMISSIONS.c.passed, SUBMISSIONS.c.checks_passed, SUBMISSIONS.c.checks_total)
                              .order_by(SUBMISSIONS.c.user, SUBMISSIONS.c.exercise, SUBMISSIONS.c.id)).all()
        book: dict[tuple[str, str], dict[str, Any]] = {}
        for r in rows:
            entry = book.setdefault((r.user, r.exercise), {"user": r.user, "exercise": r.exercise, "attempts": 0,
                                                           "passed": False, "best_checks_passed": 0,
                                                           "checks_total": 0, "latest_status": ""})
            entry["attempts"] += 1
            entry["passed"] = entry["passed"] or bool(r.passed)
            entry["best_checks_passed"] = max(entry["best_checks_passed"], r.checks_passed or 0)
            entry["checks_total"] = max(entry["checks_total"], r.checks_total or 0)
            entry["latest_status"] = r.status
        return list(book.values())

    def gradebook_csv(self) -> str:
        """The gradebook as CSV (one row per learner and exercise; a spreadsheet or an LMS import)."""
        out = io.StringIO()
        fields = ["user", "exercise", "attempts", "passed", "best_checks_passed", "checks_total", "latest_status"]
        writer = csv.DictWriter(out, fields, lineterminator="\n")
        writer.writeheader()
        for row in self.gradebook():
            writer.writerow(row)
        return out.getvalue()

    def rows(self) -> Iterator[Submission]:
        with self.engine.connect() as db:
            for row in db.execute(sa.select(SUBMISSIONS).order_by(SUBMISSIONS.c.id)):
                yield _row(row)
