/**
 * Child process for the crash test: opens a tenant and loops forever issuing queries with
 * feedback, printing "ack <queryId>" after each query's feedback calls have returned (i.e. were
 * logged and fsync'd). The parent SIGKILLs it at an arbitrary moment.
 */
import {openTenant} from './helpers.js'

const [dir, tenant, snapshotEvery] = process.argv.slice(2)
const store = openTenant(dir, tenant, Number(snapshotEvery))
let t = store.learner.lastT + 1
for (;;) {
  const {queryId} = store.choose(t)
  t += 50
  store.used(String(queryId), t)
  store.label(String(queryId), queryId % 4, t)
  process.stdout.write(`ack ${queryId}\n`)
}
