// kt's online learner as a library: run from the kt folder after `npm run build` with
//   node examples/online-library.mjs
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {openTenant, OnlineError} from 'kt/online'

const dir = mkdtempSync(join(tmpdir(), 'kt-example-'))
try {
  // Create a tenant whose bandits learn one set of retrieval parameters per query type.
  const tenant = openTenant({dir, tenant: 'acme', create: {per_type: true, levels: 2}})

  // Per query: ask for a configuration (durable before the promise resolves) ...
  const choice = await tenant.choose({query_id: 'q-1', type: 'temporal'})
  console.log(`query ${choice.query_id}: bm25.k1 ${choice.config['bm25.k1']}, fusion.graph ${choice.config['fusion.graph']}`)

  // ... run the engine with choice.config, then report whether a retrieved node was used.
  const outcome = await tenant.feedback({query_id: choice.query_id, used: true})
  console.log(`feedback: ${outcome.verdict}`)

  // Refusals are OnlineErrors with a stable code (the HTTP service maps them to status codes).
  try {
    await tenant.feedback({query_id: 'q-unknown', used: true})
  } catch (error) {
    if (!(error instanceof OnlineError)) throw error
    console.log(`refused: ${error.code}`)
  }

  const status = tenant.status()
  console.log(`${status.queries} query, ${status.counters.used} used, types ${Object.keys(status.types).join(', ')}`)
  await tenant.close()
} finally {
  rmSync(dir, {recursive: true, force: true})
}
