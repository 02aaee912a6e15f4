import {KtCommand} from '../../cli/base.js'
import {tenantFlags} from '../../online/cli.js'

export default class OnlineStatus extends KtCommand {
  static override summary = 'Show a tenant\'s counters and what its bandits currently believe.'
  static override description = 'Opens the tenant (replaying its log after the last snapshot, or rebuilding from the whole log when the snapshot is corrupt) and prints the feedback counters and, per tuned parameter, the bin with the best posterior mean, that mean and the evidence behind it. It shows the tenant as of its last logged event and writes no event (so it takes no --time): feedback windows that have run out since then close at the next choose or feedback.'
  static override examples = ['<%= config.bin %> online status --tenant acme', '<%= config.bin %> online status --tenant acme --json']
  static override flags = {...tenantFlags}

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineStatus)
    const {TenantStore} = await import('../../online/store.js')
    const {spaceById} = await import('../../online/spaces.js')
    const {renderTable} = await import('../../online/format.js')
    const {DEFAULT_FEEDBACK} = await import('../../online/bandit.js')
    const {snakeKeys} = await import('../../util/json-keys.js')
    const store = TenantStore.open({dir: flags.dir, tenant: flags.tenant, resolveSpace: (id) => spaceById(id)})
    try {
      const learner = store.learner
      const bandit = learner.bandit
      const best = bandit.bestArms()
      const dims = bandit.dims.map((d, i) => {
        const p = bandit.posteriors[i]
        return {key: d.key, best_bin: best[i], best_value: d.values[best[i]], best_mean_reward: p.meanReward(best[i]), evidence: Array.from({length: p.arms}, (_, a) => p.evidence(a))}
      })
      const report = {tenant: flags.tenant, queries: bandit.queries, pending: learner.pendingCount, counters: snakeKeys(learner.counters), open: snakeKeys(store.openReport), settings: snakeKeys(bandit.settings), dimensions: dims}
      if (!this.jsonEnabled()) {
        this.log(`tenant ${flags.tenant}: ${bandit.queries} queries, ${learner.pendingCount} awaiting feedback; forgetting ${bandit.settings.forgetting.kind}, sampler ${bandit.settings.sampler}, levels ${bandit.settings.levels}, feedback ${bandit.settings.feedback ?? DEFAULT_FEEDBACK}, implicit window ${learner.windowMs} ms`)
        this.log(Object.entries(learner.counters).map(([k, v]) => `${k} ${v}`).join(', '))
        if (store.openReport.rebuilt) this.log(`state rebuilt from the log: ${store.openReport.rebuilt}`)
        this.log(renderTable(['parameter', 'best bin', 'bin value', 'mean reward', 'evidence (all bins)'], dims.map((d) => [d.key, `${d.best_bin} (0..${d.evidence.length - 1})`, typeof d.best_value === 'number' ? String(Number(d.best_value.toPrecision(6))) : String(d.best_value), d.best_mean_reward.toFixed(3), d.evidence.reduce((a, b) => a + b, 0).toFixed(1)])))
      }
      return report
    } finally {
      store.close()
    }
  }
}
