import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {dataFlag, portFlag, reply, seedFlag, storageFlag} from '../../src/cli/flags.js'
import type {KtCommand} from '../../src/cli/base.js'
import {DEFAULT_SEED} from '../../src/util/rng.js'
import {DEFAULT_STORAGE} from '../../src/study/model.js'
import {kt} from './helpers.js'

describe('the shared flags and the output epilogue (src/cli/flags.ts)', () => {
  it('declare the defaults and bounds every command shares', () => {
    expect(seedFlag('Seed of the split.')).toMatchObject({description: 'Seed of the split.', default: DEFAULT_SEED})
    expect(portFlag('Port.', 8765)).toMatchObject({default: 8765, min: 1, max: 65535})
    expect(portFlag('Port (0 = any free port).', 8765, 0)).toMatchObject({min: 0})
    expect(storageFlag()).toMatchObject({default: DEFAULT_STORAGE})
    const required = storageFlag({required: true, description: 'The store.'})
    expect(required).toMatchObject({required: true, description: 'The store.'})
    expect(required.default).toBeUndefined()
    expect(dataFlag({required: true})).toMatchObject({required: true, description: expect.stringMatching(/LoCoMo/)})
  })

  it('reply prints the lines and returns the JSON value', () => {
    const printed: string[] = []
    const command = {log: (line: string) => printed.push(line)} as unknown as KtCommand
    expect(reply(command, ['a', 'b'], {n: 1})).toEqual({n: 1})
    expect(reply(command, 'c', null)).toBeNull()
    expect(printed).toEqual(['a', 'b', 'c'])
  })

  it('a command ending in reply prints text, or under --json the JSON alone (built CLI)', () => {
    for (const json of [false, true]) {
      const dir = mkdtempSync(join(tmpdir(), 'kt-flags-'))
      try {
        const r = kt(['init', '--engine', 'command', ...(json ? ['--json'] : [])], {cwd: dir})
        expect(r.status).toBe(0)
        if (json) expect(JSON.parse(r.stdout).written).toContain('engine.json')
        else expect(r.stdout).toMatch(/^wrote .*engine\.json.*; next steps in KT-README\.md\n$/)
      } finally {
        rmSync(dir, {recursive: true, force: true})
      }
    }
  })
})
