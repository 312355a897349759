"""``import_jsonschema``: the JSON Schema library without its optional IRI format checker, which builds a
grammar for seconds on import (in every process's first validation: a server's first call with wrong
arguments answered seconds late). Run in fresh interpreters, since an import happens once a process."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_library_loads_without_the_iri_package_and_leaves_it_importable() -> None:
    out = run("""
        import importlib.util, sys
        from mcp_sim.protocol.schema import import_jsonschema, schema_errors
        jsonschema = import_jsonschema()
        assert jsonschema is sys.modules["jsonschema"] and jsonschema.Draft202012Validator
        assert "rfc3987_syntax" not in sys.modules  # hidden while it loaded, and not left as None
        print(schema_errors({"jsonrpc": "2.0", "id": 1, "method": 5}, "2025-11-25", "JSONRPCRequest"))
        if importlib.util.find_spec("rfc3987_syntax") is not None:
            import rfc3987_syntax  # another library may still load it afterwards
            print("later import:", rfc3987_syntax.__name__)
    """)
    assert "is not of type 'string'" in out.splitlines()[0]


def test_a_package_loaded_before_is_left_alone() -> None:
    out = run("""
        import sys, types
        sys.modules["rfc3987_syntax"] = marker = types.ModuleType("rfc3987_syntax")
        from mcp_sim.protocol.schema import import_jsonschema
        try:
            import_jsonschema()
        except Exception as exc:  # a fake package may not satisfy jsonschema: only the module table counts
            print("raised", type(exc).__name__)
        print(sys.modules["rfc3987_syntax"] is marker)
    """)
    assert out.splitlines()[-1] == "True"


def test_messages_are_the_library_s_own() -> None:
    out = run("""
        from mcp_sim.protocol.schema import import_jsonschema
        v = import_jsonschema().Draft202012Validator({"type": "object", "properties": {"city": {"type": "string"}}})
        print([e.message for e in v.iter_errors({"city": 42})])
    """)
    assert out == "[\"42 is not of type 'string'\"]"
