#!/usr/bin/env python3
"""Driver of scripts/compare-python-levh.sh: the Python levh (PyPI) beside the Rust
`levh serve`, over HTTP on 127.0.0.1, with the same texts and the same questions.

    python3 scripts/compare_python_levh.py --python-levh VENV/bin/levh --rust-levh target/release/levh \
        --work DIR [--limit 3000] [--queries N] [--warmup 20] [--json] [--python-only | --rust-only]

Both servers are started here, each with its own home under --work and the model-free
hash embedder, and stopped at the end. Texts are the turns of the conversational
benchmark sets (fixtures/benchmark/{conversational,worknotes,chat}, in that order, cut at
--limit), stored one request at a time as `speaker: text`, pinned, project = the
conversation; the Rust side also gets the session date as world time (`valid_from`,
what `levh benchmark` does; the Python store route has no such field). The questions
whose evidence turns all fall inside the stored texts are then searched in the
conversation's project, top 10, without reinforcement, one request at a time: hit@10
and MRR@10 against the labelled evidence turns. Requests alternate between the servers
(which goes first alternates too), so a load spike on the machine hits both alike.
Peak RSS is VmHWM from /proc/PID/status. Standard library only.

The table goes to stdout (with --json, one JSON document instead); progress to stderr.
"""
from __future__ import annotations

import argparse
import glob
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ("conversational", "worknotes", "chat")


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


# ── data ────────────────────────────────────────────────────────────────────


def load_corpus(datasets: list[str], limit: int):
    """The first `limit` turns of the sets, in order, and the questions they answer."""
    texts, questions, per_set = [], [], {}
    for name in datasets:
        files = sorted(
            f for f in glob.glob(str(ROOT / "fixtures/benchmark" / name / "*.json"))
            if not f.endswith("dataset.json")
        )
        if not files:
            sys.exit(f"no conversations in fixtures/benchmark/{name}")
        for path in files:
            conv = json.load(open(path, encoding="utf-8"))
            cid = f"{name}-{conv['id']}"
            for session in conv["sessions"]:
                for turn in session["turns"]:
                    if len(texts) >= limit:
                        break
                    texts.append({
                        "key": (cid, turn["id"]),
                        "project": cid,
                        "content": f"{turn['speaker']}: {turn['text']}",
                        "date": session["date"],
                    })
                    per_set[name] = per_set.get(name, 0) + 1
            for q in conv["questions"]:
                questions.append({
                    "project": cid,
                    "query": q["question"],
                    "kind": q.get("kind", ""),
                    "evidence": [(cid, e) for e in q["evidence"]],
                })
    stored = {t["key"] for t in texts}
    questions = [q for q in questions if all(e in stored for e in q["evidence"])]
    return texts, questions, per_set


# ── HTTP ────────────────────────────────────────────────────────────────────


class Client:
    """One keep-alive connection; reconnects once if the server closed it."""

    def __init__(self, port: int):
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            try:
                start = time.perf_counter_ns()
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                elapsed = time.perf_counter_ns() - start
                if resp.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                try:
                    payload = json.loads(raw) if raw else None
                except ValueError:
                    payload = raw.decode(errors="replace")
                return resp.status, payload, elapsed / 1e6
            except (http.client.HTTPException, ConnectionError, OSError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(home: Path) -> dict[str, str]:
    """The environment without any levh setting (either levh's, or the old names the
    Python levh still reads), HOME pointed at the server's own home."""
    bare = {"SQLITE_DB_PATH", "EMBEDDER_MODE", "SHORT_TERM_MAX", "API_HOST", "API_PORT",
            "MCP_TRANSPORT", "OPENAI_API_KEY", "LOCAL_MODEL", "RUST_LOG"}
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LEVH_", "STACKMEMORY_")) and k not in bare}
    env["HOME"] = str(home)
    return env


def memory_status(pid: int) -> dict[str, float]:
    out = {}
    try:
        for line in open(f"/proc/{pid}/status"):
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                out[key] = int(value.split()[0]) / 1024.0  # MiB
    except OSError:
        pass
    return out


def dir_size_mib(path: Path) -> float:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total / (1024 * 1024)


# ── the two servers ─────────────────────────────────────────────────────────


class Server:
    name = ""

    def __init__(self, binary: str, home: Path):
        self.binary = binary
        self.home = home
        self.home.mkdir(parents=True, exist_ok=True)
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.client: Client | None = None
        self.version = ""
        self.embedder = ""
        self.ids: dict = {}
        self.verdicts: dict[str, int] = {}
        self.store_ms: list[float] = []
        self.search_ms: list[float] = []
        self.errors: list[str] = []
        self.rss: dict[str, dict[str, float]] = {}
        self.hits = 0
        self.rr = 0.0
        self.scored = 0
        self.store_wall = 0.0
        self.search_wall = 0.0
        self.startup_s = 0.0
        self.disk_mib = 0.0
        self.disk_stopped_mib = 0.0

    def log_path(self) -> Path:
        return self.home.parent / f"{self.key}-server.log"

    def wait_ready(self, timeout: float = 180.0) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"{self.name} server exited ({self.proc.returncode}); see {self.log_path()}:\n"
                         + self.log_path().read_text(errors="replace")[-3000:])
            if self.port:
                try:
                    status, _, _ = Client(self.port).request("GET", "/api/health")
                    if status == 200:
                        self.client = Client(self.port)
                        return
                except OSError:
                    pass
            time.sleep(0.25)
        sys.exit(f"{self.name} server did not answer /api/health within {timeout:.0f}s; see {self.log_path()}")

    def stop(self) -> None:
        if self.client:
            self.client.close()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def sample_rss(self, when: str) -> None:
        self.rss[when] = memory_status(self.proc.pid)

    def store(self, text: dict, measure: bool) -> None:
        status, body, ms = self.client.request("POST", self.store_path, self.store_body(text))
        verdict, memory_id = self.verdict(status, body)
        if verdict == "stored" and not self.embedder:
            self.check_embedder(body)
        if verdict == "error":
            self.errors.append(f"store {status}: {str(body)[:200]}")
        if measure:
            self.store_ms.append(ms)
            self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1
            if memory_id:
                self.ids[text["key"]] = memory_id

    def search(self, question: dict, measure: bool) -> None:
        status, body, ms = self.client.request("POST", self.search_path, self.search_body(question))
        if status != 200:
            self.errors.append(f"search {status}: {str(body)[:200]}")
            result_ids = []
        else:
            result_ids = self.result_ids(body)
        if measure:
            self.search_ms.append(ms)
            wanted = {self.ids.get(e) for e in question["evidence"]} - {None}
            self.scored += 1
            for rank, rid in enumerate(result_ids[:10], 1):
                if rid in wanted:
                    self.hits += 1
                    self.rr += 1.0 / rank
                    break


class PythonLevh(Server):
    name = "Python levh"
    key = "python"
    store_path = "/api/memories"
    search_path = "/api/memories/recall"

    def start(self) -> None:
        env = clean_env(self.home)
        env.update({
            "LEVH_SQLITE_DB_PATH": str(self.home / "levh.db"),
            "LEVH_EMBEDDER_MODE": "hash",          # no model: the deterministic hash vectors
            "LEVH_CONFIG_PATH": str(self.home / "config.json"),  # absent: built-in defaults
            "LEVH_LIBRARIAN": "0",                 # its background scanner of the machine's agents
        })
        self.port = free_port()
        out = subprocess.run([self.binary, "--version"], capture_output=True, text=True, env=env)
        self.version = out.stdout.strip().split()[-1] if out.stdout.strip() else "?"
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=self.home, env=env, stdin=subprocess.DEVNULL,
            stdout=open(self.log_path(), "w"), stderr=subprocess.STDOUT,
        )
        self.wait_ready()

    def store_body(self, text):
        return {"content": text["content"], "project": text["project"], "pinned": True}

    def search_body(self, q):
        return {"query": q["query"], "project": q["project"], "top_k": 10, "reinforce": False}

    @staticmethod
    def verdict(status, body):
        if status == 200 and isinstance(body, dict) and body.get("id"):
            return "stored", body["id"]
        if status == 409:  # the admission gate did not store it
            action = ""
            if isinstance(body, dict):
                detail = body.get("detail") or {}
                action = (detail.get("decision") or {}).get("action", "") if isinstance(detail, dict) else ""
            return f"not stored ({action or 'gate'})", None
        return "error", None

    @staticmethod
    def result_ids(body):
        return [m.get("id") for m in (body or {}).get("memories", [])]

    def check_embedder(self, sample_body) -> None:
        prov = ((sample_body or {}).get("metadata") or {}).get("embedding_provenance") or {}
        self.embedder = f"{prov.get('provider', '?')} ({prov.get('model', '?')})"


class RustLevh(Server):
    name = "Rust levh"
    key = "rust"
    store_path = "/api/memories"
    search_path = "/api/search"

    def start(self) -> None:
        env = clean_env(self.home)
        env.update({"LEVH_HOME": str(self.home / "home"), "LEVH_EMBEDDER": "hash"})
        out = subprocess.run([self.binary, "--version"], capture_output=True, text=True, env=env)
        self.version = out.stdout.strip().split()[-1] if out.stdout.strip() else "?"
        log_file = self.log_path()
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--host", "127.0.0.1", "--port", "0"],
            cwd=self.home, env=env, stdin=subprocess.DEVNULL,
            stdout=open(log_file, "w"), stderr=subprocess.STDOUT,
        )
        # `levh serve` prints one line with the address it listens on.
        deadline = time.time() + 120
        while not self.port and time.time() < deadline and self.proc.poll() is None:
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log_file.read_text(errors="replace"))
            if found:
                self.port = int(found.group(1))
            else:
                time.sleep(0.1)
        self.wait_ready()
        status, body, _ = self.client.request("GET", "/api/settings")
        if status == 200 and isinstance(body, dict):
            emb = body.get("embedder") or {}
            self.embedder = f"{emb.get('mode', '?')} ({emb.get('model', '?')})"
            self.version = body.get("version") or self.version

    def store_body(self, text):
        return {"content": text["content"], "project": text["project"], "pin": True,
                "valid_from": text["date"]}

    def search_body(self, q):
        return {"query": q["query"], "project": q["project"], "limit": 10}

    @staticmethod
    def verdict(status, body):
        if status in (200, 201, 202) and isinstance(body, dict) and body.get("verdict"):
            v = body["verdict"]
            if v in ("admit", "redact"):
                return "stored", body.get("memory_id")
            return f"not stored ({v})", None
        return "error", None

    @staticmethod
    def result_ids(body):
        return [r.get("id") for r in (body or {}).get("results", [])]

    def check_embedder(self, sample_body) -> None:
        pass


# ── measurement ─────────────────────────────────────────────────────────────


def pct(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil(n * p / 100)
    return ordered[int(rank) - 1]


def alternate(servers, i):
    return servers if i % 2 == 0 else list(reversed(servers))


def run(args) -> dict:
    texts, questions, per_set = load_corpus(args.datasets.split(","), args.limit)
    if args.queries:
        questions = questions[: args.queries]
    work = Path(args.work)
    servers: list[Server] = []
    if not args.rust_only:
        servers.append(PythonLevh(args.python_levh, work / "python-home"))
    if not args.python_only:
        servers.append(RustLevh(args.rust_levh, work / "rust-home"))
    try:
        for s in servers:
            log(f"starting {s.name} ...")
            t0 = time.time()
            s.start()
            s.startup_s = time.time() - t0
            s.sample_rss("started")
            log(f"  {s.name} {s.version} on 127.0.0.1:{s.port}, pid {s.proc.pid}, ready in {s.startup_s:.1f}s")

        # Warm-up: stores in a project of their own (searches are confined to the
        # conversation's project, so they never meet them), not measured.
        for i in range(args.warmup):
            text = {"key": ("warmup", str(i)), "project": "warmup",
                    "content": f"warm-up note {i}: the {['red', 'green', 'blue', 'amber'][i % 4]} "
                               f"build {1000 + 37 * i} passed on runner {i % 7}",
                    "date": "2025-01-01T00:00:00Z"}
            for s in alternate(servers, i):
                s.store(text, measure=False)

        log(f"storing {len(texts)} texts in each, one request at a time ...")
        for i, text in enumerate(texts):
            for s in alternate(servers, i):
                t0 = time.perf_counter()
                s.store(text, measure=True)
                s.store_wall += time.perf_counter() - t0
            if (i + 1) % 500 == 0:
                log(f"  {i + 1}/{len(texts)}  " + "  ".join(
                    f"{s.key} p50 {pct(s.store_ms, 50):.2f} ms" for s in servers))
        for s in servers:
            s.sample_rss("after store")

        # Search warm-up: the first questions, unmeasured (a search reinforces nothing).
        for i, q in enumerate(questions[: args.warmup]):
            for s in alternate(servers, i):
                s.search(q, measure=False)
        log(f"searching {len(questions)} questions in each ...")
        for i, q in enumerate(questions):
            for s in alternate(servers, i):
                t0 = time.perf_counter()
                s.search(q, measure=True)
                s.search_wall += time.perf_counter() - t0
            if (i + 1) % 200 == 0:
                log(f"  {i + 1}/{len(questions)}  " + "  ".join(
                    f"{s.key} p50 {pct(s.search_ms, 50):.2f} ms" for s in servers))
        for s in servers:
            s.sample_rss("end")
            s.disk_mib = dir_size_mib(s.home)
    finally:
        for s in servers:
            s.stop()
    for s in servers:
        s.disk_stopped_mib = dir_size_mib(s.home)

    result = {
        "what": "levh store/search over HTTP on 127.0.0.1: one request at a time, hash embedder, "
                "latency = request sent .. response read (keep-alive connection)",
        "texts": len(texts),
        "texts_per_set": per_set,
        "queries": len(questions),
        "warmup_requests": args.warmup,
        "servers": {},
    }
    for s in servers:
        peak = max((r.get("VmHWM", 0.0) for r in s.rss.values()), default=0.0)
        result["servers"][s.key] = {
            "name": s.name,
            "version": s.version,
            "embedder": s.embedder,
            "startup_s": round(s.startup_s, 2),
            "store_ms": {"p50": pct(s.store_ms, 50), "p99": pct(s.store_ms, 99),
                         "mean": sum(s.store_ms) / len(s.store_ms) if s.store_ms else None,
                         "max": max(s.store_ms, default=None), "n": len(s.store_ms),
                         # the last tenth of the stores: how latency grows with the store
                         "p50_last_tenth": pct(s.store_ms[-max(1, len(s.store_ms) // 10):], 50)},
            "search_ms": {"p50": pct(s.search_ms, 50), "p99": pct(s.search_ms, 99),
                          "mean": sum(s.search_ms) / len(s.search_ms) if s.search_ms else None,
                          "max": max(s.search_ms, default=None), "n": len(s.search_ms)},
            "store_wall_s": round(s.store_wall, 2),
            "search_wall_s": round(s.search_wall, 2),
            "verdicts": s.verdicts,
            "hit_at_10": s.hits / s.scored if s.scored else None,
            "mrr_at_10": s.rr / s.scored if s.scored else None,
            "evidence_not_stored": sum(
                1 for q in questions for e in q["evidence"] if e not in s.ids),
            "rss_mib": {k: {kk: round(vv, 1) for kk, vv in v.items()} for k, v in s.rss.items()},
            "peak_rss_mib": round(peak, 1),
            "home_on_disk_mib": {"running": round(s.disk_mib, 1), "stopped": round(s.disk_stopped_mib, 1)},
            "errors": len(s.errors),
            "first_errors": s.errors[:5],
        }
    if "python" in result["servers"] and "rust" in result["servers"]:
        py, rs = result["servers"]["python"], result["servers"]["rust"]

        def ratio(a, b):
            return round(a / b, 2) if a and b else None

        result["python_over_rust"] = {
            "store_p50": ratio(py["store_ms"]["p50"], rs["store_ms"]["p50"]),
            "store_p99": ratio(py["store_ms"]["p99"], rs["store_ms"]["p99"]),
            "store_p50_last_tenth": ratio(py["store_ms"]["p50_last_tenth"], rs["store_ms"]["p50_last_tenth"]),
            "search_p50": ratio(py["search_ms"]["p50"], rs["search_ms"]["p50"]),
            "search_p99": ratio(py["search_ms"]["p99"], rs["search_ms"]["p99"]),
            "peak_rss": ratio(py["peak_rss_mib"], rs["peak_rss_mib"]),
        }
    return result


def table(result: dict) -> str:
    servers = result["servers"]
    keys = [k for k in ("python", "rust") if k in servers]
    both = "python_over_rust" in result
    head = ["", *(f"{servers[k]['name']} {servers[k]['version']}" for k in keys)]
    if both:
        head.append("Python / Rust")
    ratios = result.get("python_over_rust", {})

    def ms(v):
        return "-" if v is None else f"{v:.2f} ms"

    def row(label, fn, ratio_key=None):
        cells = [label, *(fn(servers[k]) for k in keys)]
        if both:
            r = ratios.get(ratio_key) if ratio_key else None
            cells.append(f"{r:.2f}x" if r else "")
        return cells

    def frac(v):
        return "-" if v is None else f"{v:.3f}"

    rows = [
        head,
        row("store p50", lambda s: ms(s["store_ms"]["p50"]), "store_p50"),
        row("store p99", lambda s: ms(s["store_ms"]["p99"]), "store_p99"),
        row("store mean", lambda s: ms(s["store_ms"]["mean"])),
        row("store p50, last tenth", lambda s: ms(s["store_ms"]["p50_last_tenth"]), "store_p50_last_tenth"),
        row("search p50", lambda s: ms(s["search_ms"]["p50"]), "search_p50"),
        row("search p99", lambda s: ms(s["search_ms"]["p99"]), "search_p99"),
        row("search mean", lambda s: ms(s["search_ms"]["mean"])),
        row("hit@10", lambda s: frac(s["hit_at_10"])),
        row("MRR@10", lambda s: frac(s["mrr_at_10"])),
        row("peak RSS (VmHWM)", lambda s: f"{s['peak_rss_mib']:.1f} MiB", "peak_rss"),
        row("RSS after start", lambda s: f"{s['rss_mib'].get('started', {}).get('VmRSS', 0):.1f} MiB"),
        row("home on disk, running", lambda s: f"{s['home_on_disk_mib']['running']:.1f} MiB"),
        row("home on disk, stopped", lambda s: f"{s['home_on_disk_mib']['stopped']:.1f} MiB"),
        row("stored / not", lambda s: f"{s['verdicts'].get('stored', 0)} / "
            f"{sum(v for k, v in s['verdicts'].items() if k != 'stored')}"),
        row("errors", lambda s: str(s["errors"])),
        row("embedder", lambda s: s["embedder"]),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        f"{result['texts']} texts ({', '.join(f'{k} {v}' for k, v in result['texts_per_set'].items())}), "
        f"{result['queries']} questions; sequential HTTP on 127.0.0.1, warm-up {result['warmup_requests']} "
        f"stores + {result['warmup_requests']} searches each",
    ]
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(widths[j]) if j == 0 else c.rjust(widths[j]) for j, c in enumerate(r)))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    if both:
        lines.append("Python / Rust: how many times the Python figure is the Rust one (above 1: Rust is faster / smaller).")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python-levh", default=shutil.which("levh"), help="the Python levh's `levh` script (in its venv)")
    p.add_argument("--rust-levh", default=str(ROOT / "target/release/levh"))
    p.add_argument("--work", required=True, help="a scratch directory for both homes and the logs")
    p.add_argument("--limit", type=int, default=3000, help="texts to store (default 3000)")
    p.add_argument("--queries", type=int, default=0, help="at most this many questions (default: all that apply)")
    p.add_argument("--warmup", type=int, default=20, help="unmeasured stores and searches first (default 20)")
    p.add_argument("--datasets", default=",".join(DATASETS), help="sets, in order (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    only = p.add_mutually_exclusive_group()
    only.add_argument("--python-only", action="store_true")
    only.add_argument("--rust-only", action="store_true")
    args = p.parse_args()
    if not args.rust_only and not args.python_levh:
        sys.exit("--python-levh is required")
    result = run(args)
    print(json.dumps(result, indent=1) if args.json else table(result))


if __name__ == "__main__":
    main()
