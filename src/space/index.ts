export * from './types.js'
export * from './space.js'
