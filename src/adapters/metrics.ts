/**
 * What every engine adapter shares: reading the engine's metrics object and turning it into the
 * Objective contract's result (loss, minimised objective vector, metrics), and the failure that
 * carries the engine's own last words (stderr) into the study.
 */
import type {EngineSpec} from './file.js'
import type {EngineObjective} from './file-schema.js'

/** Lines of stderr kept with a failed trial. */
const STDERR_TAIL_LINES = 20
/** Characters kept per stderr line, so one runaway line cannot fill the store. */
const MAX_LINE_CHARS = 500

/**
 * A failed evaluation: `message` is the reason (one line), `detail` the engine's last stderr
 * lines. The study runner stores both (src/study/evaluate.ts errorText).
 */
export class TrialFailure extends Error {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message)
  }
}

/** The last `n` non-empty lines of a text, each cut to MAX_LINE_CHARS. */
export function tailLines(text: string, n = STDERR_TAIL_LINES): string {
  const lines = text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '')
  return lines
    .slice(-n)
    .map((l) => (l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS)}...` : l))
    .join('\n')
}

/**
 * The last line of `stdout` that parses as a JSON object (not an array, not a scalar), or
 * undefined. Lines before it are the engine's own logging.
 */
export function lastJsonObjectLine(stdout: string): Record<string, unknown> | undefined {
  const lines = stdout.split('\n')
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim()
    if (!line.startsWith('{') || !line.endsWith('}')) continue
    try {
      const value: unknown = JSON.parse(line)
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
    } catch {
      // not JSON: an ordinary log line that happens to be braced
    }
  }
  return undefined
}

/** The numeric entries of a metrics object (other values are the engine's notes, not metrics). */
function numericMetrics(value: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(value)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v
  return out
}

/**
 * The Objective result for an engine's metrics: loss = the first objective (negated when it is
 * maximised), values = every objective that way (all minimised; only with two or more). A missing
 * or non-finite objective metric fails the trial.
 */
export function resultFromMetrics(
  objectives: readonly EngineObjective[],
  raw: Record<string, unknown>,
): {loss: number; values?: number[]; metrics: Record<string, number>} {
  const metrics = numericMetrics(raw)
  const values = objectives.map((o) => {
    const v = metrics[o.metric]
    if (v === undefined) {
      const got = raw[o.metric]
      const names = Object.keys(raw)
      throw new TrialFailure(
        got === undefined
          ? `the metrics have no "${o.metric}" (objective); got ${names.length ? names.slice(0, 10).join(', ') : 'an empty object'}`
          : `metric "${o.metric}" is not a finite number: ${JSON.stringify(got)?.slice(0, 60)}`,
      )
    }
    return o.direction === 'maximize' ? -v : v
  })
  return {loss: values[0], values: objectives.length > 1 ? values : undefined, metrics}
}

/** Names of the minimised objective vector (the contract's valueNames): `-metric` for maximised ones. */
export function valueNames(objectives: readonly EngineObjective[]): string[] | undefined {
  return objectives.length > 1
    ? objectives.map((o) => (o.direction === 'maximize' ? `neg_${o.metric}` : o.metric))
    : undefined
}

/**
 * What every engine-file objective declares alike: its id, space, tiers as fidelity, objective
 * names, and that its trials run in flight in one thread (processes or requests, not threads).
 */
export function engineObjectiveHeader(spec: EngineSpec): {
  id: string
  space: EngineSpec['space']
  fidelity: EngineSpec['fidelity']
  valueNames: string[] | undefined
  concurrent: true
} {
  return {
    id: `engine:${spec.name}`,
    space: spec.space,
    fidelity: spec.fidelity,
    valueNames: valueNames(spec.objectives),
    concurrent: true,
  }
}
