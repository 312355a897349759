"""Resources: data the application may read, named by URI (spec "Server features / Resources";
course chapter 05).

A *resource* has a fixed URI (``weather://stations``); a *resource template* names a family of them
with RFC 6570 variables (``weather://forecast/{city}/{date}``) whose values are passed to the
function. ``{name}`` matches one path segment, ``{+name}`` may span several (``notes://{+path}``).
A function's return value becomes the contents: ``str`` is text, ``bytes`` a base64 ``blob``, other
data JSON text.

A URI the server cannot resolve is "resource not found": ``-32002`` up to 2025-11-25, ``-32602`` in
2026-07-28 (SEP-2164) — the revision table holds the code.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_sim.capabilities.completion import Completer
from mcp_sim.capabilities.fields import for_revision
from mcp_sim.capabilities.pagination import page_result
from mcp_sim.capabilities.signatures import HandlerSignature, first_doc_paragraph, read_signature
from mcp_sim.protocol.errors import McpError, invalid_params
from mcp_sim.protocol.revisions import get_revision

if TYPE_CHECKING:
    from mcp_sim.capabilities.context import Context

_VARIABLE = re.compile(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}")


def compile_template(uri_template: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """A regex matching the URIs of ``uri_template`` and the names of its variables."""
    pattern = ""
    names = []
    pos = 0
    for m in _VARIABLE.finditer(uri_template):
        pattern += re.escape(uri_template[pos:m.start()])
        pattern += f"(?P<{m.group(2)}>.+)" if m.group(1) else f"(?P<{m.group(2)}>[^/?#]+)"
        names.append(m.group(2))
        pos = m.end()
    pattern += re.escape(uri_template[pos:])
    return re.compile(f"^{pattern}$"), tuple(names)


@dataclass
class ResourceDefinition:
    """A resource with a fixed URI."""

    uri: str
    name: str
    handler: HandlerSignature | None = None
    content: Any = None
    """Fixed contents, used when there is no handler."""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: list[dict[str, Any]] | None = None
    annotations: dict[str, Any] | None = None
    per_caller: bool = False
    meta: dict[str, Any] | None = None

    def to_json(self, revision: str) -> dict[str, Any]:
        obj = {"uri": self.uri, "name": self.name, "title": self.title, "description": self.description,
               "mimeType": self.mime_type, "size": self.size, "icons": self.icons,
               "annotations": self.annotations, "_meta": self.meta}
        return for_revision("Resource", obj, revision)


@dataclass
class ResourceTemplateDefinition:
    """A family of resources named by a URI template."""

    uri_template: str
    name: str
    handler: HandlerSignature
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    icons: list[dict[str, Any]] | None = None
    annotations: dict[str, Any] | None = None
    completions: dict[str, Completer] = field(default_factory=dict)
    per_caller: bool = False
    meta: dict[str, Any] | None = None
    pattern: re.Pattern[str] = field(init=False, repr=False)
    variables: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.pattern, self.variables = compile_template(self.uri_template)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it belongs to this template, else ``None``."""
        m = self.pattern.match(uri)
        return m.groupdict() if m else None

    def to_json(self, revision: str) -> dict[str, Any]:
        obj = {"uriTemplate": self.uri_template, "name": self.name, "title": self.title,
               "description": self.description, "mimeType": self.mime_type, "icons": self.icons,
               "annotations": self.annotations, "_meta": self.meta}
        return for_revision("ResourceTemplate", obj, revision)


def resource_from_function(uri: str, fn: Callable[..., Any] | None, *, name: str | None = None,
                           title: str | None = None, description: str | None = None,
                           mime_type: str | None = None, content: Any = None,
                           icons: Sequence[Mapping[str, Any]] | None = None, per_caller: bool = False,
                           ) -> ResourceDefinition:
    sig = read_signature(fn) if fn is not None else None
    if sig is not None and sig.params:
        raise TypeError(f"resource {uri}: a fixed resource takes no arguments (use resource_template)")
    return ResourceDefinition(uri=uri, name=name or (fn.__name__ if fn else uri), handler=sig, content=content,
                              title=title, description=description if description is not None or fn is None
                              else first_doc_paragraph(fn), mime_type=mime_type,
                              icons=[dict(i) for i in icons] if icons else None, per_caller=per_caller)


def template_from_function(uri_template: str, fn: Callable[..., Any], *, name: str | None = None,
                           title: str | None = None, description: str | None = None,
                           mime_type: str | None = None, icons: Sequence[Mapping[str, Any]] | None = None,
                           complete: Mapping[str, Completer] | None = None,
                           per_caller: bool = False) -> ResourceTemplateDefinition:
    sig = read_signature(fn)
    template = ResourceTemplateDefinition(
        uri_template=uri_template, name=name or fn.__name__, handler=sig, title=title,
        description=description if description is not None else first_doc_paragraph(fn), mime_type=mime_type,
        icons=[dict(i) for i in icons] if icons else None, completions=dict(complete or {}),
        per_caller=per_caller)
    params = {p.name for p in sig.params}
    if params != set(template.variables):
        raise TypeError(f"template {uri_template}: function parameters {sorted(params)} must match the "
                        f"template variables {sorted(template.variables)}")
    unknown = set(template.completions) - params
    if unknown:
        raise ValueError(f"template {uri_template}: completion for unknown variable(s) {sorted(unknown)}")
    return template


def resource_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """``TextResourceContents``/``BlobResourceContents`` from what a resource function returned."""
    if isinstance(value, list) and value and all(isinstance(v, Mapping) and "uri" in v for v in value):
        return [dict(v) for v in value]
    item: dict[str, Any] = {"uri": uri}
    if isinstance(value, (bytes, bytearray)):
        if mime_type:
            item["mimeType"] = mime_type
        item["blob"] = base64.b64encode(bytes(value)).decode("ascii")
        return [item]
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, indent=None, default=str)
        mime_type = mime_type or "application/json"
    if mime_type:
        item["mimeType"] = mime_type
    item["text"] = text
    return [item]


def not_found(uri: Any, revision: str) -> McpError:
    """Resource not found, with the code of ``revision`` (-32002 legacy, -32602 in 2026-07-28)."""
    code = get_revision(revision).resource_not_found_code
    return McpError(code, f"Resource not found: {uri}", {"uri": uri},
                    rule="Servers answer resources/read for an unknown URI with the revision's "
                         "resource-not-found code (-32002 until 2025-11-25, -32602 from 2026-07-28).",
                    revision=revision)


# --- the requests ---------------------------------------------------------------------------------

async def list_resources(ctx: Context) -> dict[str, Any]:
    """``resources/list``: the fixed resources (templates are listed separately)."""
    server = ctx.server
    result, page = page_result("resources", list(server.resources.values()), ctx.params.get("cursor"),
                               server.page_size, "resources", lambda r: r.to_json(ctx.revision))
    result.update(ctx.cache_fields(private=server.per_caller or any(r.per_caller for r in page)))
    return result


async def list_resource_templates(ctx: Context) -> dict[str, Any]:
    """``resources/templates/list``."""
    server = ctx.server
    result, _ = page_result("resourceTemplates", list(server.templates.values()), ctx.params.get("cursor"),
                            server.page_size, "resource templates", lambda t: t.to_json(ctx.revision))
    result.update(ctx.cache_fields(private=server.per_caller))
    return result


async def read_resource(ctx: Context) -> dict[str, Any]:
    """``resources/read``: a fixed resource first, then the first template that matches."""
    uri = ctx.params.get("uri")
    if not isinstance(uri, str):
        raise invalid_params("resources/read needs a string uri", revision=ctx.revision)
    server = ctx.server
    resource = server.resources.get(uri)
    if resource is not None:
        value = await resource.handler.call({}, ctx) if resource.handler else resource.content
        contents = resource_contents(value, uri, resource.mime_type)
        private = resource.per_caller
    else:
        for template in server.templates.values():
            variables = template.match(uri)
            if variables is not None:
                try:
                    value = await template.handler.call(variables, ctx)
                except LookupError:
                    raise not_found(uri, ctx.revision) from None
                contents = resource_contents(value, uri, template.mime_type)
                private = template.per_caller
                break
        else:
            raise not_found(uri, ctx.revision)
    result: dict[str, Any] = {"contents": contents}
    result.update(ctx.cache_fields(private=server.per_caller or private, ttl_ms=server.cache.read_ttl_ms))
    return result


def resolvable(server: Any, uri: str) -> bool:
    """True when ``uri`` names a fixed resource or matches a template."""
    return uri in server.resources or any(t.match(uri) is not None for t in server.templates.values())
