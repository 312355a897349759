#!/usr/bin/env bash
# Installs the official MCP conformance suite, the npm reference server @modelcontextprotocol/server-everything
# and the Node (22 or later) they need, all from the npm registry, into .ci/conformance/node_modules: nothing
# outside that folder changes. The versions (and every dependency's) are pinned by
# .ci/conformance/package-lock.json; tests/test_conformance.py runs the suite, tests/test_check_peers.py
# checks the reference server with mcp-sim check.
set -euo pipefail
cd "$(dirname "$0")/conformance"
npm ci --no-audit --no-fund --loglevel=error
node="node_modules/node/bin/node"
major="$("$node" -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 22 ]; then
  echo "conformance: $node is Node $("$node" --version); the suite needs 22 or later" >&2
  exit 1
fi
echo "conformance: suite $("$node" node_modules/@modelcontextprotocol/conformance/dist/index.js --version) on Node $("$node" --version)"
