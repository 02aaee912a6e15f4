/**
 * One evaluation of an objective, as the study runner sees it: the objective's result checked, an
 * exception or a timeout turned into a failed outcome (the study goes on), and wall-clock timings
 * kept apart from the results.
 */
import type {Config} from '../space/index.js'
import type {EvalContext, Objective} from '../search/types.js'

export interface EvalJob {
  readonly trialId: number
  readonly config: Config
  readonly budget: number
  readonly ctx: EvalContext
}

export interface Outcome {
  readonly status: 'ok' | 'failed'
  readonly loss?: number
  readonly values?: readonly number[]
  readonly metrics?: Readonly<Record<string, number>>
  readonly checkpoint?: unknown
  readonly error?: string
  readonly startedAt: string
  readonly finishedAt: string
  readonly durationMs: number
  readonly worker?: number
}

/** First line of an error, for the store and the console. */
export function errorLine(error: unknown): string {
  const text =
    error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error)
  return text.split('\n')[0].slice(0, 500)
}

/** Stderr lines kept with a failed trial's reason (an external engine's last words). */
const MAX_DETAIL_CHARS = 12_000

/**
 * What the store keeps of an error: its first line, and for errors that carry a `detail` (an
 * external engine's last stderr lines, src/adapters/metrics.ts) that detail on the following lines.
 */
function errorText(error: unknown): string {
  const carried = error instanceof Error ? (error as Error & {detail?: unknown}).detail : undefined
  const detail = typeof carried === 'string' ? carried : ''
  return detail.trim() ? `${errorLine(error)}\n${detail.slice(-MAX_DETAIL_CHARS)}` : errorLine(error)
}

/** Checks what an objective returned; anything unusable fails the trial with a reason. */
function checkResult(
  objective: Pick<Objective, 'valueNames'>,
  result: unknown,
):
  | {ok: true; value: {loss: number; values?: number[]; metrics?: Record<string, number>; checkpoint?: unknown}}
  | {ok: false; error: string} {
  const r = result as {loss?: unknown; values?: unknown; metrics?: unknown; checkpoint?: unknown} | undefined
  if (!r || typeof r !== 'object') return {ok: false, error: 'objective returned no result object'}
  if (typeof r.loss !== 'number' || !Number.isFinite(r.loss))
    return {ok: false, error: `objective returned a non-finite loss (${String(r.loss)})`}
  let values: number[] | undefined
  if (r.values !== undefined) {
    if (!Array.isArray(r.values) || !r.values.every((v) => typeof v === 'number' && Number.isFinite(v)))
      return {ok: false, error: 'objective returned non-finite objective values'}
    if (objective.valueNames && r.values.length !== objective.valueNames.length)
      return {
        ok: false,
        error: `objective returned ${r.values.length} values, expected ${objective.valueNames.length} (${objective.valueNames.join(', ')})`,
      }
    values = r.values as number[]
  }
  const metrics = r.metrics && typeof r.metrics === 'object' ? (r.metrics as Record<string, number>) : undefined
  return {ok: true, value: {loss: r.loss, values, metrics, checkpoint: r.checkpoint}}
}

/**
 * Evaluates in this thread. An async objective that overruns `timeoutMs` is abandoned (its
 * promise is ignored); a synchronous one cannot be interrupted here, so it is failed after the
 * fact when it took longer than the limit. Worker threads (pool.ts) interrupt for real.
 */
export async function evaluateHere(
  objective: Objective,
  job: EvalJob,
  timeoutMs: number | undefined,
  now: () => string,
): Promise<Outcome> {
  const startedAt = now()
  const t0 = performance.now()
  const finish = (fields: Omit<Outcome, 'startedAt' | 'finishedAt' | 'durationMs'>): Outcome => ({
    ...fields,
    startedAt,
    finishedAt: now(),
    durationMs: performance.now() - t0,
  })
  let timer: NodeJS.Timeout | undefined
  try {
    const running = Promise.resolve().then(() => objective.evaluate(job.config, job.budget, job.ctx))
    const raced = timeoutMs
      ? await Promise.race([
          running,
          new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
        ])
      : await running
    if (raced === 'timeout') return finish({status: 'failed', error: `timed out after ${timeoutMs} ms`})
    if (timeoutMs && performance.now() - t0 > timeoutMs)
      return finish({
        status: 'failed',
        error: `timed out after ${timeoutMs} ms (took ${Math.round(performance.now() - t0)} ms)`,
      })
    const checked = checkResult(objective, raced)
    return checked.ok ? finish({status: 'ok', ...checked.value}) : finish({status: 'failed', error: checked.error})
  } catch (error) {
    return finish({status: 'failed', error: errorText(error)})
  } finally {
    if (timer) clearTimeout(timer)
  }
}
