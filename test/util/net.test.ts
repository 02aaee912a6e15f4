import {describe, expect, it} from 'vitest'
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'
import {DEFAULT_DB_PORT, freePort} from '../../src/util/net.js'
import {packageRoot} from '../../src/util/paths.js'

const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? sources(p) : /\.ts$/.test(n) ? [p] : []
  })

describe('free ports', () => {
  it("every server kt starts on a port the OS picks goes through freePort (src/util/net.ts), which keeps kt db start's port", async () => {
    const pickers = sources(join(packageRoot, 'src'))
      .filter((f) => /\.listen\(0\b/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(packageRoot, f))
    expect(pickers).toEqual(['src/util/net.ts'])
    const ports = await Promise.all(Array.from({length: 20}, () => freePort()))
    for (const p of ports) expect(p > 0 && p < 65536 && p !== DEFAULT_DB_PORT).toBe(true)
  })
})
