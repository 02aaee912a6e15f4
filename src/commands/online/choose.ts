import {KtCommand} from '../../cli/base.js'
import {eventTime, eventTimeFlags, tenantFlags} from '../../online/cli.js'

export default class OnlineChoose extends KtCommand {
  static override summary = 'Sample a configuration for one query (Thompson sampling: one bin per tuned parameter).'
  static override description = 'Draws an expected reward from every arm\'s posterior, plays the best bin of each parameter, logs the query (fsync) and prints its id (name it in feedback) and the configuration.'
  static override examples = ['<%= config.bin %> online choose --tenant acme', '<%= config.bin %> online choose --tenant acme --json']
  static override flags = {...tenantFlags, ...eventTimeFlags}

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineChoose)
    const {TenantStore} = await import('../../online/store.js')
    const {spaceById} = await import('../../online/spaces.js')
    const {renderTable} = await import('../../online/format.js')
    const store = TenantStore.open({dir: flags.dir, tenant: flags.tenant, resolveSpace: (id) => spaceById(id)})
    try {
      const {queryId, arms, config} = store.choose(eventTime(flags.time))
      if (!this.jsonEnabled()) {
        this.log(`query ${queryId}`)
        const dims = store.learner.bandit.dims
        const show = (v: unknown): string => (typeof v === 'number' ? String(Number(v.toPrecision(6))) : String(v))
        // Bins are 0-based as in --json; simplex members are drawn per bin, then the weights are
        // projected onto the floored simplex, so the played value can differ from the bin's value.
        this.log(renderTable(['parameter', 'bin', 'bin value', 'played'], dims.map((d, i) => [d.key, `${arms[i]} (0..${d.values.length - 1})`, show(d.values[arms[i]]), show(config[d.key])])))
        if (dims.some((d) => d.param.kind === 'simplex')) this.log('simplex members (fusion.*) play their drawn bins projected onto the floored simplex (they sum to 1)')
      }
      return {query_id: queryId, arms, config}
    } finally {
      store.close()
    }
  }
}
