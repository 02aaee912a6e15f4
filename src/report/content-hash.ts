import {createHash} from 'node:crypto'
import type {Report} from './types.js'

/**
 * sha256 of a report's content: schema, version, run, phases and (when present) seeds, engine and study, serialised as kt writes them
 * (JSON.parse then JSON.stringify gives back the same text for JSON that JSON.stringify wrote).
 * Timing stays out: it is the one part that differs between identical runs.
 */
export function reportContentHash(
  report: Pick<Report, 'schema' | 'version' | 'run' | 'phases' | 'seeds' | 'engine' | 'study'>,
): string {
  // the seed check, the engine section and the study section join the hashed content only when present, so earlier reports keep their hash
  const content = [
    report.schema,
    report.version,
    report.run,
    report.phases,
    ...(report.seeds ? [report.seeds] : []),
    ...(report.engine ? [{engine: report.engine}] : []),
    ...(report.study ? [{study: report.study}] : []),
  ]
  return createHash('sha256').update(JSON.stringify(content)).digest('hex')
}
