/**
 * One headless Debian Chromium per test file, driven by playwright-core (Playwright's own browser
 * download cannot work here). Outside CI, when Chromium is missing or cannot start, the browser
 * tests skip with one line saying why; under CI=true they must run, so a failure to start fails.
 */
import {existsSync, mkdirSync} from 'node:fs'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {CHROMIUM_ARGS} from '../../src/bench/dashboard.js'

const CHROMIUM = process.env.KT_CHROMIUM ?? '/usr/bin/chromium'
const SCREENSHOT_DIR = join(process.cwd(), '.ci-out', 'screenshots')

export interface BrowserHandle {
  readonly browser: Browser
  close(): Promise<void>
}

/** Starts Chromium, or returns the one-line reason it cannot (outside CI only; in CI it throws). */
export async function startBrowser(): Promise<BrowserHandle | string> {
  const inCi = process.env.CI === 'true'
  if (!existsSync(CHROMIUM)) {
    if (inCi) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`)
    return `browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`
  }
  try {
    const {chromium} = await import('playwright-core')
    // Playwright gives every launch a fresh --user-data-dir of its own (and refuses one in args)
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      timeout: 20_000,
    })
    return {browser, close: () => browser.close()}
  } catch (error) {
    if (inCi) throw error
    return `browser tests skipped: Chromium at ${CHROMIUM} did not start (${String((error as Error).message).split('\n')[0]})`
  }
}

/** A page that records console errors, page errors and failed requests. */
export async function watchedPage(browser: Browser): Promise<{page: Page; problems: string[]}> {
  const page = await browser.newPage({viewport: {width: 1300, height: 900}})
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`))
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`)
  })
  return {page, problems}
}

export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, {recursive: true})
  const file = join(SCREENSHOT_DIR, `${name}.png`)
  await page.screenshot({path: file, fullPage})
  return file
}

/** Drawn marks of a chart (window.ktMarkCount, assets/web/charts.js). */
export function markCount(page: Page, id: string): Promise<number> {
  return page.evaluate((chart) => (globalThis as unknown as {ktMarkCount(id: string): number}).ktMarkCount(chart), id)
}

/** Viewport coordinates of a datum in chart `id`: its x and y values through the chart's own scales, offset by the plot's origin. */
export async function pointPosition(
  page: Page,
  id: string,
  xValue: number,
  yValue: number,
): Promise<{x: number; y: number}> {
  return page.evaluate(
    ({chart, xValue, yValue}) => {
      const view = (globalThis as unknown as {ktCharts: Record<string, any>}).ktCharts[chart]
      const el = view.container()
      const box = el.querySelector('svg, canvas').getBoundingClientRect()
      const [ox, oy] = view.origin() as [number, number]
      const pad = view.padding() as {left: number; top: number}
      return {
        x: box.left + pad.left + ox + view.scale('x')(xValue),
        y: box.top + pad.top + oy + view.scale('y')(yValue),
      }
    },
    {chart: id, xValue, yValue},
  )
}
