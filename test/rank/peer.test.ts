import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {DEFAULT_LAMBDAMART} from '../../src/rank/lambdamart.js'
import {peerAvailable, peerSettings} from '../../src/rank/peer.js'
import {runTrainReport} from '../../src/rank/report.js'
import {fixturesDir} from '../../src/util/paths.js'

const ltr = join(fixturesDir, 'ltr')
const available = peerAvailable()
// CI installs python3-xgboost (.ci/run), so there the comparison must run.
const skip = !available.ok && process.env.CI !== 'true'
if (skip) console.log(`skipping the XGBoost peer test: ${(available as {reason: string}).reason}`)

describe('the XGBoost peer', () => {
  it('maps kt settings to XGBoost names and needs a depth limit', () => {
    expect(peerSettings({...DEFAULT_LAMBDAMART, maxDepth: 6, minSumHessianInLeaf: 1, l2: 1})).toEqual({depth: 6, eta: 0.1, rounds: 100, min_child_weight: 1, l2: 1})
    expect(() => peerSettings({...DEFAULT_LAMBDAMART, maxDepth: 0})).toThrow(/--depth/)
  })

  it.skipIf(skip)('trains with the same settings on the same files and is compared query by query', () => {
    const report = runTrainReport({
      files: {train: join(ltr, 'train.txt'), test: join(ltr, 'test.txt')},
      params: {...DEFAULT_LAMBDAMART, trees: 10, maxDepth: 3, maxLeaves: 8, minDataInLeaf: 1, minSumHessianInLeaf: 1, l2: 1, truncation: 0},
      seed: 1,
      peer: 'xgboost',
    })
    const p = report.peer_comparison!
    expect(p.peer).toMatch(/^xgboost-/)
    expect(p.settings).toEqual({depth: 3, eta: 0.1, rounds: 10, min_child_weight: 1, l2: 1})
    const test = p.splits.test!
    for (const v of [test.kt.judged, test.peer.judged, test.kt.all_unjudged_as_1, test.peer.all_unjudged_as_1]) expect(v > 0 && v <= 1).toBe(true)
    expect(test.kt.judged).toBeCloseTo(report.splits.test!['ndcg@10']!, 12)
    expect(test.delta.delta).toBeCloseTo(test.kt.judged - test.peer.judged, 12)
    expect(p.peer_train_cpu_ms).toBeGreaterThanOrEqual(0)
    expect(p.train_cpu_ratio).toBeGreaterThan(0)
  })
})
