import {describe, expect, it} from 'vitest'
import {runRerankServeBench} from '../../src/bench/serve.js'

// The figures are timings (not checked here: speed is measured by `kt bench serve`, not by tests);
// what is checked is that every figure the command prints is measured and reported.
describe('kt bench serve --only rerank (runRerankServeBench), 10 timed pairs per form', () => {
  it('reports every figure as a positive finite number of µs', {timeout: 60_000}, async () => {
    const {rerank, machine} = await runRerankServeBench({rerankRequests: 10, seed: 42})
    expect(machine.cores).toBeGreaterThan(0)
    expect(rerank).toMatchObject({candidates: 50, features: 46, trees: 100, requests: 10, bodies: 30})
    const figures = {
      model_scoring_us: rerank.model_scoring_us,
      json_reading_us: rerank.json_reading_us,
      json_full_precision_reading_us: rerank.json_full_precision_reading_us,
      ...Object.fromEntries(
        (['json', 'json_full_precision', 'binary'] as const).flatMap((form) => [
          [`${form}_noop`, rerank[form].noop_median_us],
          [`${form}_rerank`, rerank[form].rerank_median_us],
        ]),
      ),
    }
    for (const [name, us] of Object.entries(figures)) {
      expect(Number.isFinite(us), name).toBe(true)
      expect(us, name).toBeGreaterThan(0)
    }
  })
})
