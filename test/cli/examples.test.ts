import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {readdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'
import {freshClone, manifestExamples, runAllExamples, type ExampleRun} from './examples.js'
import {nonSnakeKeys} from './json-style.js'

/** Commands that serve until stopped: their examples pass when still running without error after SERVER_GRACE_MS. */
const SERVERS = ['dashboard', 'online:serve']
const SERVER_GRACE_MS = 4000
/** Longest any example may take (they are written small; a benchmark's full run is its default). */
const EXAMPLE_TIMEOUT_MS = 60_000

let dir: string
let runs: ExampleRun[]

beforeAll(async () => {
  dir = freshClone()
  runs = await runAllExamples(dir, {
    timeoutMs: EXAMPLE_TIMEOUT_MS,
    lanes: 3,
    servers: SERVERS,
    serverGraceMs: SERVER_GRACE_MS,
  })
}, 600_000)

afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('every --help example runs as written from a fresh clone', () => {
  it('finds the examples of every command in the manifest', () => {
    // the slowest examples, for whoever makes the suite slower
    console.log(
      [...runs]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 8)
        .map((r) => `${r.ms} ms ${r.command}#${r.index}`)
        .join('\n'),
    )
    const commands = new Set(manifestExamples().map((e) => e.command))
    expect(commands.size).toBeGreaterThan(30)
    expect(runs.length).toBe(manifestExamples().filter((e) => e.line.startsWith('node ')).length)
  })

  it('each exits 0, or the code its description announces; a refusal says why in one line', () => {
    const problems: string[] = []
    for (const r of runs) {
      const key = `${r.command}#${r.index}`
      if (r.status !== r.expectedStatus)
        problems.push(
          `${key} (${r.line.replace(/node "[^"]*kt\.js"/, 'kt')}) exit ${r.status} (expected ${r.expectedStatus}) after ${r.ms} ms: ${r.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}`,
        )
      // an example whose description announces a refusal shows kt's one-line error, nothing else
      else if (/\brefuse/i.test(r.description) && !/^kt: [^\n]+\n$/.test(r.stderr))
        problems.push(
          `${key}: a refusal, but stderr is not one "kt: ..." line: ${JSON.stringify(r.stderr.slice(0, 300))}`,
        )
    }
    expect(problems).toEqual([])
    // the refusals the examples document are there and were checked
    expect(
      runs
        .filter((r) => r.expectedStatus !== 0 && /\brefuse/i.test(r.description))
        .map((r) => `${r.command}#${r.index}`),
    ).toEqual(expect.arrayContaining(['deploy#0', 'db:start#2']))
  })

  it('no example names a file outside the clone (../shared, /tmp)', () => {
    for (const e of manifestExamples())
      expect(e.line.replace(/node "[^"]*kt\.js"/, 'kt'), `${e.command}#${e.index}`).not.toMatch(
        /\.\.\/shared|\s\/tmp\//,
      )
  })

  it('every --json output and every JSON file the examples write has snake_case keys', () => {
    const problems: string[] = []
    for (const r of runs) {
      if (r.status !== 0 || !/\s--json\b/.test(r.line) || r.stdout.trim() === '') continue
      const text = r.stdout.trim()
      const values =
        text.startsWith('{') && !text.includes('}\n{')
          ? [JSON.parse(text)]
          : text.split('\n').map((l) => JSON.parse(l) as unknown)
      for (const v of values)
        for (const k of nonSnakeKeys(v))
          if (!/\.(metrics|config)\./.test(k)) problems.push(`${r.command}#${r.index} --json: ${k}`)
    }
    const walk = (d: string): string[] =>
      readdirSync(d).flatMap((name) => {
        const p = join(d, name)
        if (name === 'node_modules' || name === 'online' || name === 'pg' || name === 'postgres') return []
        return statSync(p).isDirectory() ? walk(p) : /\.json$/.test(name) && !/\.vl\.json$/.test(name) ? [p] : []
      })
    for (const file of walk(dir)) {
      const rel = relative(dir, file)
      if (/^(fixtures|phases|examples|assets)\//.test(rel) || !rel.includes('/')) continue // the clone's own files
      let value: unknown
      try {
        value = JSON.parse(readFileSync(file, 'utf8'))
      } catch {
        continue
      }
      // metrics and configurations are keyed by metric and parameter names (data, not kt's field names)
      for (const k of nonSnakeKeys(value)) if (!/\.(metrics|config)\./.test(k)) problems.push(`${rel}: ${k}`)
    }
    expect(problems).toEqual([])
  })
})
