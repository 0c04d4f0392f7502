"""levh's sandbox tests, run by the connector when its `mode` setting names one.

The same probes as levh's hostile Rust test guest (`tests/guests/hostile`): from Python,
through CPython's own file, socket and environment calls, each way out of the grant must
fail. A connector of your own does not need this file.
"""

import os
import socket
import sys

from componentize_py_types import Err
from wit_world.imports import types


def item(source_id, content):
    return types.Item(source_id=source_id, title=source_id, content=content, kind="note",
                      occurred_at=None, people=[], source_uri=None, metadata="{}")


def page(items):
    return types.Page(items=items, errors=[], next_cursor=None, done=True)


def run(mode, directory):
    if mode == "read-granted":
        try:
            with open(os.path.join(directory, "inside.txt"), encoding="utf-8") as file:
                return page([item("inside", file.read())])
        except OSError as e:
            raise Err(types.Error_Failed(f"read inside: {e}"))
    if mode == "read-outside":
        # Every way out of the grant: absolute, `..`, a planted symlink.
        found = []
        for path in ["/etc/passwd", f"{directory}/../outside.txt",
                     f"{directory}/link-out/outside.txt"]:
            try:
                with open(path, encoding="utf-8") as file:
                    found.append(item(path, file.read()))
            except OSError:
                pass
        if not found:
            raise Err(types.Error_Denied("every read outside the grant failed"))
        return page(found)
    if mode == "write":
        try:
            with open(os.path.join(directory, "planted.txt"), "w", encoding="utf-8") as file:
                file.write("x")
        except OSError as e:
            raise Err(types.Error_Denied(f"write refused: {e}"))
        return page([])
    if mode == "socket":
        # A literal address, no name lookup: the connection itself is what is refused.
        # (`socket.create_connection` would resolve first, and needs `encodings.idna`
        # imported at build time to get as far as the refused lookup.)
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as connection:
                connection.connect(("127.0.0.1", 9))
        except OSError as e:
            raise Err(types.Error_Denied(f"socket refused: {e}"))
        return page([item("socket", "connected")])
    if mode == "env":
        return page([item("env", f"{dict(os.environ)} {sys.argv}")])
    raise Err(types.Error_InvalidConfig(f"unknown mode {mode}"))
