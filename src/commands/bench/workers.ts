import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'
import {WORKERS_WORKLOAD} from '../../bench/workers-workload.js'

export default class BenchWorkers extends KtCommand {
  static override summary =
    'Throughput of kt worker processes sharing one BOHB study on PostgreSQL, and the coordination cost per trial.'
  static override description =
    'Starts a PostgreSQL server for the run (or uses --storage), then for 1, 2, 4 and 8 `kt worker` processes runs a fresh BOHB study whose trials sleep 50 ms, started together (160 trials per process by default), and prints trials per second against the ideal (processes x 20/s; target >= 90%) beside Optuna 3.1 + PostgreSQL measured on this kind of machine. Then one worker on a trial that does nothing: the coordination cost per trial (target <= 3 ms). For each process count it also prints where the time went, as each process records it: worker CPU per trial (and how much of it the optimiser copies took), PostgreSQL CPU per trial (when the server was started for the run), statements per trial, the mean locked section with its lock wait and hold, and the shares of wall time spent evaluating, in sections and waiting for work. Figures taken on a busy machine say so through the load average printed with them.'
  static override examples = [
    '<%= config.bin %> bench workers --processes 1,2 --trials-per-process 5 --noop-trials 10',
    '<%= config.bin %> bench workers --processes 1,2 --trials-per-process 5 --noop-trials 10 --json',
    {
      description: 'After `kt db start`: the same measurement on that server instead of one started for the run.',
      command:
        '<%= config.bin %> bench workers --storage postgresql://kt@127.0.0.1:5433/kt --processes 1,2 --trials-per-process 5 --noop-trials 10',
    },
  ]
  static override flags = {
    storage: Flags.string({description: 'A PostgreSQL database to use instead of a server started for the run.'}),
    processes: Flags.string({
      description: 'Worker process counts, comma-separated.',
      default: WORKERS_WORKLOAD.processes.join(','),
    }),
    'trial-ms': Flags.integer({description: 'How long each trial sleeps.', default: 50, min: 1}),
    'trials-per-process': Flags.integer({
      description: `Trials per worker process in each configuration (${WORKERS_WORKLOAD.trialsPerProcess}: long enough that a worker's first trials, run on code V8 has not optimised yet, do not dominate the throughput).`,
      default: WORKERS_WORKLOAD.trialsPerProcess,
      min: 5,
    }),
    'noop-trials': Flags.integer({description: 'Trials of the no-op measurement.', default: 300, min: 10}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchWorkers)
    const {InputError} = await import('../../util/errors.js')
    const counts = flags.processes.split(',').map((s) => Number(s.trim()))
    if (counts.some((n) => !Number.isInteger(n) || n < 1 || n > 64))
      throw new InputError('--processes', 'comma-separated integers from 1 to 64', flags.processes)
    const {benchWorkers, formatWorkersBench} = await import('../../bench/workers.js')
    const r = await benchWorkers({
      storage: flags.storage,
      counts,
      trialMs: flags['trial-ms'],
      trialsPerProcess: flags['trials-per-process'],
      noopTrials: flags['noop-trials'],
      log: (line) => (this.jsonEnabled() ? undefined : process.stderr.write(`${line}\n`)),
    })
    if (!this.jsonEnabled()) this.log(formatWorkersBench(r).join('\n'))
    return r
  }
}
