import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchDiskFull extends KtCommand {
  static override summary =
    'Fill the disk under kt online serve while clients send: every acknowledged feedback must survive, once, and the server recover (root: mounts a tmpfs per round).'
  static override description = [
    'Each round mounts a tmpfs of --size-mib MiB, starts kt online serve on it with --tenants tenants and --clients clients (a choose plus a feedback per query),',
    'fills the disk to the last byte and keeps it full for --hold-ms while the load goes on (requests are answered 503 and sent again), then frees it.',
    'Even rounds wait for the server to acknowledge again by itself and then restart it; odd rounds stop it while the disk is full and start it after.',
    'Afterwards every tenant is opened and checked as in the kill -9 campaign: every acknowledged choose and feedback present, nothing credited twice.',
    'Prints each round and the count of rounds that passed; exits 1 when one did not.',
  ].join(' ')

  static override examples = [
    {
      description: 'Two rounds (one of each restart kind), shorter than the default ten.',
      command: '<%= config.bin %> bench disk-full --rounds 2',
    },
    '<%= config.bin %> bench disk-full --rounds 1 --json',
  ]

  static override flags = {
    rounds: Flags.integer({description: 'Rounds (one fresh file system each).', default: 10, min: 1}),
    tenants: Flags.integer({description: 'Tenants.', default: 6, min: 1}),
    clients: Flags.integer({description: 'Concurrent clients.', default: 8, min: 1}),
    'size-mib': Flags.integer({description: 'Size of the tmpfs of each round, MiB.', default: 24, min: 4}),
    'segment-bytes': Flags.integer({
      description: "The server's journal segment size (small: checkpoints, and the full disk, come sooner).",
      default: 65_536,
      min: 65_536,
    }),
    'hold-ms': Flags.integer({description: 'How long the disk stays full in each round, ms.', default: 2000, min: 100}),
    seed: Flags.integer({description: "Seed of the clients' choices.", default: 42}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchDiskFull)
    const {runDiskFullCampaign} = await import('../../bench/disk-full.js')
    const report = await runDiskFullCampaign({
      rounds: flags.rounds,
      tenants: flags.tenants,
      clients: flags.clients,
      sizeMib: flags['size-mib'],
      segmentBytes: flags['segment-bytes'],
      holdMs: flags['hold-ms'],
      seed: flags.seed,
      onProgress: this.jsonEnabled() ? undefined : (line) => process.stderr.write(`${line}\n`),
    })
    if (!this.jsonEnabled()) {
      for (const r of report.rounds)
        this.log(
          `round ${r.round} (restart ${r.restart.replace('_', ' ')}): ${r.passed ? 'passed' : 'FAILED'}; ${r.acknowledged_feedback} feedbacks acknowledged, ${r.refused_while_full} requests refused 503 while full, ${r.acknowledged_while_full} acknowledged while full${r.recovered_ms === null ? '' : `, acknowledging again ${r.recovered_ms} ms after space returned`}`,
        )
      for (const r of report.rounds) for (const v of r.violations) this.log(`  round ${r.round}: ${v}`)
      this.log(
        `${report.passed_rounds}/${report.rounds.length} rounds lost nothing and recovered (${report.acknowledged_feedback} acknowledged feedbacks checked)`,
      )
    }
    if (!report.passed) process.exitCode = 1
    return report
  }
}
