"""The official MCP Python SDK as a planner calling tools through toolgraph:
find_tools, the tools/list_changed notification, the found tool in tools/list,
then each call of a script, each answer printed as one JSON line.

usage: gateway_client.py URL KEY QUERY CALLS_JSON
  CALLS_JSON: [{"name": TOOL, "arguments": {...}}, ...] (plain tools/call, so
  `call_tool` itself is one more name)
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    url, key, query, calls = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    changed = asyncio.Event()

    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        if type(root).__name__ == "ToolListChangedNotification" or getattr(root, "method", "") == "notifications/tools/list_changed":
            changed.set()

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http:
        async with streamable_http_client(url, http_client=http, terminate_on_close=False) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                before = [t.name for t in (await session.list_tools()).tools]
                found = await session.call_tool("find_tools", {"query": query, "limit": 3})
                text = "".join(getattr(c, "text", "") for c in found.content)
                try:
                    await asyncio.wait_for(changed.wait(), 5)
                except TimeoutError:
                    pass
                after = [t.name for t in (await session.list_tools()).tools]
                print(json.dumps({
                    "before": before,
                    "found": [m["tool"] for m in json.loads(text).get("matches", [])] if text.startswith("{") else text,
                    "list_changed": changed.is_set(),
                    "after": after,
                }), flush=True)
                for c in calls:
                    try:
                        r = await session.call_tool(c["name"], c.get("arguments", {}))
                        out = {
                            "is_error": bool(r.is_error),
                            "text": "".join(getattr(x, "text", "") for x in r.content),
                            "structured": r.structured_content,
                        }
                    except Exception as e:  # a JSON-RPC error
                        out = {"error": str(e), "code": getattr(getattr(e, "error", None), "code", None)}
                    print(json.dumps(out), flush=True)


asyncio.run(main())
