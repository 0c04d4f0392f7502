#!/usr/bin/env python3
"""Checks the conversational benchmark's conversation files (fixtures/benchmark/conversational/*.json).

    scripts/check-conversational.py [FILE ...]     # default: every conversation file

Exit 1 with one line per problem. It checks the shape, that every label exists, the counts
per kind, and that a `paraphrased` question shares no content word (nor a word's first five
letters) with any of its evidence turns. It does not judge whether a question is answerable:
that is the writer's job.
"""
import datetime as dt
import glob
import json
import os
import re
import sys

KINDS = {"single-hop", "multi-hop", "temporal", "paraphrased"}
STOP = set("""a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's
hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me
more most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own
same shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
themselves then there there's these they they'd they'll they're they've this those through to too under until
up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself
yourselves s t d ll m re ve get got also just really yeah oh well like one ever""".split())


def words(text):
    return [w for w in re.findall(r"[\w']+", text.lower()) if w not in STOP]


def stem(word):
    return word[:5]


def check(path, problems):
    name = os.path.basename(path)
    try:
        data = json.load(open(path, encoding="utf-8"))
    except Exception as e:  # noqa: BLE001
        problems.append(f"{name}: not JSON: {e}")
        return None
    for key in ("id", "speakers", "sessions", "questions"):
        if key not in data:
            problems.append(f"{name}: missing `{key}`")
            return None
    speakers = data["speakers"]
    if len(speakers) != 2 or len(set(speakers)) != 2:
        problems.append(f"{name}: `speakers` must name two different people")
    turns = {}
    last = None
    for si, session in enumerate(data["sessions"]):
        where = f"{name}: sessions[{si}]"
        try:
            date = dt.datetime.fromisoformat(session["date"].replace("Z", "+00:00"))
            if date.tzinfo is None:
                problems.append(f"{where}: date {session['date']!r} needs a UTC offset (e.g. Z)")
        except Exception:  # noqa: BLE001
            problems.append(f"{where}: date {session.get('date')!r} is not an RFC 3339 time")
            continue
        if last is not None and date <= last:
            problems.append(f"{where}: date {session['date']} is not after the session before")
        last = date
        if not session.get("turns"):
            problems.append(f"{where}: no turns")
        for ti, turn in enumerate(session.get("turns", [])):
            tw = f"{where}.turns[{ti}]"
            tid = turn.get("id")
            if not isinstance(tid, str) or not re.fullmatch(r"s\d+t\d+", tid):
                problems.append(f"{tw}: id {tid!r} must look like s3t12")
                continue
            if tid in turns:
                problems.append(f"{tw}: id {tid} is used twice")
            if turn.get("speaker") not in speakers:
                problems.append(f"{tw}: speaker {turn.get('speaker')!r} is not one of {speakers}")
            text = turn.get("text", "")
            if not isinstance(text, str) or not text.strip():
                problems.append(f"{tw}: empty text")
            turns[tid] = text
    counts = {k: 0 for k in KINDS}
    qids = set()
    for qi, q in enumerate(data["questions"]):
        qw = f"{name}: questions[{qi}]"
        if q.get("id") in qids:
            problems.append(f"{qw}: id {q.get('id')!r} is used twice")
        qids.add(q.get("id"))
        kind = q.get("kind")
        if kind not in KINDS:
            problems.append(f"{qw}: kind {kind!r} is not one of {sorted(KINDS)}")
            continue
        counts[kind] += 1
        evidence = q.get("evidence", [])
        if not evidence:
            problems.append(f"{qw}: no evidence")
        missing = [e for e in evidence if e not in turns]
        if missing:
            problems.append(f"{qw}: evidence {missing} names no turn")
            continue
        if kind == "multi-hop" and len(set(evidence)) < 2:
            problems.append(f"{qw}: a multi-hop question needs two or more evidence turns")
        if kind == "paraphrased":
            qwords = set(words(q["question"]))
            for e in evidence:
                ewords = set(words(turns[e]))
                shared = qwords & ewords
                stems = {stem(w) for w in qwords if len(w) >= 5} & {stem(w) for w in ewords if len(w) >= 5}
                if shared or stems:
                    problems.append(
                        f"{qw}: paraphrased question {q['id']} shares {sorted(shared | stems)} with {e}")
    return len(turns), counts


def main():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "benchmark", "conversational")
    paths = sys.argv[1:] or sorted(glob.glob(os.path.join(here, "*.json")))
    paths = [p for p in paths if os.path.basename(p) != "dataset.json"]
    problems = []
    total_turns = 0
    total = {k: 0 for k in KINDS}
    for path in paths:
        result = check(path, problems)
        if result is None:
            continue
        n, counts = result
        total_turns += n
        for k, v in counts.items():
            total[k] += v
        print(f"{os.path.basename(path)}: {n} turns, " + ", ".join(f"{k} {counts[k]}" for k in sorted(KINDS)))
    print(f"all: {len(paths)} conversations, {total_turns} turns, {sum(total.values())} questions")
    for p in problems:
        print("problem:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
