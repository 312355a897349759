"""ex11_discovery_urls — from a 401 to the authorization server's metadata.

Edit this file, then grade it: ``grade("ex11_discovery_urls")`` in a notebook or
``mcp-sim grade ex11_discovery_urls`` in a terminal. The task is described in README.md beside this file.
"""

from __future__ import annotations


def prm_urls(www_authenticate: str, server_url: str) -> list[str]:
    """Where to fetch the Server's Protected Resource Metadata, in the order to try.

    ``www_authenticate`` is the header of the Server's 401 (e.g. ``Bearer resource_metadata="…",
    scope="…"``); ``server_url`` the MCP endpoint the client called (e.g. ``https://notes.example/mcp``)."""
    raise NotImplementedError("write prm_urls()")


def as_metadata_urls(issuer: str) -> list[str]:
    """Where to fetch the metadata of the authorization server ``issuer``, in the order to try."""
    raise NotImplementedError("write as_metadata_urls()")
