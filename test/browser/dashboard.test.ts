import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {kt} from '../cli/helpers.js'
import {makeStore, startDashboardProcess} from '../dashboard/fixture.js'
import {markCount, pointPosition, screenshot, startBrowser, watchedPage, type BrowserHandle} from './browser.js'

/** The bound on a trial finished by another process showing up without a reload. */
const LIVE_WITHIN_MS = 2000

let handle: BrowserHandle | undefined
let skipReason: string | undefined
let dash: Awaited<ReturnType<typeof startDashboardProcess>> | undefined
let storage = ''

beforeAll(async () => {
  const started = await startBrowser()
  if (typeof started === 'string') {
    skipReason = started
    console.log(started)
    return
  }
  handle = started
  storage = (await makeStore()).storage
  dash = await startDashboardProcess(storage)
})

afterAll(async () => {
  await handle?.close()
  await dash?.stop()
})

async function open(path: string) {
  const {page, problems} = await watchedPage(handle!.browser)
  await page.goto(new URL(path, dash!.url).href)
  await page.waitForSelector('body[data-rendered]', {timeout: 15_000})
  return {page, problems}
}

describe('kt dashboard in Chromium', () => {
  it('studies list: every study with state, trials, best value and last activity', async (ctx) => {
    if (!handle) return ctx.skip(skipReason)
    const {page, problems} = await open('/')
    const rows = page.locator('#studies tbody tr')
    expect(await rows.count()).toBe(8) // retrieval-all, five per-type studies, two branin studies
    expect(await page.locator('#studies tbody tr[data-study="branin-random"] td').nth(5).innerText()).toBe('30')
    await page.locator('#studies th', {hasText: 'trials'}).click()
    await screenshot(page, 'dashboard-list')
    expect(problems).toEqual([])
    await page.close()
  })

  it('study page: every chart drawn, hovering a front point shows its configuration, importance ranked', async (ctx) => {
    if (!handle) return ctx.skip(skipReason)
    const {page, problems} = await open('/study/retrieval-all')
    await page.waitForFunction(() => (globalThis as any).ktCharts?.importance !== undefined, undefined, {
      timeout: 15_000,
    })
    for (const id of ['history', 'budget', 'front', 'parallel', 'per_type', 'importance'])
      expect(await markCount(page, id), id).toBeGreaterThan(0)
    expect(await page.locator('#profiles > li').count()).toBe(3)
    const data = (await (await fetch(new URL('/api/studies/retrieval-all', dash!.url))).json()) as any
    const v = data.view
    const trial = v.front.points[0] as number
    const i = v.trials.id.indexOf(trial)
    await page.locator('#chart-front').scrollIntoViewIfNeeded()
    const at = await pointPosition(page, 'front', v.trials.metric.p99_ms[i], v.trials.metric.quality[i])
    await page.mouse.move(at.x, at.y)
    const tooltip = page.locator('#vg-tooltip-element')
    await tooltip.waitFor({state: 'visible', timeout: 3000})
    const text = await tooltip.innerText()
    expect(text).toMatch(new RegExp(`trial\\s+${trial}\\b`))
    expect(text).toMatch(/bm25\.k1/)
    await screenshot(page, 'dashboard-front-hover', false)
    // the trials table filters and sorts over all trials
    await page.fill('#filter', 'set=dominated')
    expect(await page.locator('#trial-count').innerText()).toBe(
      `${v.front.dominated.length} of ${v.trials.id.length} trials`,
    )
    await page.fill('#filter', '')
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0))
    await screenshot(page, 'dashboard-study')
    expect(problems).toEqual([])
    await page.close()
  })

  it('side by side: two studies on one chart', async (ctx) => {
    if (!handle) return ctx.skip(skipReason)
    const {page, problems} = await open('/compare?study=branin-random&study=branin-bohb')
    for (const id of ['compare-trials', 'compare-budget']) expect(await markCount(page, id), id).toBeGreaterThan(0)
    // one line per study: the legend names both
    const labels = await page.locator('#chart-compare-trials svg text').allTextContents()
    expect(labels).toEqual(expect.arrayContaining(['branin-random', 'branin-bohb']))
    await screenshot(page, 'dashboard-compare')
    expect(problems).toEqual([])
    await page.close()
  })

  it(`live: a trial finished by another process shows up within ${LIVE_WITHIN_MS / 1000} s, without a reload`, async (ctx) => {
    if (!handle) return ctx.skip(skipReason)
    const {page, problems} = await open('/study/branin-random')
    expect(await page.locator('#trial-count').innerText()).toBe('30 of 30 trials')
    await page.evaluate(() => ((globalThis as any).ktNoReload = true))
    // polls that find nothing new redraw nothing
    const drawn = await page.getAttribute('body', 'data-rendered')
    await page.waitForTimeout(1500)
    expect(await page.getAttribute('body', 'data-rendered')).toBe(drawn)
    const r = kt(['search', '--resume', 'branin-random', '--storage', storage, '--trials', '31'])
    expect(r.status, r.stderr).toBe(0)
    await page.waitForFunction(
      () => (globalThis as any).document.querySelector('#trial-count')?.textContent === '31 of 31 trials',
      undefined,
      {timeout: LIVE_WITHIN_MS},
    )
    expect(await page.evaluate(() => (globalThis as any).ktNoReload)).toBe(true) // same document: no reload happened
    expect(problems).toEqual([])
    await page.close()
  })
})
