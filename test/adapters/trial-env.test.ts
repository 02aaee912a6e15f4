import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {commandObjective} from '../../src/adapters/command.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import type {CommandEvaluate} from '../../src/adapters/file-schema.js'
import {inheritedEnv} from '../../src/adapters/inherited-env.js'
import {tinyEngine} from './helpers.js'

const SECRET = 'pg-secret-never-in-a-trial'
const saved = {...process.env}

afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name]
  Object.assign(process.env, saved)
})

describe("a trial's environment", () => {
  it("holds kt's documented variables and the engine file's env, never kt's store credentials or tokens", async () => {
    process.env.PGPASSWORD = SECRET
    process.env.PGPASSFILE = '/root/.pgpass'
    process.env.KT_SERVE_TOKEN = SECRET
    process.env.KT_DASHBOARD_TOKEN = SECRET
    process.env.SOME_USER_VAR = 'kept'
    const dir = mkdtempSync(join(tmpdir(), 'kt-trial-env-'))
    // the trial prints its whole environment to stderr, which kt keeps in trials/<id>.err
    const printEnv = 'process.stderr.write(JSON.stringify(process.env)); console.log(JSON.stringify({score: 1}))'
    const file = tinyEngine(dir, {
      evaluate: {kind: 'command', command: [process.execPath, '-e', printEnv], timeout_s: 20, env: {ENGINE_VAR: 'e'}},
    })
    const spec = loadEngineFile(file)
    const objective = commandObjective(spec, spec.evaluate as CommandEvaluate)
    await objective.evaluate({x: 0.5, mode: 'a'}, 1, {trialId: 3, configId: 'c', seed: 7, artifactsDir: dir})
    const err = readFileSync(join(dir, '3.err'), 'utf8')
    expect(err).not.toContain(SECRET)
    const env = JSON.parse(err) as Record<string, string>
    expect(
      Object.keys(env).filter((n) => /^(PG|KT_)/.test(n) && !/^KT_(CONFIG_JSON|BUDGET|TIER|TRIAL_ID|SEED)$/.test(n)),
    ).toEqual([])
    expect(env).toMatchObject({ENGINE_VAR: 'e', SOME_USER_VAR: 'kept', TEST_X: '0.5', KT_TRIAL_ID: '3', KT_SEED: '7'})
    expect(env.PATH).toBe(process.env.PATH)
  })

  it('inheritedEnv drops PG* and KT_* only', () => {
    expect(inheritedEnv({PGPASSWORD: 'x', PGUSER: 'u', KT_DEBUG: '1', PATH: '/bin', HOME: '/h', MY_PG: 'y'})).toEqual({
      PATH: '/bin',
      HOME: '/h',
      MY_PG: 'y',
    })
  })
})
