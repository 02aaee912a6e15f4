import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'

/**
 * src/rank/README.md's reranker table quotes every MQ2008 and LoCoMo figure of the reranker once,
 * beside the command that prints it. This re-runs those commands (through the built CLI, with
 * --json) and fails when a 4-decimal number of a row's result differs from what its command prints.
 * The data stay in ../shared (never copied into the repository): without it the test skips with
 * one line. The slow rows (the tune studies, the second MQ2008 peer run, the @qrank log) run only
 * with KT_README_FIGURES=all; `kt bench rerank`'s row is a timing and is not checked.
 */

const shared = join(packageRoot, '..', 'shared')
const mq = join(shared, 'ltr', 'mq2008-fold1-partial', 'vali.txt')
const locomo = join(shared, 'locomo', 'locomo-dev.json')
const present = existsSync(mq) && existsSync(locomo)
if (!present) console.log(`skipping the README reranker figures: no ${mq} or ${locomo}`)
const all = process.env.KT_README_FIGURES === 'all'
const TABLE_START = 'Every reranker figure on MQ2008 and LoCoMo'

/** Command (after `kt `) -> result cell, for the rows of README's reranker table. */
function readmeRows(): Map<string, string> {
  const text = readFileSync(join(packageRoot, 'src', 'rank', 'README.md'), 'utf8')
  const from = text.indexOf(TABLE_START)
  expect(from, `src/rank/README.md: "${TABLE_START}"`).toBeGreaterThan(0)
  const rows = new Map<string, string>()
  let inTable = false
  for (const line of text.slice(from).split('\n')) {
    if (line.startsWith('|')) inTable = true
    else if (inTable) break
    const m = /^\| [^|]+ \| `kt ([^`]+)` \| (.+) \|$/.exec(line)
    if (m) rows.set(m[1], m[2])
  }
  return rows
}

/** The 4-decimal numbers of a cell, in order. */
function quoted(cell: string): number[] {
  return [...cell.matchAll(/[+-]?\d+\.\d{4}(?!\d)/g)].map((m) => Number(m[0]) + 0)
}

/** Rounded as the report prints it (+ 0 turns -0 into 0, as a printed -0.0000 parses). */
const at4 = (x: number): number => Number(x.toFixed(4)) + 0

type Json = any
const train = (j: Json, baseline: 'engine' | 'linear'): number[] => {
  const c = j.comparisons.test.find((x: Json) => x.baseline === baseline)
  return [j.baselines[baseline].test['ndcg@10'], c.delta, c.low, c.high]
}
const trainVsEngineAndLinear = (j: Json): number[] => [
  j.splits.test['ndcg@10'],
  ...train(j, 'engine'),
  ...train(j, 'linear'),
]
const peer = (j: Json): number[] => {
  const p = j.peer_comparison
  const t = p.splits.test
  return [
    t.kt.judged,
    t.peer.judged,
    t.delta.delta,
    t.delta.low,
    t.delta.high,
    t.kt.all_unjudged_as_1,
    t.peer.all_unjudged_as_1,
    p.one_thread.judged,
    p.one_thread.all_unjudged_as_1,
  ]
}
const tune = (j: Json): number[] => [
  j.best.valid_ndcg10,
  j.defaults.valid_ndcg10,
  j.test.tuned,
  j.test.defaults,
  j.test.delta.estimate,
  j.test.delta.low,
  j.test.delta.high,
]
const gate = (j: Json): number[] => {
  const c = j.comparisons.find((x: Json) => x.baseline === 'engine')
  return [j.candidate_ndcg10, j.engine_ndcg10, c.delta, c.low, c.high]
}

const MQ = '../shared/ltr/mq2008-fold1-partial'
const PEER = `--depth 6 --leaves 64 --min-data 1 --min-hessian 1 --l2 1`
const LOG = '--data /tmp/locomo-log/train.jsonl --valid /tmp/locomo-log/valid.jsonl --test /tmp/locomo-log/test.jsonl'
const QRANK =
  '--data /tmp/locomo-qrank/train.jsonl --valid /tmp/locomo-qrank/valid.jsonl --test /tmp/locomo-qrank/test.jsonl'

/** In README order where a row needs an earlier one's model (the gates). */
const ROWS: {command: string; slow?: boolean; numbers: (json: Json) => number[]; exit?: number}[] = [
  {
    command: `rerank train --data ${MQ}/vali.txt --test ${MQ}/test.txt ${PEER} --truncation 0 --peer xgboost`,
    numbers: (j) => peer(j).slice(0, 9),
  },
  {
    command: `rerank train --data ${MQ}/vali.txt --test ${MQ}/test.txt ${PEER} --peer xgboost`,
    slow: true,
    numbers: (j) => peer(j).slice(0, 5),
  },
  {command: `rerank tune --data ${MQ}/vali.txt --test ${MQ}/test.txt --trials 60`, slow: true, numbers: tune},
  {
    command: `rerank tune ${LOG} --engine-score-feature --boost-from engine_score --trials 40 --save /tmp/locomo-log/tuned.json`,
    slow: true,
    numbers: tune,
  },
  {
    command: 'rerank deploy /tmp/locomo-log/tuned.json --registry /tmp/locomo-registry-tuned',
    slow: true,
    numbers: gate,
  },
  {command: `rerank train ${LOG} --save /tmp/locomo-log/plain.json`, numbers: trainVsEngineAndLinear},
  {command: 'rerank deploy /tmp/locomo-log/plain.json --registry /tmp/locomo-registry-plain', numbers: gate, exit: 1},
  {command: `rerank train ${LOG} --engine-score-feature`, numbers: trainVsEngineAndLinear},
  {
    command: `rerank train ${LOG} --engine-score-feature --leaves 7 --min-data 50 --learning-rate 0.05 --early-stop 30 --save /tmp/locomo-log/stacked.json`,
    numbers: trainVsEngineAndLinear,
  },
  {
    command: `rerank train ${QRANK} --engine-score-feature --leaves 3 --min-data 50 --learning-rate 0.1 --early-stop 30 --trees 300 --save /tmp/locomo-qrank/model.json`,
    slow: true,
    numbers: trainVsEngineAndLinear,
  },
]

describe.skipIf(!present)('README reranker figures = what their commands print', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kt-readme-figures-'))
  const local = (command: string): string[] => command.replaceAll('/tmp/locomo-', `${dir}/locomo-`).split(' ')
  const rows = present ? readmeRows() : new Map<string, string>()
  const log = (out: string, extra: string[] = []): void => {
    const r = kt([
      'rerank',
      'log',
      '--data',
      '../shared/locomo/locomo-dev.json',
      '--out',
      join(dir, out),
      '--test-conversations',
      'conv-41',
      ...extra,
    ])
    expect(r.status, r.stderr).toBe(0)
  }

  it('quotes every checked command exactly once, and each with numbers', () => {
    for (const row of ROWS) {
      expect(rows.has(row.command), `src/rank/README.md's reranker table has no row with \`kt ${row.command}\``).toBe(
        true,
      )
      expect(quoted(rows.get(row.command)!).length, `kt ${row.command}`).toBeGreaterThan(0)
    }
    expect(new Set(ROWS.map((r) => r.command)).size).toBe(ROWS.length)
  })

  let logged = false
  for (const row of ROWS) {
    it.skipIf(row.slow === true && !all)(
      `kt ${row.command}`,
      () => {
        if (!logged && row.command.includes('/tmp/locomo-log/')) {
          log('locomo-log')
          logged = true
        }
        if (row.command.includes('/tmp/locomo-qrank/')) log('locomo-qrank', ['--query-features', 'qrank'])
        const r = kt([...local(row.command), '--json'])
        expect(r.status, r.stderr).toBe(row.exit ?? 0)
        const cell = rows.get(row.command)!
        expect(quoted(cell), `src/rank/README.md: the result of \`kt ${row.command}\``).toEqual(
          row.numbers(JSON.parse(r.stdout)).map(at4),
        )
        if (row.command.startsWith('rerank deploy'))
          expect(JSON.parse(r.stdout).deployed).toBe(cell.startsWith('deployed'))
      },
      600_000,
    )
  }
})
