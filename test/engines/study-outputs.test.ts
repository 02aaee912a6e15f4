/**
 * What a `kt search --engine` study leaves behind: no secret from --storage in what it writes or
 * what kt deploy copies from it (review D#2).
 */
import {mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/util/paths.js'
import {kt} from '../cli/helpers.js'
import {postgresForTests} from '../helpers/postgres.js'

const TINY = join(packageRoot, 'test', 'engines', 'fixtures', 'tiny.mjs')

/** A command engine file around tiny.mjs (score = x), with overrides of its fields. */
export function tinyEngine(dir: string, extra: Record<string, unknown> = {}, file = 'engine.json'): string {
  const engine = {
    kt_engine: 1,
    name: 'tiny',
    parameters: [
      {name: 'x', type: 'float', low: 0, high: 1, default: 0.5, env: 'TEST_X'},
      {name: 'mode', type: 'categorical', choices: ['a', 'b'], default: 'a', env: 'TEST_MODE'},
    ],
    evaluate: {kind: 'command', command: [process.execPath, TINY], timeout_s: 20},
    objectives: [{metric: 'score', direction: 'maximize'}],
    profiles: [{name: 'best', order_by: 'score'}],
    ...extra,
  }
  const path = join(dir, file)
  writeFileSync(path, JSON.stringify(engine))
  return path
}

/** Every file under a folder (recursively), with its text. */
function filesUnder(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...filesUnder(path))
    else out.push([path, readFileSync(path, 'latin1')])
  }
  return out
}

const pg = postgresForTests()

describe.skipIf(pg.skip)(`kt search --engine with a PostgreSQL password in --storage ${pg.label}`, () => {
  it('writes the password into no profile, and kt deploy copies it nowhere', async () => {
    const url = await pg.database('kt_secret')
    const password = decodeURIComponent(new URL(url).password)
    expect(password.length).toBeGreaterThan(3)
    const dir = mkdtempSync(join(tmpdir(), 'kt-secret-'))
    const out = join(dir, 'out')
    const r = kt(['search', '--engine', tinyEngine(dir), '--optimizer', 'random', '--trials', '2', '--storage', url, '--study', 'secret', '--out', out, '--json'])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).not.toContain(password)
    const written = filesUnder(out)
    expect(written.map(([f]) => f)).toContain(join(out, 'profiles', 'best.env'))
    for (const [file, text] of written) expect(text.includes(password), `${file} holds the password`).toBe(false)
    expect(JSON.parse(readFileSync(join(out, 'profiles', 'best.json'), 'utf8')).source_run).toBe('secret')
    const target = join(dir, 'deployed')
    const d = kt(['deploy', join(out, 'profiles', 'best.json'), '--engine', join(dir, 'engine.json'), '--target', target, '--force', '--reason', 'test'])
    expect(d.status).toBe(0)
    const deployed = filesUnder(target)
    expect(deployed.map(([f]) => f)).toContain(join(target, 'active.env'))
    for (const [file, text] of deployed) expect(text.includes(password), `${file} holds the password`).toBe(false)
  })
})
