import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {mkdtempSync, readFileSync, writeFileSync, mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {kt} from '../cli/helpers.js'
import {markCount, pointPosition, screenshot, startBrowser, watchedPage, type BrowserHandle} from './browser.js'

const dir = mkdtempSync(join(tmpdir(), 'kt-html-report-'))
const run = join(dir, 'run')
let handle: BrowserHandle | undefined
let skipReason: string | undefined

beforeAll(async () => {
  const r = kt(['run', '--out', run])
  expect(r.status, r.stderr).toBeLessThanOrEqual(1) // 1 = an acceptance criterion failed: the report is still complete
  const h = kt(['report', run, '--format', 'html'])
  expect(h.status, h.stderr).toBe(0)
  const started = await startBrowser()
  if (typeof started === 'string') {
    skipReason = started
    console.log(started)
  } else handle = started
})

afterAll(async () => {
  await handle?.close()
})

describe('kt report --format html in Chromium', () => {
  it("loads from disk with no console error and no failed request, every chart drawn, hover shows a trial's configuration, tables sort", async (ctx) => {
    if (!handle) return ctx.skip(skipReason)
    const {page, problems} = await watchedPage(handle.browser)
    const requests: string[] = []
    page.on('request', (r) => requests.push(r.url()))
    await page.goto(pathToFileURL(join(run, 'report.html')).href)
    await page.waitForSelector('body[data-rendered]', {timeout: 15_000})
    // self-contained: the page asked for nothing but itself
    expect(requests.filter((u) => !u.startsWith('file://') && !u.startsWith('data:'))).toEqual([])
    const report = JSON.parse(readFileSync(join(run, 'report.json'), 'utf8'))
    const ids = (report.phases.visualize.charts as Array<{id: string}>).map((c) => c.id)
    expect(ids).toContain('retrieval-front')
    for (const id of ids) expect(await markCount(page, id), id).toBeGreaterThan(0)
    // hover a point on the retrieval front: the tooltip names its configuration and metrics
    const front = report.phases.search.retrieval.front.points[0] as {trial: number; quality: number; p99_ms: number}
    await page.locator('[data-chart-id="retrieval-front"]').scrollIntoViewIfNeeded()
    const at = await pointPosition(page, 'retrieval-front', front.p99_ms, front.quality)
    await page.mouse.move(at.x, at.y)
    const tooltip = page.locator('#vg-tooltip-element')
    await tooltip.waitFor({state: 'visible', timeout: 3000})
    const text = await tooltip.innerText()
    expect(text).toContain(String(front.trial === -1 ? 'defaults' : front.trial))
    expect(text).toMatch(/bm25\.k1/)
    expect(text).toMatch(/p99_ms/)
    await screenshot(page, 'report-hover', false)
    // a table sorts on a header click: the Phase 1 property table by its cases column
    const table = page.locator('table.sortable').nth(1)
    await table.locator('th').nth(1).click()
    const cases = (await table.locator('tbody tr td:nth-child(2)').allInnerTexts()).map(Number)
    expect(cases).toEqual([...cases].sort((a, b) => a - b))
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0))
    await screenshot(page, 'report')
    expect(problems).toEqual([])
    await page.close()
  })
})

describe('kt report --format html: bad input', () => {
  it('a malformed report.json gives the same one-line error as --format md, exit 2', () => {
    const bad = join(dir, 'bad')
    mkdirSync(bad, {recursive: true})
    const report = JSON.parse(readFileSync(join(run, 'report.json'), 'utf8'))
    delete report.phases.search.grid
    writeFileSync(join(bad, 'report.json'), JSON.stringify(report))
    const md = kt(['report', bad, '--format', 'md'])
    const html = kt(['report', bad, '--format', 'html'])
    expect(md.status).toBe(2)
    expect(html.status).toBe(2)
    expect(html.stderr).toBe(md.stderr)
    expect(html.stderr.trim().split('\n')).toHaveLength(1)
    writeFileSync(join(bad, 'report.json'), '{"schema": "kt.report", ')
    const a = kt(['report', bad, '--format', 'md'])
    const b = kt(['report', bad, '--format', 'html'])
    expect([a.status, b.status]).toEqual([2, 2])
    expect(b.stderr).toBe(a.stderr)
  })
})
