"""Exercise ex10_sandbox_policy (chapter 10): the sandbox a Host starts each local server in.

The learner writes ``sandbox_policy(needs, roots)``: the policy one local server process starts under,
as data — ``{"readable": [...], "writable": [...], "environment": [...], "egress": [...]}`` (path
prefixes, variable-name globs, host globs; ``"*"`` means anything) — from what the server declared it
needs (directories to read, environment variables, hosts to reach) and the ``file://`` roots the Host
gives it.

The grader runs ``separate-connections`` (one server's process reaches for another's secrets) and
``roots-not-sandbox`` (a server reads outside its roots), every variant, with the learner's policy
enforced by the simulated machine here — the learner's process only returns data. Direct cases probe
the learner's policy (may this process read this path, write there, see this variable, reach this
host?) and compare each answer with the policy of the labs' own fixed defence for the same input.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from mcp_sim.grading.differential import Mismatch
from mcp_sim.grading.exercises.ex10_labs import (
    Asker,
    expect_lab_holds,
    lab_kinds,
    lab_seed,
    run_learner_lab,
    split_kind,
)
from mcp_sim.grading.exercises.generated import corners_then_generated
from mcp_sim.grading.model import Check, CheckContext, CheckFailed, Exercise, Hint
from mcp_sim.scenarios.security import LABS
from mcp_sim.scenarios.security.client_features import Sandboxing
from mcp_sim.scenarios.security.shared_machine import Needs, Sandboxes
from mcp_sim.security.identity import pick_name
from mcp_sim.security.sandbox import SandboxPolicy

R_LEAST = "security.bp.local-guardrails"
R_ROOTS = "roots.client-exposes-with-permission"
FIELDS = ("readable", "writable", "environment", "egress")

_FOR_NEEDS = LABS["separate-connections"].defences["fixed"].policy_for
_FOR_ROOTS = LABS["roots-not-sandbox"].defences["fixed"].policy_for


def policy_from(answer: Any) -> SandboxPolicy:
    """The learner's answer as the machine's policy; a wrong shape is a failed case."""
    if not isinstance(answer, dict) or not set(answer) <= set(FIELDS) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in answer.values()):
        raise CheckFailed(f"sandbox_policy() must return a dict with lists of strings under (some of) "
                          f"{', '.join(FIELDS)}; it returned {answer!r}.", R_LEAST)
    return SandboxPolicy(**{k: tuple(v) for k, v in answer.items()})


def _needs_data(needs: Needs) -> dict[str, list[str]]:
    return {"directories": list(needs.directories), "environment": list(needs.environment),
            "egress": list(needs.egress)}


def _ask(asker: Asker, needs: dict[str, list[str]], roots: list[str]) -> SandboxPolicy:
    answer = asker.ask("sandbox_policy", needs, roots, fallback={})
    try:
        return policy_from(answer)
    except CheckFailed as wrong:
        asker.wrong(str(wrong), wrong.rule)
        return SandboxPolicy()


def check_lab(ctx: CheckContext, kind: str) -> None:
    lab, variant = split_kind(kind)
    asker = Asker(ctx)
    if lab == "roots-not-sandbox":
        defence: Any = Sandboxing(lambda roots: _ask(asker, {"directories": [], "environment": [], "egress": []},
                                                     list(roots)))
        rule = R_ROOTS
    else:
        defence, rule = Sandboxes(lambda needs: _ask(asker, _needs_data(needs), [])), R_LEAST
    result = run_learner_lab(asker, lab, variant, lab_seed(ctx), defence, rule)
    expect_lab_holds(result, rule, your="your sandbox policy")


# --- direct cases: probe the policy, compare with the fixed defence's -------------------------------

def _world(rng: Any) -> tuple[str, str, str]:
    user = pick_name(rng, "user").split(".")[0]
    server = pick_name(rng, "server")
    return user, server, f"/home/{user}/projects/{pick_name(rng, 'server')}"


def _case(rng: Any, kind: str) -> tuple[dict[str, list[str]], list[str], str, str]:
    """(needs, roots, what to probe, the probe's argument)."""
    user, server, project = _world(rng)
    data_dir = f"/srv/{server}/data"
    prefix = rng.choice(("GH", "NOTES", "WEATHER"))
    needs = {"directories": [f"/opt/{server}/templates", data_dir], "environment": [f"{prefix}_*", "PATH"],
             "egress": [f"api.{server}.example", f"cdn.{server}.example"]}
    none: dict[str, list[str]] = {"directories": [], "environment": [], "egress": []}
    probes: dict[str, tuple[bool, str, str]] = {
        # kind: (from roots?, probe, argument)
        "read a file in its own directory": (False, "read", f"{data_dir}/{rng.choice(['a.json', 'sub/b.txt'])}"),
        "read another server's credentials": (False, "read", f"/home/{user}/.config/finance-mcp/credentials.json"),
        "read its directory's parent": (False, "read", f"/srv/{server}/secrets.env"),
        "read a sibling directory with the same prefix": (False, "read", f"{data_dir}-private/key.pem"),
        "write into a directory it only reads": (False, "write", f"{data_dir}/cache.db"),
        "see one of its own variables": (False, "env", f"{prefix}_TOKEN"),
        "see a variable it names exactly": (False, "env", "PATH"),
        "see another server's variable": (False, "env", rng.choice(("FINANCE_API_KEY", "AWS_SECRET_ACCESS_KEY"))),
        "reach its own host": (False, "reach", f"api.{server}.example"),
        "reach another host": (False, "reach", f"collect.{pick_name(rng, 'server')}.example"),
        "read a file in its first directory": (False, "read", f"/opt/{server}/templates/page.html"),
        "see a variable that only starts like its glob": (False, "env", f"{prefix}X_TOKEN"),
        "reach a subdomain of its host": (False, "reach", f"evil.api.{server}.example"),
        "reach a host that extends its own": (False, "reach", f"api.{server}.example.{pick_name(rng, 'server')}.net"),
        "reach its second host": (False, "reach", f"cdn.{server}.example"),
        "read a file inside its root": (True, "read", f"{project}/README.md"),
        "read inside a root written FILE://": (True, "read", f"{project}/src/main.py"),
        "read inside a root written File://": (True, "read", f"{project}/src/app.py"),
        "read inside a root with a trailing slash": (True, "read", f"{project}/docs/index.md"),
        "read a sibling of a root with a trailing slash": (True, "read", f"{project}-old/.env"),
        "write inside its second root": (True, "write", f"/srv/shared/{user}/notes.txt"),
        "write a file inside its root": (True, "write", f"{project}/notes/todo.md"),
        "read through .. out of its root": (True, "read", f"{project}/../../.ssh/id_ed25519"),
        "read a sibling folder of its root": (True, "read", f"{project}-secrets/.env"),
        "write outside its root": (True, "write", f"/home/{user}/.bashrc"),
    }
    from_roots, probe, argument = probes[kind]
    if from_roots:
        root = {"read inside a root written FILE://": f"FILE://{project}",
                "read inside a root written File://": f"File://{project}",
                "read inside a root with a trailing slash": f"file://{project}/",
                "read a sibling of a root with a trailing slash": f"file://{project}/"}.get(kind, f"file://{project}")
        return none, [root, f"file:///srv/shared/{user}"], probe, argument
    return needs, [], probe, argument


def _allows(policy: SandboxPolicy, probe: str, argument: str) -> bool:
    return {"read": policy.may_read, "write": policy.may_write, "env": policy.sees_variable,
            "reach": policy.may_reach}[probe](argument)


NEEDS_KINDS = ("read a file in its own directory", "read a file in its first directory", "read another server's credentials",
               "read its directory's parent", "read a sibling directory with the same prefix",
               "write into a directory it only reads", "see one of its own variables", "see a variable it names exactly",
               "see another server's variable",
               "see a variable that only starts like its glob", "reach its own host", "reach its second host",
               "reach another host", "reach a subdomain of its host", "reach a host that extends its own")
ROOTS_KINDS = ("read a file inside its root", "write a file inside its root", "read through .. out of its root",
               "read a sibling folder of its root", "write outside its root", "read inside a root written FILE://",
               "read inside a root written File://",
               "read inside a root with a trailing slash", "read a sibling of a root with a trailing slash",
               "write inside its second root")


def check_direct(ctx: CheckContext, kind: str) -> None:
    needs, roots, probe, argument = _case(ctx.rng, kind)
    fixed = _FOR_ROOTS(roots) if roots else _FOR_NEEDS(Needs(tuple(needs["directories"]),
                                                            tuple(needs["environment"]), tuple(needs["egress"])))
    want = _allows(fixed, probe, argument)
    policy = policy_from(ctx.function("sandbox_policy")(json.loads(json.dumps(needs)), list(roots)))
    got = _allows(policy, probe, argument)
    if got is not want:
        verb = {"read": "read", "write": "write", "env": "see the variable", "reach": "connect to"}[probe]
        raise CheckFailed(f"Under your policy {policy} the process {'may' if got else 'may not'} {verb} {argument} "
                          f"({kind}).", R_ROOTS if roots else R_LEAST,
                          case=f"sandbox_policy({json.dumps(needs)}, {roots}); then {verb} {argument}",
                          expected="it may" if want else "it may not")


# --- generated: any needs or roots, any probe, against the labs' fixed policies --------------------------

_DIRS = ("/srv/notes/data", "/opt/notes/templates", "/srv/notes/data/")
_GLOBS = ("NOTES_*", "PATH", "GH_TOKEN")
_EGRESS = ("api.notes.example", "cdn.notes.example")
_PATHS = ("/srv/notes/data/a.json", "/srv/notes/data-private/k.pem", "/srv/notes/secrets.env", "/srv/notes/data",
          "/srv/notes/data/../../../etc/passwd", "/opt/notes/templates/x.html", "/home/ada/.ssh/id_ed25519",
          "/home/ada/p/README.md", "/home/ada/p-secrets/.env", "/home/ada/p/../.bashrc", "/srv/shared/t.txt",
          "/home/ada/p")
_VARIABLES = ("NOTES_TOKEN", "NOTESX_TOKEN", "PATH", "PATHEXT", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY")
_HOSTS = ("api.notes.example", "cdn.notes.example", "evil.api.notes.example", "api.notes.example.evil.net",
          "collect.evil.example")
_ROOTS = ("file:///home/ada/p", "FILE:///home/ada/p", "file:///home/ada/p/", "file:///srv/shared", "File:///srv/shared/")

Case = tuple[dict[str, list[str]], list[str], str, str]


@st.composite
def _cases(draw: st.DrawFn) -> Case:
    none: dict[str, list[str]] = {"directories": [], "environment": [], "egress": []}
    if draw(st.booleans()):
        needs = {"directories": draw(st.lists(st.sampled_from(_DIRS), min_size=1, max_size=2, unique=True)),
                 "environment": draw(st.lists(st.sampled_from(_GLOBS), max_size=2, unique=True)),
                 "egress": draw(st.lists(st.sampled_from(_EGRESS), max_size=2, unique=True))}
        roots: list[str] = []
    else:
        needs, roots = none, draw(st.lists(st.sampled_from(_ROOTS), min_size=1, max_size=2, unique=True))
    probe = draw(st.sampled_from(("read", "write", "env", "reach")))
    argument = draw(st.sampled_from({"env": _VARIABLES, "reach": _HOSTS}.get(probe, _PATHS)))
    return needs, roots, probe, argument


def _fixed(case: Case) -> bool:
    needs, roots, probe, argument = case
    fixed = _FOR_ROOTS(roots) if roots else _FOR_NEEDS(Needs(tuple(needs["directories"]), tuple(needs["environment"]),
                                                             tuple(needs["egress"])))
    return _allows(fixed, probe, argument)


def check_generated(ctx: CheckContext, kind: str) -> None:
    policies: dict[str, SandboxPolicy] = {}

    def learner(case: Case) -> bool:
        key = json.dumps(case[:2])
        if key not in policies:
            policies[key] = policy_from(ctx.function("sandbox_policy")(copy.deepcopy(case[0]), list(case[1])))
        return _allows(policies[key], case[2], case[3])

    def compare(case: Case, got: bool, want: bool) -> Mismatch | None:
        if got is want:
            return None
        verb = {"read": "read", "write": "write", "env": "see the variable", "reach": "connect to"}[case[2]]
        return Mismatch(f"Under your policy the process {'may' if got else 'may not'} {verb} {case[3]}.",
                        R_ROOTS if case[1] else R_LEAST, expected="it may" if want else "it may not")

    corners = [_case(ctx.rng, k) for k in ("read inside a root written FILE://", "reach a subdomain of its host",
                                            "see a variable that only starts like its glob")]
    corners_then_generated(ctx, corners, _cases(), learner=learner, oracle=_fixed, compare=compare,
                           describe=lambda c: f"needs {json.dumps(c[0])}, roots {c[1]}: {c[2]} {c[3]}")


EXERCISE = Exercise(
    id="ex10_sandbox_policy",
    title="A sandbox per server: its own needs, inside its roots",
    chapter="10",
    summary="Write the per-server sandbox policy a Host starts a local server under; graded by the "
            "separate-connections and roots-not-sandbox labs with your policy enforced on the simulated machine.",
    rules=(R_LEAST, R_ROOTS),
    functions=("sandbox_policy",),
    checks=(
        Check("One server cannot reach another's secrets", R_LEAST, check_lab, lab_kinds("separate-connections"),
              hint="Separate connections separate messages, not processes: the sandbox must grant only the "
                   "server's own needs.", seeds=1),
        Check("Exactly the declared needs", R_LEAST, check_direct, NEEDS_KINDS,
              hint="readable = the directories; environment = the variable globs; egress = the hosts; no writes."),
        Check("Roots become a boundary only when enforced", R_ROOTS, check_lab, lab_kinds("roots-not-sandbox"),
              hint="Turn each file:// root into its path and grant reading and writing under it — nothing else.",
              seeds=1),
        Check("Inside the roots, and nowhere else", R_ROOTS, check_direct, ROOTS_KINDS,
              hint="A root is a path prefix, never a string prefix: /project-secrets is not inside /project."),
        Check("Any needs or roots, any probe: the fixed policies' answer", R_LEAST, check_generated, ("generated",),
              hint="Parse each root as a URI (the scheme in any case), keep the globs and hosts exactly as declared.",
              seeds=1),
    ),
    hints=(
        Hint("Every local server runs as the user, so without a sandbox it can read, write and send whatever the "
             "user can. The Host decides what each process gets, from what that server needs.", R_LEAST),
        Hint("sandbox_policy: readable = needs['directories'] + the roots' paths (urllib.parse.urlparse(uri).path); "
             "writable = the roots' paths; environment = needs['environment']; egress = needs['egress'].", R_ROOTS),
    ),
    forbidden=("mcp_sim.security", "mcp_sim.scenarios"),
)
