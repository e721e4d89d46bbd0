"""Sum the probe-16 logs: writes, region writes, failures, audits, injections fired."""
import glob
import re

rows = []
for f in sorted(glob.glob("*.log")):
    if f.startswith("mut-") or f.startswith("repro") or "trace" in f:
        continue
    text = open(f, encoding="utf-8").read()
    m = re.search(r"== \S+: (\d+) failure\(s\); (\d+) of (\d+) writes took the region path; "
                  r"state audited (\d+) times \((\d+) term", text)
    if not m:
        rows.append((f, "no summary line"))
        continue
    fails, region, writes, audits, terms = map(int, m.groups())
    fired = len(re.findall(r"ERR RuntimeError: probe: injected", text))
    store = len(re.findall(r"ERR OSError: probe: injected store failure", text))
    rows.append((f, writes, region, fails, audits, terms, fired, store))
tot = [0] * 7
for r in rows:
    print(*r, sep="\t")
    if len(r) == 8:
        tot = [a + b for a, b in zip(tot, r[1:])]
print("TOTAL writes, region, failures, audits, term lists, injected(commit/pre-commit) fired, store failures:", tot)

import collections
fired, tried = collections.Counter(), collections.Counter()
for f in glob.glob("s4-*.log"):
    for line in open(f, encoding="utf-8"):
        m = re.search(r"INJECT\[([^\]#]+)(#\d)?\]", line)
        if m:
            tried[m.group(1)] += 1
            if "ERR RuntimeError: probe: injected" in line:
                fired[m.group(1)] += 1
print("s4 injections (fired, tried):", {k: (fired[k], tried[k]) for k in sorted(tried)})

import ast
total = collections.Counter()
for f in glob.glob("s[1-6]*.log"):
    if "trace" in f:
        continue
    for line in open(f, encoding="utf-8"):
        if line.startswith("== counters: "):
            total.update(ast.literal_eval(line[len("== counters: "):]))
print("counters summed over s1-s6:", dict(sorted(total.items())))
