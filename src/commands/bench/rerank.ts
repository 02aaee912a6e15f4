import {Flags} from '@oclif/core'
import {KtCommand} from '../../cli/base.js'

export default class BenchRerank extends KtCommand {
  static override summary =
    "Time reranker inference, the packed tree walk (microseconds per candidate for 100 trees of depth 6, target <= 2), and LambdaMART training against XGBoost (target <= 2x, CPU time with one thread each; XGBoost's wall time with its default threads printed beside it)."
  static override description =
    "Scores candidates with the packed typed-array ensemble (what POST /rerank and kt eval --reranker run) and the trainer's own tree walk, in requests of 50 new candidates each, on 100 random complete trees of depth 6 (the worst case for that size) over 12 and over 46 features (MQ2008's count), 20 trees of depth 4 over 46 features, and a LambdaMART model trained with depth 6; checks that both give bit-identical scores. Reports medians over repetitions of CPU time and wall time per candidate; the target is checked on CPU time, which other processes competing for the cores do not inflate (the load average is printed beside it)."
  static override examples = [
    '<%= config.bin %> bench rerank --candidates 1000 --repetitions 3 --training-repetitions 1',
    '<%= config.bin %> bench rerank --candidates 2000 --repetitions 3 --training-repetitions 1 --json',
  ]
  static override flags = {
    candidates: Flags.integer({description: 'Candidates scored per repetition.', default: 20000, min: 100}),
    repetitions: Flags.integer({description: 'Timed repetitions (the median is reported).', default: 15, min: 1}),
    seed: Flags.integer({description: 'Seed of the random trees and candidates.', default: 42}),
    'ltr-dir': Flags.string({
      description:
        'Folder with LETOR vali.txt and test.txt for the training-speed comparison with XGBoost (skipped with a line saying why when absent or when python3-xgboost is missing).',
      default: '../shared/ltr/mq2008-fold1-partial',
    }),
    'training-repetitions': Flags.integer({
      description: 'Alternating kt / XGBoost (1 thread) / XGBoost (default threads) training runs (medians compared).',
      default: 3,
      min: 1,
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(BenchRerank)
    const {runRerankBench, TARGET_US_PER_CANDIDATE} = await import('../../bench/rerank.js')
    const {table} = await import('../../rank/table.js')
    const spinner = this.spinner('kt bench rerank: timing')
    const {loadavg, cpus} = await import('node:os')
    const cases = runRerankBench({candidates: flags.candidates, repetitions: flags.repetitions, seed: flags.seed})
    const load = loadavg()[0]
    if (!this.jsonEnabled()) {
      this.log(
        table(
          [
            'ensemble',
            'trees',
            'depth',
            'features',
            'candidates',
            'packed us/cand (cpu)',
            '(wall)',
            'trainer us/cand (cpu)',
            'packed vs trainer',
            'equal scores',
            `packed <= ${TARGET_US_PER_CANDIDATE} us`,
          ],
          cases.map((c) => [
            c.ensemble,
            String(c.trees),
            String(c.max_depth),
            String(c.features),
            String(c.candidates),
            c.packed_us_per_candidate.toFixed(3),
            c.packed_wall_us_per_candidate.toFixed(3),
            c.trainer_us_per_candidate.toFixed(3),
            `${c.speedup.toFixed(2)}x`,
            c.equal_scores ? 'yes' : 'NO',
            c.meets_target ? 'yes' : 'NO',
          ]),
        ),
      )
      this.log(`scored in requests of ${cases[0]?.request_candidates} new candidates, as POST /rerank receives them`)
      this.log(
        `load average ${load.toFixed(2)} on ${cpus().length} cores (wall time above CPU time means waiting for a core)`,
      )
    }
    const {existsSync} = await import('node:fs')
    const {join} = await import('node:path')
    const {runTrainingSpeedBench} = await import('../../bench/rerank.js')
    const {peerAvailable} = await import('../../rank/peer.js')
    const trainFile = join(flags['ltr-dir'], 'vali.txt')
    const testFile = join(flags['ltr-dir'], 'test.txt')
    const available = peerAvailable()
    let training: unknown
    if (!existsSync(trainFile) || !existsSync(testFile)) training = {skipped: `no ${trainFile} and ${testFile}`}
    else if (!available.ok) training = {skipped: available.reason}
    else {
      await spinner.update('kt bench rerank: training kt and XGBoost')
      const t = runTrainingSpeedBench(trainFile, testFile, flags['training-repetitions'])
      training = t
      if (!this.jsonEnabled()) {
        this.log(
          `training 100 trees on ${t.data} (depth 6, eta 0.1, min_child_weight 1, lambda 1, every pair), medians of ${t.repetitions} alternating runs:`,
        )
        this.log(
          `  judged: kt (one thread) ${t.kt_cpu_ms.toFixed(0)} ms vs ${t.peer} with 1 thread ${t.peer_one_thread_cpu_ms.toFixed(0)} ms of CPU: ${t.cpu_ratio_one_thread.toFixed(2)}x (target <= ${t.target}x: ${t.meets_target ? 'met' : 'NOT met'}; the same work on one core each, and CPU time is not inflated by other processes)`,
        )
        this.log(
          `  reported: kt ${t.kt_wall_ms.toFixed(0)} ms wall vs ${t.peer} with ${t.peer_default_threads} threads (its default here) ${t.peer_default_wall_ms.toFixed(0)} ms wall (${t.peer_default_cpu_ms.toFixed(0)} ms of CPU; OpenMP wait policy ${t.omp_wait_policy}): ${t.wall_ratio_default_threads.toFixed(2)}x (wall time counts waits for a core)`,
        )
      }
    }
    if (!this.jsonEnabled() && (training as {skipped?: string}).skipped)
      this.log(`training speed against XGBoost: skipped (${(training as {skipped: string}).skipped})`)
    await spinner.succeed('kt bench rerank: done')
    return {target_us_per_candidate: TARGET_US_PER_CANDIDATE, load_average: load, cores: cpus().length, cases, training}
  }
}
