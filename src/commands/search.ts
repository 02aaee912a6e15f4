import {Flags} from '@oclif/core'
import {KtCommand, outFlag} from '../cli/base.js'
import {listenForInterrupt} from '../cli/interrupt.js'
import {DEFAULT_STORAGE} from '../study/model.js'

export default class Search extends KtCommand {
  static override summary = 'Run (or resume) an optimisation study and store every trial.'
  static override description =
    "Optimises an objective with grid, random or BOHB search. Every trial is written to the study file (SQLite) the moment it finishes, so a study stopped by a crash, kill -9 or Ctrl-C continues with --resume NAME without losing or repeating a finished trial. --engine FILE tunes any engine described by an engine file (kt_engine: 1; src/adapters/README.md): a command run per trial, or an HTTP endpoint; its tiers are the BOHB budgets, its objectives make the front, its profiles rules choose the profiles written to --out. --workers N keeps N trials in flight (processes or requests for an engine file, worker threads otherwise). Other objectives: kt's retrieval engine (--objective retrieval --data FILE) and the benchmark functions of `kt bench optimizers`."
  static override examples = [
    {
      description:
        'Tune the Python example engine with BOHB over its three tiers (smoke, unit, full), 4 trials at a time; front and profiles to reports/kt-py.',
      command:
        '<%= config.bin %> search --engine examples/python-engine/engine.json --budget 6 --workers 4 --storage reports/kt-py/studies.sqlite --out reports/kt-py',
    },
    {
      description:
        'The Python engine as a retrieval service (kt starts service.py, drives the conversations, scores them): tune on half of the conversations, score the front and profiles on the other half.',
      command:
        '<%= config.bin %> search --engine examples/python-engine/engine.service.json --data fixtures/memory_small.json --split conversations:0.5 --seed 42 --budget 6 --storage reports/kt-svc/studies.sqlite --out reports/kt-svc',
    },
    {
      description:
        "kt's own retrieval engine with held-out conversations (tuning and held-out quality side by side; measured latency beside the cost model).",
      command:
        '<%= config.bin %> search --objective retrieval --data fixtures/memory_small.json --train synth-7-1 --holdout synth-7-2 --budget 6 --storage reports/kt-split.sqlite',
    },
    '<%= config.bin %> search --objective branin --optimizer bohb --trials 100',
    {
      description:
        "Grid search evaluates its whole grid: here 10 x 10 points over branin's two parameters (the largest grid that fits --trials). A grid larger than --trials needs --grid-subset (a seeded random subset), and a grid stopped early says how many of its points it evaluated.",
      command: '<%= config.bin %> search --objective branin --optimizer grid --trials 100',
    },
    '<%= config.bin %> search --objective counting_ones --budget 50 --storage studies.sqlite --study co-1 --workers 2',
    '<%= config.bin %> search --resume co-1 --storage studies.sqlite',
    '<%= config.bin %> search --objective hartmann6 --optimizer random --fix x1=0.2 --range x2=0:0.5 --trials 50 --json',
  ]
  static override flags = {
    engine: Flags.string({
      description:
        'An engine file (kt_engine: 1) describing the engine to tune: parameters, evaluation (command, http, or retrieval-service with --data), tiers, objectives, profiles.',
    }),
    objective: Flags.string({
      description:
        "A built-in objective instead of --engine: branin, hartmann6, counting_ones, simplex, simplex_mf, or retrieval (kt's retrieval engine, with --data).",
    }),
    optimizer: Flags.string({
      description:
        'grid, random or bohb. A grid evaluates every point of its grid: a grid larger than --trials (or --budget) is refused unless --grid-subset.',
      default: 'bohb',
    }),
    storage: Flags.string({
      description:
        'Study storage: a SQLite file (created if missing) or postgresql://user@host:port/db (password from PGPASSWORD or ~/.pgpass). Any number of processes may run one study: `kt search --resume NAME` or `kt worker` on each.',
      default: DEFAULT_STORAGE,
    }),
    'create-only': Flags.boolean({
      description: 'Create the study and stop: `kt worker` processes do the work.',
      default: false,
    }),
    'grace-s': Flags.integer({
      description:
        'New study: a running trial whose worker has not sent a heartbeat for this long is taken over by another worker (seconds).',
      default: 60,
      min: 1,
    }),
    study: Flags.string({
      description:
        'Study name (default <engine name>-<optimizer>-s<seed> for --engine, else <objective>-<optimizer>-s<seed>; the data is recorded in the study, not in its name).',
    }),
    resume: Flags.string({
      description: 'Continue the named study from the study file (objective, optimiser and seed come from it).',
    }),
    trials: Flags.integer({
      description:
        'Stop after this many trials in total (default 100 when no --budget is given; with --optimizer grid and --grid-points, the whole grid).',
      min: 1,
    }),
    budget: Flags.string({
      description: 'Stop after this much consumed budget, in units of the maximum budget (continuation accounting).',
    }),
    workers: Flags.integer({
      description:
        'Trials in flight at once: processes or requests for an engine file, worker threads for built-in objectives (1 = one at a time; at most 64 per process).',
      default: 1,
      min: 1,
    }),
    'timeout-ms': Flags.integer({description: 'Fail a trial whose evaluation takes longer than this.', min: 1}),
    seed: Flags.integer({description: 'Seed of the optimiser and of the objective noise.', default: 42}),
    fix: Flags.string({
      description: 'Take a parameter out of the search at a value: NAME=VALUE (repeatable).',
      multiple: true,
    }),
    range: Flags.string({
      description: 'Search a numeric parameter over LOW:HIGH instead: NAME=LOW:HIGH (repeatable).',
      multiple: true,
    }),
    floor: Flags.string({description: 'Change a simplex group floor: GROUP=FLOOR (repeatable).', multiple: true}),
    'grid-points': Flags.integer({
      description:
        'Grid values per numeric parameter (default: the largest grid that fits --trials or --budget, at least 2).',
      min: 2,
    }),
    'grid-subset': Flags.boolean({
      description:
        'With --optimizer grid: allow a grid larger than --trials/--budget and evaluate a seeded random subset of its points; kt search and kt study show then say "evaluated X of N points", and --json gives grid.complete false.',
      default: false,
    }),
    'simplex-step': Flags.string({description: 'Grid lattice step of simplex groups.', default: '0.05'}),
    'bohb-reference': Flags.boolean({
      description: "Exactly hpbandster's BOHB (no magic-clip bandwidth floor).",
      default: false,
    }),
    data: Flags.string({description: 'For --objective retrieval: the dataset (LoCoMo .json, .jsonl or .csv turns).'}),
    metric: Flags.string({
      description: 'For --objective retrieval: the ranking metric to maximise (recall@10, ndcg@10, mrr, hit@k).',
    }),
    'query-type': Flags.string({
      description: 'For --objective retrieval: only queries the classifier gives this type.',
    }),
    'per-type': Flags.boolean({
      description:
        'For --objective retrieval: one study over all queries and one per query type, bundled into a routed profile.',
      default: false,
    }),
    out: outFlag(
      'report.json and report.md (the study; kt report OUT --format md|html renders them), front.json (the Pareto front) and its chart front.vl.json/.svg/.png, the profiles (profiles.json, and profiles/<name>.json|.env|.sh, deployable once validated with --split), routed.json (with --per-type), latency-check.json (retrieval).',
    ),
    split: Flags.string({
      description:
        "For retrieval tuning: hold out conversations, e.g. conversations:0.5 (the share tuned on; shuffled with --seed). The front, the profiles and the defaults are then scored on the held-out conversations too; for kt's engine each profile (and with --per-type the routed one) is validated against the defaults there (pass when the 95% interval of profile - defaults stays above -0.01) and written with its verdict to --out (profiles/<name>.json), which kt deploy reads.",
    }),
    margin: Flags.string({
      description:
        "With --split for kt's retrieval engine: the non-inferiority margin of the profiles' verdict (absolute, on --metric; default 0.01).",
    }),
    train: Flags.string({
      description: 'For retrieval tuning: the conversations to tune on (comma-separated ids; with --holdout).',
    }),
    holdout: Flags.string({
      description: 'For retrieval tuning: the held-out conversations (comma-separated ids; with --train).',
    }),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Search)
    const {outFolderWithUndo} = await import('../util/fs.js')
    const {searchCommand} = await import('../study/search-request.js')
    // an unwritable --out must fail before the study runs, not after; refused input removes it again
    const undoOut = flags.out ? outFolderWithUndo(flags.out) : undefined
    const interrupt = listenForInterrupt()
    // Created at the first finished trial, so a bad flag or file prints its one-line error alone.
    let spinner: ReturnType<KtCommand['spinner']> | undefined
    let spinnerDone: Promise<unknown> | undefined
    try {
      const json = await searchCommand(flags, {
        log: (line) => (this.jsonEnabled() ? undefined : this.log(line)),
        warn: (line) => process.stderr.write(`${line}\n`),
        signal: interrupt.signal,
        interruptExitCode: interrupt.exitCode,
        onProgress: (line) => {
          spinner ??= this.spinner('kt search')
          void spinner.update(`kt search: ${line}`)
        },
        onStudyDone: (name, stoppedBy) => {
          spinnerDone =
            stoppedBy === 'aborted'
              ? spinner?.fail()
              : spinner?.succeed(
                  `kt search: ${name} ${stoppedBy === 'done' ? 'finished' : `stopped (${stoppedBy} limit)`}`,
                )
          spinner = undefined
        },
      })
      await spinnerDone
      return json
    } catch (error) {
      await spinner?.fail()
      undoOut?.()
      throw error
    } finally {
      interrupt.dispose()
    }
  }
}
