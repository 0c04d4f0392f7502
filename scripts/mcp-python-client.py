"""Drives `levh mcp stdio` with the official MCP Python SDK, as a third-party client would.

Usage: mcp-python-client.py LEVH_BINARY LEVH_HOME
Stores a memory with importance 0.7 and pin true, recalls it with limit 3, and prints one
JSON object with what the SDK returned (the tool list's names, both results' structured
content, and whether either was an error). The SDK validates structured output against
each tool's output schema, so a schema it cannot read fails here too.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(binary: str, home: str) -> None:
    server = StdioServerParameters(
        command=binary,
        args=["mcp", "stdio"],
        env={"LEVH_HOME": home, "LEVH_EMBEDDER": "hash"},
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            stored = await session.call_tool(
                "store_memory",
                {
                    "content": "The release train leaves every second Tuesday",
                    "importance": 0.7,
                    "pin": True,
                },
            )
            recalled = await session.call_tool(
                "recall_memory", {"query": "when does the release train leave", "limit": 3}
            )
            print(
                json.dumps(
                    {
                        "tools": [tool.name for tool in tools.tools],
                        "stored": stored.structured_content,
                        "stored_error": stored.is_error,
                        "recalled": recalled.structured_content,
                        "recalled_error": recalled.is_error,
                    }
                )
            )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
