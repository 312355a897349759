"""From a method name to its typed model, and parsing a message's MCP part with it (course appendix A).

A JSON-RPC message names its method; a result does not even do that (only the ``id`` pairs it with
its request). These functions read the model names from the revisions registry
(:mod:`mcp_sim.protocol.revisions`) — there is no second table to keep in step — and validate with
the models of :mod:`mcp_sim.protocol.types`:

* :func:`request_model`, :func:`result_model`, :func:`notification_model` — the model of a method;
* :func:`parse_request`, :func:`parse_result`, :func:`parse_notification` — the typed message;
* :func:`parse_as` — any spec type, by name.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from mcp_sim.protocol import (
    client_features,
    connection,
    content,
    ext_tasks,
    messages,
    mrtr,
    primitives,
    server_features,
    tasks,
)
from mcp_sim.protocol.messages import Notification, Request, Result
from mcp_sim.protocol.mrtr import InputRequiredResult
from mcp_sim.protocol.revisions import (
    REVISIONS,
    TASKS_EXTENSION_METHODS,
    MethodInfo,
    get_revision,
    revision_at,
)
from mcp_sim.protocol.tasks import CreateTaskResult


def _models_of(*modules: ModuleType) -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for module in modules:
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseModel) and value.__module__ == module.__name__
                    and name.isidentifier() and not name.startswith("_")):  # skips pydantic's generic aliases
                found[name] = value
    return found


MODELS: dict[str, type[BaseModel]] = _models_of(
    content, messages, primitives, connection, server_features, client_features, mrtr, tasks)
"""Spec type name → model, for the core protocol (2025-06-18 … 2026-07-28)."""

EXT_TASKS_MODELS: dict[str, type[BaseModel]] = _models_of(ext_tasks)
"""Spec type name → model, for the tasks extension's schema."""


class UnknownMethodError(LookupError):
    """The method is not defined in the revision (a receiver answers ``-32601 Method not found``)."""


def _lookup(method: str, revision: str | None) -> tuple[MethodInfo, dict[str, type[BaseModel]]]:
    """The registry's entry for ``method`` and the model table its type names refer to."""
    if revision is not None:
        rev = get_revision(revision)
        info = rev.method(method)
        if info is not None:
            return info, MODELS
        if rev.is_modern and method in TASKS_EXTENSION_METHODS:
            return TASKS_EXTENSION_METHODS[method], EXT_TASKS_MODELS
        raise UnknownMethodError(f"{method!r} is not a request method of revision {revision}")
    for rev in reversed(REVISIONS.values()):  # newest first: its superset model is the one to use
        info = rev.method(method)
        if info is not None:
            return info, MODELS
    if method in TASKS_EXTENSION_METHODS:
        return TASKS_EXTENSION_METHODS[method], EXT_TASKS_MODELS
    raise UnknownMethodError(f"{method!r} is not a request method of any known revision")


def request_model(method: str, revision: str | None = None) -> type[Request]:
    """The model of ``method``'s request, e.g. ``CallToolRequest`` for ``"tools/call"``.

    With a ``revision``, the method must exist in it; in 2026-07-28 the ``tasks/*`` methods are the
    tasks extension's. Without one, the newest revision that has the method decides.
    """
    info, table = _lookup(method, revision)
    model = table[info.request_type]
    assert issubclass(model, Request)
    return model


def result_model(method: str, revision: str | None = None) -> type[Result]:
    """The model of the ordinary result of ``method``, e.g. ``CallToolResult`` for ``"tools/call"``."""
    info, table = _lookup(method, revision)
    model = table[info.result_type]
    assert issubclass(model, Result)
    return model


def notification_model(method: str, revision: str | None = None) -> type[Notification]:
    """The model of notification ``method``, e.g. ``ProgressNotification``."""
    revisions = [get_revision(revision)] if revision is not None else list(reversed(REVISIONS.values()))
    for rev in revisions:
        info = rev.notifications.get(method)
        if info is not None:
            model = MODELS[info.type_name]
            assert issubclass(model, Notification)
            return model
    if method == ext_tasks.TaskStatusNotification.model_fields["method"].default and (
            revision is None or get_revision(revision).is_modern):
        return ext_tasks.TaskStatusNotification
    where = f"revision {revision}" if revision else "any known revision"
    raise UnknownMethodError(f"{method!r} is not a notification of {where}")


def _message(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    return {"method": method} if params is None else {"method": method, "params": params}


def parse_request(method: str, params: dict[str, Any] | None = None, *, revision: str | None = None) -> Request:
    """The typed request for ``method`` with ``params`` (no envelope). Bad params raise ``ValidationError``.

    >>> parse_request("tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}}).params.name
    'get_weather'
    """
    return request_model(method, revision).model_validate(_message(method, params))


def parse_notification(method: str, params: dict[str, Any] | None = None, *,
                       revision: str | None = None) -> Notification:
    """The typed notification for ``method`` with ``params``. Bad params raise ``ValidationError``."""
    return notification_model(method, revision).model_validate(_message(method, params))


def _rule_broken(title: str, where: str, message: str, value: Any) -> ValidationError:
    """A ``ValidationError`` for an MCP rule that is not a matter of field types."""
    detail = InitErrorDetails(type=PydanticCustomError("mcp_rule", message), loc=(where,), input=value)
    return ValidationError.from_exception_data(title, [detail])


_TASK_AUGMENTABLE = frozenset({"tools/call", "sampling/createMessage", "elicitation/create"})


def parse_result(method: str, result: dict[str, Any], *, revision: str | None = None) -> Result:
    """The typed result answering a ``method`` request. Bad input raises ``ValidationError``.

    A request may be answered by something other than its ordinary result:

    * ``resultType: "input_required"`` → :class:`InputRequiredResult` (2026-07-28; only for
      ``tools/call``, ``prompts/get`` and ``resources/read``: anything else is an error);
    * ``resultType: "task"`` → the tasks extension's ``CreateTaskResult`` (2026-07-28, ``tools/call``);
    * a ``task`` object and no ordinary fields → 2025-11-25's :class:`CreateTaskResult`.
    """
    info, table = _lookup(method, revision)
    kind = result.get("resultType") if isinstance(result, dict) else None
    if kind == "input_required":
        if not info.may_need_input:
            raise _rule_broken("InputRequiredResult", "resultType",
                               f"only tools/call, prompts/get and resources/read may return "
                               f"input_required, not {method}", result)
        return InputRequiredResult.model_validate(result)
    if kind == "task" and method == "tools/call":
        return ext_tasks.CreateTaskResult.model_validate(result)
    if (isinstance(result, dict) and isinstance(result.get("task"), dict) and method in _TASK_AUGMENTABLE
            and (revision is None or revision_at(revision).has_tasks)):
        return CreateTaskResult.model_validate(result)
    model = table[info.result_type]
    assert issubclass(model, Result)
    return model.model_validate(result)


def parse_as(type_name: str, data: Any, *, extension: bool = False) -> Any:
    """Parse ``data`` as the spec type called ``type_name`` (``extension=True``: the tasks extension's)."""
    table = EXT_TASKS_MODELS if extension else MODELS
    try:
        model = table[type_name]
    except KeyError:
        raise KeyError(f"no model for spec type {type_name!r}") from None
    return model.model_validate(data)
