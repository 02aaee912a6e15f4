import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchDashboard extends KtCommand {
  static override summary =
    'The dashboard with a synthetic study (10,000 trials by default): page render in headless Chromium and the JSON endpoint (cold, after a new trial, repeated), against their targets.'
  static override description =
    "Writes a synthetic retrieval study of --trials trials (every retrieval parameter, the objective's metrics, three budgets) to a temporary SQLite store, serves it with kt dashboard and measures the study's JSON endpoint, target < 50 ms each: cold (a new server with its start-up warm-up off, first request: reads and analyses the whole study; median of 3 servers), after a new trial (another connection adds a finished trial, then one request; 9 trials, one budget cycle), and repeated (nothing committed since; 20 requests); also the start-up warm-up the real server does, and the repeated request gzipped as a client not on loopback gets it. Then the study page in headless Debian Chromium from navigation to every chart drawn (median of --runs loads; target < 1 s, < 1.5 s from 100,000 trials). Prints the load average beside the figures: under load they are slower. Needs /usr/bin/chromium and the playwright-core dev dependency."
  static override examples = [
    '<%= config.bin %> bench dashboard --trials 200 --runs 1',
    '<%= config.bin %> bench dashboard --trials 500 --runs 1 --json',
  ]
  static override flags = {
    trials: Flags.integer({description: 'Trials in the synthetic study.', default: 10_000, min: 10}),
    runs: Flags.integer({description: 'Page loads (the median is reported).', default: 3, min: 1}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchDashboard)
    const {existsSync} = await import('node:fs')
    const {InputError} = await import('../../util/errors.js')
    if (!existsSync('/usr/bin/chromium'))
      throw new InputError('/usr/bin/chromium', "Debian's chromium (apt-get install chromium)", 'no such file')
    const {benchDashboard} = await import('../../bench/dashboard.js')
    const r = await benchDashboard({trials: flags.trials, runs: flags.runs})
    const ms = (x: number) => `${x.toFixed(1)} ms`
    const runs = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ')
    const verdict = (x: number, t: number) => `${x < t ? 'met' : 'MISSED'} (${(x / t).toFixed(2)}x of target)`
    const e = r.endpoint
    const t = r.target_endpoint_ms
    this.log(
      `machine load: ${r.load.start.toFixed(1)} at the start, ${r.load.end.toFixed(1)} at the end (1-min load average, ${r.load.cores} cores); figures measured under load are slower`,
    )
    this.log(
      `study page, ${r.trials} trials, headless Chromium: median ${r.page_render_ms.median.toFixed(0)} ms (runs ${runs(r.page_render_ms.runs)}); target < ${r.target_page_ms} ms: ${verdict(r.page_render_ms.median, r.target_page_ms)}`,
    )
    this.log(
      `  renderer main-thread busy time over those loads: median ${r.page_main_thread_ms.median.toFixed(0)} ms (${runs(r.page_main_thread_ms.runs)})`,
    )
    this.log(`study JSON endpoint (${(e.bytes / 1e6).toFixed(1)} MB), target < ${t} ms:`)
    this.log(
      `  cold (new server, no warm-up; reads and analyses the whole study): median ${ms(e.cold_ms.median)} (runs ${runs(e.cold_ms.runs)}): ${verdict(e.cold_ms.median, t)}`,
    )
    this.log(
      `  after another connection adds a trial (reads that trial only; rows read ${e.new_trial_rows_read.join(', ')}): median ${ms(e.new_trial_ms.median)}, max ${ms(e.new_trial_ms.max)} (runs ${runs(e.new_trial_ms.runs)}): ${verdict(e.new_trial_ms.median, t)}`,
    )
    this.log(
      `  repeated (nothing committed since): median ${ms(e.repeated_ms.median)}, max ${ms(e.repeated_ms.max)}: ${verdict(e.repeated_ms.median, t)}`,
    )
    this.log(
      `  the real server warms up at start (${ms(e.warmup_ms)} from start to every study read); its first request after that: ${ms(e.first_after_warmup_ms)}`,
    )
    this.log(
      `  repeated, gzip level 1 (${(e.gzip_bytes / 1e6).toFixed(1)} MB; what a client not on loopback gets, timed on loopback): median ${ms(e.repeated_gzip_ms.median)}`,
    )
    return r
  }
}
