import {extname, join, resolve} from 'node:path'
import {loadMemoryDataset, parseMemoryDataset} from '../../src/data/conversations/index.js'
import {describeSplit, splitDataset, type SplitSpec} from '../../src/data/conversations/split.js'
import type {MemoryDataset} from '../../src/data/conversations/types.js'
import {loadEngineProfile} from '../../src/eval/service-eval.js'
import {defaultConfig} from '../../src/space/space.js'
import type {Config} from '../../src/space/types.js'
import {InputError, describeValue} from '../../src/util/errors.js'
import {parseJson, readText, writeFileAtomic} from '../../src/util/fs.js'
import type {LoadedEnginePlan} from '../engine-plan.js'
import {engineInputFiles, fileSha256, type InputFile} from './checkpoints.js'
import {displayPath} from './context.js'
import {planEngine, type PlanEngine} from './plan-engine.js'
import {checkSplitIds, planSplit} from './retrieval-study.js'

/** The conversations a two-file plan tunes and validates on, merged in the run folder (the study reads one file). */
const MERGED_DATA = 'data'

/** The conversations of a run whose engine scores questions: tuned on one part, validated on the other. */
interface QuestionData {
  /** The conversations the study reads (the plan's file, or the two files merged in the run folder). */
  readonly data: string
  readonly dataset: MemoryDataset
  readonly split: SplitSpec
  /** The split as the study's settings spell it (a share, or the ids of each part). */
  readonly splitSetting: string | {train: string[]; holdout: string[]}
  readonly heldOut: MemoryDataset
  readonly splitText: string
}

/** Everything a format-2 run needs, read and checked before anything is written. */
export interface EngineInputs {
  readonly engine: PlanEngine
  /** The plan's conversations (absent for a command or http engine, which evaluates on its own data). */
  readonly questions?: QuestionData
  /** The data as reports name it. */
  readonly dataLabel: string
  readonly reference: {readonly name: string; readonly config: Config}
  /** The profile the plan's ablation.profile names, to ablate instead of the tuned one. */
  readonly ablated?: {readonly name: string; readonly config: Config}
  /** The input files (sha256) a checkpoint of this run is keyed by. */
  readonly files: InputFile[]
  /** Writes the merged conversations of a two-file plan into the run folder (nothing for one file). */
  writeData(): void
}

/** How a run of a command or http engine names its data. */
const OWN_DATA_LABEL = "the engine's own (it evaluates a configuration and returns metrics)"

/**
 * The plan's engine, data and profiles, read and checked: a conversation id of the split that the
 * data lacks, held-out data that overlaps the tuning data, or a profile of another engine is one
 * line naming the file and field.
 */
export function checkEngineInputs(loaded: LoadedEnginePlan, seed: number, outDir: string): EngineInputs {
  const {plan, file} = loaded
  const engine = planEngine(plan.engine, loaded.resolvePath, `${file}: engine`)
  const data = planData(loaded, engine, seed, outDir)
  const profile = (path: string) => ({
    name: displayPath(loaded.resolvePath(path), file),
    config: loadEngineProfile(loaded.resolvePath(path), engine.space),
  })
  const against = plan.acceptance.against
  const ablated = plan.ablation?.profile
  return {
    engine,
    dataLabel: data?.dataLabel ?? OWN_DATA_LABEL,
    writeData: data?.writeData ?? (() => {}),
    ...(data
      ? {
          questions: {
            data: data.data,
            dataset: data.dataset,
            split: data.split,
            splitSetting: data.splitSetting,
            heldOut: splitDataset(data.dataset, data.split, 'holdout'),
            splitText: describeSplit(data.dataset, data.split),
          },
        }
      : {}),
    // a profile of another engine is refused here (its space is not this engine's)
    reference: against === 'defaults' ? {name: 'defaults', config: defaultConfig(engine.space)} : profile(against),
    ...(ablated === undefined ? {} : {ablated: profile(ablated)}),
    files: [
      {field: 'plan', file: resolve(file), sha256: fileSha256(file)},
      ...(data?.files ?? []),
      ...(engine.file ? engineInputFiles(engine.file, engine.dir ?? engine.file, 'engine') : []),
    ],
  }
}

type DataPart = Pick<QuestionData, 'data' | 'dataset' | 'split' | 'splitSetting'> &
  Pick<EngineInputs, 'dataLabel' | 'files' | 'writeData'>

/** The plan's data section: required for an engine that scores questions, refused for one that evaluates on its own data. */
function planData(loaded: LoadedEnginePlan, engine: PlanEngine, seed: number, outDir: string): DataPart | undefined {
  const {data} = loaded.plan
  if (!engine.scoresQuestions) {
    const reported = engine.objectives(loaded.plan.metric)
    if (!reported.includes(loaded.plan.metric))
      throw new InputError(
        `${loaded.file}: metric`,
        `a metric ${engine.ref} reports among its objectives (${reported.join(', ')})`,
        loaded.plan.metric,
      )
    if (data === undefined) return undefined
    throw new InputError(
      `${loaded.file}: data`,
      `no data section for ${engine.ref} (a command or http engine evaluates on its own data)`,
      'a section',
    )
  }
  if (data === undefined) throw new InputError(`${loaded.file}: data`, 'a data section', 'nothing')
  return 'conversations' in data ? oneFile(loaded, data, seed) : twoFiles(loaded, data, outDir)
}

function oneFile(
  loaded: LoadedEnginePlan,
  spec: {conversations: string; split: DataPart['splitSetting']},
  seed: number,
) {
  const data = loaded.resolvePath(spec.conversations)
  const dataset = loadMemoryDataset(data)
  const split = planSplit({split: spec.split}, seed)!
  checkSplitIds(dataset, split, data, `${loaded.file}: data.split`)
  return {
    data,
    dataLabel: displayPath(data, loaded.file),
    dataset,
    split,
    splitSetting: spec.split,
    files: [{field: 'data.conversations', file: data, sha256: fileSha256(data)}],
    writeData: () => {},
  } satisfies DataPart
}

/**
 * Tuning and held-out conversations in two files of one format (LoCoMo .json or .jsonl), merged
 * into one file of the run folder with an id split. The held-out file must not overlap the tuning
 * one: not the same file, no conversation id in both, no held-out conversation whose turns are a
 * tuning conversation's.
 */
function twoFiles(loaded: LoadedEnginePlan, spec: {tuning: string; holdout: string}, outDir: string): DataPart {
  const where = `${loaded.file}: data.holdout`
  const [tuning, holdout] = [loaded.resolvePath(spec.tuning), loaded.resolvePath(spec.holdout)]
  const ext = extname(tuning).toLowerCase()
  if (!['.json', '.jsonl'].includes(ext))
    throw new InputError(`${loaded.file}: data.tuning`, 'a LoCoMo .json or a .jsonl file (two files are merged)', ext)
  if (extname(holdout).toLowerCase() !== ext)
    throw new InputError(where, `a ${ext} file like data.tuning (two files are merged)`, describeValue(spec.holdout))
  if (fileSha256(tuning) === fileSha256(holdout))
    throw new InputError(
      where,
      'a file other than data.tuning (validating on tuning data proves nothing)',
      spec.holdout,
    )
  const [a, b] = [loadMemoryDataset(tuning), loadMemoryDataset(holdout)]
  const turnsOf = (c: MemoryDataset['conversations'][number]) => JSON.stringify(c.turns.map((t) => t.text.trim()))
  const tuned = new Map(a.conversations.flatMap((c) => [[c.id, c.id] as const, [turnsOf(c), c.id] as const]))
  for (const c of b.conversations) {
    const same = tuned.get(c.id) ?? tuned.get(turnsOf(c))
    if (same !== undefined)
      throw new InputError(
        where,
        `conversations not also in data.tuning (held-out ${describeValue(c.id)} is tuning conversation ${describeValue(same)})`,
        spec.holdout,
      )
  }
  const texts = [readText(tuning), readText(holdout)]
  const text =
    ext === '.json'
      ? JSON.stringify([tuning, holdout].flatMap((f, i) => parseJson(f, texts[i]) as unknown[]))
      : texts.map((t) => `${t.trimEnd()}\n`).join('')
  const data = join(outDir, `${MERGED_DATA}${ext}`)
  const dataset = parseMemoryDataset(data, text, {format: ext === '.json' ? 'locomo' : 'jsonl'})
  const splitSetting = {train: a.conversations.map((c) => c.id), holdout: b.conversations.map((c) => c.id)}
  return {
    data,
    dataLabel: `${displayPath(tuning, loaded.file)} + ${displayPath(holdout, loaded.file)}`,
    dataset,
    split: planSplit({split: splitSetting}, 0)!,
    splitSetting,
    files: [
      {field: 'data.tuning', file: tuning, sha256: fileSha256(tuning)},
      {field: 'data.holdout', file: holdout, sha256: fileSha256(holdout)},
    ],
    writeData: () => writeFileAtomic(data, text),
  }
}
