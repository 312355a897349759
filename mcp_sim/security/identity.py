"""Users and tenants: *who* an MCP request acts for (course chapter on security, "who is calling").

A Server that serves more than one organisation must know, on every request, two things the
protocol itself does not carry in its JSON-RPC messages: the **subject** (the user or service the
request acts for) and the **tenant** (the organisation whose data that subject may touch). Both come
from the transport — a validated bearer token on Streamable HTTP, the process's configured identity
on stdio — and reach the Server as an :class:`AuthInfo`, which every transport's stream carries.

This module holds the simulated directory of users and tenants, and draws their names from the
simulation's seeded generator, so every lab attacks *different* tenants on every seed: a fix that
only blocks one literal name does not pass the tests.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

_ADJECTIVES = ("amber", "brisk", "cobalt", "dusky", "ember", "fable", "gilded", "hollow", "ivory", "jade",
               "kindle", "lunar", "mossy", "north", "onyx", "pale", "quartz", "russet", "silver", "tidal")
_NOUNS = ("harbor", "ridge", "meadow", "forge", "canyon", "delta", "grove", "summit", "beacon", "orchard",
          "quarry", "lagoon", "prairie", "tundra", "atlas", "cedar", "falcon", "glacier", "heron", "juniper")
_GIVEN = ("ada", "bruno", "chen", "dara", "emil", "fatima", "goran", "hana", "ines", "jon", "kofi", "lena",
          "mateo", "nora", "oskar", "priya", "quinn", "rosa", "sami", "tove")


@dataclass(frozen=True)
class AuthInfo:
    """Who is calling, as the transport established it (a validated bearer token on HTTP, the
    process's configured identity on stdio). The server reads it to authorise every operation."""

    subject: str
    """The user (or service) the token was issued to."""
    tenant: str | None = None
    scopes: tuple[str, ...] = ()
    audience: str | None = None
    """The resource the token was issued for; a server MUST reject tokens not issued for it."""
    token: str | None = None
    client_id: str | None = None



def pick_name(rng: random.Random, kind: str = "tenant") -> str:
    """A readable random name: ``"cobalt-harbor-42"`` for a tenant, ``"priya.17"`` for a user,
    ``"quartz-grove"`` for a server or host name."""
    if kind == "user":
        return f"{rng.choice(_GIVEN)}.{rng.randint(10, 99)}"
    if kind == "tenant":
        return f"{rng.choice(_ADJECTIVES)}-{rng.choice(_NOUNS)}-{rng.randint(10, 99)}"
    return f"{rng.choice(_ADJECTIVES)}-{rng.choice(_NOUNS)}"


def pick_distinct(rng: random.Random, kind: str, count: int) -> list[str]:
    """``count`` different names of one kind."""
    names: list[str] = []
    while len(names) < count:
        name = pick_name(rng, kind)
        if name not in names:
            names.append(name)
    return names


@dataclass(frozen=True)
class Tenant:
    """An organisation. Its data must never be served to a caller of another tenant."""

    name: str


@dataclass(frozen=True)
class User:
    """A person (or service) with an account in exactly one tenant."""

    subject: str
    """The stable identifier a token names in its ``sub`` claim."""
    tenant: str


@dataclass
class Directory:
    """The simulated identity provider's directory of tenants and users."""

    tenants: dict[str, Tenant] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)

    def add_tenant(self, name: str) -> Tenant:
        tenant = self.tenants.setdefault(name, Tenant(name))
        return tenant

    def add_user(self, subject: str, tenant: str) -> User:
        self.add_tenant(tenant)
        user = User(subject, tenant)
        self.users[subject] = user
        return user

    @classmethod
    def random(cls, rng: random.Random, tenants: int = 2, users_per_tenant: int = 1) -> Directory:
        """A directory with ``tenants`` random tenants of ``users_per_tenant`` random users each."""
        directory = cls()
        subjects = pick_distinct(rng, "user", tenants * users_per_tenant)
        for i, tenant in enumerate(pick_distinct(rng, "tenant", tenants)):
            for subject in subjects[i * users_per_tenant:(i + 1) * users_per_tenant]:
                directory.add_user(subject, tenant)
        return directory

    def users_of(self, tenant: str) -> list[User]:
        return [u for u in self.users.values() if u.tenant == tenant]
