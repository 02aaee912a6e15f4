import {describe, expect, it} from 'vitest'
import {useLogScale} from '../../src/util/axis-scale.js'

describe('the log-axis rule', () => {
  it('goes log beyond two decades, and for a decade-plus span squeezed by an outlier', () => {
    expect(useLogScale([0.01, 0.5, 2])).toBe(true) // 200x
    expect(useLogScale([1, 2, 3, 50])).toBe(true) // 50x with the median at 2% of the range
    expect(useLogScale([1, 20, 30, 50])).toBe(false) // 50x, median at 39% of the range
    expect(useLogScale([0.045, 0.05, 0.06, 0.065, 2.3])).toBe(true) // the LoCoMo front: 51x, median at 0.7% of the range
    expect(useLogScale([0.1, 0.5, 0.9, 1.2])).toBe(false) // 12x, spread evenly
    expect(useLogScale([0, 1, 1000])).toBe(false) // zero cannot go on a log axis
    expect(useLogScale([5])).toBe(false)
  })
})
