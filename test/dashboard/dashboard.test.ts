import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createServer} from 'node:net'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {kt} from '../cli/helpers.js'
import {runSearch} from '../../src/study/search.js'
import {openStudyReader, type StudyReader} from '../../src/study/reader.js'
import {startDashboard, type Dashboard} from '../../src/dashboard/server.js'
import {makeStore} from './fixture.js'

let store: {dir: string; storage: string}
let dash: Dashboard
let reader: StudyReader

beforeAll(async () => {
  store = await makeStore()
  reader = await openStudyReader(store.storage)
  dash = await startDashboard({reader, port: 0})
})

afterAll(async () => {
  await dash?.close()
  await reader?.close()
})

const get = async (path: string, init?: RequestInit) => {
  const r = await fetch(new URL(path, dash.url), init)
  return {status: r.status, type: r.headers.get('content-type') ?? '', body: await r.text()}
}

describe('kt dashboard: the server', () => {
  it('binds 127.0.0.1 by default', () => {
    expect(dash.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
  })

  it('lists the studies with state, trials, best value and last activity', async () => {
    const r = await get('/api/studies')
    expect(r.status).toBe(200)
    const studies = (JSON.parse(r.body) as {studies: Array<Record<string, unknown>>}).studies
    const names = studies.map((s) => s.name)
    expect(names).toEqual(expect.arrayContaining(['retrieval-all', 'branin-random', 'branin-bohb']))
    const all = studies.find((s) => s.name === 'retrieval-all')!
    expect(all).toMatchObject({state: 'finished', value_name: 'recall@10', failed: 0})
    expect(all.best_value).toBeGreaterThan(0)
    expect(String(all.last_activity)).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(studies.find((s) => s.name === 'branin-random')).toMatchObject({trials: 30, value_name: 'loss of branin'})
  })

  it('serves a study: column-wise trials, the front with its dominated trials, profiles, per-type results, chart specs', async () => {
    const r = await get('/api/studies/retrieval-all')
    const {view, charts} = JSON.parse(r.body) as {view: any; charts: Record<string, any>}
    expect(view.trials.id.length).toBeGreaterThan(5)
    expect(view.trials.config['bm25.k1']).toHaveLength(view.trials.id.length)
    expect(view.front.points.length).toBeGreaterThan(0)
    expect(view.front.latency_kind).toBe('estimated')
    expect(view.profiles.map((p: {name: string}) => p.name)).toEqual([
      'financial-compliance',
      'high-throughput',
      'coding-assistant',
    ])
    expect(view.per_type.some((t: {type_study: string | null}) => t.type_study?.startsWith('retrieval-'))).toBe(true)
    expect(Object.keys(charts).sort()).toEqual(['budget', 'front', 'history', 'parallel', 'per_type'])
    expect(JSON.stringify(charts.front)).toMatch(/P99 latency, ms \(estimated/)
  })

  it('ranks the parameters by fANOVA importance, and refuses a target the trials do not carry', async () => {
    const r = JSON.parse((await get('/api/studies/branin-random/importance')).body) as {
      importance: {params: Array<{param: string; importance: number}>}
    }
    expect(r.importance.params.map((p) => p.param).sort()).toEqual(['x1', 'x2'])
    expect(r.importance.params.reduce((s, p) => s + p.importance, 0)).toBeCloseTo(1, 9)
    const bad = await get('/api/studies/branin-random/importance?target=nope')
    expect(bad.status).toBe(400)
    expect(bad.body).toMatch(/--target: expected loss or a metric/)
  })

  it("changes a study's version when another process adds a trial, and only then", async () => {
    const v1 = (JSON.parse((await get('/api/version')).body) as {versions: Record<string, string>}).versions
    expect(JSON.parse((await get('/api/version')).body).versions).toEqual(v1)
    await runSearch({storage: store.storage, study: 'branin-random', resume: true, maxTrials: 31})
    const v2 = (JSON.parse((await get('/api/version')).body) as {versions: Record<string, string>}).versions
    expect(v2['branin-random']).not.toBe(v1['branin-random'])
    expect(v2['branin-bohb']).toBe(v1['branin-bohb'])
    const view = JSON.parse((await get('/api/studies/branin-random')).body).view
    expect(view.trials.id).toHaveLength(31)
  })

  it('sends a large study uncompressed on loopback and gzipped where asked to, the same JSON either way', async () => {
    const {syntheticStudy} = await import('../../src/bench/dashboard.js')
    const {openStorage} = await import('../../src/study/storage.js')
    const path = join(store.dir, 'large.sqlite')
    const storage = await openStorage(path)
    const {study, trials} = syntheticStudy(400)
    await storage.importStudy(study, trials)
    await storage.close()
    const r2 = await openStudyReader(path)
    const plainDash = await startDashboard({reader: r2, port: 0})
    const zipped = await startDashboard({reader: r2, port: 0, warm: false, gzip: 'always'})
    try {
      const plain = await fetch(new URL(`/api/studies/${study.name}`, plainDash.url), {
        headers: {'accept-encoding': 'gzip'},
      })
      expect(plain.headers.get('content-encoding')).toBeNull()
      const text = await plain.text()
      expect(Buffer.byteLength(text)).toBeGreaterThan(64 * 1024)
      expect(Number(plain.headers.get('content-length'))).toBe(Buffer.byteLength(text))
      const r = await fetch(new URL(`/api/studies/${study.name}`, zipped.url), {headers: {'accept-encoding': 'gzip'}})
      expect(r.headers.get('content-encoding')).toBe('gzip')
      expect(Number(r.headers.get('content-length'))).toBeLessThan(Buffer.byteLength(text) / 2)
      expect(JSON.parse(await r.text())).toEqual(JSON.parse(text))
    } finally {
      await zipped.close()
      await plainDash.close()
      await r2.close()
    }
  })

  it('compares studies on one chart', async () => {
    const r = JSON.parse((await get('/api/compare?study=branin-random&study=branin-bohb')).body) as {
      views: unknown[]
      charts: Record<string, unknown>
    }
    expect(r.views).toHaveLength(2)
    expect(Object.keys(r.charts)).toEqual(['trials', 'budget'])
  })

  it('is read-only, serves vega from the installed packages, and 404s unknown studies', async () => {
    expect((await get('/api/studies', {method: 'POST'})).status).toBe(405)
    const vega = await get('/vendor/vega.min.js')
    expect(vega.status).toBe(200)
    expect(vega.type).toMatch(/javascript/)
    expect((await get('/vendor/evil.js')).status).toBe(404)
    expect((await get('/assets/../../package.json')).status).toBe(404)
    const missing = await get('/api/studies/nope')
    expect(missing.status).toBe(404)
    expect(missing.body).toMatch(/no study nope/)
    const page = await get('/')
    expect(page.body).not.toMatch(/https?:\/\/(?!vega\.github\.io)/)
  })
})

describe('kt dashboard and kt study importance: bad input is one line, exit 2', () => {
  it('a storage path that does not exist', () => {
    const r = kt(['dashboard', '--storage', join(store.dir, 'missing.sqlite'), '--port', '0'])
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(
      /missing\.sqlite: expected an existing kt study file \(run kt search --storage \S*missing\.sqlite \.\.\. first: it creates one\), got no such file/,
    )
  })

  it('a file that is not a study store', () => {
    const path = join(store.dir, 'notes.txt')
    writeFileSync(path, 'not a database\n'.repeat(100))
    const r = kt(['dashboard', '--storage', path, '--port', '0'])
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('a port in use', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()))
    const port = (blocker.address() as {port: number}).port
    try {
      const r = kt(['dashboard', '--storage', store.storage, '--port', String(port)])
      expect(r.status).toBe(2)
      expect(r.stderr.trim()).toBe(`kt: --port ${port}: expected a free port, got port in use on 127.0.0.1`)
    } finally {
      blocker.close()
    }
  })

  it('a study name that is not there', () => {
    const r = kt(['study', 'importance', 'nope', '--storage', store.storage])
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/study nope: expected an existing study \(.*branin-random.*\), got no such study/)
  })

  it('kt study importance --json prints the ranking', () => {
    const r = kt(['study', 'importance', 'retrieval-all', '--storage', store.storage, '--json'])
    expect(r.status).toBe(0)
    const j = JSON.parse(r.stdout) as {
      method: string
      params: Array<{param: string; importance: number}>
      trials_used: number
    }
    expect(j.method).toMatch(/fANOVA/)
    expect(j.trials_used).toBeGreaterThan(8)
    expect(j.params.map((p) => p.param)).toContain('budget (fidelity)')
  })
})

describe('kt dashboard over a run folder', () => {
  it('reads every study file in it as one store', async () => {
    const {mkdirSync, copyFileSync} = await import('node:fs')
    const {runSearch: run} = await import('../../src/study/search.js')
    const folder = join(store.dir, 'run')
    mkdirSync(folder, {recursive: true})
    await run({
      storage: join(folder, 'studies.sqlite'),
      study: 'importance-like',
      objective: {name: 'branin'},
      optimizer: 'random',
      seed: 2,
      maxTrials: 9,
    })
    copyFileSync(store.storage, join(folder, 'retrieval-studies.sqlite'))
    const r = await openStudyReader(folder)
    try {
      const names = (await r.listStudies()).map((s) => s.name)
      expect(names).toEqual(expect.arrayContaining(['importance-like', 'retrieval-all', 'branin-random']))
      expect((await r.getStudy('importance-like'))?.trials).toHaveLength(9)
      expect((await r.getStudy('retrieval-all'))?.trials.length).toBeGreaterThan(5)
      expect(Object.keys(await r.versions())).toEqual(expect.arrayContaining(['importance-like', 'retrieval-all']))
    } finally {
      await r.close()
    }
    const empty = join(store.dir, 'empty')
    mkdirSync(empty, {recursive: true})
    const bad = kt(['dashboard', '--storage', empty, '--port', '0'])
    expect(bad.status).toBe(2)
    expect(bad.stderr.trim()).toMatch(
      /empty: expected a study file, a postgresql:\/\/ URL, or a folder holding \*\.sqlite study files, got a folder without any$/,
    )
  })
})
