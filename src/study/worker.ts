/**
 * Worker-thread entry of the study pool: builds the objective from its serializable description
 * once, then evaluates one job per message and posts the outcome back.
 */
import {parentPort, workerData, threadId} from 'node:worker_threads'
import {createObjective, type ObjectiveSpec} from './objectives.js'
import {evaluateHere, errorLine, type EvalJob} from './evaluate.js'

const port = parentPort
if (!port) throw new Error('study worker: must run in a worker thread')

const {spec} = workerData as {spec: ObjectiveSpec}
const ready = createObjective(spec)
// a build failure is reported to the pool with the first job (fatal); until a job awaits it, it
// must not count as an unhandled rejection, which would crash the thread instead
ready.catch(() => {})
const now = (): string => new Date().toISOString()

port.on('message', async (job: EvalJob | {close: true}) => {
  if ('close' in job) {
    // the pool is shutting down: release the objective's processes and connections first
    try {
      await (await ready).close?.()
    } catch {
      // nothing to release, or it cannot be released: the thread ends either way
    }
    port.postMessage({closed: true})
    return
  }
  let objective
  try {
    objective = await ready
  } catch (error) {
    // The objective cannot be built here: every job would fail the same way, so stop the study.
    port.postMessage({trialId: job.trialId, fatal: errorLine(error)})
    return
  }
  try {
    // The pool enforces the timeout by terminating this thread; here the evaluation just runs.
    const outcome = await evaluateHere(objective, job, undefined, now)
    port.postMessage({trialId: job.trialId, outcome: {...outcome, worker: threadId}})
  } catch (error) {
    const t = now()
    port.postMessage({
      trialId: job.trialId,
      outcome: {
        status: 'failed',
        error: errorLine(error),
        startedAt: t,
        finishedAt: t,
        durationMs: 0,
        worker: threadId,
      },
    })
  }
})
