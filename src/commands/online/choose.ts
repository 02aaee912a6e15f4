import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {eventTime, eventTimeFlags, tenantFlags} from '../../online/cli.js'

export default class OnlineChoose extends KtCommand {
  static override summary = 'Sample a configuration for one query (Thompson sampling: one bin per tuned parameter).'
  static override description =
    "Draws an expected reward from every arm's posterior, plays the best bin of each parameter, logs the query (fsync) and prints its id (name it in feedback) and the configuration."
  static override examples = [
    '<%= config.bin %> online choose --tenant acme',
    '<%= config.bin %> online choose --tenant acme --json',
  ]
  static override flags = {
    ...tenantFlags,
    ...eventTimeFlags,
    type: Flags.string({
      description:
        "The query's type (the retrieval classifier's: entity_lookup, temporal, multi_hop, simple_factual, exploratory); a tenant created with --per-type plays that type's bandits.",
    }),
    'query-id': Flags.string({
      description:
        'Your own id for the query (printable ASCII, at most 128 characters, not a bare integer); feedback may then name it. Default: kt numbers the queries 1, 2, ...',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineChoose)
    const {openTenant} = await import('../../online/library.js')
    const {renderTable} = await import('../../online/format.js')
    const tenant = openTenant({dir: flags.dir, tenant: flags.tenant})
    try {
      const choice = await tenant.choose({
        now: eventTime(flags.time),
        ...(flags.type === undefined ? {} : {type: flags.type}),
        ...(flags['query-id'] === undefined ? {} : {query_id: flags['query-id']}),
      })
      const {arms, config} = choice
      if (!this.jsonEnabled()) {
        this.log(`query ${choice.query_id}${choice.type ? ` (${choice.type})` : ''}`)
        const dims = tenant.store.learner.bandit.dims
        const show = (v: unknown): string => (typeof v === 'number' ? String(Number(v.toPrecision(6))) : String(v))
        // Bins are 0-based as in --json; simplex members are drawn per bin, then the weights are
        // projected onto the floored simplex, so the played value can differ from the bin's value.
        this.log(
          renderTable(
            ['parameter', 'bin', 'bin value', 'played'],
            dims.map((d, i) => [
              d.key,
              `${arms[i]} (0..${d.values.length - 1})`,
              show(d.values[arms[i]]),
              show(config[d.key]),
            ]),
          ),
        )
        if (dims.some((d) => d.param.kind === 'simplex'))
          this.log(
            'simplex members (fusion.*) play their drawn bins projected onto the floored simplex (they sum to 1)',
          )
      }
      // kt's own ids print as numbers (as before the library); your ids as strings
      return {...choice, query_id: flags['query-id'] ?? choice.kt_query_id}
    } finally {
      await tenant.close()
    }
  }
}
