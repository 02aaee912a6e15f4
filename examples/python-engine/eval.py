"""kt's command protocol for memengine: one evaluation per run.

kt sets every parameter in its environment variable (see engine.json), plus KT_TIER (smoke, unit
or full), KT_BUDGET, KT_TRIAL_ID and KT_SEED. This script ingests the committed conversations,
asks the tier's questions, and prints the metrics as the last line of stdout (a JSON object):
recall@1/3/10 (share of questions whose evidence is in the top k), mrr (mean reciprocal rank), and p50/p99 query latency
in milliseconds (measured wall time). Log lines go to stderr.

Run it by hand too:  MEMENGINE_W_BM25=0.5 MEMENGINE_W_RECENCY=0.5 KT_TIER=unit python3 eval.py
"""
import json
import os
import sys
import time

from memengine import MemoryEngine, config_from_env

HERE = os.path.dirname(os.path.abspath(__file__))
K = 10
RECALL_AT = (1, 3, 10)
# the tiers: smoke = questions 1 and 3 of two conversations, unit = questions 1-3 of all, full = all
TIERS = {
    "smoke": lambda conv_index, q_index: conv_index < 2 and q_index in (0, 2),
    "unit": lambda conv_index, q_index: q_index < 3,
    "full": lambda conv_index, q_index: True,
}
TIMED_REPEATS = 3


def tier_name():
    tier = os.environ.get("KT_TIER", "")
    if tier in TIERS:
        return tier
    budget = float(os.environ.get("KT_BUDGET", "9") or 9)
    return "smoke" if budget <= 1 else "unit" if budget <= 3 else "full"


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))]


def main():
    config = config_from_env(os.environ)
    tier = tier_name()
    with open(os.path.join(HERE, "conversations.json")) as f:
        data = json.load(f)
    engine = MemoryEngine()
    hits, rr, times, asked = {k: 0 for k in RECALL_AT}, 0.0, [], 0
    for ci, conv in enumerate(data["conversations"]):
        engine.ingest(conv["id"], conv["turns"])
        for qi, q in enumerate(conv["questions"]):
            if not TIERS[tier](ci, qi):
                continue
            asked += 1
            best = float("inf")
            for _ in range(TIMED_REPEATS):
                t0 = time.perf_counter()
                ids = engine.search(conv["id"], q["text"], K, config)
                best = min(best, (time.perf_counter() - t0) * 1000)
            times.append(best)
            ranks = [ids.index(e) + 1 for e in q["evidence"] if e in ids]
            for k in RECALL_AT:
                hits[k] += 1 if ranks and min(ranks) <= k else 0
            rr += 1 / min(ranks) if ranks else 0
    print(f"tier {tier}: {asked} questions, config {json.dumps(config, sort_keys=True)}", file=sys.stderr)
    metrics = {f"recall@{k}": hits[k] / asked for k in RECALL_AT}
    metrics.update({"mrr": rr / asked, "p50_ms": percentile(times, 0.5), "p99_ms": percentile(times, 0.99), "questions": asked})
    print(json.dumps(metrics))


if __name__ == "__main__":
    main()
