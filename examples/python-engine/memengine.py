"""A small memory engine: BM25 over conversation turns, fused with a recency score.

Standard library only. The engine stores turns per conversation and ranks them for a query:

    score(turn) = w_bm25 * bm25(turn) / max bm25 + w_recency * recency(turn)

over the `candidates` turns with the highest BM25 score (BM25 by Robertson & Zaragoza 2009, k1
and b as parameters). recency is exp(-ln 2 * age / half_life) ("exponential") or 1 inside a
window and 0 outside it ("step"), age measured from the conversation's newest turn. The weights
w_bm25 and w_recency sum to 1.

Its parameters, their defaults and environment variables are listed once in PARAMETERS; kt's
engine file (engine.json) describes the same table to kt.
"""
import math
import re

DAY_S = 86400.0

# name -> (environment variable, type, default)
PARAMETERS = {
    "bm25.k1": ("MEMENGINE_BM25_K1", float, 1.2),
    "bm25.b": ("MEMENGINE_BM25_B", float, 0.75),
    "candidates": ("MEMENGINE_CANDIDATES", int, 10),
    "recency.kind": ("MEMENGINE_RECENCY_KIND", str, "exponential"),
    "recency.half_life_days": ("MEMENGINE_RECENCY_HALF_LIFE_DAYS", float, 7.0),
    "recency.window_days": ("MEMENGINE_RECENCY_WINDOW_DAYS", int, 14),
    "w.bm25": ("MEMENGINE_W_BM25", float, 0.7),
    "w.recency": ("MEMENGINE_W_RECENCY", float, 0.3),
}

STOPWORDS = set(
    "a an the is are was were be been of to in on at for and or but i you he she it we they my your "
    "his her its our their what which who whom where when how does do did this that these those "
    "now s with as by from so".split()
)


def tokens(text):
    words = re.findall(r"[a-z0-9]+", text.lower())
    return [w for w in words if w not in STOPWORDS]


def config_from_env(env):
    """The configuration from environment variables; unset ones keep their defaults."""
    config = {}
    for name, (var, kind, default) in PARAMETERS.items():
        raw = env.get(var)
        config[name] = default if raw is None or raw == "" else kind(raw)
    return config


def full_config(config):
    """Defaults completed by the given values (a partial config, e.g. from a retrieval service call)."""
    out = {name: default for name, (_, _, default) in PARAMETERS.items()}
    out.update(config or {})
    return out


class Index:
    """BM25 statistics of one conversation's turns."""

    def __init__(self, turns):
        self.turns = list(turns)
        # the speaker's name is part of what a turn says about them
        self.docs = [tokens(f'{t.get("speaker", "")} {t["text"]}') for t in self.turns]
        self.lengths = [len(d) for d in self.docs]
        self.avg_len = sum(self.lengths) / max(1, len(self.lengths))
        self.df = {}
        self.tf = []
        for doc in self.docs:
            counts = {}
            for w in doc:
                counts[w] = counts.get(w, 0) + 1
            self.tf.append(counts)
            for w in counts:
                self.df[w] = self.df.get(w, 0) + 1
        self.newest = max((t["time"] for t in self.turns), default=0)

    def bm25(self, query_terms, k1, b, work=None):
        n = len(self.docs)
        scores = [0.0] * n
        for w in set(query_terms):
            df = self.df.get(w)
            if not df:
                continue
            if work is not None:
                work["scanned"] += n
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for i, counts in enumerate(self.tf):
                f = counts.get(w)
                if f:
                    norm = k1 * (1 - b + b * self.lengths[i] / self.avg_len)
                    scores[i] += idf * f * (k1 + 1) / (f + norm)
        return scores


def recency(age_s, config):
    if config["recency.kind"] == "step":
        return 1.0 if age_s <= config["recency.window_days"] * DAY_S else 0.0
    return math.exp(-math.log(2) * age_s / (config["recency.half_life_days"] * DAY_S))


class MemoryEngine:
    def __init__(self):
        self.indexes = {}

    def reset(self):
        self.indexes = {}

    def ingest(self, conversation_id, turns):
        self.indexes[conversation_id] = Index(turns)

    def search(self, conversation_id, query, k, config, work=None):
        """The ids of the k best turns. `work`, a dict, if given, receives the counted work of the
        search (turns, term x turn postings scanned, candidates fused), which service.py's cost model reads."""
        config = full_config(config)
        index = self.indexes[conversation_id]
        if work is not None:
            work.update(turns=len(index.docs), scanned=0, fused=0)
        bm = index.bm25(tokens(query), config["bm25.k1"], config["bm25.b"], work)
        ranked = sorted(range(len(bm)), key=lambda i: (-bm[i], i))
        pool = [i for i in ranked[: int(config["candidates"])] if bm[i] > 0] or ranked[: int(config["candidates"])]
        top = max((bm[i] for i in pool), default=0.0) or 1.0
        fused = []
        for i in pool:
            age = index.newest - index.turns[i]["time"]
            score = config["w.bm25"] * bm[i] / top + config["w.recency"] * recency(age, config)
            fused.append((-score, i))
        fused.sort()
        if work is not None:
            work["fused"] = len(pool)
        return [index.turns[i]["id"] for _, i in fused[:k]]
