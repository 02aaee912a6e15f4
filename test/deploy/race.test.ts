/**
 * Concurrent deploys and rollbacks on one target from separate processes: 50 deploy/deploy and
 * 50 deploy/rollback races. Nothing may be lost (every acknowledged operation is in the history,
 * exactly once), and the history must stay consistent: replaying its events gives its stack and
 * active profile, every profile it names exists with its recorded hash, and active.* render the
 * active one.
 */
import {describe, expect, it} from 'vitest'
import {spawn} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {packageRoot} from '../../src/util/paths.js'
import {deployProfile, deploymentIndex, type DeploymentIndex} from '../../src/deploy/target.js'
import {profileJson, renderEnvFile, type Profile} from '../../src/deploy/profile.js'
import {sampleProfile} from './helpers.js'

const CHILD = fileURLToPath(new URL('./race-child.mjs', import.meta.url))
const MODULE = join(packageRoot, 'dist', 'src', 'deploy', 'target.js')
const RACES = 50
const dir = mkdtempSync(join(tmpdir(), 'kt-race-'))

interface Outcome {
  ok: boolean
  active?: string
  name?: string
  message?: string
}

function child(op: 'deploy' | 'rollback', target: string, start: string, files: string[]): Promise<Outcome[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CHILD, MODULE, op, target, start, ...files], {stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    p.stdout.on('data', (c: Buffer) => (out += c))
    p.stderr.on('data', (c: Buffer) => (err += c))
    p.on('error', reject)
    p.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Outcome[]) : reject(new Error(`child ${op} exited ${code}: ${err}`)),
    )
  })
}

function profiles(prefix: string, n: number): string[] {
  return Array.from({length: n}, (_, i) => {
    const file = join(dir, `${prefix}-${i}.json`)
    writeFileSync(file, profileJson(sampleProfile('retrieval', `${prefix}-${i}`)))
    return file
  })
}

/** Replays the events and checks them against the index, the store and the active files. */
function checkConsistent(target: string): DeploymentIndex {
  const index = deploymentIndex(target)!
  const stack: string[] = []
  let active: string | null = null
  index.events.forEach((e, i) => {
    expect(e.seq).toBe(i + 1)
    expect(e.replaced).toBe(active)
    if (e.action === 'deploy') {
      if (active) stack.push(active)
    } else {
      expect(stack.pop()).toBe(e.sha256)
    }
    active = e.sha256
  })
  expect(index.stack.map((s) => s.sha256)).toEqual(stack)
  expect(index.active?.sha256 ?? null).toBe(active)
  for (const entry of [...index.stack, ...(index.active ? [index.active] : [])]) {
    const text = readFileSync(join(target, 'profiles', `${entry.sha256}.json`), 'utf8')
    expect(createHash('sha256').update(text).digest('hex')).toBe(entry.sha256)
  }
  const activeText = readFileSync(join(target, 'profiles', `${index.active!.sha256}.json`), 'utf8')
  expect(readFileSync(join(target, 'active.json'), 'utf8')).toBe(activeText)
  expect(readFileSync(join(target, 'active.env'), 'utf8')).toBe(renderEnvFile(JSON.parse(activeText) as Profile))
  expect(readdirSync(target).filter((f) => f.endsWith('.tmp') || f.startsWith('lock'))).toEqual([])
  return index
}

describe('deploy and rollback races between processes (built dist)', () => {
  it(`${RACES} deploy/deploy races lose nothing`, async () => {
    expect(existsSync(MODULE), 'run npm run build first').toBe(true)
    const target = join(dir, 'dd')
    const start = join(dir, 'go-dd')
    const a = profiles('a', RACES)
    const b = profiles('b', RACES)
    const runs = [child('deploy', target, start, a), child('deploy', target, start, b)]
    writeFileSync(start, '')
    const [ra, rb] = await Promise.all(runs)
    expect([...ra, ...rb].filter((r) => !r.ok)).toEqual([])
    const index = checkConsistent(target)
    const deployed = index.events
      .filter((e) => e.action === 'deploy')
      .map((e) => e.name)
      .sort()
    expect(deployed).toEqual([...a, ...b].map((f) => f.slice(dir.length + 1, -5)).sort())
    // both writers really interleaved (the race happened), not one after the other
    const order = index.events.map((e) => e.name[0]).join('')
    expect(order).not.toBe('a'.repeat(RACES) + 'b'.repeat(RACES))
    expect(order).not.toBe('b'.repeat(RACES) + 'a'.repeat(RACES))
  })

  it(`${RACES} deploy/rollback races leave a consistent history`, async () => {
    const target = join(dir, 'dr')
    const start = join(dir, 'go-dr')
    const c = profiles('c', RACES)
    // a few profiles to roll back to before the race starts
    const seed = profiles('s', 10)
    for (const f of seed) deployProfile(f, target)
    const runs = [child('deploy', target, start, c), child('rollback', target, start, c)]
    writeFileSync(start, '')
    const [deploys, rollbacks] = await Promise.all(runs)
    expect(deploys.filter((r) => !r.ok)).toEqual([])
    // a rollback may find nothing to roll back to (then it says so); nothing else may go wrong
    for (const r of rollbacks.filter((x) => !x.ok))
      expect(r.message).toMatch(/expected (a previous profile to roll back to|a deployment target folder)/)
    const index = checkConsistent(target)
    expect(index.events.filter((e) => e.action === 'deploy')).toHaveLength(RACES + seed.length)
    expect(index.events.filter((e) => e.action === 'rollback')).toHaveLength(rollbacks.filter((r) => r.ok).length)
    expect(rollbacks.filter((r) => r.ok).length).toBeGreaterThan(0)
  })
})
