import {loadEngineFile, type EngineSpec} from '../../src/adapters/file.js'
import type {LoadedPlan} from '../plan.js'
import {displayPath} from './context.js'

/** The engine file a plan names, with the conversations kt drives through it (phases 1 and 2). */
export interface EngineUnderTest {
  readonly engine: EngineSpec
  /** The engine file as reports name it (never absolute). */
  readonly file: string
  /** Absolute path of the conversations, and as reports name them. */
  readonly data: string
  readonly dataLabel: string
}

/**
 * The engine a plan names for phases 1, 2 and 7, read from the fields phase 4 uses today
 * (retrieval.engine, retrieval.data); undefined when the plan tunes only kt's own engines. The
 * engine file is loaded and checked here, so a bad one is refused before the run writes anything.
 */
export function engineUnderTest(plan: LoadedPlan): EngineUnderTest | undefined {
  const r = plan.plan.retrieval
  if (!r?.engine) return undefined
  const file = plan.resolvePath(r.engine)
  const data = plan.resolvePath(r.data)
  return {
    engine: loadEngineFile(file),
    file: displayPath(file, plan.file),
    data,
    dataLabel: displayPath(data, plan.file),
  }
}

/** Loads and checks the engine file a plan names (one line naming the file and field when it is bad). */
export function checkPlanEngine(plan: LoadedPlan): void {
  engineUnderTest(plan)
}
