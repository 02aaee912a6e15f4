import {spawn} from 'node:child_process'
import {resolve} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadMemoryDataset} from '../../src/data/conversations/index.js'
import {loadEngineFile} from '../../src/adapters/file.js'
import {serviceSpecOf} from '../../src/adapters/retrieval-service.js'
import {evaluateService} from '../../src/eval/service-eval.js'
import {defaultConfig} from '../../src/space/index.js'

const ROOT = resolve(__dirname, '../..')
const dataset = loadMemoryDataset(resolve(ROOT, 'fixtures/memory_small.json'))

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('examples/python-engine/service.py (python3, for real)', () => {
  it('ranks the same over HTTP and over stdio, and kt scores it per category', async () => {
    const http = loadEngineFile(resolve(ROOT, 'examples/python-engine/engine.service.json'))
    const stdio = loadEngineFile(resolve(ROOT, 'examples/python-engine/engine.stdio.json'))
    const config = {...defaultConfig(http.space), 'w.bm25': 0.9, 'w.recency': 0.1}
    const a = await evaluateService(serviceSpecOf(http), dataset, config, {minTimings: 1})
    const b = await evaluateService(serviceSpecOf(stdio), dataset, config, {minTimings: 1})
    expect(a.output.queries).toBe(52)
    expect(a.output.service).toEqual(b.output.service)
    expect(a.output.service.overall['recall@10']).toBeGreaterThan(0.3)
    expect(Object.keys(a.output.service.by_category).sort()).toEqual([
      'multi-hop',
      'open-domain',
      'single-hop',
      'temporal',
    ])
    expect(a.output.latency_ms.p99).toBeGreaterThan(0)
  })

  it('a server kt started does not outlive a kt killed with kill -9', async () => {
    // a child kt process opens the service, prints the server's pid, then waits to be killed
    const script = `
      import {openTransport} from ${JSON.stringify(resolve(ROOT, 'src/adapters/service-transport.ts'))}
      const t = await openTransport({transport: 'http', url: 'http://127.0.0.1:{port}', command: ['python3', 'service.py', '--port', '{port}', '--watch-stdin'], cwd: ${JSON.stringify(resolve(ROOT, 'examples/python-engine'))}})
      console.log(t.pid)
      setInterval(() => {}, 1000)
    `
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const pid = await new Promise<number>((res, rej) => {
      child.stdout.once('data', (d: Buffer) => res(Number(String(d).trim())))
      child.once('exit', (code) => rej(new Error(`child exited ${code}`)))
    })
    expect(alive(pid)).toBe(true)
    child.kill('SIGKILL')
    const deadline = Date.now() + 5000
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(alive(pid)).toBe(false)
  }, 20_000)
})
