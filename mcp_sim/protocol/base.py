"""The base class of every typed MCP message (see mcp_sim.protocol.types).

Models are named exactly as the specification's schema names them (``CallToolRequest``,
``InputRequiredResult`` ...) so a reader can go from code to spec and back. Two conventions:

* Python attribute names are the spec's camelCase names, except ``_meta`` which Python reserves for
  private attributes; it is the attribute ``meta`` with the alias ``_meta``.
* :meth:`MCPModel.to_json` returns exactly the fields that were given (plus constant fields such as
  ``type: "text"`` or ``method: "tools/call"``), so a parsed message serialises back to equal JSON and
  an explicit ``null`` survives the round trip. Unknown fields are kept (``extra="allow"``): a
  receiver must tolerate what a newer peer adds.
"""

from __future__ import annotations

import typing
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict


def _is_literal(annotation: Any) -> bool:
    return typing.get_origin(annotation) is Literal


class MCPModel(BaseModel):
    """Base of all MCP models: spec field names, extra fields kept, exact round trips."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, serialize_by_alias=True)

    _constant_fields: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._constant_fields = frozenset(
            name for name, info in cls.model_fields.items()
            if _is_literal(info.annotation) and not info.is_required()
        )

    def model_post_init(self, context: Any, /) -> None:
        # Constant fields (type/method/resultType literals with a default) are always on the wire.
        self.model_fields_set.update(self._constant_fields)

    def to_json(self) -> dict[str, Any]:
        """The JSON object for this model, as it goes on the wire."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
