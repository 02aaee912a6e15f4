import {createHash} from 'node:crypto'
import type {Report} from './types.js'

/**
 * sha256 of a report's content: schema, version, run, phases and (when present) seeds and engine, serialised as kt writes them
 * (JSON.parse then JSON.stringify gives back the same text for JSON that JSON.stringify wrote).
 * Timing stays out: it is the one part that differs between identical runs.
 */
export function reportContentHash(
  report: Pick<Report, 'schema' | 'version' | 'run' | 'phases' | 'seeds' | 'engine'>,
): string {
  // the seed check and the engine section join the hashed content only when present, so earlier reports keep their hash
  const content = [
    report.schema,
    report.version,
    report.run,
    report.phases,
    ...(report.seeds ? [report.seeds] : []),
    ...(report.engine ? [{engine: report.engine}] : []),
  ]
  return createHash('sha256').update(JSON.stringify(content)).digest('hex')
}
