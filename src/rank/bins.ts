import {numDocs, numFeatures, type LtrDataset} from './dataset.js'

/**
 * Histogram binning of features (the "histogram splits" of LightGBM, Ke et al. 2017): each
 * feature's values are cut into at most MAX_BINS bins once, before training, and split search then
 * scans bin histograms instead of sorted values.
 *
 * Bin b of a feature holds the values v with upper[b - 1] < v <= upper[b]; the last bin's upper
 * bound is +Infinity. A split "bin <= b" is therefore the real-valued test "v <= upper[b]", which is
 * what the trees store, so prediction on raw features reproduces the training partition exactly.
 */

/** At most this many bins per feature: LightGBM's default `max_bin` (255), and bin ids fit a byte. */
export const MAX_BINS = 255

export interface FeatureBinning {
  /** Per feature, ascending bin upper bounds; the last is +Infinity. */
  readonly upper: readonly Float64Array[]
  /** Offset of each feature's first bin in a concatenated histogram; length features + 1. */
  readonly offsets: Int32Array
}

/** A data set's features mapped to bin ids, row-major like the features. */
export interface BinnedData {
  readonly binning: FeatureBinning
  readonly bins: Uint8Array
  readonly rows: number
  readonly width: number
}

/** Computes bin bounds for every feature of `data` (at most `maxBins` each). */
export function fitBinning(data: LtrDataset, maxBins = MAX_BINS): FeatureBinning {
  const width = numFeatures(data)
  const n = numDocs(data)
  const upper: Float64Array[] = []
  const column = new Float64Array(n)
  for (let f = 0; f < width; f++) {
    for (let d = 0; d < n; d++) column[d] = data.features[d * width + f]
    upper.push(binBounds(column, maxBins))
  }
  const offsets = new Int32Array(width + 1)
  for (let f = 0; f < width; f++) offsets[f + 1] = offsets[f] + upper[f].length
  return {upper, offsets}
}

/**
 * Upper bounds for one feature: one bin per distinct value when there are at most `maxBins`,
 * otherwise consecutive distinct values grouped into bins of about equal document count (a bin
 * never splits one value). Boundaries sit halfway between neighbouring distinct values.
 */
export function binBounds(values: Float64Array, maxBins: number): Float64Array {
  const sorted = Float64Array.from(values).sort()
  const distinct: number[] = []
  const counts: number[] = []
  for (let i = 0; i < sorted.length; i++) {
    if (distinct.length > 0 && sorted[i] === distinct[distinct.length - 1]) counts[counts.length - 1]++
    else {
      distinct.push(sorted[i])
      counts.push(1)
    }
  }
  const bounds: number[] = []
  if (distinct.length <= maxBins) {
    for (let i = 0; i + 1 < distinct.length; i++) bounds.push(midpoint(distinct[i], distinct[i + 1]))
  } else {
    let remaining = sorted.length
    let inBin = 0
    for (let i = 0; i + 1 < distinct.length && bounds.length < maxBins - 1; i++) {
      inBin += counts[i]
      remaining -= counts[i]
      // Re-target after each closed bin so that large tied values do not starve the last bins.
      const target = (inBin + remaining) / (maxBins - bounds.length)
      if (inBin >= target) {
        bounds.push(midpoint(distinct[i], distinct[i + 1]))
        inBin = 0
      }
    }
  }
  bounds.push(Number.POSITIVE_INFINITY)
  return Float64Array.from(bounds)
}

/** A boundary strictly below b and at least a, so a falls left and b right of it. */
function midpoint(a: number, b: number): number {
  const mid = a + (b - a) / 2
  return mid >= b ? a : mid
}

/** Bin id of value v: the first bin whose upper bound is >= v (binary search). */
export function binOf(upper: Float64Array, v: number): number {
  let lo = 0
  let hi = upper.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (v <= upper[mid]) hi = mid
    else lo = mid + 1
  }
  return lo
}

/** Maps every feature value of `data` to its bin. */
export function applyBinning(data: LtrDataset, binning: FeatureBinning): BinnedData {
  const width = numFeatures(data)
  const rows = numDocs(data)
  const bins = new Uint8Array(rows * width)
  for (let d = 0; d < rows; d++) {
    for (let f = 0; f < width; f++) bins[d * width + f] = binOf(binning.upper[f], data.features[d * width + f])
  }
  return {binning, bins, rows, width}
}
