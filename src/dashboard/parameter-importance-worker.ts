import {parentPort} from 'node:worker_threads'
import {studyImportance, type ImportanceTrial} from '../search/parameter-importance.js'
import {InputError} from '../util/errors.js'
import type {ParamSpace} from '../space/index.js'

/** Worker side of the dashboard's importance: the forest fits here, so the server keeps answering polls meanwhile. */
const port = parentPort
if (!port) throw new Error('parameter-importance-worker must run in a worker thread')
port.on(
  'message',
  (msg: {id: number; space: ParamSpace | undefined; trials: ImportanceTrial[]; target: string; seed: number}) => {
    try {
      port.postMessage({
        id: msg.id,
        result: studyImportance(msg.space, msg.trials, {target: msg.target, seed: msg.seed}),
      })
    } catch (error) {
      const e = error as Error
      port.postMessage({
        id: msg.id,
        error: e.message,
        input: e instanceof InputError ? {where: e.where, expected: e.expected, got: e.got} : undefined,
      })
    }
  },
)
