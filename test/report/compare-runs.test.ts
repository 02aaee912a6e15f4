import {afterAll, describe, expect, it} from 'vitest'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {compareExitCode, compareRuns, verdictOf} from '../../src/report/compare-runs.js'
import {renderCompareMarkdown, COMPARE_COMMENT_MARKER} from '../../src/report/compare-render.js'
import {loadQuestionResults, type QuestionResults} from '../../src/eval/question-results.js'
import {InputError} from '../../src/util/errors.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-compare-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** 40 questions in two categories; `hits` says which questions the system answers (recall 1 or 0). */
function results(
  hits: (i: number) => boolean,
  options: {sha?: string; engine?: string; k1?: number} = {},
): QuestionResults {
  const questions: Array<[string, string]> = Array.from({length: 40}, (_, i) => [
    `q${i}`,
    i % 2 ? 'temporal' : 'single-hop',
  ])
  return {
    kt_questions: 1,
    kt_version: '0.1.0',
    engine: {name: options.engine ?? 'eng', file_sha256: 'e'.repeat(64)},
    data: {file: 'data.json', sha256: options.sha ?? 'd'.repeat(64)},
    metrics: ['recall@10', 'mrr'],
    questions,
    primary: 'best-quality',
    systems: {
      'best-quality': {
        config: {'bm25.k1': options.k1 ?? 1.2},
        values: questions.map((_, i) => (hits(i) ? [1, 1] : [0, 0])),
        latency_ms: {p50: 1, p95: 2, p99: 3, kind: 'cost_model'},
      },
    },
  }
}

const base = {label: 'base', results: results((i) => i % 4 !== 0)}

describe('verdictOf', () => {
  it('gives the four verdicts by the interval and the margin', () => {
    expect(verdictOf({delta: 0.05, low: 0.01, high: 0.09}, 0.01)).toBe('improved')
    expect(verdictOf({delta: -0.05, low: -0.09, high: -0.01}, 0.01)).toBe('regressed')
    // below 0 but no worse than the margin: not a regression, yet not shown non-inferior
    expect(verdictOf({delta: -0.005, low: -0.02, high: -0.001}, 0.01)).toBe('not_shown_non_inferior')
    expect(verdictOf({delta: 0, low: -0.03, high: 0.03}, 0.01)).toBe('not_shown_non_inferior')
    expect(verdictOf({delta: 0, low: -0.005, high: 0.005}, 0.01)).toBe('no_clear_change')
    expect(verdictOf({delta: 0, low: null, high: null}, 0.01)).toBe('no_clear_change')
  })
})

describe('compareRuns', () => {
  it('finds a regression overall and per category, exits 1, and lists the changed parameter', () => {
    const head = {label: 'head', results: results((i) => i % 2 === 1, {k1: 0.3})}
    const c = compareRuns(base, head)
    expect(c.shared_questions).toBe(40)
    expect(c.scopes.map((s) => s.scope)).toEqual(['overall', 'single-hop', 'temporal'])
    expect(c.scopes[0].metrics[0].verdict).toBe('regressed')
    expect(c.verdict).toBe('regressed')
    expect(compareExitCode(c, false)).toBe(1)
    expect(c.changes).toEqual([{what: 'parameter', name: 'bm25.k1', base: '1.2', head: '0.3'}])
    const md = renderCompareMarkdown(c)
    expect(md.startsWith(COMPARE_COMMENT_MARKER)).toBe(true)
    expect(md.indexOf('| recall@10 |')).toBeLessThan(md.indexOf('<details>'))
    expect(md).toContain('cost model')
  })

  it('finds an improvement (exit 0) and pairs questions by id, whatever their order', () => {
    const better = results(() => true)
    const shuffled = {
      ...better,
      questions: [...better.questions].reverse(),
      systems: {
        'best-quality': {
          ...better.systems['best-quality'],
          values: [...better.systems['best-quality'].values].reverse(),
        },
      },
    }
    const c = compareRuns(base, {label: 'head', results: shuffled})
    expect(c.scopes[0].metrics[0].verdict).toBe('improved')
    expect(c.verdict).toBe('improved')
    expect(compareExitCode(c, true)).toBe(0)
  })

  it('with --strict, a change not shown non-inferior fails too', () => {
    // one question lost of 40: too few to call a regression, too many to show non-inferiority
    const c = compareRuns(base, {label: 'head', results: results((i) => i % 4 !== 0 && i !== 1)})
    expect(c.counts.regressed).toBe(0)
    expect(c.counts['not_shown_non_inferior']).toBeGreaterThan(0)
    expect(compareExitCode(c, false)).toBe(0)
    expect(compareExitCode(c, true)).toBe(1)
  })

  it('refuses different data unless allowed, then says so; refuses different engines', () => {
    const other = {label: 'head', results: results((i) => i % 4 !== 0, {sha: 'f'.repeat(64)})}
    expect(() => compareRuns(base, other)).toThrow(/head: data\.sha256: expected the data of base/)
    const allowed = compareRuns(base, other, {allowDifferentData: true})
    expect(allowed.different_data).toBe(true)
    expect(renderCompareMarkdown(allowed)).toContain('different data')
    expect(allowed.changes.map((c) => c.what)).toEqual(['data'])
    expect(() => compareRuns(base, {label: 'head', results: results(() => true, {engine: 'other'})})).toThrow(
      InputError,
    )
  })
})

describe('loadQuestionResults', () => {
  it('refuses a folder that is not a run, and a run without per-question results, in one line', () => {
    const empty = join(dir, 'empty')
    mkdirSync(empty)
    expect(() => loadQuestionResults(empty)).toThrow(/empty: expected a run folder of kt run .*no report\.json/)
    const old = join(dir, 'old-run')
    mkdirSync(old)
    writeFileSync(join(old, 'report.json'), '{}')
    expect(() => loadQuestionResults(old)).toThrow(/old-run\/questions\.json: expected per-question results/)
    const evalWithout = join(dir, 'eval.json')
    writeFileSync(evalWithout, JSON.stringify({engine: 'eng', service: {}}))
    expect(() => loadQuestionResults(evalWithout)).toThrow(/eval\.json: questions: expected per-question results/)
  })

  it('reads a run folder and a kt eval --json output', () => {
    const run = join(dir, 'run')
    mkdirSync(run)
    writeFileSync(join(run, 'questions.json'), JSON.stringify(base.results))
    expect(loadQuestionResults(run).questions.length).toBe(40)
    const evalOut = join(dir, 'eval-ok.json')
    writeFileSync(evalOut, JSON.stringify({engine: 'eng', questions: base.results}))
    expect(loadQuestionResults(evalOut).primary).toBe('best-quality')
    const broken = join(dir, 'broken.json')
    writeFileSync(broken, JSON.stringify({questions: {...base.results, systems: {x: {values: []}}, primary: 'x'}}))
    expect(() => loadQuestionResults(broken)).toThrow(/systems\.x\.values: expected 40 rows/)
  })
})
