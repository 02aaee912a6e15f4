import {parentPort, workerData} from 'node:worker_threads'
import {InputError} from '../../src/util/errors.js'
import {retrievalStudy, type RetrievalStudyInput} from './retrieval-study.js'

/** Worker side of startRetrievalStudy: runs the study and posts progress, then the result. */
const port = parentPort
if (!port) throw new Error('retrieval-worker must run in a worker thread')
retrievalStudy(workerData as RetrievalStudyInput, (line) => port.postMessage({progress: line}))
  .then((result) => port.postMessage({result}))
  .catch((error: Error) => {
    const input =
      error instanceof InputError ? {where: error.where, expected: error.expected, got: error.got} : undefined
    port.postMessage({error: {message: error.message, input}})
  })
