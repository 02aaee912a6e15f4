import {Flags, type Interfaces} from '@oclif/core'
import {KtCommand, outFlag} from '../cli/base.js'
import {listenForInterrupt} from '../cli/interrupt.js'
import {DEFAULT_STORAGE} from '../study/model.js'

export default class Search extends KtCommand {
  static override summary = 'Run (or resume) an optimisation study and store every trial.'
  static override description =
    "Optimises an objective with grid, random or BOHB search. Every trial is written to the study file (SQLite) the moment it finishes, so a study stopped by a crash, kill -9 or Ctrl-C continues with --resume NAME without losing or repeating a finished trial. --engine FILE tunes any engine described by an engine file (kt_engine: 1; src/engines/README.md): a command run per trial, or an HTTP endpoint; its tiers are the BOHB budgets, its objectives make the front, its profiles rules choose the profiles written to --out. --workers N keeps N trials in flight (processes or requests for an engine file, worker threads otherwise). Other objectives: kt's retrieval engine (--objective retrieval --data FILE) and the benchmark functions of `kt bench optimizers`."
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
    study: Flags.string({description: 'Study name (default <objective>-<optimizer>-s<seed>).'}),
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
    'delay-ms': Flags.integer({
      description: 'Sleep this long in every evaluation (demos and crash tests).',
      min: 0,
      hidden: true,
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
      'front.json (the Pareto front) and its chart front.vl.json/.svg/.png, the domain profiles (profiles.json; for an engine file profiles/<name>.json|.env|.sh, deployable), routed.json (with --per-type), latency-check.json (retrieval).',
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
    // an unwritable --out must fail before the study runs, not after; refused input removes it again
    const undoOut = flags.out ? (await import('../util/fs.js')).outFolderWithUndo(flags.out) : undefined
    try {
      return await this.search(flags)
    } catch (error) {
      undoOut?.()
      throw error
    }
  }

  private async search(flags: Interfaces.InferredFlags<typeof Search.flags>): Promise<unknown> {
    const {InputError} = await import('../util/errors.js')
    const {runSearch} = await import('../study/search.js')
    const {checkOptimizerName} = await import('../search/optimizers.js')
    const {formatSearchOutcome} = await import('../study/format.js')
    const {snakeKeysOfRecord} = await import('../util/json-keys.js')
    const parseNumber = (text: string | undefined, flag: string): number | undefined => {
      if (text === undefined) return undefined
      const v = Number(text)
      if (!Number.isFinite(v) || v <= 0) throw new InputError(flag, 'a positive number', JSON.stringify(text))
      return v
    }
    const resume = flags.resume !== undefined
    if (flags.engine && flags.objective)
      throw new InputError('--objective', 'either --engine or --objective', `both (--objective ${flags.objective})`)
    if (!resume && !flags.objective && !flags.engine)
      throw new InputError('--engine', 'an engine file, a built-in --objective, or --resume STUDY', 'nothing')
    if (resume && (flags.objective || flags.engine))
      throw new InputError(
        flags.engine ? '--engine' : '--objective',
        'no objective with --resume (the study keeps its own)',
        flags.engine ?? flags.objective,
      )
    // every choice is checked before any work starts (a bad --metric used to fail each trial and exit 0)
    const {checkSearchChoices} = await import('../study/choices.js')
    checkSearchChoices({
      objective: flags.objective,
      optimizer: resume ? undefined : flags.optimizer,
      metric: flags.metric,
      queryType: flags['query-type'],
    })
    const maxBudget = parseNumber(flags.budget, '--budget')
    if (flags['grid-subset'] && (resume || flags.optimizer !== 'grid'))
      throw new InputError(
        '--grid-subset',
        resume
          ? 'no --grid-subset with --resume (a study keeps the settings it was created with)'
          : 'only with --optimizer grid',
        resume ? `--resume ${flags.resume}` : `--optimizer ${flags.optimizer}`,
      )
    // a grid of a stated resolution runs whole unless limited; otherwise 100 trials size it
    const wholeGrid = flags.optimizer === 'grid' && flags['grid-points'] !== undefined
    const maxTrials = flags.trials ?? (resume || maxBudget !== undefined || wholeGrid ? undefined : 100)
    let options: Record<string, unknown> | undefined
    let engineSpec: import('../engines/file.js').EngineSpec | undefined
    if (flags.engine) {
      engineSpec = (await import('../engines/file.js')).loadEngineFile(flags.engine)
      // stored absolute, so a resume from another folder finds the same file; with its fingerprint,
      // so a resume or a worker refuses the file once its parameters, evaluation, tiers or objectives change
      options = (await import('../engines/objective.js')).engineStudyOptions(engineSpec)
    }
    const serviceEngine = engineSpec?.evaluate.kind === 'retrieval-service'
    if (serviceEngine && !flags.data)
      throw new InputError(
        '--data',
        `conversations for the retrieval service of ${flags.engine} (LoCoMo .json, .jsonl or .csv)`,
        'nothing',
      )
    if (serviceEngine && flags.data) {
      const {resolve} = await import('node:path')
      options = {...options, data: resolve(flags.data)}
    } else if (flags.data || flags.metric || flags['query-type']) {
      if (flags.objective !== 'retrieval')
        throw new InputError(
          '--data',
          'only with --objective retrieval or a retrieval-service --engine',
          flags.objective ??
            (flags.engine ? `${flags.engine} (evaluate.kind ${engineSpec?.evaluate.kind})` : 'no objective'),
        )
      const {resolve} = await import('node:path')
      const data = flags.data ?? options?.data
      // Stored absolute, so a resume from another folder (and every worker) finds the same file.
      options = {
        ...options,
        data: typeof data === 'string' ? resolve(data) : data,
        metric: flags.metric ?? options?.metric,
        queryType: flags['query-type'] ?? options?.queryType,
      }
    }
    if (flags.split !== undefined || flags.train !== undefined || flags.holdout !== undefined) {
      const {parseSplit, idSplit} = await import('../data/conversations/split.js')
      if (flags.objective !== 'retrieval' && !serviceEngine)
        throw new InputError(
          '--split',
          'retrieval tuning (--objective retrieval, or a retrieval-service --engine, with --data)',
          flags.objective ??
            (flags.engine ? `${flags.engine} (evaluate.kind ${engineSpec?.evaluate.kind})` : 'no objective'),
        )
      if (flags.split !== undefined && (flags.train !== undefined || flags.holdout !== undefined))
        throw new InputError('--split', 'either --split or --train/--holdout, not both', `--split ${flags.split}`)
      if (flags.split === undefined && (flags.train === undefined || flags.holdout === undefined))
        throw new InputError(
          flags.train === undefined ? '--train' : '--holdout',
          'both --train and --holdout',
          'only one of them',
        )
      const split =
        flags.split !== undefined ? parseSplit(flags.split, flags.seed) : idSplit(flags.train!, flags.holdout!)
      options = {...options, split, part: 'train'}
    }
    let margin: number | undefined
    if (flags.margin !== undefined) {
      margin = Number(flags.margin)
      if (flags.objective !== 'retrieval' || options?.split === undefined)
        throw new InputError(
          '--margin',
          "a margin only with --objective retrieval and --split or --train/--holdout (it is the held-out validation's)",
          flags.margin,
        )
      if (!(margin >= 0 && margin < 1))
        throw new InputError('--margin', 'a number in [0, 1) (absolute, on the metric)', JSON.stringify(flags.margin))
    }
    const objective = flags.engine
      ? {name: 'engine', options, delayMs: flags['delay-ms']}
      : flags.objective
        ? {name: flags.objective, options, delayMs: flags['delay-ms']}
        : undefined
    if (flags['per-type']) {
      if (flags.objective !== 'retrieval' || !options?.data)
        throw new InputError('--per-type', '--objective retrieval with --data', flags.objective ?? 'no objective')
      const {runRoutedSweeps} = await import('../study/sweeps.js')
      const result = await runRoutedSweeps({
        data: String(options.data),
        metric: options.metric as string | undefined,
        storage: flags.storage,
        studyPrefix: flags.study ?? `retrieval-${flags.optimizer}-s${flags.seed}`,
        optimizer: checkOptimizerName(flags.optimizer),
        seed: flags.seed,
        maxTrials: flags.trials ?? (maxBudget === undefined ? 100 : undefined),
        maxBudget,
        workers: flags.workers,
        timeoutMs: flags['timeout-ms'],
        out: flags.out,
        log: (line) => (this.jsonEnabled() ? undefined : this.log(line)),
        ...(options.split ? {split: options.split as import('../data/conversations/split.js').SplitSpec} : {}),
        ...(margin !== undefined ? {margin} : {}),
      })
      return snakeKeysOfRecord(result)
    }
    const interrupt = listenForInterrupt()
    // Created at the first finished trial, so a bad flag or file prints its one-line error alone.
    let spinner: ReturnType<KtCommand['spinner']> | undefined
    let count = 0
    const {SearchProgress} = await import('../study/progress.js')
    const tracker = new SearchProgress({maxTrials, maxBudget})
    try {
      const outcome = await runSearch({
        storage: flags.storage,
        study: resume ? flags.resume : flags.study,
        resume,
        objective,
        optimizer: resume ? undefined : checkOptimizerName(flags.optimizer),
        seed: flags.seed,
        settings: {
          gridPoints: flags['grid-points'],
          gridSubset: flags['grid-subset'] || undefined,
          simplexStep: parseNumber(flags['simplex-step'], '--simplex-step'),
          bohb: flags['bohb-reference'] ? {reference: true} : undefined,
        },
        overrides: {fix: flags.fix, range: flags.range, floor: flags.floor},
        maxTrials,
        maxBudget,
        workers: flags.workers,
        timeoutMs: flags['timeout-ms'],
        graceMs: flags['grace-s'] * 1000,
        createOnly: flags['create-only'],
        signal: interrupt.signal,
        log: (line) => process.stderr.write(`${line}\n`),
        onTrial: (trial, outcome, progress) => {
          count++
          spinner ??= this.spinner('kt search')
          void spinner.update(`kt search: ${tracker.update(trial, outcome, progress)}`)
        },
      })
      const interrupted = outcome.summary.stoppedBy === 'aborted'
      await (interrupted
        ? spinner?.fail()
        : spinner?.succeed(
            `kt search: ${outcome.study.name} ${outcome.summary.stoppedBy === 'done' ? 'finished' : `stopped (${outcome.summary.stoppedBy} limit)`}`,
          ))
      const {redactStorage} = await import('../study/storage.js')
      const view = formatSearchOutcome(outcome, redactStorage(flags.storage))
      if (!this.jsonEnabled()) this.log(view.text)
      if (resume && (outcome.study.objective as {name?: string}).name === 'engine') {
        const stored = (outcome.study.objective as {options?: {file?: string; fingerprint?: unknown}}).options
        const {checkEngineFingerprint, loadEngineFile} = await import('../engines/file.js')
        engineSpec = loadEngineFile(stored?.file as string)
        // the file may have changed while the study ran: its outputs come from the table the trials used
        checkEngineFingerprint(engineSpec, stored?.fingerprint)
      }
      if (engineSpec) {
        const {writeEngineStudyOutputs} = await import('../study/engine-study.js')
        const held = await engineHoldout(engineSpec, outcome)
        // the study's name alone: --storage may hold a database password, and profiles are deployed and shared
        const engineOut = await writeEngineStudyOutputs(
          engineSpec,
          outcome.trials,
          flags.out,
          outcome.study.name,
          held?.report,
          held?.validation,
        )
        for (const w of engineOut.warnings) process.stderr.write(`kt: warning: ${w}\n`)
        if (!this.jsonEnabled() && engineOut.lines.length) this.log(engineOut.lines.join('\n'))
        if (held) Object.assign(view.json, {validation: held.validation})
        if (!this.jsonEnabled() && engineOut.files.length)
          this.log(
            `wrote ${engineOut.files.length} files to ${flags.out} (profiles/<name>.env in ${engineSpec.name}'s own variable names)`,
          )
        Object.assign(
          view.json,
          snakeKeysOfRecord({
            engine: engineSpec.name,
            front: engineOut.front,
            profiles: engineOut.profiles,
            files: engineOut.files,
            ...(engineOut.holdout ? {holdout: engineOut.holdout} : {}),
          }),
        )
      }
      const {writeStudyAnalysis} = await import('../study/sweeps.js')
      const holdout = engineSpec
        ? undefined
        : await holdoutSide(outcome.study.objective as import('../study/objectives.js').ObjectiveSpec)
      try {
        const objectiveOptions = (outcome.study.objective as {options?: {metric?: unknown}} | undefined)?.options
        const metric = typeof objectiveOptions?.metric === 'string' ? objectiveOptions.metric : undefined
        const analysis = engineSpec
          ? undefined
          : await writeStudyAnalysis(
              outcome.trials,
              flags.out,
              holdout ? {side: holdout, seed: outcome.study.seed} : undefined,
              metric,
            )
        if (analysis) {
          if (!this.jsonEnabled()) this.log(analysis.lines.join('\n'))
          Object.assign(
            view.json,
            snakeKeysOfRecord({
              front: analysis.front,
              profiles: analysis.profiles,
              files: analysis.files,
              ...(analysis.holdout ? {holdout: analysis.holdout} : {}),
            }),
          )
          const spec = outcome.study.objective as import('../study/objectives.js').ObjectiveSpec
          const split = spec.options?.split as import('../data/conversations/split.js').SplitSpec | undefined
          if (spec.name === 'retrieval' && split && !interrupted) {
            // each domain profile against the defaults on the held-out conversations: the verdict kt deploy reads
            const {validateRetrievalStudy} = await import('../study/retrieval-validation.js')
            const checked = validateRetrievalStudy({
              analysis,
              data: String(spec.options?.data),
              split,
              metric,
              margin,
              study: outcome.study.name,
              out: flags.out,
            })
            if (!this.jsonEnabled()) this.log(checked.lines.join('\n'))
            analysis.files.push(...checked.files)
            Object.assign(view.json, {validation: checked.validation, files: analysis.files})
          }
          if (spec.name === 'retrieval' && !interrupted) {
            // the front's P99 is the cost model: measure the same configurations on the clock beside it
            const {createObjective} = await import('../study/objectives.js')
            const {checkFrontLatency, latencyCheckLines} = await import('../eval/latency-check.js')
            const check = checkFrontLatency(
              analysis,
              await createObjective({...spec, delayMs: undefined, evalLog: undefined}),
            )
            if (check) {
              if (!this.jsonEnabled()) this.log(latencyCheckLines(check).join('\n'))
              Object.assign(view.json, {timing: {latency_check: check}})
              if (flags.out) {
                const {writeFileAtomic} = await import('../util/fs.js')
                const {join} = await import('node:path')
                writeFileAtomic(join(flags.out, 'latency-check.json'), `${JSON.stringify(check, null, 2)}\n`)
                analysis.files.push(join(flags.out, 'latency-check.json'))
              }
            }
          }
        }
      } finally {
        await holdout?.objective.close?.()
      }
      if (interrupted) {
        process.stderr.write(
          `kt: interrupted; continue with: kt search --resume ${outcome.study.name} --storage ${redactStorage(flags.storage)}\n`,
        )
        process.exitCode = interrupt.exitCode()
      }
      return view.json
    } catch (error) {
      await spinner?.fail()
      throw error
    } finally {
      interrupt.dispose()
    }
  }
}

/**
 * The held-out side of a study tuned with a split: the same objective over the held-out
 * conversations (read from the stored spec, so a resumed study gets it too).
 */
async function holdoutSide(
  spec: import('../study/objectives.js').ObjectiveSpec,
): Promise<import('../search/holdout.js').HoldoutSide | undefined> {
  const split = spec.options?.split as import('../data/conversations/split.js').SplitSpec | undefined
  if (!split) return undefined
  const {createObjective} = await import('../study/objectives.js')
  const {describeSplit} = await import('../data/conversations/split.js')
  const {loadMemoryDataset} = await import('../data/conversations/index.js')
  const objective = await createObjective({
    ...spec,
    delayMs: undefined,
    evalLog: undefined,
    options: {...spec.options, part: 'holdout'},
  })
  const description = describeSplit(loadMemoryDataset(String(spec.options?.data)), split)
  // the defaults, measured on the tuning conversations like a full-budget trial, are scored on the held-out ones too
  const {defaultConfig} = await import('../space/index.js')
  const tuning = await createObjective({...spec, delayMs: undefined, evalLog: undefined})
  const config = defaultConfig(tuning.space)
  const measured = await tuning.evaluate(config, tuning.fidelity?.max ?? 1, {
    trialId: -1,
    configId: 'defaults',
    seed: 0,
  })
  return {objective, description, defaults: {config, metrics: measured.metrics ?? null}}
}

/**
 * A retrieval-service engine study tuned with a split: the front's and profiles' configurations
 * scored on the held-out conversations (quality = the engine file's first maximised ranking
 * metric), and each profile against the engine's defaults there, question by question (the
 * non-inferiority verdict kt deploy reads).
 */
async function engineHoldout(
  spec: import('../engines/file.js').EngineSpec,
  outcome: {study: {objective: unknown; seed: number}; trials: import('../study/model.js').TrialRow[]},
): Promise<
  | {
      report: import('../search/holdout.js').HoldoutReport
      validation: import('../eval/holdout-validation.js').HoldoutValidation
    }
  | undefined
> {
  const options = (outcome.study.objective as {options?: Record<string, unknown>}).options ?? {}
  const split = options.split as import('../data/conversations/split.js').SplitSpec | undefined
  if (!split || spec.evaluate.kind !== 'retrieval-service') return undefined
  const {analyzeObjectiveStudy} = await import('../search/analysis.js')
  const {evaluateHoldoutItems} = await import('../search/holdout.js')
  const {createEngineObjective} = await import('../engines/objective.js')
  const {serviceSpecOf} = await import('../engines/retrieval-service.js')
  const {describeSplit, splitDataset} = await import('../data/conversations/split.js')
  const {loadMemoryDataset} = await import('../data/conversations/index.js')
  const {evaluateService} = await import('../eval/service-eval.js')
  const {noninferiorityValidation, DEFAULT_HOLDOUT_SETTINGS} = await import('../eval/holdout-validation.js')
  const {defaultConfig} = await import('../space/index.js')
  const analysis = analyzeObjectiveStudy(outcome.trials, spec.objectives, spec.profiles)
  const byId = new Map(outcome.trials.map((t) => [t.id, t]))
  const service = serviceSpecOf(spec)
  const quality = service.metric ?? 'quality'
  const items = [
    ...(analysis.front?.front ?? []).map((p) => ({
      trial: p.trialId,
      config: p.config,
      role: 'front',
      metrics: byId.get(p.trialId)?.metrics,
    })),
    ...analysis.profiles
      .filter((p) => p.trialId !== null && p.config)
      .map((p) => ({
        trial: p.trialId!,
        config: p.config!,
        role: `profile ${p.profile}`,
        metrics: byId.get(p.trialId!)?.metrics,
      })),
  ]
  const loaded = loadMemoryDataset(String(options.data))
  const description = describeSplit(loaded, split)
  const objective = await createEngineObjective({...options, part: 'holdout'})
  let report: import('../search/holdout.js').HoldoutReport
  try {
    report = await evaluateHoldoutItems(items, {objective, description}, outcome.study.seed, {
      quality,
      latency: 'p99_ms',
    })
  } finally {
    await objective.close?.()
  }
  // latency is not what is tested here: one pass over the held-out questions per configuration
  const heldOut = splitDataset(loaded, split, 'holdout')
  const rowsOf = async (config: import('../space/types.js').Config) =>
    (await evaluateService(service, heldOut, {...defaultConfig(spec.space), ...config}, {minTimings: 1})).rows
  const scored = []
  for (const p of analysis.profiles.filter((x) => x.config !== null)) {
    const m = p.trialId === null ? undefined : byId.get(p.trialId)?.metrics
    scored.push({
      name: p.profile,
      trial: p.trialId,
      tuning_quality: m?.[quality] ?? null,
      rows: await rowsOf(p.config!),
    })
  }
  const validation = noninferiorityValidation(
    await rowsOf({}),
    scored,
    {...DEFAULT_HOLDOUT_SETTINGS, metric: service.metric ?? 'recall@10'},
    description,
  )
  return {report, validation}
}
