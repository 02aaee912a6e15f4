/**
 * Child process for the registry race test: reads commands from stdin, one a line
 * ("deploy <registry> <model>" or "rollback <registry>"), runs each and answers with one JSON line
 * ({ok: outcome} or {error: message}). Long-lived, so that a race costs no process start-up and
 * the parent can release both racers at the same moment.
 */
import {createInterface} from 'node:readline'
import {deploy} from '../../src/rank/deploy.js'
import {rollback} from '../../src/rank/registry.js'

const lines = createInterface({input: process.stdin})
lines.on('line', (line) => {
  const [op, registry, model] = line.split('\t')
  try {
    const outcome =
      op === 'deploy'
        ? deploy(registry, model, {lockWaitMs: 30_000, force: 'race test (the models have no validation data)'})
        : rollback(registry, {lockWaitMs: 30_000})
    process.stdout.write(`${JSON.stringify({ok: outcome})}\n`)
  } catch (error) {
    process.stdout.write(`${JSON.stringify({error: (error as Error).message})}\n`)
  }
})
