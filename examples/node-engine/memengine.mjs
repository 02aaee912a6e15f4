// A small memory engine in plain JavaScript (no dependencies): BM25 over conversation turns fused
// with a recency score, the same engine as examples/python-engine/memengine.py.
//
//   score(turn) = w_bm25 * bm25(turn) / max bm25 + w_recency * recency(turn)
//
// over the `candidates` turns with the best BM25 score; recency is exp(-ln 2 * age / half_life),
// age measured from the conversation's newest turn.

const DAY_S = 86400

/** name -> [environment variable, parse, default] */
export const PARAMETERS = {
  'bm25.k1': ['NODEMEM_BM25_K1', Number, 1.2],
  'bm25.b': ['NODEMEM_BM25_B', Number, 0.75],
  candidates: ['NODEMEM_CANDIDATES', (s) => parseInt(s, 10), 10],
  'recency.half_life_days': ['NODEMEM_RECENCY_HALF_LIFE_DAYS', Number, 7],
  'w.bm25': ['NODEMEM_W_BM25', Number, 0.7],
  'w.recency': ['NODEMEM_W_RECENCY', Number, 0.3],
}

const STOPWORDS = new Set(
  'a an the is are was were be been of to in on at for and or but i you he she it we they my your his her its our their what which who whom where when how does do did this that these those now s with as by from so'.split(
    ' ',
  ),
)

export function tokens(text) {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOPWORDS.has(w))
}

export function configFromEnv(env) {
  const config = {}
  for (const [name, [variable, parse, fallback]] of Object.entries(PARAMETERS)) {
    const raw = env[variable]
    config[name] = raw === undefined || raw === '' ? fallback : parse(raw)
  }
  return config
}

class Index {
  constructor(turns) {
    this.turns = turns
    this.tf = []
    this.lengths = []
    this.df = new Map()
    for (const t of turns) {
      const counts = new Map()
      const words = tokens(`${t.speaker ?? ''} ${t.text}`)
      for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1)
      for (const w of counts.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1)
      this.tf.push(counts)
      this.lengths.push(words.length)
    }
    this.avgLen = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.lengths.length)
    this.newest = Math.max(0, ...turns.map((t) => t.time))
  }

  bm25(terms, k1, b) {
    const n = this.turns.length
    const scores = new Float64Array(n)
    for (const w of new Set(terms)) {
      const df = this.df.get(w)
      if (!df) continue
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
      this.tf.forEach((counts, i) => {
        const f = counts.get(w)
        if (f) scores[i] += (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * this.lengths[i]) / this.avgLen))
      })
    }
    return scores
  }
}

export class MemoryEngine {
  constructor() {
    this.indexes = new Map()
  }

  reset() {
    this.indexes.clear()
  }

  ingest(conversationId, turns) {
    this.indexes.set(conversationId, new Index(turns))
  }

  search(conversationId, query, k, config) {
    const index = this.indexes.get(conversationId)
    const bm = index.bm25(tokens(query), config['bm25.k1'], config['bm25.b'])
    const ranked = [...bm.keys()].sort((a, b) => bm[b] - bm[a] || a - b)
    let pool = ranked.slice(0, config.candidates).filter((i) => bm[i] > 0)
    if (pool.length === 0) pool = ranked.slice(0, config.candidates)
    const top = Math.max(0, ...pool.map((i) => bm[i])) || 1
    const halfLife = config['recency.half_life_days'] * DAY_S
    return pool
      .map((i) => {
        const age = index.newest - index.turns[i].time
        return {
          i,
          score: (config['w.bm25'] * bm[i]) / top + config['w.recency'] * Math.exp((-Math.LN2 * age) / halfLife),
        }
      })
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .slice(0, k)
      .map(({i}) => index.turns[i].id)
  }
}
