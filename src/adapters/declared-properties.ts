/**
 * What an engine file may declare about its own metrics (`properties[]`) and which metrics an
 * engine is known to report; checked on load (file.ts), run by phase 1 (conformance.ts).
 */
import {z} from 'zod'
import {DEFAULT_KS, retrievalMetricNames} from '../data/conversations/metrics.js'
import {InputError, describeValue} from '../util/errors.js'
import type {EngineFile} from './file-schema.js'

/**
 * A property the engine declares about its own metrics, checked by kt run's phase 1
 * (src/adapters/conformance.ts): `metric` moves in `direction` as `over` grows. `over` is a numeric
 * parameter, or "k" (retrieval services only: `metric` is then a template such as "recall@k" and kt
 * asks the service for each cut-off of DEFAULT_KS separately).
 */
export const declaredProperty = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a name of letters, digits, dot, dash or underscore (at most 64)'),
    description: z.string().optional(),
    metric: z.string().min(1),
    over: z.string().min(1),
    direction: z.enum(['non-decreasing', 'non-increasing']),
  })
  .strict()

/** Latency and quality metrics kt reports for every retrieval-service evaluation (retrieval-service.ts). */
const SERVICE_EXTRA_METRICS = ['quality', 'p50_ms', 'p95_ms', 'p99_ms']

/**
 * The metrics an engine is known to report: for a retrieval service, what kt computes from its
 * rankings; for a command or HTTP engine, the metrics its file names (objectives, profile rules).
 */
function reportedMetrics(data: Pick<EngineFile, 'evaluate' | 'objectives' | 'profiles'>): string[] {
  if (data.evaluate.kind === 'retrieval-service') return [...retrievalMetricNames(), ...SERVICE_EXTRA_METRICS]
  const named = [
    ...data.objectives.map((o) => o.metric),
    ...data.profiles.flatMap((p) => [p.order_by, ...p.constraints.map((c) => c.metric)]),
  ]
  return [...new Set(named)]
}

/** Declared properties name a reported metric and a numeric parameter outside simplex groups (or k). */
export function checkDeclaredProperties(data: EngineFile, at: (field: string) => string): void {
  const reported = reportedMetrics(data)
  const members = new Set(data.simplex.flatMap((g) => g.parameters))
  data.properties.forEach((p, i) => {
    const where = `properties[${i}]`
    if (data.properties.findIndex((x) => x.id === p.id) !== i)
      throw new InputError(at(`${where}.id`), 'an id no other property has', describeValue(p.id))
    if (p.over === 'k') {
      if (data.evaluate.kind !== 'retrieval-service')
        throw new InputError(
          at(`${where}.over`),
          'a numeric parameter ("k" only for a retrieval service, which kt asks for each cut-off)',
          '"k"',
        )
      const missing = DEFAULT_KS.map((k) => p.metric.split('@k').join(`@${k}`)).find((m) => !reported.includes(m))
      if (!p.metric.endsWith('@k') || missing)
        throw new InputError(
          at(`${where}.metric`),
          `a template NAME@k whose cut-offs ${DEFAULT_KS.join(', ')} the engine reports (recall@k, hit@k)`,
          describeValue(p.metric),
        )
      return
    }
    if (!reported.includes(p.metric))
      throw new InputError(
        at(`${where}.metric`),
        `a metric the engine reports (${reported.join(', ')})`,
        describeValue(p.metric),
      )
    const param = data.parameters.find((x) => x.name === p.over)
    if (!param || (param.type !== 'float' && param.type !== 'int') || members.has(param.name))
      throw new InputError(
        at(`${where}.over`),
        '"k" or the name of a float or int parameter outside simplex groups',
        describeValue(p.over),
      )
  })
}
