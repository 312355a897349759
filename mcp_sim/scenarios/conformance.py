"""The conformance server: the fixtures the official MCP conformance suite expects of a server.

The suite (``@modelcontextprotocol/conformance`` on npm) connects to a server as a real client and
checks one behaviour per *scenario*: ``tools-call-image`` calls ``test_image_content`` and expects an
image block, ``resources-templates-read`` reads ``test://template/123/data`` and expects the ``123``
back, and so on. Each scenario names the tool, resource or prompt it needs; this module offers exactly
those, built with the same decorators as the course's other servers (course chapter 05), so::

    mcp-sim serve conformance --transport http --port 3000

is a server the suite can run against, in every revision it tests (``--revision`` pins one). The
contents (a 1x1 PNG, a tiny WAV, fixed texts) are the suite's own reference values, so a check that
compares them can pass. The ``test_input_required_result_*`` tools ask the client for input: in a
legacy session they send it requests, in 2026-07-28 they answer ``input_required`` — the same handler
in both eras. ``tests/test_conformance.py`` runs the suite against this server.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from mcp_sim.capabilities.mrtr import SealedStateCodec, elicit, list_roots, sample
from mcp_sim.protocol.errors import McpError
from mcp_sim.roles.context import Context
from mcp_sim.roles.server import Server
from mcp_sim.wire.jsonrpc import INTERNAL_ERROR

PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
"""A 1x1 red PNG pixel: the image every image scenario expects."""
WAV_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""A minimal WAV file: the audio the audio scenario expects."""

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
"""SEP-1613 and SEP-2106: a tool's ``inputSchema`` may use JSON Schema 2020-12 (``$schema``, ``$defs``,
``$anchor``, ``$ref``, ``allOf``/``anyOf``, ``if``/``then``/``else``, ``additionalProperties``), and
``tools/list`` must hand it to the client unchanged."""

ELICITATION_DEFAULTS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                   "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}
"""SEP-1034 (2025-11-25): every primitive field of an elicitation form may carry a ``default``."""

ELICITATION_ENUMS = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "description": "Select one option",
                           "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Select one option with titles",
                         "oneOf": [{"const": "value1", "title": "First Option"},
                                   {"const": "value2", "title": "Second Option"},
                                   {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                       "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1,
                        "maxItems": 3,
                        "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                            {"const": "value2", "title": "Second Choice"},
                                            {"const": "value3", "title": "Third Choice"}]}},
    },
    "required": [],
}
"""SEP-1330 (2025-11-25): the five ways a form offers a choice — plain or titled, one or many, and the
deprecated ``enumNames``."""


def _form(field: str, kind: str = "string") -> dict[str, Any]:
    """A one-field elicitation form (``field`` is required)."""
    return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}


def _field(answer: Any, name: str) -> Any:
    """Field ``name`` of an accepted elicitation answer (``None`` when absent)."""
    content = answer.get("content") if isinstance(answer, dict) else None
    return content.get(name) if isinstance(content, dict) else None


def _sampled_text(answer: Any) -> str | None:
    content = answer.get("content") if isinstance(answer, dict) else None
    text = content.get("text") if isinstance(content, dict) else None
    return text if isinstance(text, str) else None


def _answer(result: dict[str, Any]) -> str:
    """An elicitation's answer as one line: ``action=accept, content={...}``."""
    return f"action={result.get('action')}, content={json.dumps(result.get('content') or {}, separators=(',', ':'))}"


def build() -> Server:
    """A fresh conformance server."""
    # The suite checks that an edited requestState is refused, so the state is sealed (HMAC). A real
    # server keeps its key secret and out of the code; a fixed one keeps this fixture deterministic.
    server = Server("mcp-conformance-test-server", version="1.0.0",
                    state_codec=SealedStateCodec(b"mcp-sim conformance fixture"))

    # -- tools: one per content type, then logging, progress, errors, and asking the client ------------
    @server.tool()
    def test_simple_text() -> str:
        """Tests simple text content response"""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> dict[str, Any]:
        """Tests image content response"""
        return {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}

    @server.tool()
    def test_audio_content() -> dict[str, Any]:
        """Tests audio content response"""
        return {"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}

    @server.tool()
    def test_embedded_resource() -> dict[str, Any]:
        """Tests embedded resource content response"""
        return {"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
                                                 "text": "This is an embedded resource content."}}

    @server.tool()
    def test_multiple_content_types() -> list[dict[str, Any]]:
        """Tests response with multiple content types (text, image, resource)"""
        return [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                                              "text": json.dumps({"test": "data", "value": 123})}},
        ]

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution"""
        for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.log("info", step)
            await ctx.sleep(0.05)
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications"""
        for done in (0, 50, 100):
            await ctx.report_progress(done, 100, f"Completed step {done} of 100")
            await ctx.sleep(0.05)
        return str(ctx.progress_token)

    @server.tool()
    def test_error_handling() -> str:
        """Tests error response handling"""
        # An exception inside a tool is a *result* with isError: true, which the model can read — not a
        # JSON-RPC error (spec "Tools", error handling).
        raise RuntimeError("This tool intentionally returns an error for testing")

    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Tests server-initiated sampling (LLM completion request)"""
        result = await ctx.sample([{"role": "user", "content": {"type": "text", "text": prompt}}], 100)
        content = result.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        return f"LLM response: {text or 'No response'}"

    @server.tool(input_schema={"type": "object", "properties": {
        "message": {"type": "string", "description": "The message to show the user"}}, "required": ["message"]})
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Tests server-initiated elicitation (user input request)"""
        schema = {"type": "object", "properties": {"response": {"type": "string", "description": "User's response"}},
                  "required": ["response"]}
        return f"User response: {_answer(await ctx.elicit(message, schema))}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Tests elicitation with default values per SEP-1034"""
        result = await ctx.elicit("Please review and update the form fields with defaults", ELICITATION_DEFAULTS)
        return f"Elicitation completed: {_answer(result)}"

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Tests elicitation with enum schema improvements per SEP-1330"""
        result = await ctx.elicit("Please select options from the enum fields", ELICITATION_ENUMS)
        return f"Elicitation completed: {_answer(result)}"

    @server.tool(input_schema=JSON_SCHEMA_2020_12)
    def json_schema_2020_12_tool(name: str | None = None, address: dict[str, Any] | None = None,
                                 contactMethod: str | None = None, phone: str | None = None,  # the suite's names
                                 email: str | None = None) -> str:
        """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)"""
        given = {k: v for k, v in (("name", name), ("address", address), ("contactMethod", contactMethod),
                                   ("phone", phone), ("email", email)) if v is not None}
        return f"JSON Schema 2020-12 tool called with: {json.dumps(given, separators=(',', ':'))}"

    # -- 2026-07-28: asking the client for input (InputRequiredResult, SEP-2322; course chapter 04) ----
    # The same handlers work in both eras: a legacy session sends the client a request and waits, a
    # modern one answers input_required and runs the handler again when the client retries.
    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """MRTR: asks the user's name (elicitation), then greets them"""
        answers = await ctx.ask({"user_name": elicit("What is your name?", _form("name"))})
        return f"Hello, {_field(answers['user_name'], 'name') or 'unknown'}!"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """MRTR: asks the client's model a question (sampling), then returns its answer"""
        answers = await ctx.ask({"capital_question": sample(["What is the capital of France?"], 100)})
        return f"Sampling result: {_sampled_text(answers['capital_question']) or 'no response'}"

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """MRTR: asks for the client's roots, then counts them"""
        return f"Found {len(await ctx.list_roots(key='roots_request'))} root(s)"

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """MRTR: asks for a confirmation; the retry must bring back the requestState"""
        answers = await ctx.ask({"confirm": elicit("Please confirm", _form("ok", "boolean"))})
        confirmed = _field(answers["confirm"], "ok") is True
        return "state-ok: requestState validated" if confirmed else "state-ok: requestState validated, not confirmed"

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """MRTR: asks three things at once (elicitation, sampling and roots)"""
        answers = await ctx.ask({"user_name": elicit("What is your name?", _form("name")),
                                 "greeting": sample(["Generate a greeting"], 50),
                                 "client_roots": list_roots()})
        roots = answers["client_roots"].get("roots") if isinstance(answers["client_roots"], dict) else None
        return (f"Name: {_field(answers['user_name'], 'name')}; Greeting: {_sampled_text(answers['greeting'])}; "
                f"Roots: {len(roots or [])}")

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """MRTR: asks in two rounds (the second question depends on the first answer)"""
        name = _field(await ctx.elicit("Step 1: What is your name?", _form("name"), key="step1"), "name")
        color = _field(await ctx.elicit(f"Step 2: {name}, what is your favorite color?", _form("color"),
                                        key="step2"), "color")
        return f"Multi-round complete for {name} who likes {color}"

    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """MRTR: a sealed requestState; an edited one is refused with -32602"""
        answers = await ctx.ask({"confirm": elicit("Please confirm", _form("ok", "boolean"))})
        return f"integrity-ok: state verified (ok={_field(answers['confirm'], 'ok')})"

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """MRTR: asks only what the request's client capabilities allow"""
        # 2026-07-28: the capabilities come with each request (_meta), and a server MUST NOT ask for
        # what this request did not declare.
        caps = ctx.client_capabilities
        wanted = {}
        if "elicitation" in caps:
            wanted["elicit_input"] = elicit("Elicitation input", _form("value"))
        if "sampling" in caps:
            wanted["sample_input"] = sample(["Sample request"], 50)
        if not wanted:
            return "No supported capabilities declared"
        answers = await ctx.ask(wanted)
        return f"capabilities-ok: received {','.join(sorted(answers))}"

    @server.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """MRTR: a prompt that asks the user for context first"""
        answers = await ctx.ask({"user_context": elicit("What context should the prompt use?",
                                                        _form("context"))})
        return f"Prompt with context: {_field(answers['user_context'], 'context')}"

    # -- 2026-07-28: stateless diagnostics (SEP-2575) -----------------------------------------------
    @server.tool()
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the client's sampling: a request that did not declare it gets -32021"""
        answers = await ctx.ask({"word": sample(["Say one word."], 10)})
        return f"Success: {_sampled_text(answers['word'])}"

    @server.tool()
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Reports progress, then asks the user (as input_required, never as a request on the stream)"""
        await ctx.report_progress(50, 100, "half way")
        answers = await ctx.ask({"confirm": elicit("Continue?", _form("ok", "boolean"))})
        return f"Streaming complete (ok={_field(answers['confirm'], 'ok')})"

    @server.tool()
    async def test_logging_tool(ctx: Context) -> str:
        """Logs at info: only a request that set a logLevel hears it"""
        await ctx.log("info", "Diagnostic trace logging activated")
        return "Logging evaluated"

    @server.tool()
    def test_trigger_tool_change(ctx: Context) -> str:
        """Offers test_dynamic_tool again, so subscribed clients hear tools/list_changed"""
        server.add_tool(dynamic_tool, name="test_dynamic_tool")
        return "Mutation triggered"

    @server.tool()
    def test_trigger_prompt_change(ctx: Context) -> str:
        """Offers test_dynamic_prompt again, so subscribed clients hear prompts/list_changed"""
        server.add_prompt(dynamic_prompt, name="test_dynamic_prompt")
        return "Mutation triggered"

    # -- tasks (the io.modelcontextprotocol/tasks extension's scenarios) --------------------------------
    @server.tool()
    def greet(name: str) -> str:
        """Greets by name at once: never a task"""
        return f"Hello, {name}!"

    @server.tool(task_support="optional")
    async def slow_compute(ctx: Context, seconds: float = 1.0) -> str:
        """Works for the given seconds (0: at once); the server may run it as a task"""
        if seconds > 0:
            await ctx.sleep(seconds)
        return f"Computed after {seconds:g} seconds"

    @server.tool(task_support="required")
    async def failing_job(ctx: Context) -> str:
        """Runs for about a second, then reports a tool error (the tool ran: isError, not a failed task)"""
        await ctx.sleep(1.0)
        raise ValueError("the job failed")

    @server.tool(task_support="optional")
    async def protocol_error_job(ctx: Context) -> str:
        """Fails with a protocol-level error (a failed task, with the error inlined)"""
        raise McpError(INTERNAL_ERROR, "protocol_error_job failed on purpose")

    @server.tool(task_support="required", ask_first={"user_name": elicit("What is your name?", _form("name"))})
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks for a name by an input round trip, then runs as a task that greets by that name"""
        answers = await ctx.ask({"user_name": elicit("What is your name?", _form("name"))})
        await ctx.sleep(0.5)
        return f"Hello, {_field(answers['user_name'], 'name')}! (from the task)"

    @server.tool(task_support="optional")
    async def confirm_delete(ctx: Context, filename: str) -> str:
        """Asks the user to confirm before deleting a file (one input request; as a task, it waits in
        input_required until tasks/update brings the answer)"""
        answers = await ctx.ask({"confirm": elicit(f"Delete {filename}?", _form("confirm", "boolean"))})
        return f"Deleted {filename}" if _field(answers["confirm"], "confirm") else f"Kept {filename}"

    @server.tool(task_support="optional")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once (two input requests pending together)"""
        answers = await ctx.ask({"name": elicit("What is your name?", _form("name")),
                                 "colour": elicit("What is your favourite colour?", _form("colour"))})
        return f"{_field(answers['name'], 'name')} likes {_field(answers['colour'], 'colour')}"

    # -- resources: text, binary, a template, and one to subscribe to ---------------------------------
    @server.resource("test://static-text", name="static-text", title="Static Text Resource", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource for testing"""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", name="static-binary", title="Static Binary Resource",
                     mime_type="image/png")
    def static_binary() -> bytes:
        """A static binary resource (image) for testing"""
        return base64.b64decode(PNG_BASE64)

    @server.resource_template("test://template/{id}/data", name="template", title="Resource Template",
                              mime_type="application/json")
    def template(id: str) -> dict[str, Any]:  # the suite names the variable "id"
        """A resource template with parameter substitution"""
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    @server.resource("test://watched-resource", name="watched-resource", title="Watched Resource",
                     mime_type="text/plain")
    def watched_resource() -> str:
        """A resource a client can subscribe to"""
        return "Watched resource content"

    # -- prompts: plain, with arguments, with an embedded resource, with an image ------------------------
    @server.prompt(title="Simple Test Prompt")
    def test_simple_prompt() -> str:
        """A simple prompt without arguments"""
        return "This is a simple prompt for testing."

    @server.prompt(title="Prompt With Arguments", complete={"arg1": ["test-value-1", "test-value-2"]},
                   argument_descriptions={"arg1": "First test argument", "arg2": "Second test argument"})
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with required arguments"""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(title="Prompt With Embedded Resource",
                   argument_descriptions={"resourceUri": "URI of the resource to embed"})
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:  # the suite spells it so
        """A prompt that includes an embedded resource"""
        embedded = {"type": "resource", "resource": {"uri": resourceUri, "mimeType": "text/plain",
                                                     "text": "Embedded resource content for testing."}}
        return [{"role": "user", "content": embedded}, "Please process the embedded resource above."]

    @server.prompt(title="Prompt With Image")
    def test_prompt_with_image() -> list[Any]:
        """A prompt that includes image content"""
        image = {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}
        return [{"role": "user", "content": image}, "Please analyze the image above."]

    return server


def dynamic_tool() -> str:
    """A tool added while the server runs"""
    return "dynamic"


def dynamic_prompt() -> str:
    """A prompt added while the server runs"""
    return "dynamic"
