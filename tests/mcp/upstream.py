"""An MCP upstream for the call-path tests: the official SDK's MCPServer with two
tools over Streamable HTTP on loopback, and its own call counter at GET /count
(what the upstream really received, as the tests must see it).

usage: upstream.py PORT
"""

import sys

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp.server.mcpserver import MCPServer

CALLS: list[dict] = []

server = MCPServer("weather-desk")


@server.tool()
def weather_now(city: str) -> str:
    """Current weather conditions and temperature for a city."""
    CALLS.append({"tool": "weather_now", "city": city})
    return f"Sunny and 21 C in {city}"


@server.tool()
def ticket_open(title: str, priority: int = 1) -> str:
    """Open a support ticket with a title and a priority."""
    CALLS.append({"tool": "ticket_open", "title": title, "priority": priority})
    return f"ticket opened: {title} (priority {priority})"


async def count(_: Request) -> JSONResponse:
    return JSONResponse({"calls": len(CALLS), "log": CALLS})


app = server.streamable_http_app()
app.router.routes.append(Route("/count", count))

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
