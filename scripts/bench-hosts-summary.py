#!/usr/bin/env python3
"""Summary of make bench-hosts (scripts/bench-hosts.sh): out-dir cluster:state ...

Reads out/<cluster>-<state>-<query>-r<round>/*/result.json. Per query, threads, cluster and
state: routing off and on as the median over the rounds of each window's rate (operations /
window), their ratio, and whether the rounds' spreads (lowest to highest) are apart. Then,
for a cluster measured with budgets on and lifted, what the budgets cost: it/s and the
nodes' CPU per operation in both states."""
import glob, json, os, re, statistics, sys
from datetime import datetime

out, columns = sys.argv[1], [tuple(c.split(":")) for c in sys.argv[2:]]
queries = os.environ.get("QUERIES", "point count small").split()
WHAT = {"point": "point select on a table larger than a node's memory (IO-bound on a modelled host)",
        "count": "count(*) on a table larger than a node's memory (IO-bound on a modelled host)",
        "small": "count(*) on a table that fits in a node's memory (CPU-bound)"}


def when(s):
    s = s.rstrip("Z")
    whole, _, frac = s.partition(".")
    return datetime.fromisoformat(whole).timestamp() + (float("0." + frac) if frac else 0)


def step_figures(st):
    """(it/s over the window, CPU seconds of the nodes' groups per operation or None)."""
    secs = when(st["window"]["end"]) - when(st["window"]["start"])
    n = sum(o.get("count", 0) for o in st.get("ops", {}).values())
    if secs <= 0 or n == 0:
        return None, None
    c = st.get("counters") or {}
    cores = [v for k, v in c.items() if re.fullmatch(r"host\.[^.]+\.cpu_cores", k)]
    cpu = sum(cores) * secs / n if cores else None
    return n / secs, cpu


# runs[(cluster, state, query)][(threads, variant)] = [(rate, cpu per op), ...] over rounds
runs, notes = {}, {}
for c, s in columns:
    for q in queries:
        key = (c, s, q)
        runs[key] = {}
        for d in sorted(glob.glob(os.path.join(out, f"{c}-{s}-{q}-r*"))):
            if not os.path.isdir(d):
                continue
            files = glob.glob(os.path.join(d, "*", "result.json"))
            if not files:
                notes.setdefault(key, []).append(f"no result in {d} (see {d}.txt)")
                continue
            r = json.load(open(files[0]))
            for st in r["steps"]:
                runs[key].setdefault((st["vus"], st.get("variant", "")), []).append(step_figures(st))
            a = r.get("analysis") or {}
            msgs = a.get("differences", []) + [x["code"] + ": " + x["message"] for x in a.get("comparisons", [])]
            msgs += [v["code"] + ": " + v["message"] for v in a.get("verdicts", []) if v.get("code")]
            for va in a.get("variants", []):
                sat = (va.get("analysis") or {}).get("saturated", {}).get("sentence")
                if sat:
                    msgs.append(f"[{va['variant']}] saturated: {sat}")
            notes[key] = [f"{os.path.basename(d)[-2:]}: {m}" for m in msgs]  # the last round's


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if len(xs) >= 3 else None


def f(x):
    return "–" if x is None else (f"{x:.0f}" if x >= 10 else f"{x:.2f}")


print("read-only routing, off vs on: it/s, the median over the rounds of each window's rate; 'apart' when")
print("the rounds' spreads (lowest to highest) of off and on do not overlap (3 rounds or more)")
print(open(os.path.join(out, "load.txt")).read().rstrip())
for q in queries:
    print(f"\n{WHAT[q]}")
    print(f"{'threads':>7}" + "".join(f"  {c + ' ' + s + ' off':>20} {'on':>7} {'on/off':>6} {'':>5}" for c, s in columns))
    threads = sorted({t for c, s in columns for (t, _) in runs[(c, s, q)]})
    for t in threads:
        line = f"{t:>7}"
        for c, s in columns:
            rs = runs[(c, s, q)]
            off = [x[0] for x in rs.get((t, "routing=off"), [])]
            on = [x[0] for x in rs.get((t, "routing=on"), [])]
            mo, mn = med(off), med(on)
            ratio = f"{mn / mo:.2f}" if mo and mn else "–"
            so, sn = spread(off), spread(on)
            apart = "–" if not (so and sn) else ("apart" if sn[0] > so[1] or so[0] > sn[1] else "overl")
            line += f"  {f(mo):>20} {f(mn):>7} {ratio:>6} {apart:>5}"
        print(line)
    for c, s in columns:
        for n in notes.get((c, s, q), []):
            print(f"  {c} {s}: {n}")

for c in sorted({c for c, s in columns}):
    if (c, "on") not in columns or (c, "lifted") not in columns:
        continue
    print(f"\nwhat the budgets cost on {c}: budgets on vs lifted (the same cluster, data and counting; medians")
    print("over the rounds): it/s, and the nodes' CPU per operation (their groups' CPU time over the window /")
    print("operations; more CPU per operation with budgets on is what enforcing them costs)")
    print(f"{'query':>6} {'threads':>7} {'routing':>7}  {'it/s on':>8} {'lifted':>8} {'on/lifted':>9}  {'CPU ms/op on':>12} {'lifted':>8} {'on/lifted':>9}")
    for q in queries:
        on_runs, lifted_runs = runs[(c, "on", q)], runs[(c, "lifted", q)]
        for (t, v) in sorted(set(on_runs) & set(lifted_runs)):
            a, b = on_runs[(t, v)], lifted_runs[(t, v)]
            ra, rb = med([x[0] for x in a]), med([x[0] for x in b])
            ca, cb = med([x[1] for x in a]), med([x[1] for x in b])
            r1 = f"{ra / rb:.2f}" if ra and rb else "–"
            r2 = f"{ca / cb:.2f}" if ca and cb else "–"
            ms = lambda x: "–" if x is None else f"{1000 * x:.3f}"
            print(f"{q:>6} {t:>7} {v.removeprefix('routing='):>7}  {f(ra):>8} {f(rb):>8} {r1:>9}  {ms(ca):>12} {ms(cb):>8} {r2:>9}")
