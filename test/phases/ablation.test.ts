import {describe, expect, it} from 'vitest'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {loadPlan} from '../../phases/plan.js'
import {createContext} from '../../phases/lib/context.js'
import {ablationHeadline, runAblation} from '../../phases/3-ablation.js'
import type {AblationConfig} from '../../src/report/types.js'

describe('phase 3 ablation', () => {
  it('gives every configuration its paired Spearman change against the baseline, and the headline claims an effect only from its interval (review R#8)', () => {
    const ctx = createContext(loadPlan(), 42, mkdtempSync(join(tmpdir(), 'kt-ablation-')), () => {})
    const r = runAblation(ctx)
    for (const d of r.datasets) {
      const baseline = d.configs.find((c) => c.kind === 'baseline')!
      expect(baseline.spearman_change).toBeUndefined()
      for (const c of d.configs.filter((x) => x.kind !== 'baseline')) {
        const ch = c.spearman_change!
        expect(ch).toMatchObject({kind: 'absolute', unit: 'spearman correlation', confidence: 0.95})
        expect(ch.estimate).toBeCloseTo(c.spearman.estimate! - baseline.spearman.estimate!, 12)
        expect(ch.low!).toBeLessThanOrEqual(ch.estimate!)
        expect(ch.high!).toBeGreaterThanOrEqual(ch.estimate!)
      }
    }
    // on realistic_100 (seed 42) removing decay moves Spearman by +0.112 with an interval that
    // includes 0: the headline used to say "removing decay helps (+0.112)"
    const decay = r.datasets[0].configs.find((c) => c.id === 'without decay')!.spearman_change!
    expect(decay.low!).toBeLessThan(0)
    expect(r.headline).not.toMatch(/removing decay helps/)
    expect(r.headline).toMatch(
      /removing decay has no clear effect, its interval includes 0: \+0\.112 \[-0\.\d{3}, \+0\.\d{3}\] \(absolute, spearman correlation; paired bootstrap 95%\)/,
    )
    expect(r.headline).toMatch(
      /Removing surprise costs the most \(Spearman [\d.]+ \[[\d.]+, [\d.]+\]\): a change of -0\.288 \[-0\.\d{3}, -0\.\d{3}\] \(absolute, spearman correlation; paired bootstrap 95%\)/,
    )
  })

  it('says "helps" when the interval of the change is above 0', () => {
    const iv = (estimate: number) => ({
      estimate,
      low: estimate - 0.05,
      high: estimate + 0.05,
      confidence: 0.95,
      resamples: 100,
      undefined_resamples: 0,
    })
    const change = (estimate: number, low: number, high: number) => ({
      kind: 'absolute' as const,
      unit: 'spearman correlation',
      estimate,
      low,
      high,
      confidence: 0.95,
      resamples: 100,
      undefined_resamples: 0,
    })
    const w = {decay: 0.25, surprise: 0.25, relevance: 0.25, habituation: 0.25}
    const configs: AblationConfig[] = [
      {id: 'baseline', kind: 'baseline', weights: w, pearson: iv(0.5), spearman: iv(0.5)},
      {
        id: 'without decay',
        kind: 'without',
        weights: w,
        pearson: iv(0.6),
        spearman: iv(0.6),
        spearman_change: change(0.1, 0.02, 0.18),
      },
      {
        id: 'without surprise',
        kind: 'without',
        weights: w,
        pearson: iv(0.3),
        spearman: iv(0.3),
        spearman_change: change(-0.2, -0.3, -0.1),
      },
    ]
    expect(ablationHeadline('d', configs)).toMatch(/removing decay helps: \+0\.100 \[\+0\.020, \+0\.180\]/)
  })
})
