"""A guard for URLs a client learned from someone else (server-side request forgery).

During MCP authorization a client fetches URLs it did not choose: the ``resource_metadata`` in a
Server's ``WWW-Authenticate`` header, the ``authorization_servers`` in that metadata, the endpoints in
an authorization server's metadata. A malicious Server can point any of them at an address only the
client can reach — the cloud's instance metadata service (``169.254.169.254``), an admin page on
loopback, a machine on the private network — and the client makes the request for it. That is
**server-side request forgery** (SSRF): the attacker borrows the client's place in the network.

:func:`check_url` refuses such a URL *before* the request leaves, raising :class:`UrlRefused` with the
rule it broke:

* the scheme is ``https`` (plain ``http`` only to loopback, and only when the caller allows the
  local development case, for a Server the user started on their own machine);
* no user name or password in the URL (``https://good.example@evil.example/`` goes to ``evil``);
* the host, **after resolution**, is a public address. An IP literal is read the lenient way an
  HTTP stack reads it (``2852039166``, ``0xa9fea9fe`` and ``[::ffff:169.254.169.254]`` are all
  169.254.169.254); a DNS name is resolved with the caller's ``resolve`` and *every* address it
  gives must be public;
* "public" is judged on the **effective destination**: the address a packet reaches after every
  translation the platform may apply (:func:`destinations`). An IPv6 address from a transition
  prefix carries an IPv4 address inside it, and the network delivers to *that* one: IPv4-mapped
  ``::ffff:0:0/96`` (the operating system's own dual-stack socket), IPv4-translated
  ``::ffff:0:0:0/96`` (SIIT), NAT64's well-known ``64:ff9b::/96`` and local-use ``64:ff9b:1::/48``
  (the gateway translates to the last 32 bits), 6to4 ``2002::/16`` (the relay sends to bits 16–48),
  Teredo ``2001::/32`` (server and obfuscated client) and the deprecated IPv4-compatible ``::/96``.
  The IPv4 address is *derived by rule* from the prefix (``ipaddress`` gives ``ipv4_mapped``,
  ``sixtofour`` and ``teredo``; the others are the low 32 bits), so every spelling of it —
  ``[64:ff9b::a9fe:a9fe]``, ``[64:ff9b::169.254.169.254]``, a name whose AAAA record is one — is the
  same address to the guard. A platform whose NAT64 uses its own network-specific prefix (RFC 6052)
  passes it as ``nat64=``: no guard can know an operator's prefix from the address alone;
* the same check runs again on every redirect before it is followed (:func:`url_guard` gives the
  one-argument guard a client calls for each fetch and each hop).

Comparing the host's *text* with a list of bad names misses every one of those spellings, which is
why the check works on addresses. What it does not cover: a name that resolves to a public address
when checked and a private one when fetched (DNS rebinding between check and use); the defence
there is to connect to the address that was checked, or to send all such fetches through an egress
proxy that applies the same rules; and a translation the guard was not told about (a network-specific
NAT64 prefix not passed as ``nat64=``, a proxy that resolves names itself).

Pure functions, no network: the simulator passes its own DNS table; the real-wire client can pass
:func:`socket.getaddrinfo`-based resolution.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from mcp_sim.security.oauth_client import OAuthFailed

__all__ = ["NAT64_PREFIXES", "Resolver", "UrlRefused", "check_address", "check_url", "destinations", "no_dns",
           "parse_ip", "url_guard"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], Sequence[str]]
"""A host name → the addresses it resolves to (empty: it does not resolve)."""


class UrlRefused(OAuthFailed):
    """A URL the guard will not fetch; ``rule`` names the rule it broke. It is an
    :class:`~mcp_sim.security.oauth_client.OAuthFailed`, so a guard passed to ``OAuthClient(url_guard=…)``
    stops the flow with the rule as its reason."""

    def __init__(self, url: str, rule: str) -> None:
        super().__init__(f"refused to fetch {url}: {rule}", rule)
        self.url = url


def no_dns(host: str) -> Sequence[str]:
    """A resolver that knows no names (only IP literals pass the guard)."""
    return ()


def _number(part: str) -> int | None:
    """One part of a lenient IPv4 literal: decimal, ``0x`` hex or ``0`` octal, as inet_aton reads it."""
    text = part.lower()
    try:
        if text.startswith("0x"):
            return int(text[2:] or "0", 16)
        if len(text) > 1 and text.startswith("0"):
            return int(text[1:], 8)
        return int(text, 10) if text.isdigit() else None
    except ValueError:
        return None


def parse_ip(host: str) -> IPAddress | None:
    """The address an IP literal in a URL means, or ``None`` for a name.

    Besides ``169.254.169.254`` this reads the other spellings HTTP stacks accept: one number
    (``2852039166``), hex or octal parts (``0xa9.0xfe.0xa9.0xfe``, ``0xa9fea9fe``), fewer than four
    parts (``127.1``) and bracketed IPv6 (``[::1]``). An IPv6 address that embeds an IPv4 one
    (``::ffff:10.0.0.1``) is returned as that IPv4 address, since that is where it goes."""
    host = host.strip().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        try:
            v6 = ipaddress.IPv6Address(host[1:-1].split("%")[0])
        except ValueError:
            return None
        return v6.ipv4_mapped or v6
    parts = host.split(".")
    numbers = [_number(p) for p in parts]
    if not 1 <= len(parts) <= 4 or any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    *head, last = values
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(values)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (5 - len(values)) + last
    return ipaddress.IPv4Address(value)


NAT64_PREFIXES: tuple[ipaddress.IPv6Network, ...] = (ipaddress.IPv6Network("64:ff9b::/96"),
                                                    ipaddress.IPv6Network("64:ff9b:1::/48"))
"""NAT64's well-known prefix (RFC 6052) and its local-use prefix (RFC 8215): the gateway sends a packet
for ``PREFIX::a.b.c.d`` to ``a.b.c.d``. (This guard reads the IPv4 address from the last 32 bits, the
``/96`` layout; RFC 6052 also allows shorter prefixes with the address split around bits 64–71.)"""
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # SIIT, RFC 6145/2765
_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated IPv4-compatible, RFC 4291 2.5.5.1


def destinations(address: IPAddress, *, nat64: tuple[ipaddress.IPv6Network, ...] = NAT64_PREFIXES
                 ) -> tuple[IPAddress, ...]:
    """Where a packet for ``address`` is delivered after every translation the platform may apply: the
    address itself, or the IPv4 address(es) an IPv6 transition prefix embeds. Derived by rule from the
    prefix, never from the text, so any spelling of the same bits gives the same answer:

    >>> destinations(ipaddress.ip_address("64:ff9b::a9fe:a9fe"))
    (IPv4Address('169.254.169.254'),)
    >>> destinations(ipaddress.ip_address("2002:a00:1::1"))
    (IPv4Address('10.0.0.1'),)
    """
    if isinstance(address, ipaddress.IPv4Address) or address.is_loopback or address.is_unspecified:
        return (address,)
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if address in _TRANSLATED or any(address in prefix for prefix in nat64):
        return (low32,)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo  # (server, client): the client is where the packet goes, via the server
    if address in _COMPATIBLE:
        return (low32,)
    return (address,)


def _kind(address: IPAddress, nat64: tuple[ipaddress.IPv6Network, ...] = NAT64_PREFIXES) -> str | None:
    """Why an address is not public (``None`` when it is), judged on where it is delivered."""
    found = destinations(address, nat64=nat64)
    if found != (address,):
        kinds = [(inner, _kind(inner)) for inner in found]
        return next((f"translated to {inner}, {kind}" for inner, kind in kinds if kind), None)
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (where cloud metadata services live)"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private-network address"
    if not address.is_global:
        return "an address that is not publicly routable"
    return None


def check_address(address: IPAddress, *, allow_loopback: bool = False,
                  nat64: tuple[ipaddress.IPv6Network, ...] = NAT64_PREFIXES) -> None:
    """Raise :class:`UrlRefused` unless ``address`` is public (or loopback, when allowed), after
    translation (:func:`destinations`)."""
    kind = _kind(address, nat64)
    if kind is not None and not (allow_loopback and address.is_loopback):
        raise UrlRefused(str(address), f"{address} is {kind}; a URL learned from a server must reach a "
                                       "public address")


def check_url(url: str, resolve: Resolver = no_dns, *, allow_loopback_http: bool = False,
              nat64: tuple[ipaddress.IPv6Network, ...] = NAT64_PREFIXES) -> None:
    """Raise :class:`UrlRefused` unless ``url`` is safe to fetch on a server's say-so.

    ``resolve`` turns a host name into its addresses (all must be public). ``allow_loopback_http``
    admits ``http://localhost``/``127.0.0.1``/``[::1]`` — the development case where the user runs the
    Server on their own machine; everything else must be ``https``. ``nat64`` lists the NAT64 prefixes
    the platform translates (the well-known and local-use ones by default; add a network-specific one)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.username is not None or parts.password is not None:
        raise UrlRefused(url, "a URL with user information (user@host) is not fetched: the real host is "
                              "what follows the @")
    if not host:
        raise UrlRefused(url, "the URL names no host")
    literal = parse_ip(f"[{host}]" if ":" in host else host)
    if host == "localhost":
        literal = ipaddress.IPv4Address("127.0.0.1")
    addresses = [literal] if literal is not None else [_address(a, url) for a in resolve(host)]
    loopback = bool(addresses) and all(a.is_loopback for a in addresses)
    if parts.scheme != "https" and not (parts.scheme == "http" and allow_loopback_http and loopback):
        raise UrlRefused(url, "only https URLs are fetched (http only for a loopback development server)")
    if not addresses:
        raise UrlRefused(url, f"{host} does not resolve")
    for address in addresses:
        kind = _kind(address, nat64)
        if kind is not None and not (allow_loopback_http and address.is_loopback):
            where = str(address) if literal is not None else f"{host} resolves to {address}, which"
            raise UrlRefused(url, f"{where} is {kind}; a URL learned from a server must reach a public address")


def _address(text: str, url: str) -> IPAddress:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise UrlRefused(url, f"the resolver gave {text!r}, not an address") from None


def url_guard(resolve: Resolver = no_dns, *, allow_loopback_http: bool = False,
              nat64: tuple[ipaddress.IPv6Network, ...] = NAT64_PREFIXES) -> Callable[[str], None]:
    """The one-argument guard a client calls before each fetch (and each redirect it follows)."""
    def guard(url: str) -> None:
        check_url(url, resolve, allow_loopback_http=allow_loopback_http, nat64=nat64)

    return guard
