/**
 * `kt bench dashboard`: the study page with 10,000 trials in headless Chromium (time from the
 * navigation to every chart drawn, importance excluded: it loads after the page) and the study's
 * JSON endpoint (first request, which reads and serialises the study, and repeated requests, which
 * answer from the cache while the study's version is unchanged). Targets from issue 12.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {RETRIEVAL_SPACE} from '../engine/retrieval/space.js'
import {Encoding} from '../search/encoding.js'
import {startDashboard} from '../dashboard/server.js'
import {openStudyReader} from '../study/reader.js'
import {openStorage} from '../study/storage.js'
import type {StudyRecord, TrialRow} from '../study/store.js'
import {Rng} from '../util/rng.js'

export const TARGET_PAGE_MS = 1000
export const TARGET_ENDPOINT_MS = 50
export const BENCH_TRIALS = 10_000
/** Fidelity tiers of the synthetic study (like BOHB's on the retrieval fixtures). */
const BUDGETS = [1, 3, 9]

/** A retrieval-like study: every parameter of the retrieval space, the objective's metrics, three budgets. */
export function syntheticStudy(trials: number, seed = 42): {study: StudyRecord; trials: TrialRow[]} {
  const enc = new Encoding(RETRIEVAL_SPACE)
  const rng = new Rng(seed)
  const now = new Date(Date.UTC(2026, 0, 1)).getTime()
  const study: StudyRecord = {
    name: `bench-${trials}`, objective: {name: 'retrieval', options: {metric: 'recall@10'}}, optimizer: 'random', options: {}, seed,
    space: RETRIEVAL_SPACE, createdAt: new Date(now).toISOString(), updatedAt: new Date(now + trials * 1000).toISOString(), state: 'finished',
  }
  const types = ['entity_lookup', 'temporal', 'multi_hop', 'simple_factual', 'exploratory']
  const rows: TrialRow[] = []
  for (let id = 0; id < trials; id++) {
    const config = enc.decode(enc.sampleUniform(rng)) as Record<string, string | number | boolean>
    const budget = BUDGETS[id % 9 === 8 ? 2 : id % 3 === 2 ? 1 : 0]
    const quality = Math.min(1, Math.max(0, 0.4 + 0.2 * Number(config['bm25.b']) - 0.1 * Number(config['bm25.k1']) / 3 + 0.1 * rng.next()))
    const p99 = 0.04 + 0.3 * rng.next() ** 4
    const metrics: Record<string, number> = {quality, p99_ms: p99, p50_ms: p99 * 0.8, measured_p99_ms: p99 * 40, measured_p50_ms: p99 * 4, work_p99: 1000 * p99 * 20, queries: 52 * budget / 9}
    for (const t of types) {
      metrics[`quality.${t}`] = Math.min(1, Math.max(0, quality + 0.2 * (rng.next() - 0.5)))
      metrics[`queries.${t}`] = 10
    }
    const started = new Date(now + id * 1000).toISOString()
    rows.push({
      study: study.name, id, configId: `${id}`, config, budget, continues: null, info: null, status: 'ok', loss: -quality, values: [-quality, p99], metrics,
      checkpoint: null, error: null, tellSeq: id, asksBefore: id + 1, startedAt: started, finishedAt: new Date(now + id * 1000 + 500).toISOString(), durationMs: 500, worker: null,
    })
  }
  return {study, trials: rows}
}

export interface DashboardBench {
  readonly trials: number
  readonly endpoint_first_ms: number
  readonly endpoint_cached_ms: {median: number; max: number}
  readonly endpoint_bytes: number
  readonly page_render_ms: {median: number; runs: number[]}
  /** Renderer main-thread task time over the same loads (includes the page's polls while loading). */
  readonly page_main_thread_ms: {median: number; runs: number[]}
  readonly target_page_ms: number
  readonly target_endpoint_ms: number
  readonly page_meets_target: boolean
  readonly endpoint_meets_target: boolean
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor((s.length - 1) / 2)]
}

export async function benchDashboard(options: {trials?: number; runs?: number; chromium?: string} = {}): Promise<DashboardBench> {
  const n = options.trials ?? BENCH_TRIALS
  const dir = mkdtempSync(join(tmpdir(), 'kt-bench-dashboard-'))
  const storagePath = join(dir, 'studies.sqlite')
  const storage = await openStorage(storagePath)
  const {study, trials} = syntheticStudy(n)
  await storage.importStudy(study, trials)
  await storage.close()
  const reader = await openStudyReader(storagePath)
  const dash = await startDashboard({reader, port: 0})
  let browser: import('playwright-core').Browser | undefined
  try {
    const url = new URL(`/api/studies/${study.name}`, dash.url).href
    const timeGet = async (): Promise<{ms: number; bytes: number}> => {
      const t0 = performance.now()
      const body = await (await fetch(url)).arrayBuffer()
      return {ms: performance.now() - t0, bytes: body.byteLength}
    }
    const first = await timeGet()
    const cached: number[] = []
    for (let i = 0; i < 20; i++) cached.push((await timeGet()).ms)
    const {chromium} = await import('playwright-core')
    browser = await chromium.launch({
      executablePath: options.chromium ?? '/usr/bin/chromium', headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
    const runs: number[] = []
    const busy: number[] = []
    for (let i = 0; i < (options.runs ?? 3); i++) {
      // a fresh page per load, so Chrome's TaskDuration (the renderer's main-thread busy time) covers this load alone
      const page = await browser.newPage({viewport: {width: 1300, height: 900}})
      const cdp = await page.context().newCDPSession(page)
      await cdp.send('Performance.enable')
      await page.goto(new URL(`/study/${study.name}`, dash.url).href)
      await page.waitForSelector('body[data-rendered]', {timeout: 60_000})
      // performance.now() counts from the navigation's start: request, parse, fetch, every chart drawn
      runs.push(await page.evaluate(() => Number((globalThis as unknown as {ktRenderedAt: number}).ktRenderedAt)))
      busy.push(1000 * ((await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? Number.NaN))
      await page.close()
    }
    const pageMs = median(runs)
    const cachedMedian = median(cached)
    return {
      trials: n, endpoint_first_ms: first.ms, endpoint_cached_ms: {median: cachedMedian, max: Math.max(...cached)}, endpoint_bytes: first.bytes,
      page_render_ms: {median: pageMs, runs}, page_main_thread_ms: {median: median(busy), runs: busy}, target_page_ms: TARGET_PAGE_MS, target_endpoint_ms: TARGET_ENDPOINT_MS,
      page_meets_target: pageMs < TARGET_PAGE_MS, endpoint_meets_target: cachedMedian < TARGET_ENDPOINT_MS && first.ms < TARGET_ENDPOINT_MS,
    }
  } finally {
    await browser?.close()
    await dash.close()
    await reader.close()
    rmSync(dir, {recursive: true, force: true})
  }
}
