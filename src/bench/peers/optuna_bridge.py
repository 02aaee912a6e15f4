#!/usr/bin/python3
"""Optuna 3.1 as an ask/tell peer for `kt bench optimizers --suite all --refresh-peer`.

kt evaluates the suite's functions itself (src/bench/suite/) and applies the same cost accounting
and incumbent rule to every optimiser; this bridge only proposes. The samplers and the Hyperband
schedule are those of ../shared/peers/optuna_hpo_peer.py (Debian's python3-optuna 3.1.0, TPE with
its 3.1 defaults, HyperbandPruner(min, max, eta 3), each trial starting at its bracket's budget as
optuna_hb_bracket computes it; that function is imported from the shared script when present).

Protocol, one JSON object a line on stdin / stdout:
  first line   {"params": [kt parameter specs], "sampler": "tpe"|"tpe_hb"|"random", "seed": n,
                "budgets": [9, 27, ...], "study_name": s, "failed_as": "fail"|"pruned"}
  {"op": "ask"}                          -> {"number": n, "params": {...}, "rungs": [b, ...]}
  {"op": "result", "loss": x | null}     -> {"continue": bool}   (null: the evaluation failed)
  {"op": "end"}                          -> exits
Run with /usr/bin/python3 (Debian's optuna is not on other interpreters' paths).
"""
import binascii
import importlib.util
import json
import math
import os
import sys

import optuna
from optuna.trial import TrialState

optuna.logging.set_verbosity(optuna.logging.WARNING)

SHARED_PEER = os.environ.get("KT_OPTUNA_PEER", "/work/shared/peers/optuna_hpo_peer.py")


def local_hb_bracket(study_name, trial_number, n_brackets, eta):
    """Optuna 3.1 HyperbandPruner._get_bracket_id, as the shared peer replicates it."""
    alloc = [math.ceil(n_brackets * (eta ** (n_brackets - 1 - i)) / (n_brackets - i)) for i in range(n_brackets)]
    n = binascii.crc32("{}_{}".format(study_name, trial_number).encode()) % sum(alloc)
    for bracket_id in range(n_brackets):
        n -= alloc[bracket_id]
        if n < 0:
            return bracket_id
    raise AssertionError


def hb_bracket():
    if os.path.exists(SHARED_PEER):
        spec = importlib.util.spec_from_file_location("optuna_hpo_peer", SHARED_PEER)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.optuna_hb_bracket
    return local_hb_bracket


def suggest(trial, params):
    out = {}
    for p in params:
        if p["kind"] == "float":
            out[p["name"]] = trial.suggest_float(p["name"], p["low"], p["high"], log=p.get("scale") == "log")
        elif p["kind"] == "int":
            out[p["name"]] = trial.suggest_int(p["name"], p["low"], p["high"], log=p.get("scale") == "log")
        elif p["kind"] == "categorical":
            out[p["name"]] = trial.suggest_categorical(p["name"], p["choices"])
        else:
            raise SystemExit("optuna bridge: unsupported parameter kind " + p["kind"])
    return out


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    init = json.loads(sys.stdin.readline())
    sampler_name = init["sampler"]
    seed = init["seed"]
    budgets = init["budgets"]
    eta = 3
    use_hb = sampler_name.endswith("_hb")
    if sampler_name.startswith("tpe"):
        sampler = optuna.samplers.TPESampler(seed=seed)
    else:
        sampler = optuna.samplers.RandomSampler(seed=seed)
    if use_hb:
        pruner = optuna.pruners.HyperbandPruner(min_resource=budgets[0], max_resource=budgets[-1], reduction_factor=eta)
        n_brackets = int(math.floor(math.log(budgets[-1] / budgets[0], eta) + 1e-9)) + 1
        bracket_of = hb_bracket()
    else:
        pruner = optuna.pruners.NopPruner()
    study = optuna.create_study(study_name=init["study_name"], sampler=sampler, pruner=pruner, direction="minimize")
    failed_state = TrialState.PRUNED if init.get("failed_as") == "pruned" else TrialState.FAIL
    trial, rungs, at = None, [], 0
    for line in sys.stdin:
        msg = json.loads(line)
        op = msg["op"]
        if op == "ask":
            trial = study.ask()
            params = suggest(trial, init["params"])
            rungs = budgets[bracket_of(init["study_name"], trial.number, n_brackets, eta):] if use_hb else [budgets[-1]]
            at = 0
            reply({"number": trial.number, "params": params, "rungs": rungs})
        elif op == "result":
            loss = msg["loss"]
            budget = rungs[at]
            if loss is None:
                study.tell(trial, state=failed_state)
                reply({"continue": False})
            elif budget == budgets[-1]:
                study.tell(trial, loss)
                reply({"continue": False})
            else:
                trial.report(loss, step=budget)
                if trial.should_prune():
                    study.tell(trial, state=TrialState.PRUNED)
                    reply({"continue": False})
                else:
                    at += 1
                    reply({"continue": True})
        elif op == "end":
            return
        else:
            raise SystemExit("optuna bridge: unknown op " + op)


if __name__ == "__main__":
    main()
