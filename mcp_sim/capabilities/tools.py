"""Tools: functions the model may call (spec "Server features / Tools"; course chapter 05).

A tool is declared from a typed Python function (:func:`tool_from_function`, what ``@server.tool()``
does). Its name, description (the docstring) and ``inputSchema`` (derived from the type hints) are
what ``tools/list`` shows the model; when the function returns a ``TypedDict``, a dataclass or a
pydantic model the tool also gets an ``outputSchema`` and its results carry ``structuredContent``.

``tools/call`` (:func:`call_tool`) validates the arguments against the ``inputSchema`` before running
anything. Invalid arguments and exceptions inside the tool are *results* with ``isError: true`` and a
readable message — the model must be able to see what went wrong and try again — while an unknown
tool name is a protocol error (``-32602``).

The module reads top-down: the tool, the two requests, the results, then how schemas are made from
type hints and how arguments are checked against them.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import typing_extensions as te
from pydantic import BaseModel, ConfigDict, TypeAdapter, create_model

from mcp_sim.capabilities import tasks  # tasks builds on tools (start_tool_task), never the reverse
from mcp_sim.capabilities.fields import for_revision
from mcp_sim.capabilities.mrtr import ClientInputUnavailable, InputRequired
from mcp_sim.capabilities.pagination import page_result
from mcp_sim.capabilities.signatures import HandlerSignature, first_doc_paragraph, read_signature
from mcp_sim.protocol.errors import McpError, invalid_params
from mcp_sim.protocol.revisions import revision_at
from mcp_sim.protocol.schema import import_jsonschema
from mcp_sim.transports.base import AuthInfo

if TYPE_CHECKING:
    from mcp_sim.capabilities.context import Context

logger = logging.getLogger(__name__)

TaskSupport = Literal["forbidden", "optional", "required"]
CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


@dataclass
class ToolDefinition:
    """One tool as the server knows it: its public description plus how to run it."""

    name: str
    handler: HandlerSignature
    input_schema: dict[str, Any]
    description: str | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    icons: list[dict[str, Any]] | None = None
    task_support: TaskSupport = "forbidden"
    ask_first: Mapping[str, Any] | None = None
    """Input a task needs before it starts (key → :class:`~mcp_sim.capabilities.mrtr.InputRequest`): when
    the call becomes a task, these are asked for first, synchronously (an ``InputRequiredResult`` round
    trip, or server→client requests in a legacy session), and the task starts once they are answered;
    the handler's ``ctx.ask`` for the same keys then returns the answers at once."""
    visible: Callable[[AuthInfo | None], bool] | None = None
    """Who may see and call the tool. A tool filtered by caller makes ``tools/list`` private."""
    per_caller: bool = False
    """Results depend on who calls (e.g. the tenant): list and read results become ``private``."""
    meta: dict[str, Any] | None = None
    arguments_model: type[BaseModel] | None = None
    _output_adapter: TypeAdapter[Any] | None = None
    _validator: Any = field(default=None, repr=False)
    """The ``jsonschema`` validator, built on first need (see :func:`explain_arguments`)."""
    _quick_check: Checker | None = field(default=None, repr=False)
    """:func:`plain_checker` of ``inputSchema``, compiled on the first call."""
    _argument_names: tuple[str, ...] = field(default=(), repr=False)
    _text_arguments: bool = field(default=False, repr=False)
    """Every parameter is a plain ``str`` or ``bool``: valid arguments need no conversion."""

    def __post_init__(self) -> None:
        if self.arguments_model is not None:
            self._argument_names = tuple(self.arguments_model.model_fields)
            hints = self.handler.hints
            self._text_arguments = is_plain_schema(self.input_schema) and \
                all(hints.get(p.name) in (str, bool) for p in self.handler.params)

    def validator(self) -> Any:
        """The draft 2020-12 validator of ``inputSchema`` (checking the schema itself the first time)."""
        if self._validator is None:
            jsonschema = import_jsonschema()  # only when a tool's arguments first need it

            jsonschema.Draft202012Validator.check_schema(self.input_schema)
            self._validator = jsonschema.Draft202012Validator(self.input_schema)
        return self._validator

    def is_visible_to(self, auth: AuthInfo | None) -> bool:
        return self.visible is None or bool(self.visible(auth))

    def to_json(self, revision: str) -> dict[str, Any]:
        """The ``Tool`` object of ``revision``'s ``tools/list``."""
        obj: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.annotations,
            "icons": self.icons,
            "execution": {"taskSupport": self.task_support} if self.task_support != "forbidden" else None,
            "_meta": self.meta,
        }
        return for_revision("Tool", obj, revision)

    def argument_errors(self, arguments: Mapping[str, Any]) -> list[str]:
        """Every way ``arguments`` breaks the ``inputSchema``, in words (empty when valid).

        Valid arguments are the usual case, so a compiled check confirms them first (see
        :func:`plain_checker`); ``jsonschema``, the reference, decides the rest and explains them."""
        if self._quick_check is None:
            self._quick_check = plain_checker(self.input_schema)
        if self._quick_check(arguments):
            return []
        errors = []
        for err in sorted(self.validator().iter_errors(arguments), key=lambda e: list(e.absolute_path)):
            where = ".".join(str(p) for p in err.absolute_path)
            errors.append(f"{where}: {err.message}" if where else err.message)
        return errors

    async def run(self, arguments: Mapping[str, Any], ctx: Context) -> Any:
        """Run the handler with already-validated ``arguments``."""
        if self._text_arguments and all(name in self._argument_names for name in arguments):
            # Strings and booleans that passed the schema are already what the function wants, and a
            # missing optional argument gets the function's own default: nothing to convert.
            kwargs = dict(arguments)
        elif self.arguments_model is not None:
            parsed = self.arguments_model.model_validate(dict(arguments))
            kwargs = {name: getattr(parsed, name) for name in self._argument_names}
        else:
            kwargs = dict(arguments)
        return await self.handler.call(kwargs, ctx)

    def result_for(self, value: Any, revision: str) -> dict[str, Any]:
        """Turn what the function returned into a ``CallToolResult`` (without ``resultType``)."""
        if type(value) is str and self.output_schema is None:
            return {"content": [text_content(value)]}  # the commonest answer, without the questions below
        if isinstance(value, Mapping) and "content" in value and self.output_schema is None \
                and isinstance(value.get("content"), list):
            return dict(value)  # the handler built a CallToolResult itself
        if hasattr(value, "to_json") and hasattr(value, "content") and self.output_schema is None:
            built: dict[str, Any] = value.to_json()
            return built
        if self.output_schema is not None:
            structured = self._output_adapter.dump_python(value, mode="json") if self._output_adapter \
                else value
            result: dict[str, Any] = {"content": [text_content(json.dumps(structured, ensure_ascii=False))]}
            if revision_at(revision).has_structured_tool_output:
                result["structuredContent"] = structured
            return result
        return {"content": content_blocks(value)}


def tool_from_function(fn: Callable[..., Any], *, name: str | None = None, title: str | None = None,
                       description: str | None = None, annotations: Mapping[str, Any] | None = None,
                       icons: Sequence[Mapping[str, Any]] | None = None,
                       input_schema: Mapping[str, Any] | None = None,
                       output_schema: Mapping[str, Any] | None = None, task_support: TaskSupport = "forbidden",
                       visible: Callable[[AuthInfo | None], bool] | None = None, per_caller: bool = False,
                       meta: Mapping[str, Any] | None = None,
                       ask_first: Mapping[str, Any] | None = None) -> ToolDefinition:
    """Build a :class:`ToolDefinition` from a typed function (the ``@server.tool()`` decorator)."""
    sig = read_signature(fn)
    model: type[BaseModel] | None = None
    if input_schema is None:
        fields: dict[str, Any] = {}
        for p in sig.params:
            default = ... if p.default is p.empty else p.default
            fields[p.name] = (for_pydantic(sig.hints[p.name]), default)
        model = create_model(f"{fn.__name__}_arguments",  # type: ignore[call-overload]
                             __config__=ConfigDict(extra="ignore", arbitrary_types_allowed=True), **fields)
        generated = strip_titles(model.model_json_schema())
        generated.pop("type", None)
        schema = {"type": "object", "properties": generated.pop("properties", {}), **generated}
    else:
        schema = dict(input_schema)
    adapter: TypeAdapter[Any] | None = None
    out_schema = dict(output_schema) if output_schema is not None else None
    if out_schema is None and _structured_type(sig.return_hint):
        adapter = TypeAdapter(for_pydantic(sig.return_hint))
        out_schema = strip_titles(adapter.json_schema())
    if annotations is not None and hasattr(annotations, "to_json"):
        annotations = annotations.to_json()
    return ToolDefinition(
        name=name or fn.__name__, handler=sig, input_schema=schema,
        description=description if description is not None else first_doc_paragraph(fn),
        title=title, output_schema=out_schema, annotations=dict(annotations) if annotations else None,
        icons=[dict(i) for i in icons] if icons else None, task_support=task_support,
        ask_first=dict(ask_first) if ask_first else None, visible=visible, per_caller=per_caller, meta=dict(meta) if meta else None, arguments_model=model,
        _output_adapter=adapter)


# --- the requests ---------------------------------------------------------------------------------

async def list_tools(ctx: Context) -> dict[str, Any]:
    """``tools/list``: the tools this caller may see, one page at a time, in registration order."""
    server = ctx.server
    tools = server.visible_tools(ctx.auth)
    result, _ = page_result("tools", tools, ctx.params.get("cursor"), server.page_size, "tools",
                            lambda t: t.to_json(ctx.revision))
    result.update(ctx.cache_fields(private=server.tools_depend_on_caller()))
    return result


def find_tool(ctx: Context, name: Any) -> ToolDefinition:
    """The tool called ``name`` if this caller may use it, else ``-32602``."""
    tool = ctx.server.tools.get(name) if isinstance(name, str) else None
    if tool is None or not tool.is_visible_to(ctx.auth):
        raise invalid_params(f"Unknown tool: {name}", revision=ctx.revision,
                             rule="tools/call for a tool the server does not offer is a protocol error (-32602).")
    return tool


async def call_tool(ctx: Context) -> dict[str, Any]:
    """``tools/call``: validate the arguments, run the tool, report failures as ``isError`` results."""
    tool = find_tool(ctx, ctx.params.get("name"))
    arguments = ctx.params.get("arguments")
    if arguments is None:
        arguments = {}
    if type(arguments) is not dict and not isinstance(arguments, Mapping):
        raise invalid_params("tools/call arguments must be an object", revision=ctx.revision)
    errors = tool.argument_errors(arguments)
    if errors:
        return tool_error_result(f"Invalid arguments for tool {tool.name}: " + "; ".join(errors))
    if tool.task_support != "forbidden" or "task" in ctx.params:  # else it cannot be a task
        as_task = await tasks.start_tool_task(ctx, tool, arguments, run_tool)
        if as_task is not None:
            return as_task
    return await run_tool(ctx, tool, arguments, (InputRequired, McpError), ClientInputUnavailable)


async def run_tool(ctx: Context, tool: ToolDefinition, arguments: Mapping[str, Any],
                   passthrough: tuple[type[BaseException], ...], readable: type[Exception]) -> dict[str, Any]:
    """Run ``tool``; protocol-level exceptions (``passthrough``) propagate, anything else is a result."""
    try:
        value = await tool.run(arguments, ctx)
    except passthrough:
        raise
    except readable as exc:
        return tool_error_result(str(exc))
    except Exception as exc:
        logger.info("tool %s raised %r", tool.name, exc)
        return tool_error_result(f"Tool {tool.name} failed: {type(exc).__name__}: {exc}")
    return tool.result_for(value, ctx.revision)


# --- results ---------------------------------------------------------------------------------------

def text_content(text: str) -> dict[str, Any]:
    """A ``TextContent`` block."""
    return {"type": "text", "text": text}


def content_blocks(value: Any) -> list[dict[str, Any]]:
    """Whatever a tool returned, as a list of content blocks: text for strings, JSON text for data."""
    if value is None:
        return []
    if isinstance(value, str):
        return [text_content(value)]
    if hasattr(value, "to_json") and getattr(value, "type", None) in CONTENT_TYPES:
        block: dict[str, Any] = value.to_json()
        return [block]
    if isinstance(value, Mapping) and value.get("type") in CONTENT_TYPES:
        return [dict(value)]
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)) and value and all(
            (isinstance(v, Mapping) and v.get("type") in CONTENT_TYPES) or hasattr(v, "to_json") for v in value):
        return [b for v in value for b in content_blocks(v)]
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return [text_content(json.dumps(value, ensure_ascii=False, default=str))]


def tool_error_result(message: str) -> dict[str, Any]:
    """A failed tool call as the model should see it: a result with ``isError: true``."""
    return {"content": [text_content(message)], "isError": True}


# --- schemas from type hints ------------------------------------------------------------------------

def _is_schema_keyword_map(key: str) -> bool:
    return key in ("properties", "$defs", "definitions", "patternProperties")


def strip_titles(schema: Any) -> Any:
    """Remove the ``title`` pydantic adds to every schema node (``"City"`` for ``city``): noise to a
    learner reading ``tools/list``. Property *names* called ``title`` are kept."""
    if isinstance(schema, list):
        return [strip_titles(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if _is_schema_keyword_map(key) and isinstance(value, dict):
            out[key] = {name: strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = strip_titles(value)
    return out


def for_pydantic(hint: Any) -> Any:
    """``hint`` with every ``typing.TypedDict`` rebuilt as a ``typing_extensions.TypedDict``: on Python
    3.11 pydantic reads only the latter, and a learner naturally writes ``from typing import TypedDict``."""
    if typing.is_typeddict(hint) and type(hint).__module__ == "typing" and sys.version_info < (3, 12):
        required: frozenset[str] = getattr(hint, "__required_keys__", frozenset())
        fields = {name: (te.Required if name in required else te.NotRequired)[for_pydantic(sub)]
                  for name, sub in typing.get_type_hints(hint).items()}
        rebuilt = te.TypedDict(hint.__name__, fields)  # type: ignore[misc, operator]
        rebuilt.__doc__ = hint.__doc__
        return rebuilt
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is None or not args or origin is Literal:
        return hint
    if origin is typing.Annotated:
        return typing.Annotated[(for_pydantic(args[0]), *hint.__metadata__)]
    converted = tuple(for_pydantic(a) for a in args)
    if converted == args:
        return hint
    if origin in (typing.Union, types.UnionType):
        return typing.Union[converted]  # noqa: UP007 - rebuilding a union from its parts
    return origin[converted if len(converted) > 1 else converted[0]]


def _structured_type(hint: Any) -> bool:
    """Return types whose values become ``structuredContent``: records with named fields."""
    if hint is None or hint is Any:
        return False
    if isinstance(hint, type) and (issubclass(hint, BaseModel) or dataclasses.is_dataclass(hint)):
        return True
    return typing.is_typeddict(hint)


# --- checking arguments ------------------------------------------------------------------------------
#
# ``jsonschema`` is the reference (JSON Schema draft 2020-12) and writes the error messages, but it
# reads the schema anew on every call. ``fastjsonschema`` compiles a schema once into a Python
# function, several times quicker — for the drafts up to 7 only. For the schemas type hints give
# (objects of typed properties: :func:`is_plain_schema`) drafts 7 and 2020-12 mean the same, so the
# compiled check may say "valid"; anything else it cannot be sure of goes to jsonschema.

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})
_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})

Checker = Callable[[Any], bool]


def is_plain_schema(schema: Any) -> bool:
    """True for a schema built only from ``type``, ``properties``, ``required``, ``additionalProperties``
    (true/false), ``items``, ``enum`` (of strings) and annotations, each well formed — the shape type
    hints give. Such a schema means the same in draft 7 and draft 2020-12. (An enum of other values
    is left out: Python's ``==`` says ``True == 1``, JSON Schema does not.)"""
    if not isinstance(schema, dict):
        return False
    for key, value in schema.items():
        if key in ("title", "description"):
            ok = isinstance(value, str)
        elif key in _ANNOTATIONS:
            ok = key != "examples" or isinstance(value, list)
        elif key == "type":
            types = value if isinstance(value, list) else [value]
            ok = bool(types) and all(isinstance(t, str) and t in _JSON_TYPES for t in types) \
                and len(set(types)) == len(types)
        elif key == "properties":
            ok = isinstance(value, dict) and all(is_plain_schema(sub) for sub in value.values())
        elif key == "required":
            ok = isinstance(value, list) and all(isinstance(n, str) for n in value) and len(set(value)) == len(value)
        elif key == "additionalProperties":
            ok = isinstance(value, bool)
        elif key == "items":
            ok = is_plain_schema(value)
        elif key == "enum":
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        else:
            ok = False
        if not ok:
            return False
    return True


def plain_checker(schema: dict[str, Any]) -> Checker:
    """A function of a value that is ``True`` when the value certainly satisfies ``schema``: the
    schema compiled once by ``fastjsonschema`` when it is plain (:func:`is_plain_schema`); for any
    other schema it always says ``False`` ("not sure": ask jsonschema)."""
    if not is_plain_schema(schema):
        return _not_sure
    import fastjsonschema  # compiles the schema into Python code, once per tool

    try:
        validate = fastjsonschema.compile({"$schema": "http://json-schema.org/draft-07/schema#", **schema})
    except fastjsonschema.JsonSchemaDefinitionException:
        # It refuses some valid schemas it finds pointless (a required name that additionalProperties
        # forbids, so no object can pass): jsonschema judges those.
        return _not_sure

    def check(value: Any) -> bool:
        try:
            validate(value)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return check


def surely_valid(schema: dict[str, Any], value: Any) -> bool:
    """True when ``value`` certainly satisfies ``schema`` (:func:`plain_checker`, for one value)."""
    return plain_checker(schema)(value)


def _not_sure(value: Any) -> bool:
    return False
