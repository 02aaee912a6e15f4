import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {eventTime, eventTimeFlags, tenantFlags} from '../../online/cli.js'
import {InputError} from '../../util/errors.js'

export default class OnlineFeedback extends KtCommand {
  static override summary = 'Record feedback for a query: implicit (--used) or a graded label (--label).'
  static override description =
    "Implicit feedback counts when a retrieved node is used within the tenant's implicit window of the query (default 5 minutes, init --implicit-window-ms); a query whose window closes unused counts as reward 0 (tenants created with --feedback labels take labels only: no window, and --used is refused). Labels 0..levels-1 are accepted for an hour (LABEL_WINDOW_MS). Duplicates and late feedback are counted and ignored; an unknown query id or an out-of-range label is a counted rejection and exits with code 2. Every event is logged (fsync) before it is applied."
  static override examples = [
    '<%= config.bin %> online feedback --tenant acme --query 1 --used',
    '<%= config.bin %> online feedback --tenant acme --query 1 --label 3',
  ]
  static override flags = {
    ...tenantFlags,
    ...eventTimeFlags,
    query: Flags.string({description: 'Query id printed by kt online choose.', required: true}),
    used: Flags.boolean({
      description: 'A node retrieved for the query was used (implicit feedback).',
      exclusive: ['label'],
    }),
    label: Flags.integer({
      description: "Graded relevance of the query's results, 0..levels-1 (explicit feedback).",
      exclusive: ['used'],
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(OnlineFeedback)
    if (!flags.used && flags.label === undefined)
      throw new InputError('kt online feedback', 'one of --used or --label G')
    const {openTenant} = await import('../../online/library.js')
    const tenant = openTenant({dir: flags.dir, tenant: flags.tenant})
    let outcome
    try {
      outcome = await tenant.feedback({
        query_id: flags.query,
        now: eventTime(flags.time),
        ...(flags.used ? {used: true} : {label: flags.label!}),
      })
    } finally {
      await tenant.close()
    }
    if (!this.jsonEnabled()) this.log(`query ${flags.query}: ${outcome.verdict}`)
    return outcome
  }
}
