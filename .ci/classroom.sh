#!/usr/bin/env bash
# Installs JupyterHub's proxy (configurable-http-proxy, from the npm registry, pinned by
# .ci/classroom/package-lock.json) into .ci/classroom/node_modules for tests/test_classroom_hub.py,
# which starts a real JupyterHub with it. It runs on the machine's Node (20 or later), or on the
# Node 22 that .ci/conformance.sh installed. Nothing outside that folder changes.
set -euo pipefail
cd "$(dirname "$0")/classroom"
npm ci --no-audit --no-fund --loglevel=error
echo "classroom: configurable-http-proxy $(node -p 'require("./node_modules/configurable-http-proxy/package.json").version') on Node $(node --version)"
