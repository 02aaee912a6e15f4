import {afterAll, describe, expect, it} from 'vitest'
import {spawn, type ChildProcessWithoutNullStreams} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {DEFAULT_LAMBDAMART, trainLambdaMart} from '../../src/rank/lambdamart.js'
import {toSavedModel, writeModel, type SavedModel} from '../../src/rank/model.js'
import {deploy, type DeployOutcome} from '../../src/rank/deploy.js'
import {readRegistry, versionProblem, type RollbackOutcome} from '../../src/rank/registry.js'
import {generateSynthetic} from '../../src/rank/synthetic.js'
import {kt} from '../cli/helpers.js'

const CHILD = fileURLToPath(new URL('./registry-child.ts', import.meta.url))
/** Races of each pair (the issue: "a test of 50 races of each pair loses nothing"). */
const RACES = 50

const data = generateSynthetic({queries: 20, minDocs: 6, maxDocs: 10, seed: 5})
const base: SavedModel = toSavedModel(
  trainLambdaMart(data, {...DEFAULT_LAMBDAMART, trees: 2, minDataInLeaf: 5}).model,
  {trees: 2},
  {},
  {},
)
const scratch = mkdtempSync(join(tmpdir(), 'kt-rank-race-'))
let counter = 0

/** A distinct model file (its first leaf moved a little); the racers deploy with --force and a reason (these models have no held-out data), so every deploy passes. */
function modelFile(): string {
  const path = join(scratch, `m${++counter}.json`)
  const trees = base.trees.map((tree, t) =>
    t === 0 ? {...tree, leaf_value: tree.leaf_value.map((v, l) => (l === 0 ? v + counter * 1e-9 : v))} : tree,
  )
  writeModel(path, {...base, trees, metrics: {valid: {'ndcg@10': 0.7}}})
  return path
}

/** A long-lived racer process (registry-child.ts). */
class Racer {
  private readonly child: ChildProcessWithoutNullStreams
  private buffer = ''
  private waiting: ((line: string) => void)[] = []

  constructor() {
    this.child = spawn(process.execPath, ['--import', 'tsx', CHILD], {stdio: ['pipe', 'pipe', 'pipe']})
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString()
      let nl: number
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl)
        this.buffer = this.buffer.slice(nl + 1)
        this.waiting.shift()?.(line)
      }
    })
  }

  run(...command: string[]): Promise<{ok?: DeployOutcome & RollbackOutcome; error?: string}> {
    return new Promise((resolve) => {
      this.waiting.push((line) => resolve(JSON.parse(line)))
      this.child.stdin.write(`${command.join('\t')}\n`)
    })
  }

  stop(): void {
    this.child.stdin.end()
  }
}

/** The registry is consistent: every version the index names loads, ids increase, the current one is the newest, no temp or lock file is left. */
function expectConsistent(dir: string): void {
  const index = readRegistry(dir)
  for (const v of index.versions) expect(versionProblem(dir, v)).toBeUndefined()
  const numbers = index.versions.map((v) => Number(v.id.slice(1)))
  expect(numbers).toEqual([...numbers].sort((a, b) => a - b))
  expect(new Set(numbers).size).toBe(numbers.length)
  expect(Math.max(...numbers)).toBeLessThan(index.next_version)
  expect(index.current).toBe(index.versions.at(-1)?.id ?? null)
  expect(readdirSync(dir).filter((name) => !/^(registry\.json|v\d+\.json)$/.test(name))).toEqual([])
  // no orphan model file either: every file is one the index names
  expect(
    readdirSync(dir)
      .filter((name) => name !== 'registry.json')
      .sort(),
  ).toEqual(index.versions.map((v) => v.file).sort())
}

const racers = [new Racer(), new Racer()]
afterAll(() => racers.forEach((r) => r.stop()))

describe(`reranker registry under concurrent commands (${RACES} races of each pair, separate processes)`, () => {
  it('deploy + deploy: both are kept, under distinct versions, in order; nothing is lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-rank-race-dd-'))
    for (let race = 0; race < RACES; race++) {
      const [a, b] = await Promise.all(racers.map((r) => r.run('deploy', dir, modelFile())))
      expect(a.error).toBeUndefined()
      expect(b.error).toBeUndefined()
      expect(a.ok!.deployed && b.ok!.deployed).toBe(true)
      const ids = [a.ok!.version!, b.ok!.version!].sort((x, y) => Number(x.slice(1)) - Number(y.slice(1)))
      expect(Number(ids[1].slice(1)) - Number(ids[0].slice(1))).toBe(1)
      const index = readRegistry(dir)
      // the two racers' versions are the two newest kept ones, and the later one is current
      expect(index.versions.slice(-2).map((v) => v.id)).toEqual(ids)
      expect(index.current).toBe(ids[1])
      expect(index.next_version).toBe(2 * (race + 1) + 1)
      expectConsistent(dir)
    }
    const list = kt(['rerank', 'list', '--registry', dir, '--json'])
    expect(list.status, list.stderr).toBe(0)
  })

  it('rollback + deploy: the outcome is one of the two serial orders, no index names a deleted file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-rank-race-rd-'))
    const orders = {rollbackFirst: 0, deployFirst: 0}
    for (let race = 0; race < RACES; race++) {
      while (readRegistry(dir).versions.length < 2) deploy(dir, modelFile(), {force: 'race test'})
      const before = readRegistry(dir)
      const [r, d] = await Promise.all([racers[0].run('rollback', dir), racers[1].run('deploy', dir, modelFile())])
      expect(r.error).toBeUndefined()
      expect(d.error).toBeUndefined()
      const index = readRegistry(dir)
      const deployed = d.ok!.version!
      if (r.ok!.removed === deployed) {
        // deploy, then rollback of what it deployed: back where we were
        orders.deployFirst++
        expect(index.current).toBe(before.current)
      } else {
        // rollback of the old current, then the deploy on top
        orders.rollbackFirst++
        expect(r.ok!.removed).toBe(before.current)
        expect(index.current).toBe(deployed)
        expect(index.versions.map((v) => v.id)).not.toContain(before.current)
      }
      expect(index.versions.map((v) => v.id)).not.toContain(r.ok!.removed)
      expect(existsSync(join(dir, `${r.ok!.removed}.json`))).toBe(false)
      expectConsistent(dir)
    }
    expect(orders.rollbackFirst + orders.deployFirst).toBe(RACES)
    const list = kt(['rerank', 'list', '--registry', dir])
    expect(list.status, list.stderr).toBe(0)
  })

  it('cleans a 0-byte index temp file that a killed deploy left', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-rank-race-tmp-'))
    deploy(dir, modelFile(), {force: 'race test'})
    writeFileSync(join(dir, '.registry.json.999999.tmp'), '')
    writeFileSync(join(dir, '.v2.json.999999.tmp'), '')
    deploy(dir, modelFile(), {force: 'race test'})
    expectConsistent(dir)
  })
})
