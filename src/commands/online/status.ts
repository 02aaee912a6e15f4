import {KtCommand} from '../../cli/base.js'
import {tenantFlags} from '../../online/cli.js'

export default class OnlineStatus extends KtCommand {
  static override summary = "Show a tenant's counters and what its bandits currently believe."
  static override description =
    'Opens the tenant (replaying its log after the last snapshot, or rebuilding from the whole log when the snapshot is corrupt) and prints the feedback counters and, per tuned parameter, the bin with the best posterior mean, that mean and the evidence behind it. It shows the tenant as of its last logged event and writes no event (so it takes no --time): feedback windows that have run out since then close at the next choose or feedback.'
  static override examples = [
    '<%= config.bin %> online status --tenant acme',
    '<%= config.bin %> online status --tenant acme --json',
  ]
  static override flags = {...tenantFlags}

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineStatus)
    const {openTenant} = await import('../../online/library.js')
    const {renderTable} = await import('../../online/format.js')
    const {DEFAULT_FEEDBACK} = await import('../../online/bandit.js')
    const tenant = openTenant({dir: flags.dir, tenant: flags.tenant})
    try {
      const report = tenant.status()
      const learner = tenant.store.learner
      const bandit = learner.bandit
      const dims = report.dimensions
      const store = tenant.store
      if (!this.jsonEnabled()) {
        this.log(
          `tenant ${flags.tenant}: ${report.queries} queries, ${learner.pendingCount} awaiting feedback; forgetting ${bandit.settings.forgetting.kind}, sampler ${bandit.settings.sampler}, levels ${bandit.settings.levels}, feedback ${bandit.settings.feedback ?? DEFAULT_FEEDBACK}, implicit window ${learner.windowMs} ms`,
        )
        this.log(
          Object.entries(learner.counters)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        )
        const prior = report.prior
        if (prior)
          this.log(
            `prior: ${prior.kind} profile ${prior.name} from ${prior.file} (validation ${prior.verdict}${prior.forced ? `; forced past the deploy gate (${prior.gate}), reason: ${prior.reason}` : ''})${Object.keys(prior.overrides).length > 0 ? `; overrides seed ${Object.keys(prior.overrides).join(', ')}` : ''}`,
          )
        if (store.openReport.rebuilt) this.log(`state rebuilt from the log: ${store.openReport.rebuilt}`)
        this.log(
          renderTable(
            ['parameter', 'best bin', 'bin value', 'mean reward', 'evidence (all bins)'],
            dims.map((d) => [
              d.key,
              `${d.best_bin} (0..${d.evidence.length - 1})`,
              typeof d.best_value === 'number' ? String(Number(d.best_value.toPrecision(6))) : String(d.best_value),
              d.best_mean_reward.toFixed(3),
              d.evidence.reduce((a, b) => a + b, 0).toFixed(1),
            ]),
          ),
        )
        if (report.types)
          for (const [type, t] of Object.entries(report.types))
            this.log(`type ${type}: ${t.queries} queries, best bins ${t.best_bins.join(' ')}`)
      }
      return report
    } finally {
      await tenant.close()
    }
  }
}
