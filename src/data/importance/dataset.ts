import {z} from 'zod'
import {InputError, describeValue} from '../../util/errors.js'
import {parseWith} from '../../util/zod.js'
import {readJson} from '../../util/fs.js'
import type {ImportanceInput} from './input.js'

/** Version of the dataset file format (`kt_dataset` field). */
export const DATASET_FORMAT_VERSION = 1

const isoTime = z.string().refine((s) => ISO_UTC.test(s) && Number.isFinite(Date.parse(s)), {
  message: 'an ISO-8601 UTC time like 2025-01-01T00:00:00Z',
})
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/
const unit = z.number().finite().min(0).max(1)

const TurnSchema = z
  .object({
    id: z.string().min(1),
    time: isoTime,
    text: z.string(),
    surprise: unit,
    query: z.string().min(1),
    truth: unit,
  })
  .strict()

const DatasetSchema = z
  .object({
    kt_dataset: z.literal(DATASET_FORMAT_VERSION),
    id: z.string().min(1),
    description: z.string(),
    reference_time: isoTime,
    generator: z.record(z.union([z.string(), z.number()])).nullable(),
    queries: z.array(z.object({id: z.string().min(1), text: z.string().min(1)}).strict()),
    turns: z.array(TurnSchema).min(2),
  })
  .strict()

/**
 * A labelled importance dataset: turns with a ground-truth importance in [0, 1], a surprise
 * measurement, a query per turn, and the reference time from which every age is measured.
 */
export type Dataset = z.infer<typeof DatasetSchema>
export type DatasetTurn = z.infer<typeof TurnSchema>

/** Validates parsed JSON as a dataset; errors name the file and the JSON path of the field. */
export function parseDataset(value: unknown, file: string): Dataset {
  const dataset = parseWith(DatasetSchema, value, file)
  checkConsistency(dataset, file)
  return dataset
}

/**
 * Longest synthetic time window a generator record may name, hours: a century. Far beyond any
 * conversation, and every turn time it yields stays a valid date (1e300 made phase 2's
 * regeneration throw a RangeError).
 */
export const MAX_WINDOW_HOURS = 100 * 365.25 * 24

/**
 * The options an importance generator record must hold to be regenerated (phase 2 checks that the
 * file regenerates byte-identically): checked when the dataset is read, naming the key.
 */
export function checkImportanceGenerator(g: Record<string, unknown>, where: string): void {
  if (!Number.isInteger(g.n) || (g.n as number) < 2)
    throw new InputError(`${where}.n`, 'an integer >= 2 (the number of turns generated)', describeValue(g.n))
  const w = g.window_hours
  if (typeof w !== 'number' || !(w > 0) || w > MAX_WINDOW_HOURS)
    throw new InputError(
      `${where}.window_hours`,
      `a number of hours > 0 and at most ${MAX_WINDOW_HOURS} (a century)`,
      describeValue(w),
    )
}

function checkConsistency(d: Dataset, file: string): void {
  if (d.generator?.kind === 'importance') checkImportanceGenerator(d.generator, `${file}: generator`)
  const ref = Date.parse(d.reference_time)
  const ids = new Set<string>()
  const queries = new Set(d.queries.map((q) => q.id))
  d.turns.forEach((t, i) => {
    if (ids.has(t.id))
      throw new InputError(`${file}: turns[${i}].id`, 'a unique id', `duplicate ${JSON.stringify(t.id)}`)
    ids.add(t.id)
    if (Date.parse(t.time) > ref)
      throw new InputError(
        `${file}: turns[${i}].time`,
        `a time at or before reference_time ${d.reference_time}`,
        t.time,
      )
    if (!queries.has(t.query))
      throw new InputError(`${file}: turns[${i}].query`, 'the id of an entry in queries', JSON.stringify(t.query))
  })
}

export function loadDataset(file: string): Dataset {
  return parseDataset(readJson(file), file)
}

/** The engine's view of a dataset: times in ms and each turn's query text. Labels stay behind. */
export function toImportanceInput(d: Dataset): ImportanceInput {
  const queryText = new Map(d.queries.map((q) => [q.id, q.text]))
  return {
    referenceTimeMs: Date.parse(d.reference_time),
    turns: d.turns.map((t) => ({
      timeMs: Date.parse(t.time),
      text: t.text,
      surprise: t.surprise,
      query: queryText.get(t.query)!,
    })),
  }
}

export function truthOf(d: Dataset): Float64Array {
  return Float64Array.from(d.turns, (t) => t.truth)
}

/** Canonical serialisation: fixed key order, two-space indent, trailing newline. */
export function serializeDataset(d: Dataset): string {
  const ordered = {
    kt_dataset: d.kt_dataset,
    id: d.id,
    description: d.description,
    reference_time: d.reference_time,
    generator: d.generator,
    queries: d.queries.map((q) => ({id: q.id, text: q.text})),
    turns: d.turns.map((t) => ({
      id: t.id,
      time: t.time,
      text: t.text,
      surprise: t.surprise,
      query: t.query,
      truth: t.truth,
    })),
  }
  return `${JSON.stringify(ordered, null, 2)}\n`
}
