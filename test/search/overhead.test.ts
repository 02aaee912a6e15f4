import {describe, expect, it} from 'vitest'
import BenchWorkers from '../../src/commands/bench/workers.js'
import BenchBohbOverhead from '../../src/commands/bench/bohb-overhead.js'
import {WORKERS_WORKLOAD} from '../../src/bench/bohb-overhead.js'

describe("kt bench bohb-overhead's workers workload", () => {
  it("is kt bench workers' default workload (trials per process), and its help says so", () => {
    expect(WORKERS_WORKLOAD.trialsPerProcess).toBe(BenchWorkers.flags['trials-per-process'].default)
    expect(BenchWorkers.flags.processes.default).toBe(WORKERS_WORKLOAD.processes.join(','))
    expect(BenchBohbOverhead.description).toContain(
      `seed ${WORKERS_WORKLOAD.seed}, ${WORKERS_WORKLOAD.trialsPerProcess} trials per worker process`,
    )
  })
})
