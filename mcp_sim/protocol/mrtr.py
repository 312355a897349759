"""Multi Round-Trip Requests (2026-07-28; course chapter 04, "When the server needs the client").

In 2026-07-28 a server never sends a request to the client. When a ``tools/call``, ``prompts/get`` or
``resources/read`` needs something only the client can give (a user's answer, an LLM completion, the
roots), the server *answers* with an :class:`InputRequiredResult`:

.. code-block:: json

    {"resultType": "input_required",
     "inputRequests": {"github_login": {"method": "elicitation/create", "params": {...}}},
     "requestState": "<opaque, integrity-protected by the server>"}

The client fulfils every entry of ``inputRequests`` and *retries the same request* with a new JSON-RPC
id, adding ``params.inputResponses`` (same keys, one result each) and echoing ``params.requestState``
exactly. The server may ask again; the loop ends with an ordinary result.

The keys are chosen by the server; :class:`InputRequests` and :class:`InputResponses` are therefore maps
(use them like dicts: ``result.inputRequests["github_login"]``).
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, RootModel, Tag, model_validator

from mcp_sim.protocol.client_features import (
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    ListRootsRequest,
    ListRootsResult,
)
from mcp_sim.protocol.messages import RequestParams, Result

InputRequest: TypeAlias = Annotated[
    CreateMessageRequest | ListRootsRequest | ElicitRequest, Field(discriminator="method")
]
"""A request the server needs the client to fulfil: ``method`` + ``params``, no ``jsonrpc``/``id``."""


def _response_kind(value: Any) -> str:
    """Tell the three result shapes apart by the field only each one has."""
    if isinstance(value, dict):
        if "action" in value:
            return "elicit"
        if "roots" in value:
            return "roots"
        return "sampling"
    if isinstance(value, ElicitResult):
        return "elicit"
    if isinstance(value, ListRootsResult):
        return "roots"
    return "sampling"


InputResponse: TypeAlias = Annotated[
    Annotated[CreateMessageResult, Tag("sampling")]
    | Annotated[ListRootsResult, Tag("roots")]
    | Annotated[ElicitResult, Tag("elicit")],
    Discriminator(_response_kind),
]
"""The client's answer to one :data:`InputRequest` (the result that request would have had)."""


class _Map(RootModel[dict[str, Any]]):
    """A JSON object keyed by server-chosen names; behaves like a read-only dict."""

    def __getitem__(self, key: str) -> Any:
        return self.root[key]

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)

    def __contains__(self, key: object) -> bool:
        return key in self.root

    def keys(self) -> KeysView[str]:
        return self.root.keys()

    def items(self) -> ItemsView[str, Any]:
        return self.root.items()

    def to_json(self) -> dict[str, Any]:
        """The JSON object, as it goes on the wire."""
        out: dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return out


class InputRequests(_Map):
    """``inputRequests``: server-chosen key → :data:`InputRequest`. Keys must be unique in the request."""

    root: dict[str, InputRequest]


class InputResponses(_Map):
    """``inputResponses``: the same keys as the ``inputRequests`` being answered → :data:`InputResponse`."""

    root: dict[str, InputResponse]


class InputRequiredResult(Result):
    """"I need input first": fulfil ``inputRequests``, then retry with ``inputResponses``/``requestState``.

    2026-07-28 only, and only for ``tools/call``, ``prompts/get`` and ``resources/read``. At least one
    of ``inputRequests`` and ``requestState`` must be present.
    """

    resultType: Literal["input_required"] = "input_required"
    inputRequests: InputRequests | None = None
    requestState: str | None = None

    @model_validator(mode="after")
    def _asks_for_something(self) -> InputRequiredResult:
        if self.inputRequests is None and self.requestState is None:
            raise ValueError("an InputRequiredResult needs inputRequests, requestState, or both")
        return self


class InputResponseRequestParams(RequestParams):
    """Params of a retried request (2026-07-28): the answers and the echoed ``requestState``."""

    inputResponses: InputResponses | None = None
    requestState: str | None = None
