"""The URL guard for URLs a client learned from a server: every spelling of an internal address is
refused, names are judged by what they resolve to, public https passes, and the OAuth client stops
with the guard's rule."""

from __future__ import annotations

import ipaddress

import pytest

from mcp_sim.security.oauth_client import OAuthFailed
from mcp_sim.security.url_safety import UrlRefused, check_url, parse_ip, url_guard

DNS = {"notes.example": ["93.184.215.14"], "metadata.evil.example": ["169.254.169.254"],
       "split.evil.example": ["93.184.215.15", "10.0.0.8"], "admin.corp.example": ["10.1.2.3"],
       "bad.example": ["not-an-ip"]}


def resolve(host: str) -> list[str]:
    return DNS.get(host, [])


@pytest.mark.parametrize(("host", "address"), [
    ("169.254.169.254", "169.254.169.254"), ("2852039166", "169.254.169.254"), ("0xa9fea9fe", "169.254.169.254"),
    ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"), ("0251.0376.0251.0376", "169.254.169.254"), ("127.1", "127.0.0.1"),
    ("[::ffff:169.254.169.254]", "169.254.169.254"), ("[::ffff:a9fe:a9fe]", "169.254.169.254"), ("[::1]", "::1"),
    ("10.0.0.1.", "10.0.0.1"),
])
def test_every_spelling_of_an_address_is_read(host: str, address: str) -> None:
    assert parse_ip(host) == ipaddress.ip_address(address)


@pytest.mark.parametrize("host", ["notes.example", "1.2.3.4.5", "256.1.1.1", "0x1g", "[zz::1]", "12a"])
def test_names_and_malformed_literals_are_not_addresses(host: str) -> None:
    assert parse_ip(host) is None


@pytest.mark.parametrize(("url", "words"), [
    ("https://169.254.169.254/latest/meta-data/", "link-local"),
    ("https://2852039166/latest/meta-data/", "link-local"),
    ("https://0xa9fea9fe/", "link-local"),
    ("https://[::ffff:10.0.0.7]/token", "private"),
    ("https://127.0.0.1:8080/admin", "loopback"),
    ("https://192.168.1.1/", "private"),
    ("https://100.64.0.1/", "not publicly routable"),
    ("https://0.0.0.0/", "unspecified"),
    ("https://metadata.evil.example/", "link-local"),
    ("https://split.evil.example/", "private"),
    ("https://admin.corp.example/", "private"),
    ("http://notes.example/.well-known/oauth-protected-resource", "only https"),
    ("ftp://notes.example/", "only https"),
    ("https://notes.example@169.254.169.254/", "user information"),
    ("https://unknown.example/", "does not resolve"),
    ("https:///nohost", "no host"),
    ("https://bad.example/", "not an address"),
])
def test_internal_and_unsafe_urls_are_refused_naming_the_rule(url: str, words: str) -> None:
    with pytest.raises(UrlRefused, match=words) as refused:
        check_url(url, resolve)
    assert words in refused.value.rule and isinstance(refused.value, OAuthFailed)


def test_public_https_passes_and_loopback_http_only_when_allowed() -> None:
    check_url("https://notes.example/.well-known/oauth-protected-resource/mcp", resolve)
    check_url("https://93.184.215.14/x")
    for url in ("http://localhost:3000/.well-known/oauth-protected-resource", "http://127.0.0.1:3000/x",
                "http://[::1]:3000/x"):
        with pytest.raises(UrlRefused):
            check_url(url, resolve)
        check_url(url, resolve, allow_loopback_http=True)
    with pytest.raises(UrlRefused, match="only https"):  # the development exception is loopback only
        check_url("http://notes.example/", resolve, allow_loopback_http=True)
    with pytest.raises(UrlRefused, match="only https"):
        check_url("http://169.254.169.254/", resolve, allow_loopback_http=True)
    with pytest.raises(UrlRefused, match="link-local"):
        check_url("https://169.254.169.254/", resolve, allow_loopback_http=True)


def test_url_guard_is_the_one_argument_form() -> None:
    guard = url_guard(resolve)
    guard("https://notes.example/")
    with pytest.raises(UrlRefused):
        guard("https://metadata.evil.example/")
