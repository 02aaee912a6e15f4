import {describe, expect, it} from 'vitest'
import {engineSections} from '../../src/report/engine-markdown.js'
import type {EngineReport} from '../../src/report/types.js'
import type {AblationDelta} from '../../src/eval/ablation.js'

const d = (value: number, low: number, high: number): AblationDelta => ({
  quality: 0.5 + value,
  value,
  low,
  high,
  better: 0,
  worse: 0,
})

function report(): EngineReport {
  const comparison = (name: string) => ({
    name,
    against: 'defaults',
    queries: 10,
    reference_quality: 0.5,
    delta: d(0.1, 0.05, 0.15),
    categories: [{category: 'temporal', queries: 4, reference_quality: 0.5, delta: d(0.2, 0, 0.4)}],
    passed: true,
  })
  return {
    engine: {ref: 'engine.json', name: 'eng', latency: 'cost_model'},
    data: 'data.json',
    metric: 'recall@10',
    tuned: {trial: 3, config: {a: 1, b: 2}, tuning_quality: 0.7},
    ablation: {
      metric: 'recall@10',
      margin: 0.01,
      confidence: 0.95,
      resamples: 100,
      queries: 10,
      defaults_quality: 0.5,
      tuned: d(0.1, 0.05, 0.15),
      changes: [
        {
          parameter: 'a',
          parameters: ['a'],
          default: 0,
          tuned: 1,
          reverted: d(-0.1, -0.15, -0.05),
          alone: d(0.1, 0, 0.2),
        },
        {parameter: 'b', parameters: ['b'], default: 0, tuned: 2, reverted: d(0, 0, 0), alone: d(0, 0, 0)},
      ],
      groups: [{name: 'ab', parameters: ['a', 'b'], reverted: d(-0.1, -0.15, -0.05), alone: d(0.1, 0, 0.2)}],
      minimal: {
        changes: ['a'],
        config: {a: 1, b: 0},
        against_tuned: d(0, 0, 0),
        against_defaults: d(0.1, 0.05, 0.15),
        steps: [{removed: 'b', against_tuned: d(0, 0, 0)}],
      },
      headline: 'HEADLINE',
    },
    search: {} as EngineReport['search'],
    validation: {
      split: 'split',
      metric: 'recall@10',
      confidence: 0.95,
      resamples: 100,
      rule: 'RULE',
      tuned: comparison('tuned'),
      minimal: comparison('tuned-minimal'),
      verdict: 'pass',
    },
    deploy: {profiles: [{name: 'tuned', files: ['p/tuned.env', 'p/tuned.sh', 'p/tuned.json'], verdict: 'pass'}]},
  }
}

describe("report.md's engine sections", () => {
  it('lists every change and group with both intervals and whether the minimal profile keeps it (a group in part)', () => {
    const md = engineSections(report(), () => ['SEARCH']).join('\n')
    expect(md).toContain('## Phase 3: ablation of eng')
    expect(md).toContain('| a | 0 -> 1 | -0.100 [-0.150, -0.050] | +0.100 [+0.000, +0.200] | yes |')
    expect(md).toContain('| b | 0 -> 2 | +0.000 [+0.000, +0.000] | +0.000 [+0.000, +0.000] | no |')
    expect(md).toContain('| group ab | a, b | -0.100 [-0.150, -0.050] | +0.100 [+0.000, +0.200] | partly: a |')
    expect(md).toContain('SEARCH')
    expect(md).toContain('| tuned, temporal | | 4 | 0.500 | 0.700 | +0.200 [+0.000, +0.400] | 0 / 0 | |')
    expect(md).toContain('- Verdict: **pass**: RULE.')
  })
})
