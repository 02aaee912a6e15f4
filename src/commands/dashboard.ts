import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {listenForInterrupt} from '../cli/interrupt.js'
import {DEFAULT_STORAGE} from '../study/model.js'

export default class DashboardCmd extends KtCommand {
  static override summary = 'A live, read-only web dashboard over a study store.'
  static override description =
    'Serves the studies of a study store (SQLite file) on http://127.0.0.1:PORT/: the studies with their state, trials, best value and last activity; per study the trials table (filter, sort), the best value against trials and against consumed budget, the Pareto front with the dominated trials, parallel coordinates, per-type results of routed studies, domain profiles with their rationale and parameter importance (fANOVA); several studies side by side. Pages poll for changes every second, so trials finished by another process appear without a reload. Read-only; stops on Ctrl-C.'
  static override examples = [
    '<%= config.bin %> dashboard --storage reports/seed42-plan226273690f7b',
    '<%= config.bin %> dashboard --storage reports/seed42-plan226273690f7b/retrieval-studies.sqlite',
    '<%= config.bin %> dashboard --storage kt-studies.sqlite --port 8080',
    '<%= config.bin %> dashboard --storage kt-studies.sqlite --port 0 --host 0.0.0.0 --token a-long-shared-secret',
  ]
  static override flags = {
    storage: Flags.string({
      description:
        'Study store: a SQLite file, a folder of them (a run folder: every *.sqlite in it), or a PostgreSQL database as postgresql://USER[:PASSWORD]@HOST:PORT/DB.',
      default: DEFAULT_STORAGE,
    }),
    port: Flags.integer({description: 'Port (0 = any free port).', default: 8765, min: 0, max: 65535}),
    host: Flags.string({
      description:
        'Address to bind; anything but a loopback address requires --token. Without a token only requests naming loopback in their Host header are answered.',
      default: '127.0.0.1',
    }),
    token: Flags.string({
      description:
        'Token every request must carry (at least 16 characters): Authorization: Bearer TOKEN, or open a page once with ?token=TOKEN (it sets a cookie). Required off loopback.',
      env: 'KT_DASHBOARD_TOKEN',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(DashboardCmd)
    const {openStudyReader} = await import('../study/reader.js')
    const {startDashboard} = await import('../dashboard/server.js')
    const reader = await openStudyReader(flags.storage)
    let dash
    try {
      dash = await startDashboard({reader, port: flags.port, host: flags.host, token: flags.token})
    } catch (error) {
      await reader.close()
      throw error
    }
    // listening before the URL is announced: a Ctrl-C right after it still stops the server cleanly
    const interrupt = listenForInterrupt()
    // announce the URL once every study is read, so the first page a user opens is served from the cache
    await dash.warmed
    if (this.jsonEnabled()) process.stdout.write(`${JSON.stringify({url: dash.url, storage: reader.location})}\n`)
    else this.log(`kt dashboard: ${dash.url} (studies in ${reader.location}; read-only; Ctrl-C stops)`)
    await new Promise((resolve) => interrupt.signal.addEventListener('abort', resolve))
    interrupt.dispose()
    await dash.close()
    await reader.close()
    return undefined
  }
}
