import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchDashboard extends KtCommand {
  static override summary = 'The dashboard with a 10,000-trial study: page render in headless Chromium and the JSON endpoint, against their targets.'
  static override description = 'Writes a synthetic retrieval study of --trials trials (every retrieval parameter, the objective\'s metrics, three budgets) to a temporary SQLite store, serves it with kt dashboard and measures: the study\'s JSON endpoint (the first request, which reads and serialises the study, and 20 repeated ones, answered from the cache while nothing changed; target < 50 ms), and the study page in headless Debian Chromium from navigation to every chart drawn (median of --runs loads; target < 1 s). Needs /usr/bin/chromium and the playwright-core dev dependency.'
  static override examples = ['<%= config.bin %> bench dashboard --trials 200 --runs 1', '<%= config.bin %> bench dashboard --trials 500 --runs 1 --json']
  static override flags = {
    trials: Flags.integer({description: 'Trials in the synthetic study.', default: 10_000, min: 10}),
    runs: Flags.integer({description: 'Page loads (the median is reported).', default: 3, min: 1}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchDashboard)
    const {existsSync} = await import('node:fs')
    const {InputError} = await import('../../util/errors.js')
    if (!existsSync('/usr/bin/chromium')) throw new InputError('/usr/bin/chromium', "Debian's chromium (apt-get install chromium)", 'no such file')
    const {benchDashboard} = await import('../../bench/dashboard.js')
    const r = await benchDashboard({trials: flags.trials, runs: flags.runs})
    const ratio = (x: number, t: number) => `${(x / t).toFixed(2)}x of target`
    this.log(`study page, ${r.trials} trials, headless Chromium: median ${r.page_render_ms.median.toFixed(0)} ms (runs ${r.page_render_ms.runs.map((x) => x.toFixed(0)).join(', ')}); target < ${r.target_page_ms} ms: ${r.page_meets_target ? 'met' : 'MISSED'} (${ratio(r.page_render_ms.median, r.target_page_ms)})`)
    this.log(`  renderer main-thread busy time over those loads: median ${r.page_main_thread_ms.median.toFixed(0)} ms (${r.page_main_thread_ms.runs.map((x) => x.toFixed(0)).join(', ')}); load average ${(await import('node:os')).loadavg()[0].toFixed(1)} on ${(await import('node:os')).availableParallelism()} cores`)
    this.log(`JSON endpoint (${(r.endpoint_bytes / 1e6).toFixed(1)} MB): first ${r.endpoint_first_ms.toFixed(1)} ms, cached median ${r.endpoint_cached_ms.median.toFixed(1)} ms (max ${r.endpoint_cached_ms.max.toFixed(1)}); target < ${r.target_endpoint_ms} ms: ${r.endpoint_meets_target ? 'met' : 'MISSED'} (first ${ratio(r.endpoint_first_ms, r.target_endpoint_ms)}, cached ${ratio(r.endpoint_cached_ms.median, r.target_endpoint_ms)})`)
    return r
  }
}
