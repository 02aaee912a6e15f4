import {describe, expect, it} from 'vitest'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {loadPlan} from '../../phases/plan.js'
import {createContext} from '../../phases/lib/context.js'
import {runValidation} from '../../phases/5-validation.js'
import {renderMarkdown} from '../../src/report/markdown.js'
import type {SearchResult} from '../../src/report/types.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-validation-'))

/** 30 turns three months old, surprise 0.3 and no word of the query: the baseline (decay .4, surprise .3, relevance .2, habituation .1) scores them 0.19 at most, so it drops every one. */
function zeroBaseDataset(): string {
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet']
  const turns = Array.from({length: 30}, (_, i) => ({
    id: `t${String(i).padStart(2, '0')}`,
    time: `2024-10-01T${String(i % 24).padStart(2, '0')}:${String(i).padStart(2, '0')}:00Z`,
    text: `${words[i % 10]} ${words[(i * 3 + 1) % 10]} w${i}`,
    surprise: 0.3,
    query: 'q1',
    truth: ((i * 37) % 100) / 100,
  }))
  const file = join(dir, 'zero_base.json')
  writeFileSync(
    file,
    JSON.stringify(
      {
        kt_dataset: 1,
        id: 'zero_base',
        description: 'every turn dropped under the baseline',
        reference_time: '2025-01-01T00:00:00Z',
        generator: null,
        queries: [{id: 'q1', text: 'completely unrelated query text'}],
        turns,
      },
      null,
      1,
    ),
  )
  return file
}

describe('phase 5 validation', () => {
  it('reports the token-budget change from a baseline of 0 tokens as undefined and the criterion as not evaluable, never a pass (review R#4)', () => {
    const plan = loadPlan()
    const p = JSON.parse(readFileSync(plan.file, 'utf8'))
    const planFile = join(dir, 'plan.json')
    p.datasets = {tune: join(plan.file, '..', p.datasets.tune), holdout: [], imported: [zeroBaseDataset()]}
    delete p.retrieval
    p.bootstrap = {...p.bootstrap, confidence: 0.8}
    writeFileSync(planFile, JSON.stringify(p))
    const ctx = createContext(loadPlan(planFile), 42, dir, () => {})
    // the optimum keeps every turn (habituation is 1 for a turn said once): tokens > 0 where the baseline keeps 0
    ctx.results.search = {
      optimum: {weights: {decay: 0, surprise: 0, relevance: 0, habituation: 1}},
    } as unknown as SearchResult
    const v = runValidation(ctx)
    const d = v.datasets.find((x) => x.dataset === 'zero_base')!
    expect(d.baseline.token_budget).toBe(0)
    expect(d.optimum.token_budget).toBeGreaterThan(0)
    expect(d.token_budget_change.value).toBeNull()
    expect(d.token_budget_change.note).toMatch(/baseline keeps 0 tokens/)
    const c = d.verdicts.find((x) => x.metric === 'token_budget_change_rel')!
    expect(c).toMatchObject({value: null, passed: false, evaluable: false})
    expect(v.verdict).toBe('fail')
    // a criterion read from an interval records that interval's level: the plan's, not a typed-in 95% (review R#7)
    expect(d.verdicts.find((x) => x.metric === 'spearman_delta_abs_ci_low')!.confidence).toBe(0.8)
    expect(d.delta.spearman.confidence).toBe(0.8)
    const md = renderMarkdown({
      schema: 'kt.report',
      version: 1,
      run: {
        id: 'r',
        seed: 42,
        plan: {name: 'p', file: 'plan.json', sha256_12: '0'},
        kt_version: '0',
        phases_run: ['validation'],
      },
      phases: {validation: v},
      timing: {total_ms: 0, phases_ms: {}},
    } as never)
    expect(md).toMatch(/\| token budget \(tokens kept\) \| 0\.0 \| [\d.]+ \| n\/a: the baseline keeps 0 tokens/)
    expect(md).toMatch(
      /token_budget_change_rel \| < \+20\.0% \(relative\) \| undefined \(.*\) \| \*\*NOT EVALUABLE\*\* \(not a pass\) \|/,
    )
    expect(md).not.toMatch(/\+0\.0% \(relative/)
  })
})
