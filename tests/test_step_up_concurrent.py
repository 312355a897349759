"""Step-up decided per request (issue "faults without surprises", part two): two calls in flight
that both meet ``403 insufficient_scope`` must not fail because the other one stepped up first.

A refusal is judged against the token *that request* carried (``OAuthClient.on_challenge(response,
carried)``), never against the client's current token, which another caller may already have
replaced; concurrent challenges run one flow at a time, so the user is asked once (rule
``auth.step-up-retry-limit`` still stops a server that refuses a token that has the scope).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from test_oauth_flow import ERAS, FIRST_AUTHORIZATION, ISSUER, PRM_URL, World, authorized_call, play

from mcp_sim.security.oauth_client import OAuthFailed
from mcp_sim.transports.http import Headers, HttpResponse

STEP_UP = [("GET", PRM_URL, 200), ("GET", f"{ISSUER}/.well-known/oauth-authorization-server", 200),
           ("GET", f"{ISSUER}/authorize", 302), ("POST", f"{ISSUER}/token", 200)]


@pytest.mark.parametrize("era", ERAS)
def test_two_concurrent_step_ups_both_succeed_with_one_authorization(era: str) -> None:
    async def story(world: World) -> dict[str, Any]:
        first = await authorized_call(world, "read_notes")  # a token with notes:read only
        results: dict[str, Any] = {}

        async def write(who: str) -> None:
            try:
                results[who] = await authorized_call(world, "write_note")
            except Exception as exc:  # the defect: the second caller's 403 judged against the new token
                results[who] = f"{type(exc).__name__}: {exc}"

        async with anyio.create_task_group() as tg:
            tg.start_soon(write, "a")
            tg.start_soon(write, "b")
        return {"first": first, **results}

    world, results = play(era, story)
    assert results == {"first": "buy milk", "a": "written", "b": "written"}
    # One step-up: the second caller retried with the token the first caller's flow produced.
    assert world.oauth_exchanges() == [*FIRST_AUTHORIZATION, *STEP_UP]
    assert any("another request already got a token" in step for step in world.oauth.steps)
    forbidden = [e for e in world.sim.recorder.events if e.text == "HTTP 403 Forbidden"]
    assert len(forbidden) == 2


@pytest.mark.parametrize("era", ERAS)
def test_a_refusal_of_the_token_that_has_the_scope_still_stops(era: str) -> None:
    """Per-request judgement does not weaken the retry limit: a 403 for the very token that carries
    the scope stops the flow (``auth.step-up-retry-limit``)."""
    async def story(world: World) -> str:
        await authorized_call(world, "read_notes")
        await authorized_call(world, "write_note")
        assert world.oauth.tokens is not None
        held = world.oauth.tokens.access_token
        response = HttpResponse(403, Headers({"WWW-Authenticate": 'Bearer error="insufficient_scope", '
                                              'scope="notes:write"'}))
        try:
            await world.oauth.on_challenge(response, held)
        except OAuthFailed as exc:
            return exc.rule
        return "no failure"

    _, rule = play(era, story)
    assert rule == "auth.step-up-retry-limit"


@pytest.mark.parametrize("era", ERAS)
def test_a_late_refusal_of_the_old_token_retries_with_the_new_one(era: str) -> None:
    """The shape of the false failure: caller B's ``403`` (for the token it sent) arrives after caller
    A's step-up replaced that token with one that has the scope. B gets A's token back, at once —
    no second authorization, and no "refused although the token carries it"."""
    async def story(world: World) -> tuple[str, str]:
        await authorized_call(world, "read_notes")
        assert world.oauth.tokens is not None
        old = world.oauth.tokens.access_token
        await authorized_call(world, "write_note")  # A steps up
        assert world.oauth.tokens is not None and world.oauth.tokens.access_token != old
        late = HttpResponse(403, Headers({"WWW-Authenticate": 'Bearer error="insufficient_scope", '
                                          f'scope="notes:write notes:read", resource_metadata="{PRM_URL}"'}))
        return await world.oauth.on_challenge(late, old), world.oauth.tokens.access_token

    world, (retry_with, current) = play(era, story)
    assert retry_with == current
    assert world.oauth_exchanges() == [*FIRST_AUTHORIZATION, *STEP_UP]
