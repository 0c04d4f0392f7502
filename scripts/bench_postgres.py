#!/usr/bin/env python3
"""levh on PostgreSQL beside levh on SQLite, in one run (scripts/bench-postgres.sh runs it).

For each backend, a fresh home (and, for PostgreSQL, a fresh database on a throwaway
server): the same N memories over 10 projects imported with `levh import` (the bulk path,
through the gate), then `levh serve` on 127.0.0.1 and one keep-alive client asking the same
searches — scoped to one project (as agents call it) and unscoped — one request at a time.
Then `levh migrate` moves the SQLite home into a third database. Then the ranking:
`levh benchmark` on every shipped set, on throwaway SQLite files and on throwaway
databases of the same server (`--postgres`), beside BM25. Prints the tables.
Nothing is tuned here: both backends get the same texts, queries, embedder (hash) and
settings.
"""

import http.client
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

LEVH = os.environ["LEVH_BIN"]
PG_URL = os.environ["BENCH_PG_URL"]  # postgres://user@127.0.0.1:port/  (database appended)
N = int(os.environ.get("BENCH_MEMORIES", "100000"))
PROJECTS = 10
QUERIES = int(os.environ.get("BENCH_QUERIES", "400"))
# `import` (default): PostgreSQL's memories go through the gate like SQLite's; `migrate`:
# the SQLite home is moved in (minutes instead of an hour at 100k) and only the searches
# are compared.
FILL = os.environ.get("BENCH_POSTGRES_FILL", "import")
WORDS = ("deploy database service cluster invoice meeting review release budget customer "
         "schema latency queue token backup incident roadmap design contract vendor metric "
         "alert sprint ticket").split()


def sentence(rng):
    return " ".join(
        f"{WORDS[n % 24]}{n // 24}" for n in (rng.randrange(2400) for _ in range(rng.randrange(12, 25)))
    )


def corpus(path):
    rng = random.Random(7)
    with open(path, "w") as out:
        for n in range(N):
            out.write(json.dumps({"content": sentence(rng), "project": f"project-{n % PROJECTS}"}) + "\n")


def env(home, database=None):
    # The model's directory stays (a ranking with the local model needs it); nothing
    # else of the caller's levh settings does.
    e = {k: v for k, v in os.environ.items() if not k.startswith("LEVH_") or k == "LEVH_MODEL_DIR"}
    e["LEVH_HOME"] = home
    e["LEVH_EMBEDDER"] = "hash"
    if database:
        e["LEVH_DATABASE_URL"] = PG_URL + database
    return e


def timed(command, e):
    started = time.perf_counter()
    done = subprocess.run(command, env=e, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{command} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started, done.stdout


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def searches(address, scoped):
    rng = random.Random(11)
    host, port = address.split(":")
    conn = http.client.HTTPConnection(host, int(port))
    latencies = []
    for n in range(QUERIES + 50):
        body = {"query": " ".join(sentence(rng).split()[:3]), "limit": 10}
        if scoped:
            body["project"] = f"project-{n % PROJECTS}"
        data = json.dumps(body)
        started = time.perf_counter()
        conn.request("POST", "/api/search", data, {"content-type": "application/json"})
        response = conn.getresponse()
        response.read()
        elapsed = time.perf_counter() - started
        if response.status != 200:
            sys.exit(f"search answered {response.status}")
        if n >= 50:  # the first 50 warm the caches
            latencies.append(elapsed * 1000)
    return percentile(latencies, 0.5), percentile(latencies, 0.99)


def serve(e):
    server = subprocess.Popen([LEVH, "serve", "--port", "0"], env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    match = re.search(r"http://(\S+)", line)
    if not match:
        server.kill()
        sys.exit(f"no address in {line!r}")
    return server, match.group(1).rstrip("/")


DATASETS = ("recall", "conversational", "chat", "worknotes")


def ranking(embedder):
    """`levh benchmark` of every shipped set on SQLite and on PostgreSQL: (set, backend) ->
    (levh's hit@1, hit@5, MRR; BM25's where the set has a BM25 baseline)."""
    scores = {}
    with tempfile.TemporaryDirectory() as home:
        for dataset in DATASETS:
            for backend, extra in (("SQLite", []), ("PostgreSQL", ["--postgres", PG_URL + "postgres"])):
                e = env(home)
                e["LEVH_EMBEDDER"] = embedder
                _, out = timed([LEVH, "benchmark", "--dataset", dataset, "--json", *extra], e)
                report = json.loads(out)["report"]
                pick = lambda s: (s["hit_at_1"], s["hit_at_5"], s["mrr"])
                if "scores" in report:
                    levh = next(s for s in report["scores"] if s["slice"] == "all")
                    bm25 = None
                else:
                    levh = next(s for s in report["levh"] if s["kind"] == "all")
                    bm25 = pick(next(s for s in report["bm25"] if s["kind"] == "all"))
                scores[dataset, backend] = (pick(levh), bm25)
                print(f"ranking: {dataset} on {backend} done", file=sys.stderr)
    return scores


def scale():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "corpus.jsonl")
        corpus(data)
        homes = {}
        for backend, database in (("SQLite", None), ("PostgreSQL", "bench")):
            home = os.path.join(tmp, backend)
            os.makedirs(home)
            homes[backend] = home
            e = env(home, database)
            if database and FILL == "migrate":
                # The SQLite home moved in instead of imported through the gate: the same
                # memories in minutes, for the searches (no ingest rate for PostgreSQL).
                seconds, _ = timed([LEVH, "migrate", "--from", "sqlite", homes["SQLite"],
                                    "--to", PG_URL + database, "--json"], env(homes["SQLite"]))
            else:
                seconds, _ = timed([LEVH, "import", data, "--json"], e)
            server, address = serve(e)
            try:
                scoped = searches(address, True)
                unscoped = searches(address, False)
            finally:
                server.kill()
                server.wait()
            filled = "moved in" if database and FILL == "migrate" else "imported"
            rows.append((backend, N / seconds, seconds, scoped, unscoped, filled))
            print(f"{backend}: {filled} {N} in {seconds:.1f} s", file=sys.stderr)
        migrate_seconds, _ = timed([LEVH, "migrate", "--from", "sqlite", homes["SQLite"], "--to",
                            PG_URL + "migrated", "--json"], env(homes["SQLite"]))
    print(f"\n{N} memories, {PROJECTS} projects, hash embedder, {QUERIES} searches each "
          "(3 words, limit 10), one keep-alive client, after 50 warm-up searches\n")
    print("| backend | filled: memories/s (time) | search scoped p50 / p99 (ms) | unscoped p50 / p99 (ms) |")
    print("|---|---|---|---|")
    for backend, rate, seconds, scoped, unscoped, filled in rows:
        print(f"| {backend} | {filled}: {rate:,.0f} ({seconds:.0f} s) | {scoped[0]:.2f} / {scoped[1]:.2f} "
              f"| {unscoped[0]:.2f} / {unscoped[1]:.2f} |")
    print(f"\n`levh migrate` of the SQLite home into a fresh database: {migrate_seconds:.0f} s "
          f"({N / migrate_seconds:,.0f} memories/s)")


def main():
    if N > 0:  # BENCH_MEMORIES=0: the ranking only
        scale()
    for embedder in os.environ.get("BENCH_RANKING_EMBEDDERS", "hash").split(","):
        if not embedder:
            continue
        scores = ranking(embedder)
        print(f"\n`levh benchmark`, {embedder} embedder: hit@1 / hit@5 / MRR\n")
        print("| set | SQLite | PostgreSQL | BM25 (same turns) |")
        print("|---|---|---|---|")
        fmt = lambda t: " / ".join(f"{x:.3f}" for x in t) if t else "—"
        for dataset in DATASETS:
            (sqlite, bm25), (postgres, _) = scores[dataset, "SQLite"], scores[dataset, "PostgreSQL"]
            print(f"| {dataset} | {fmt(sqlite)} | {fmt(postgres)} | {fmt(bm25)} |")


if __name__ == "__main__":
    main()
