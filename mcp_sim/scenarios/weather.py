"""The weather server: the course's first MCP server (course chapters 03–05).

It shows each thing a server can offer: two read-only tools (one with structured output), a fixed
resource listing the stations, a resource template ``weather://forecast/{city}/{date}``, a prompt,
and completion of city names. Forecasts come from a small table, so every run gives the same answers.
"""

from __future__ import annotations

from typing import TypedDict

from mcp_sim.capabilities.context import Context
from mcp_sim.roles.server import Server

STATIONS: dict[str, tuple[str, int]] = {
    # city: (country, typical temperature in °C)
    "Lisbon": ("PT", 22),
    "London": ("GB", 14),
    "Madrid": ("ES", 24),
    "Oslo": ("NO", 8),
    "Paris": ("FR", 17),
    "Porto": ("PT", 19),
}
SKIES = ("sunny", "cloudy", "rain", "windy", "sunny", "showers", "fog")


class Conditions(TypedDict):
    city: str
    sky: str
    temperature_c: int


def conditions(city: str, day: int) -> Conditions:
    """The (made-up, deterministic) weather of ``city`` ``day`` days from now."""
    _, typical = STATIONS[city]
    turn = (sum(map(ord, city)) + day) % len(SKIES)
    return {"city": city, "sky": SKIES[turn], "temperature_c": typical + (turn % 4) - 2}


def build() -> Server:
    """A fresh weather server."""
    server = Server("weather", version="1.0.0", title="Weather",
                    instructions="Forecasts for a few European cities. Use get_forecast for a summary.")

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
    async def get_forecast(city: str, days: int = 1, ctx: Context | None = None) -> str:
        """Forecast for a city, one line per day (1 to 7 days)."""
        if city not in STATIONS:
            raise ValueError(f"unknown city {city!r}; try one of {', '.join(STATIONS)}")
        if not 1 <= days <= 7:
            raise ValueError("days must be between 1 and 7")
        lines = []
        for day in range(days):
            c = conditions(city, day)
            lines.append(f"day {day + 1}: {c['sky']}, {c['temperature_c']}°C")
            if ctx is not None:
                await ctx.report_progress(day + 1, days, f"{city} day {day + 1}")
        return f"{city}: " + "; ".join(lines)

    @server.tool(title="Current conditions", annotations={"readOnlyHint": True})
    def get_conditions(city: str) -> Conditions:
        """Current conditions for a city, as structured data."""
        if city not in STATIONS:
            raise ValueError(f"unknown city {city!r}")
        return conditions(city, 0)

    @server.resource("weather://stations", mime_type="application/json", title="Weather stations")
    def stations() -> list[dict[str, str]]:
        """Every city with a station."""
        return [{"city": name, "country": country} for name, (country, _) in STATIONS.items()]

    @server.resource_template("weather://forecast/{city}/{date}", mime_type="application/json",
                              complete={"city": list(STATIONS)})
    def forecast(city: str, date: str) -> Conditions:
        """The forecast for a city on a date (YYYY-MM-DD)."""
        if city not in STATIONS:
            raise KeyError(city)  # a KeyError means "resource not found"
        return conditions(city, sum(map(int, date.split("-"))) % 7)

    @server.prompt(title="Plan a trip", complete={"destination": list(STATIONS)},
                   argument_descriptions={"destination": "The city to visit", "days": "How many days"})
    def plan_trip(destination: str, days: str = "3") -> str:
        """Plan a trip around the weather."""
        return (f"I am travelling to {destination} for {days} days. Check the forecast with get_forecast "
                f"and suggest what to pack and which day suits an outdoor visit.")

    return server
