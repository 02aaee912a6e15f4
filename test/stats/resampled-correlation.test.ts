import {describe, expect, it} from 'vitest'
import {ResampledCorrelation} from '../../src/stats/resampled-correlation.js'
import {pearson, spearman} from '../../src/stats/correlation.js'
import {resampleIndices} from '../../src/stats/bootstrap.js'
import {Rng} from '../../src/util/rng.js'

function gather(v: ArrayLike<number>, idx: Int32Array): Float64Array {
  return Float64Array.from(idx, (i) => v[i])
}

describe('ResampledCorrelation', () => {
  it('equals pearson and spearman on the materialised resample, ties included', () => {
    const rng = new Rng(11)
    for (let trial = 0; trial < 200; trial++) {
      const n = 2 + rng.int(40)
      // few distinct values, so ties are common on both sides
      const x = Float64Array.from({length: n}, () => rng.int(6) / 5)
      const y = Float64Array.from({length: n}, (_, i) => (rng.next() < 0.5 ? x[i] : rng.int(4)))
      const r = new ResampledCorrelation(x, y)
      const idx = resampleIndices(n, rng)
      const p = pearson(gather(x, idx), gather(y, idx)), s = spearman(gather(x, idx), gather(y, idx))
      const rp = r.pearson(idx), rs = r.spearman(idx)
      if (p === null) expect(rp).toBeNull()
      else expect(rp).toBeCloseTo(p, 12)
      if (s === null) expect(rs).toBeNull()
      else expect(rs).toBeCloseTo(s, 12)
    }
  })

  it('returns null for a resample that picks one row only', () => {
    const r = new ResampledCorrelation([1, 2, 3], [3, 1, 2])
    expect(r.spearman(Int32Array.from([1, 1, 1]))).toBeNull()
    expect(r.pearson(Int32Array.from([0, 0, 0]))).toBeNull()
  })
})
