export {
  generateMemoryDataset,
  memoryDatasetJson,
  MEMORY_SYNTH_DEFAULTS,
  MIN_SESSIONS,
  type MemorySynthOptions,
  type LocomoSample,
  type LocomoQa,
  type LocomoTurn,
} from './generate.js'
export {MEMORY_FIXTURES, generateMemoryFixtures, type MemoryFixtureStatus} from './fixtures.js'
