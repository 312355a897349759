"""ex03_version_negotiation — the legacy initialize handshake's version choice.

Edit this file, then grade it: ``grade("ex03_version_negotiation")`` in a notebook or
``mcp-sim grade ex03_version_negotiation`` in a terminal. The task is in README.md beside this file.
"""

from __future__ import annotations


def choose_version(requested: str, supported: list[str]) -> str:
    """The version a legacy server answers ``initialize`` with.

    First draft, WRONG on purpose: it always agrees with the client — even when the server does not
    speak the requested version.
    """
    return requested


def client_accepts(chosen: str, client_supported: list[str]) -> bool:
    """Whether the client continues with the server's ``chosen`` version (False = disconnect).

    First draft, WRONG on purpose: it accepts anything.
    """
    return True


def handshake(client_supported: list[str], server_supported: list[str]) -> str | None:
    """The version both sides end up using, or ``None`` when the client disconnects."""
    raise NotImplementedError("write handshake() using the two functions above")
