"""Drives levh's tools for an agent's working loop with the official MCP Python SDK.

Usage: mcp-python-agent.py stdio LEVH_BINARY LEVH_HOME
       mcp-python-agent.py http URL            (a `levh serve`'s /mcp endpoint)

Keyed memories: upserts one key twice with different values (the second replaces the
first), a third time unchanged, then reads it back — the current memory by key with a JSON
pointer into its value, the first one by `as_of` at the time it held, and a missing key.
Mistakes: records one, then checks a paraphrased action (the mistake applies) and an
unrelated one (no known issue). Checkpoints: writes one at the end of the first session;
a second session (a new process over stdio, a new MCP session over HTTP) continues the
task from it within a 300-token budget. Goals: creates one with milestones, reaches one
with a progress note, and lists it back. Reports: a third session, whose client calls
itself `report-probe`, stores two notes, makes three recalls (one finds nothing), marks
one answer helpful and one unhelpful, then asks for the recall and usage reports of its
own client (the full profile). Prints one JSON object with what the SDK returned
(structured content, checked by the SDK against each tool's output schema, and whether
each call was an error).
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.types import Implementation
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


async def exercise(session: ClientSession) -> dict:
    await session.initialize()
    tools = await session.list_tools()

    async def call(name: str, arguments: dict) -> dict:
        result = await session.call_tool(name, arguments)
        return {"error": result.is_error, "content": result.structured_content,
                "text": [c.text for c in result.content if hasattr(c, "text")]}

    key = {"key": "deploy target", "project": "atlas"}
    first = await call("upsert_memory", {**key, "content": "Atlas deploys to the eu-west cluster with helm",
                                         "value": {"deploy": {"region": "eu-west-1", "replicas": 3}}})
    second = await call("upsert_memory", {**key, "content": "Atlas deploys to the us-east cluster with argo",
                                          "value": {"deploy": {"region": "us-east-2", "replicas": 5}}})
    again = await call("upsert_memory", {**key, "content": "Atlas deploys to the us-east cluster with argo",
                                         "value": {"deploy": {"region": "us-east-2", "replicas": 5}}})
    current = await call("get_memory", {**key, "pointer": "/deploy/region"})
    held_then = first["content"]["memory"]["valid_from"] if first["content"] else None
    before = await call("get_memory", {**key, "as_of": held_then, "pointer": "/deploy/replicas"})
    missing = await call("get_memory", {"key": "no such key", "project": "atlas"})
    listed = await call("list_memories", {"project": "atlas"})
    mistake = await call("record_mistake", {
        "what": "Ran the database migration on production without taking a backup first",
        "why": "the runbook skipped the backup step",
        "avoid": "snapshot the database before any migration", "tags": ["database"]})
    paraphrased = await call("check_action", {"action": "migrate the prod database schema now"})
    unrelated = await call("check_action", {"action": "order lunch for the team on Friday"})
    checkpoint = await call("checkpoint", {
        "task": "atlas 2.0", "project": "atlas", "goal": "Ship atlas 2.0 to production",
        "done": ["moved the deploy target to us-east"], "next": ["run the soak test"],
        "questions": ["who signs off?"], "memories": [second["content"]["memory"]["id"]]})
    goal = await call("create_goal", {"title": "Ship atlas 2.0", "project": "atlas",
                                      "milestones": ["schema migrated", "soak test passed", "released"]})
    progressed = await call("update_goal", {"goal": "Ship atlas 2.0", "project": "atlas",
                                            "reached": ["schema migrated"],
                                            "note": "the schema migration ran in four minutes without errors"})
    goals = await call("list_goals", {"project": "atlas"})
    return {"tools": [t.name for t in tools.tools], "first": first, "second": second, "again": again,
            "current": current, "before": before, "missing": missing, "listed": listed,
            "mistake": mistake, "paraphrased": paraphrased, "unrelated": unrelated,
            "checkpoint": checkpoint, "goal": goal, "progressed": progressed, "goals": goals}


async def resume(session: ClientSession) -> dict:
    await session.initialize()
    result = await session.call_tool("continue_task", {"project": "atlas", "max_tokens": 300})
    return {"error": result.is_error, "content": result.structured_content}


PROBE = Implementation(name="report-probe", version="1.0")


async def probe(session: ClientSession) -> dict:
    await session.initialize()

    async def call(name: str, arguments: dict) -> dict:
        result = await session.call_tool(name, arguments)
        return {"error": result.is_error, "content": result.structured_content,
                "text": [c.text for c in result.content if hasattr(c, "text")]}

    texts = ["The probe team's offsite is in Lisbon in May, at the riverside hotel",
             "The probe billing export runs nightly at 02:00 UTC into the finance bucket"]
    stored = [await call("store_memory", {"content": text, "project": "probe"}) for text in texts]
    offsite = await call("recall_memory", {"query": "Lisbon offsite", "project": "probe"})
    nothing = await call("search_memory", {"query": "zxqvw plorthk"})
    billing = await call("recall_memory", {"query": "billing export nightly", "project": "probe"})
    helpful = await call("memory_feedback", {"id": offsite["content"]["results"][0]["id"], "helpful": True})
    unhelpful = await call("memory_feedback", {"id": billing["content"]["results"][0]["id"], "helpful": False})
    recalls = await call("report_recalls", {"client": "report-probe"})
    usage = await call("report_usage", {"client": "report-probe"})
    return {"texts": texts, "stored": stored, "offsite": offsite, "nothing": nothing, "billing": billing,
            "helpful": helpful, "unhelpful": unhelpful, "recalls": recalls, "usage": usage}


async def main(argv: list) -> None:
    if argv[0] == "stdio":
        server = StdioServerParameters(command=argv[1], args=["mcp", "stdio"],
                                       env={"LEVH_HOME": argv[2], "LEVH_EMBEDDER": "hash"})
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                answer = await exercise(session)
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                answer["continued"] = await resume(session)
        full = StdioServerParameters(command=argv[1], args=["mcp", "stdio", "--profile", "full"],
                                     env={"LEVH_HOME": argv[2], "LEVH_EMBEDDER": "hash"})
        async with stdio_client(full) as (read, write):
            async with ClientSession(read, write, client_info=PROBE) as session:
                answer["probe"] = await probe(session)
        print(json.dumps(answer))
    else:
        async with streamable_http_client(argv[1]) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                answer = await exercise(session)
        async with streamable_http_client(argv[1]) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                answer["continued"] = await resume(session)
        async with streamable_http_client(argv[1]) as streams:
            async with ClientSession(streams[0], streams[1], client_info=PROBE) as session:
                answer["probe"] = await probe(session)
        print(json.dumps(answer))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
