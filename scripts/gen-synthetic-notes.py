#!/usr/bin/env python3
"""100,000 synthetic notes for scale measurements (README: export and consolidation at 100k):
4,000 threads of 5 notes in 10 projects, each thread sharing three made-up words and its
number, and 80,000 loners; shuffled. Writes /tmp/m100k-shuf.jsonl (`levh import` reads it)."""
import json, random
syll = ["ka","lo","mi","ren","sa","tor","vi","nel","pa","qu","dra","fen","gor","hil","jas","mor","pel","rin","sol","tev","ul","wen","yar","zed"]
def word(r):
    return "".join(r.choice(syll) for _ in range(r.randint(2,4)))
common = ["deploy","service","meeting","budget","review","test","release","customer","team","plan","issue","fix","config","database","report","call","update","design","migration","schedule"]
verbs = ["moved","fixed","discussed","postponed","approved","broke","measured","reviewed","shipped","planned"]
out = open('/tmp/m100k.jsonl','w')
n = 0
threads = 4000
r = random.Random(1)
# 4,000 threads of 5 notes = 20,000; 80,000 singletons
for t in range(threads):
    proj = f"project-{t % 10}"
    key = [word(r) for _ in range(3)]
    for k in range(5):
        c = f"{r.choice(common).capitalize()} {key[0]} {key[1]} {r.choice(verbs)} {r.choice(common)} {key[2]} note {k} of thread {t}: {word(r)} {word(r)} {r.randint(1,999)}."
        out.write(json.dumps({"content": c, "project": proj}) + "\n"); n += 1
for i in range(80000):
    proj = f"project-{i % 10}"
    c = f"{r.choice(common).capitalize()} {word(r)} {r.choice(verbs)} {word(r)} {r.choice(common)} {word(r)} {word(r)} item {i} {r.randint(1,99999)}."
    out.write(json.dumps({"content": c, "project": proj}) + "\n"); n += 1
out.close()
lines = open('/tmp/m100k.jsonl').readlines()
random.Random(3).shuffle(lines)
open('/tmp/m100k-shuf.jsonl', 'w').writelines(lines)
print(n)
