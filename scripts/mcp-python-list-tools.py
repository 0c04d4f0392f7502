"""Starts an MCP server over stdio with the official MCP Python SDK, as a client would.

Usage: mcp-python-list-tools.py COMMAND [ARGUMENT ...]
Runs `initialize` and `tools/list`, and prints one JSON object: the server's name and
version from `initialize` and the names of its tools. The server gets this process's
PATH and every LEVH_* and UV_* variable (the SDK passes a server only a few variables of
its client's; UV_* for a server started through `uvx`).
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(command: str, arguments: list[str]) -> None:
    env = {name: value for name, value in os.environ.items() if name.startswith(("LEVH_", "UV_"))}
    env["PATH"] = os.environ.get("PATH", "")
    server = StdioServerParameters(command=command, args=arguments, env=env)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            tools = await session.list_tools()
            print(
                json.dumps(
                    {
                        "server": {
                            "name": initialized.server_info.name,
                            "version": initialized.server_info.version,
                        },
                        "tools": [tool.name for tool in tools.tools],
                    }
                )
            )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
