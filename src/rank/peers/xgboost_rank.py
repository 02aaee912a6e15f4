#!/usr/bin/python3
"""XGBoost peer for `kt bench rerank --peer xgboost` and `kt rerank train --peer xgboost`.

Trains XGBoost's rank:ndcg on a LETOR/SVMlight file and prints one JSON line on stdout: the
settings, the training time (seconds, training only: the matrix is built before the clock starts)
and the score of every document of the test file in file order, so that kt computes NDCG and the
paired interval with its own code on exactly the same documents. Needs Debian's python3-xgboost
(1.7) and python3-numpy; run with /usr/bin/python3.

Usage: xgboost_rank.py TRAIN TEST --depth 6 --eta 0.1 --rounds 100 --min-child-weight 1 --l2 1 --threads 2

--threads sets XGBoost's nthread (0: leave it unset, XGBoost's default of every core). The thread
count changes the scores (XGBoost's sums depend on the split of rows among threads), each count
deterministically; kt compares quality with 2 threads, this machine's default, and times 1 thread.
"""
import argparse
import json
import sys
import time

import numpy as np
import xgboost as xgb


def read_letor(path):
    labels, qids, rows, width = [], [], [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            labels.append(float(parts[0]))
            qids.append(parts[1].split(":", 1)[1])
            feats = {}
            for p in parts[2:]:
                k, v = p.split(":", 1)
                feats[int(k)] = float(v)
                width = max(width, int(k))
            rows.append(feats)
    x = np.zeros((len(rows), width), dtype=np.float32)
    for i, feats in enumerate(rows):
        for k, v in feats.items():
            x[i, k - 1] = v
    groups, last = [], None
    for q in qids:
        if q != last:
            groups.append(0)
            last = q
        groups[-1] += 1
    return x, np.array(labels), groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--eta", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--min-child-weight", type=float, default=1.0)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1)
    # XGBoost 1.7's default on data this small is the exact greedy method ("auto" picks it).
    ap.add_argument("--tree-method", default="exact")
    args = ap.parse_args()
    xtr, ytr, gtr = read_letor(args.train)
    xte, _, _ = read_letor(args.test)
    width = max(xtr.shape[1], xte.shape[1])
    xtr = np.pad(xtr, ((0, 0), (0, width - xtr.shape[1])))
    xte = np.pad(xte, ((0, 0), (0, width - xte.shape[1])))
    dtrain = xgb.DMatrix(xtr, label=ytr)
    dtrain.set_group(gtr)
    dtest = xgb.DMatrix(xte)
    params = {
        "objective": "rank:ndcg",
        "max_depth": args.depth,
        "eta": args.eta,
        "min_child_weight": args.min_child_weight,
        "lambda": args.l2,
        "tree_method": args.tree_method,
        "seed": 0,
    }
    if args.threads > 0:
        params["nthread"] = args.threads
    # CPU time of this process (all its threads) as well as wall time: with one thread the CPU
    # figure is what a comparison on a shared machine can trust.
    t0, c0 = time.perf_counter(), time.process_time()
    booster = xgb.train(params, dtrain, num_boost_round=args.rounds)
    train_s, train_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    scores = booster.predict(dtest).tolist()
    print(json.dumps({"peer": f"xgboost-{xgb.__version__}", "params": params, "rounds": args.rounds, "train_s": train_s, "train_cpu_s": train_cpu_s, "scores": scores}))


if __name__ == "__main__":
    sys.exit(main())
