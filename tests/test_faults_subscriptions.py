"""No silent miss (issue "faults without surprises, part two", item 1).

A subscriber either hears every change the server made or sees a signal it can act on (rule
``subscriptions.sim-no-silent-miss``): a dropped stream is re-established — with a deadline on its
acknowledgement — and the gap closed by telling the Host to read again; one that cannot be
re-established is marked lost and reported. One test per defect the issue names: a cut 2026-07-28
listen stream on HTTP (cut, server crash), a legacy HTTP session renewal with a subscription (met by
a request, and while only listening), and a lost re-listen after a stdio restart.

The check every test applies is :func:`_no_silent_miss`: after each change the server made, the Host
heard of that resource at or after the change, or the subscription says it is lost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from mcp_sim.roles.client import Client, ClientCallbacks, ConnectionLost, Subscription
from mcp_sim.roles.server import Server
from mcp_sim.roles.server_session import serve
from mcp_sim.sim.world import Simulation
from mcp_sim.trace.jsonl import dumps_jsonl
from mcp_sim.transports import open_link
from mcp_sim.transports.faults import Faults, LinkFaults

LEGACY, MODERN = "2025-11-25", "2026-07-28"
URI = "notes://today"
UPDATED = "notifications/resources/updated"


class World:
    """A notes server whose one resource changes on demand; the Host's ears; the changes made."""

    def __init__(self) -> None:
        self.server = Server("notes")
        self.text = "v0"
        self.changes: list[float] = []
        self.heard: list[tuple[float, str, dict[str, Any]]] = []

        @self.server.resource(URI, mime_type="text/plain")
        def today() -> str:
            """Today's note."""
            return self.text

        @self.server.tool()
        def ping() -> str:
            """Answer at once."""
            return "pong"

    def change(self) -> None:
        self.text = f"v{len(self.changes) + 1}"
        self.changes.append(anyio.current_time())
        self.server.resource_updated(URI)

    def hear(self, server: str, method: str, params: dict[str, Any]) -> None:
        self.heard.append((anyio.current_time(), method, params))


def _no_silent_miss(world: World, sub: Subscription | None = None) -> None:
    """Every change was followed by word of it reaching the Host (a real notification, or the
    client's gap-closing one after a re-subscription), unless the subscription is marked lost."""
    if sub is not None and sub.lost is not None:
        assert sub.closed
        return
    told = [t for t, method, params in world.heard if method == UPDATED and params.get("uri") == URI]
    for at in world.changes:
        assert any(t >= at for t in told), f"the change at {at:g} s was never told to the host (told at {told})"


Body = Callable[[World, Client, Any], Awaitable[Subscription | None]]


def _run(transport: str, revision: str, body: Body, *, seed: int = 4,
         faults: LinkFaults | None = None) -> tuple[Simulation, World, Client, Subscription | None, bool]:
    """Run ``body``; the last value says whether its subscription was still open at its end."""
    sim = Simulation(seed)
    world = World()
    out: dict[str, Any] = {}

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stream: Any = await open_link(sim, tg, "notes", lambda s: serve(world.server, s),
                                          transport=transport,  # type: ignore[call-overload]
                                          revision=revision, faults=faults)
            client = Client("app", era="legacy" if revision == LEGACY else "modern",
                            callbacks=ClientCallbacks(on_notification=world.hear))
            await client.connect(stream, tg)
            out["client"] = client
            out["sub"] = await body(world, client, stream)
            out["open"] = out["sub"] is not None and not out["sub"].closed  # before close() ends it
            await client.close()
            if transport == "http":
                await stream.server.aclose()

    sim.run(main)
    return sim, world, out["client"], out["sub"], out["open"]


def _requests(sim: Simulation, method: str) -> list[Any]:
    return [e for e in sim.recorder if e.kind == "request" and e.method == method]


# -- a cut 2026-07-28 listen stream on HTTP ------------------------------------------------------------

def _listen_then(fault: str) -> Body:
    async def body(world: World, client: Client, stream: Any) -> Subscription:
        sub = await client.listen({"resourceSubscriptions": [URI]})
        await anyio.sleep(1)
        if fault == "crash":
            stream.server.crash()
        world.change()  # made while nobody listens (crash), or on the stream that is cut (cut)
        await anyio.sleep(2)
        world.change()  # made after the client listened again: a real notification
        await anyio.sleep(2)
        return sub
    return body


@pytest.mark.parametrize("fault", ["cut", "crash"])
def test_a_cut_modern_listen_stream_is_listened_to_again_and_the_gap_closed(fault: str) -> None:
    # The acknowledgement is the listen stream's first SSE event; the second is the first change.
    faults = LinkFaults(to_client=Faults(cut_sse_at=2)) if fault == "cut" else None
    sim, world, client, sub, still_open = _run("http", MODERN, _listen_then(fault), faults=faults)
    assert sub is not None and still_open and sub.lost is None
    listens = _requests(sim, "subscriptions/listen")
    assert len(listens) == 2 and sub.id == listens[1].request_id  # listened again, with a new id
    assert len(sub.gaps) == 1 and sub.gaps[0][0] <= sub.gaps[0][1]
    assert [e.kind for e in client.subscription_log] == ["lost", "restored"]
    _no_silent_miss(world, sub)
    # The change after the re-listen came on the new stream, tagged with its id.
    assert any(p.get("_meta", {}).get("io.modelcontextprotocol/subscriptionId") == sub.id for _, p in sub.received)
    assert any("gap" in e.marks for e in sim.recorder)


def test_a_listen_stream_cut_before_its_acknowledgement_fails_the_listen_at_once() -> None:
    """Cut on the acknowledgement itself: ``listen`` raises at once (no 30 s wait, no orphan stream)."""
    async def body(world: World, client: Client, stream: Any) -> None:
        with pytest.raises(ConnectionLost):
            await client.listen({"resourceSubscriptions": [URI]})
        assert anyio.current_time() < 1
        return None

    sim, _, client, _, _ = _run("http", MODERN, body, faults=LinkFaults(to_client=Faults(cut_sse_at=1)))
    assert len(_requests(sim, "subscriptions/listen")) == 1
    assert not client._subscriptions


def test_without_the_recovery_a_cut_stream_would_be_a_silent_miss() -> None:
    """The check has teeth: told nothing after the cut, the change made on the cut stream is missed."""
    world = World()
    world.changes = [1.0]
    world.heard = [(0.5, UPDATED, {"uri": URI})]
    with pytest.raises(AssertionError, match="never told"):
        _no_silent_miss(world, Subscription(1, {}))


# -- a legacy HTTP session renewal with a subscription -------------------------------------------------

@pytest.mark.parametrize("noticed_by", ["request", "listening"])
def test_a_renewed_legacy_http_session_subscribes_again_and_closes_the_gap(noticed_by: str) -> None:
    async def body(world: World, client: Client, stream: Any) -> None:
        await client.subscribe_resource(URI)
        await anyio.sleep(1)
        stream.server.crash()  # the server forgets every session
        world.change()  # while there is no session
        if noticed_by == "request":
            await client.call_tool("ping", {})  # 404, a new session
        else:
            await anyio.sleep(3)  # the listening GET meets the 404 and the client renews by itself
        world.change()  # on the new session
        await anyio.sleep(2)
        return None

    sim, world, client, _, _ = _run("http", LEGACY, body)
    assert len(_requests(sim, "initialize")) == 2
    assert len(_requests(sim, "resources/subscribe")) == 2
    assert [(e.kind, e.what) for e in client.subscription_log] == [("lost", URI), ("restored", URI)]
    _no_silent_miss(world)
    # The change on the new session reached the client as the server's own notification.
    real = [e for e in sim.recorder if e.kind == "notification" and e.method == UPDATED]
    assert real and real[0].t_ms / 1000 >= world.changes[1]


# -- a lost re-listen after a stdio restart (2026-07-28) -----------------------------------------------

def _ack_frames(sim: Simulation) -> list[int]:
    """The numbers of the server→client frames that carried ``subscriptions/acknowledged``."""
    frames, count = [], 0
    for event in sim.recorder:
        if event.kind in ("response", "error", "notification", "request") and event.sender.startswith("server/"):
            count += 1
            if event.method == "notifications/subscriptions/acknowledged":
                frames.append(count)
    return frames


async def _crash_and_carry_on(world: World, client: Client, stream: Any) -> Subscription:
    sub = await client.listen({"resourceSubscriptions": [URI]})
    await anyio.sleep(1)
    stream.process.crash(reason="out of memory")
    await anyio.sleep(0.5)
    world.change()  # nobody listens: the process is down
    assert (await client.call_tool("ping", {}))["content"][0]["text"] == "pong"  # restarts it
    assert anyio.current_time() < 5  # the request does not wait for the re-listen's acknowledgement
    with anyio.move_on_after(120):  # until the re-listen holds, or is given up on
        while not [e for e in client.subscription_log if e.kind != "lost"]:
            await anyio.sleep(0.5)
    world.change()
    await anyio.sleep(1)
    return sub


def test_a_lost_re_listen_after_a_stdio_restart_is_asked_again_within_its_deadline() -> None:
    sim, *_ = _run("stdio", MODERN, _crash_and_carry_on)
    first_relisten_ack = _ack_frames(sim)[1]
    faults = LinkFaults(to_client=Faults(drop_at=(first_relisten_ack,)))
    sim, world, client, sub, still_open = _run("stdio", MODERN, _crash_and_carry_on, faults=faults)
    assert sub is not None and still_open and sub.lost is None
    assert len(_requests(sim, "subscriptions/listen")) == 3  # the first, the lost re-listen, its retry
    assert client.restarts == 1
    assert [e.kind for e in client.subscription_log] == ["lost", "restored"]
    _no_silent_miss(world, sub)


def test_a_re_listen_that_never_holds_is_reported_lost_not_carried_on_with_nothing() -> None:
    sim, *_ = _run("stdio", MODERN, _crash_and_carry_on)
    acks = _ack_frames(sim)
    # Both attempts lose their acknowledgement (the second attempt's would be the next frame after the
    # first's cancellation, but frame numbers shift once a frame is lost: drop a wide window).
    faults = LinkFaults(to_client=Faults(drop_at=tuple(range(acks[1], acks[1] + 2))))
    sim, world, client, sub, still_open = _run("stdio", MODERN, _crash_and_carry_on, faults=faults)
    assert sub is not None and not still_open and sub.lost is not None
    assert "not acknowledged within" in sub.lost
    assert [e.kind for e in client.subscription_log] == ["lost", "failed"]
    assert any("subscription-failed" in e.marks for e in sim.recorder)
    _no_silent_miss(world, sub)  # the signal replaces the updates
    # The request that restarted the server succeeded all the same (asserted in the body).


def test_same_seed_same_trace_for_a_cut_listen_stream() -> None:
    faults = LinkFaults(to_client=Faults(cut_sse_at=2))
    first, *_ = _run("http", MODERN, _listen_then("cut"), faults=faults)
    second, *_ = _run("http", MODERN, _listen_then("cut"), faults=faults)
    assert dumps_jsonl(first.recorder.events) == dumps_jsonl(second.recorder.events)
