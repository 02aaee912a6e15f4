// Child process of the deploy race test: waits for the start file, then runs its operations on
// one deployment target as fast as it can, and prints one line per operation (JSON array).
import {existsSync} from 'node:fs'

const [module, op, target, start, ...files] = process.argv.slice(2)
const {deployProfile, rollback} = await import(module)
while (!existsSync(start)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1)
const out = []
for (const file of files) {
  try {
    const r = op === 'deploy' ? deployProfile(file, target) : rollback(target)
    out.push({ok: true, active: r.active, previous: r.previous})
  } catch (error) {
    out.push({ok: false, name: error.name, message: error.message})
  }
}
process.stdout.write(JSON.stringify(out))
