"""Fits service.py's cost model: the wall time of one memengine search against its counted work.

    python3 calibrate_cost.py

The committed conversations are repeated into conversations of 22 to 704 turns and every question
is searched with `candidates` 1, 4, 10 and 32; each search is timed as the fastest of 7 runs (the
least disturbed by other processes). A least-squares fit of

    ms = base + per_turn * turns + per_scan * scanned + per_fused * fused

gives the constants service.py uses (COST_MODEL_MS); this prints them with the fit's R^2.
"""
import json
import os
import time

from memengine import MemoryEngine

HERE = os.path.dirname(os.path.abspath(__file__))
REPEATS = 7
SIZES = (1, 4, 8, 16, 32)
CANDIDATES = (1, 4, 10, 32)


def solve(a, b):
    """Least squares by the normal equations (4 unknowns; Gaussian elimination with pivoting)."""
    n = len(a[0])
    m = [[sum(r[i] * r[j] for r in a) for j in range(n)] + [sum(r[i] * y for r, y in zip(a, b))] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def main():
    with open(os.path.join(HERE, "conversations.json")) as f:
        data = json.load(f)
    rows, times = [], []
    engine = MemoryEngine()
    for size in SIZES:
        for conv in data["conversations"]:
            turns = [dict(t, id=f'{t["id"]}-{r}') for r in range(size) for t in conv["turns"]]
            engine.ingest(conv["id"], turns)
            for q in conv["questions"]:
                for cand in CANDIDATES:
                    config = {"candidates": cand}
                    best = float("inf")
                    for _ in range(REPEATS):
                        work = {}
                        t0 = time.perf_counter()
                        engine.search(conv["id"], q["text"], 10, config, work)
                        best = min(best, (time.perf_counter() - t0) * 1000)
                    rows.append([1.0, work["turns"], work["scanned"], work["fused"]])
                    times.append(best)
    coef = solve(rows, times)
    fit = [sum(c * x for c, x in zip(coef, r)) for r in rows]
    mean = sum(times) / len(times)
    r2 = 1 - sum((y - f) ** 2 for y, f in zip(times, fit)) / sum((y - mean) ** 2 for y in times)
    names = ("base", "per_turn", "per_scan", "per_fused")
    print(json.dumps({"searches": len(times), "r2": round(r2, 4), **{n: float(f"{c:.4g}") for n, c in zip(names, coef)}}))


if __name__ == "__main__":
    main()
