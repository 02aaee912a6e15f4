/**
 * Child process for the lock test: `increments` times, under the folder's lock, reads a counter
 * file, yields the CPU for a moment (so that without the lock the other writers would interleave)
 * and writes the counter plus one.
 */
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {writeFileAtomic} from '../../src/util/fs.js'
import {withDirLock} from '../../src/util/lock.js'
import {sleepSync} from '../../src/util/proc.js'

const [dir, increments, useLock] = process.argv.slice(2)
const counter = join(dir, 'counter')
const bump = (): void => {
  const n = existsSync(counter) ? Number(readFileSync(counter, 'utf8')) : 0
  sleepSync(1)
  writeFileAtomic(counter, String(n + 1))
}
for (let i = 0; i < Number(increments); i++) {
  if (useLock === 'lock')
    withDirLock(dir, {expected: 'a counter nobody else is changing', subject: `counter ${dir}`, waitMs: 30_000}, bump)
  else bump()
}
