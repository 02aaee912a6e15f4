import {Flags} from '@oclif/core'
import {KtCommand} from '../cli/base.js'
import {storageFlag} from '../cli/flags.js'
import {listenForInterrupt} from '../cli/interrupt.js'

export default class Worker extends KtCommand {
  static override summary = 'Join a stored study and work on it until it is done.'
  static override description =
    "Joins a study in a shared storage (PostgreSQL, or a SQLite file on this machine) and evaluates its trials until the study is complete. Start any number of workers on any number of machines, and stop or kill any of them at any time: trials are claimed atomically, a running trial carries a heartbeat, and a trial whose worker went silent for longer than the study's grace period is taken over and evaluated again once. A finished trial is never lost or counted twice. The optimiser (BOHB: synchronous successive halving, one KDE over every result) proposes exactly what one optimiser told every result in the stored order would propose. Same as `kt search --resume NAME`."
  static override examples = [
    {
      description:
        'After `kt db start`: create a study on its PostgreSQL server and stop; workers on any machine do the trials.',
      command:
        '<%= config.bin %> search --objective counting_ones --trials 60 --study co --storage postgresql://kt@127.0.0.1:5433/kt --create-only',
    },
    {
      description: 'Work on it, two trials at a time, until it is done (start as many workers, anywhere, as you like).',
      command: '<%= config.bin %> worker --storage postgresql://kt@127.0.0.1:5433/kt --study co --workers 2',
    },
    {
      description:
        'A SQLite study, for worker processes on one machine (after `kt search ... --storage studies.sqlite --study co-1`; a finished study is reported as done).',
      command: '<%= config.bin %> worker --storage studies.sqlite --study co-1',
    },
  ]
  static override flags = {
    storage: storageFlag({
      description:
        'Study storage: postgresql://user@host:port/db (password from PGPASSWORD or ~/.pgpass), or a SQLite file on this machine.',
      required: true,
    }),
    study: Flags.string({description: 'The study to join.', required: true}),
    workers: Flags.integer({
      description:
        'Trials this process evaluates at once (worker threads, started as trials arrive; at most 64: start more workers for more).',
      default: 1,
      min: 1,
    }),
    trials: Flags.integer({description: "Raise (or set) the study's trial limit.", min: 1}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Worker)
    const {runSearch} = await import('../study/search.js')
    const {formatSearchOutcome} = await import('../study/format.js')
    const {redactStorage} = await import('../study/storage.js')
    const {newWorkerTiming} = await import('../study/optimize-options.js')
    // kt bench workers collects where each process's time went (hidden: not a user setting)
    const statsFile = process.env.KT_BENCH_STATS_FILE
    const timing = statsFile ? newWorkerTiming() : undefined
    const interrupt = listenForInterrupt()
    let count = 0
    const spinner = this.spinner(`kt worker: joining ${flags.study}`)
    try {
      const outcome = await runSearch({
        storage: flags.storage,
        study: flags.study,
        resume: true,
        studyFlag: '--study',
        workers: flags.workers,
        maxTrials: flags.trials,
        // threads keep the heartbeat going while a trial computes
        threads: true,
        signal: interrupt.signal,
        // kt bench workers starts its processes together (hidden: not a user setting)
        startAt: process.env.KT_BENCH_START_AT ? Number(process.env.KT_BENCH_START_AT) : undefined,
        timing,
        log: (line) => process.stderr.write(`${line}\n`),
        onTrial: (trial, outcome) => {
          count++
          void spinner.update(
            `kt worker: ${flags.study} trial ${trial.id} (budget ${trial.budget}) ${outcome.status}${outcome.loss !== undefined ? ` loss ${outcome.loss.toPrecision(5)}` : ''}; ${count} by this worker`,
          )
        },
      })
      if (statsFile && timing) {
        const {writeFileAtomic} = await import('../util/fs.js')
        writeFileAtomic(statsFile, JSON.stringify(timing))
      }
      const interrupted = outcome.summary.stoppedBy === 'aborted'
      await (interrupted
        ? spinner.fail()
        : spinner.succeed(`kt worker: ${flags.study} complete; this worker evaluated ${outcome.summary.evaluated}`))
      const view = formatSearchOutcome(outcome, redactStorage(flags.storage))
      if (!this.jsonEnabled()) this.log(view.text)
      if (interrupted) {
        process.stderr.write(`kt: worker stopped; its running trials were released to the other workers\n`)
        process.exitCode = interrupt.exitCode()
      }
      return view.json
    } catch (error) {
      await spinner.fail()
      throw error
    } finally {
      interrupt.dispose()
    }
  }
}
