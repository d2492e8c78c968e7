"""Connects the official MCP Python SDK to toolgraph's /mcp endpoint (Streamable
HTTP), lists the tools, calls one, and prints what came back as one JSON line.

usage: find_tools.py URL TOOL ARGUMENTS_JSON [BEARER_KEY]
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    url, tool, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    headers = {"Authorization": f"Bearer {sys.argv[4]}"} if len(sys.argv) > 4 else None
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http, terminate_on_close=False) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                result = await session.call_tool(tool, arguments)
                text = "".join(getattr(c, "text", "") for c in result.content)
                print(
                    json.dumps(
                        {
                            "tools": [
                                {
                                    "name": t.name,
                                    "read_only": t.annotations.read_only_hint if t.annotations else None,
                                    "destructive": t.annotations.destructive_hint if t.annotations else None,
                                    "input_schema": t.input_schema,
                                }
                                for t in listed.tools
                            ],
                            "is_error": bool(result.is_error),
                            "result": json.loads(text) if text.startswith(("{", "[")) else text,
                        }
                    )
                )


asyncio.run(main())
