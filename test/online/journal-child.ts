/**
 * Child process for the journal kill test: opens a journal (small segments, so segments are
 * retired during the run) and three tenants through the library, then loops forever over them:
 * choose, feedback, printing "ack <tenant> <query_id>" once both are durable. Several queries are
 * in flight at once, so a kill lands inside batches. The parent SIGKILLs it at arbitrary moments.
 */
import {openJournal, openTenant} from '../../src/online/library.js'

const [dir, segmentBytes] = process.argv.slice(2)
const {journal} = openJournal(dir, {segmentBytes: Number(segmentBytes)})
const tenants = ['a', 'b', 'c'].map((id) => openTenant({dir, tenant: id, journal, lockWaitMs: 0}))
const loop = async (k: number): Promise<void> => {
  for (let n = 0; ; n++) {
    const tenant = tenants[(k + n) % tenants.length]
    const choice = await tenant.choose({query_id: `w${k}-${process.pid}-${n}`})
    await tenant.feedback({query_id: choice.query_id, used: true})
    process.stdout.write(`ack ${tenant.id} ${choice.query_id}\n`)
  }
}
for (let k = 0; k < 6; k++) void loop(k)
