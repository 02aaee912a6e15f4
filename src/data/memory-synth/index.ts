export {generateMemoryDataset, memoryDatasetJson, type MemorySynthOptions} from './generate.js'
export {MEMORY_FIXTURES, generateMemoryFixtures} from './fixtures.js'
