/**
 * The dashboard's data side: each study's cache brought up to date from the StudyReader, the
 * bodies of /api/studies and /api/studies/NAME (cached until the study, or a sibling, changes),
 * and fANOVA importance fits, one per study and target at a time.
 */
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'
import {InputError} from '../util/errors.js'
import {studyImportance, type ImportanceTrial, type StudyImportance} from '../search/parameter-importance.js'
import type {ParamSpace} from '../space/index.js'
import type {StudyReader, StudySummary} from '../study/reader.js'
import {studyListEntry, type StudyView} from './views.js'
import {StudyCache} from './study-cache.js'
import {ColumnBlocks, studyBodyChunks} from './body.js'
import {importanceChart, studyCharts} from './charts.js'

const importanceWorkerFile = fileURLToPath(new URL('./parameter-importance-worker.js', import.meta.url))

/**
 * fANOVA importance on a worker thread (a forest on thousands of trials takes seconds, and the
 * server must keep answering the pages' polls meanwhile); in this thread when running from the
 * TypeScript sources (tests), where there is no compiled worker.
 */
function importanceOffThread(
  space: ParamSpace | undefined,
  trials: readonly ImportanceTrial[],
  target: string,
  seed: number,
): Promise<StudyImportance> {
  if (!existsSync(importanceWorkerFile) || !import.meta.url.endsWith('.js'))
    return Promise.resolve().then(() => studyImportance(space, trials, {target, seed}))
  return new Promise((resolve, reject) => {
    const worker = new Worker(importanceWorkerFile)
    const slim = trials.map((t) => ({
      id: t.id,
      status: t.status,
      budget: t.budget,
      loss: t.loss,
      config: t.config,
      metrics: t.metrics,
    }))
    worker.once(
      'message',
      (msg: {result?: StudyImportance; error?: string; input?: {where: string; expected: string; got?: string}}) => {
        void worker.terminate()
        if (msg.result) resolve(msg.result)
        else
          reject(msg.input ? new InputError(msg.input.where, msg.input.expected, msg.input.got) : new Error(msg.error))
      },
    )
    worker.once('error', (e) => {
      void worker.terminate()
      reject(e)
    })
    worker.postMessage({id: 0, space, trials: slim, target, seed})
  })
}

/** How often pages poll /api/version (ms): a trial finished elsewhere shows within two polls' time of 2 s. */
export const POLL_MS = 1000

/** A body cached until its key (the study's version, with its siblings') changes, and its gzip, made on first demand. */
export interface Cached {
  key: string
  /** The body, or its chunks in order (a study's: most are cached column blocks shared with the previous body). */
  body: string | Buffer | Buffer[]
  gzip?: Buffer
  /** The reader's change counter when the body was last known current: the same counter skips every read. */
  counter?: string
}

export class DashboardData {
  private readonly caches = new Map<string, StudyCache>()
  private readonly blocks = new Map<string, ColumnBlocks>()
  private readonly studyCache = new Map<string, Cached>()
  private readonly importanceCache = new Map<string, Cached>()
  private readonly importanceJobs = new Map<string, Promise<string>>()
  private listCache: Cached | undefined

  constructor(
    readonly reader: StudyReader,
    private readonly seed: number,
  ) {}

  /** What the last refresh of a study's cache read. */
  refreshStats(study: string): StudyCache['lastRefresh'] | undefined {
    return this.caches.get(study)?.lastRefresh
  }

  /** The study's cache brought up to date, or undefined when there is no such study. */
  async loaded(name: string, counter: string | undefined): Promise<StudyCache | undefined> {
    let c = this.caches.get(name)
    if (!c) this.caches.set(name, (c = new StudyCache(this.reader, name)))
    if ((await c.refresh(counter)) === 'missing') {
      this.caches.delete(name)
      this.blocks.delete(name)
      return undefined
    }
    return c
  }

  /** Routed studies: the per-type studies share the name prefix (PREFIX-all, PREFIX-<type>). */
  private async siblingsOf(name: string, counter: string | undefined): Promise<StudyCache[]> {
    if (!name.endsWith('-all')) return []
    const prefix = name.slice(0, -'-all'.length)
    const out: StudyCache[] = []
    for (const n of Object.keys(await this.reader.versions())) {
      if (n === name || !n.startsWith(`${prefix}-`)) continue
      const sib = await this.loaded(n, counter)
      if (sib) out.push(sib)
    }
    return out
  }

  async viewOf(
    name: string,
    counter: string | undefined,
  ): Promise<{cache: StudyCache; view: () => StudyView; key: string} | undefined> {
    const cache = await this.loaded(name, counter)
    if (!cache) return undefined
    const sibs = await this.siblingsOf(name, counter)
    const key = [cache.version, ...sibs.map((s) => `${s.name}=${s.version}`)].join('\n')
    return {cache, key, view: () => cache.view(sibs.map((s) => ({name: s.name, trials: s.trials})))}
  }

  /** A study's page data (undefined: no such study). */
  async studyBody(name: string): Promise<Cached | undefined> {
    const counter = await this.reader.changeCounter()
    const hit = this.studyCache.get(name)
    if (hit && counter !== undefined && hit.counter === counter) return hit
    const got = await this.viewOf(name, counter)
    if (!got) {
      this.studyCache.delete(name)
      return undefined
    }
    if (hit && hit.key === got.key) {
      hit.counter = counter
      return hit
    }
    const view = got.view()
    let b = this.blocks.get(name)
    if (!b) this.blocks.set(name, (b = new ColumnBlocks()))
    const entry: Cached = {
      key: got.key,
      counter,
      body: studyBodyChunks(
        {version: got.cache.version!, view, charts: studyCharts(view), pollMs: POLL_MS},
        b,
        got.cache.takeChangedFrom(),
      ),
    }
    this.studyCache.set(name, entry)
    return entry
  }

  async studiesList(): Promise<Cached> {
    const counter = await this.reader.changeCounter()
    if (this.listCache && counter !== undefined && this.listCache.counter === counter) return this.listCache
    const list: StudySummary[] = await this.reader.listStudies()
    const studies = []
    for (const s of list) {
      const c = await this.loaded(s.name, counter)
      studies.push(studyListEntry(s, c?.trials ?? []))
    }
    const body = JSON.stringify({
      location: this.reader.location,
      studies,
      versions: await this.reader.versions(),
      poll_ms: POLL_MS,
    })
    return (this.listCache = {key: '', body, counter})
  }

  /**
   * The importance body of a study for a target (undefined: no such study). One fit per study and
   * target at a time (a forest takes seconds of a core): a request while one runs gets its result,
   * even if trials arrived since (the body names its version and trial count); the page asks again
   * on its next redraw and then starts a fit of the newer trials.
   */
  async importanceBody(name: string, target: string): Promise<string | undefined> {
    const cache = await this.loaded(name, await this.reader.changeCounter())
    if (!cache) return undefined
    const version = cache.version!
    const key = `${name}\u0000${target}`
    const hit = this.importanceCache.get(key)
    if (hit && hit.key === version) return hit.body as string
    let job = this.importanceJobs.get(key)
    if (!job) {
      const study = cache.record!
      const rows = [...cache.trials]
      const fit = (async () => {
        const imp: StudyImportance = await importanceOffThread(study.space as ParamSpace, rows, target, this.seed)
        const body = JSON.stringify({
          version,
          importance: imp,
          chart: importanceChart(
            target === 'loss' ? `the loss (${(study.objective as {name?: string}).name ?? 'objective'})` : target,
          ),
        })
        this.importanceCache.set(key, {key: version, body})
        return body
      })()
      this.importanceJobs.set(key, (job = fit))
      void fit.catch(() => undefined).finally(() => this.importanceJobs.delete(key))
    }
    return job
  }
}
