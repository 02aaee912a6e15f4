// An engine whose program fails is the user's engine failing, not kt: one line naming the engine
// file and the program's last stderr line, exit 2 before a study, a failed trial during one.
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {fastImportancePlan} from '../helpers/fast-plan.js'
import {describe, expect, it} from 'vitest'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {retrievalServiceObjective, serviceSpecOf} from '../../src/adapters/retrieval-service.js'
import {runSearch} from '../../src/study/search.js'
import {defaultConfig} from '../../src/space/index.js'
import {InputError} from '../../src/util/errors.js'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'

const DATA = join(packageRoot, 'fixtures', 'memory_small.json')
/** A program that reads a file it needs at start, which is missing. */
const MISSING_FILE = ['python3', '-c', "import sys; print('loading', file=sys.stderr); open('/nonexistent/model.bin')"]
const LAST_LINE = "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/model.bin'"

function engineFile(evaluate: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kt-engine-fail-'))
  const file = join(dir, 'engine.json')
  const engine = {
    kt_engine: 1,
    name: 'broken',
    parameters: [{name: 'boost', type: 'float', low: 0, high: 1, default: 0.5, env: 'TOY_BOOST'}],
    evaluate: {kind: 'retrieval-service', timeout_s: 20, ...evaluate},
    objectives: [
      {metric: 'recall@10', direction: 'maximize'},
      {metric: 'p99_ms', direction: 'minimize'},
    ],
  }
  writeFileSync(file, JSON.stringify(engine))
  return file
}

const expected = (file: string): string =>
  `${file}: evaluate: expected a retrieval service that starts and answers kt, got its program stopped (exited or closed its output); last stderr line: ${LAST_LINE}`

describe('an engine whose program exits at start', () => {
  for (const evaluate of [
    {transport: 'stdio', command: MISSING_FILE},
    {transport: 'http', url: 'http://127.0.0.1:{port}', command: MISSING_FILE},
  ])
    it(`is the user's error naming the engine file and its last stderr line (${evaluate.transport})`, async () => {
      const file = engineFile(evaluate)
      const engine = loadEngineFile(file)
      const objective = retrievalServiceObjective(serviceSpecOf(engine), loadMemoryDataset(DATA), {
        objectives: engine.objectives,
        minTimings: 1,
      })
      try {
        const failure = await Promise.resolve()
          .then(() => objective.evaluate(defaultConfig(objective.space), 1, {trialId: 0, configId: 'c', seed: 0}))
          .then(
            () => undefined,
            (e: unknown) => e,
          )
        expect(failure).toBeInstanceOf(InputError)
        expect((failure as Error).message).toBe(expected(file))
      } finally {
        await objective.close()
      }
    })

  it('in a study every trial fails with that line and the study ends normally', async () => {
    const file = engineFile({transport: 'stdio', command: MISSING_FILE})
    const outcome = await runSearch({
      storage: ':memory:',
      objective: {
        name: 'module',
        module: resolve(packageRoot, 'src/adapters/retrieval-service.ts'),
        options: {engine: file, data: DATA},
      },
      optimizer: 'random',
      seed: 1,
      maxTrials: 2,
    })
    expect(outcome.trials.map((t) => t.status)).toEqual(['failed', 'failed'])
    expect(outcome.trials[0].error).toContain(LAST_LINE)
  })

  it('kt run exits 2 with the one line, not 3 (a bug in kt)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-engine-fail-run-'))
    const engine = engineFile({transport: 'stdio', command: MISSING_FILE})
    const plan = fastImportancePlan()
    plan.retrieval = {engine, data: DATA, metric: 'recall@10', optimizer: 'bohb', budget: 4, split: 'conversations:0.5'}
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan))
    const r = kt(['run', '--plan', 'plan.json', '--out', 'out'], {cwd: dir})
    expect(r.stderr).toBe(`kt: ${expected(engine)}\n`)
    expect(r.status).toBe(2)
  })
})
