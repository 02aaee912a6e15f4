import {Rng} from '../../util/rng.js'
import {InputError} from '../../util/errors.js'
import {DATASET_FORMAT_VERSION, checkImportanceGenerator, type Dataset, type DatasetTurn} from './dataset.js'

/**
 * Seeded synthetic importance data with known ground truth. Every value is a function of the
 * options alone (seed included) and the reference time is pinned, so a dataset regenerates
 * byte-identically on any machine on any day.
 */
export const IMPORTANCE_DISTRIBUTIONS = ['pareto', 'balanced', 'uniform'] as const
export const TIME_PATTERNS = ['burst', 'recency', 'uniform'] as const
type ImportanceDistribution = (typeof IMPORTANCE_DISTRIBUTIONS)[number]
type TimePattern = (typeof TIME_PATTERNS)[number]

export interface SyntheticOptions {
  readonly id: string
  readonly n: number
  readonly seed: number
  readonly distribution: ImportanceDistribution
  readonly timestamps: TimePattern
  /** ISO UTC time every age is measured from. */
  readonly referenceTime: string
  /** How far back the turns reach. */
  readonly windowHours: number
}

/** The pinned reference time of the committed fixtures. */
const FIXTURE_REFERENCE_TIME = '2025-01-01T00:00:00Z'
/** Thirty days of history behind the reference time. */
const DEFAULT_WINDOW_HOURS = 720

/** The committed fixtures: id, size, distribution, time pattern and seed. */
export const FIXTURE_SPECS: readonly SyntheticOptions[] = [
  {
    id: 'realistic_100',
    n: 100,
    seed: 100,
    distribution: 'pareto',
    timestamps: 'burst',
    referenceTime: FIXTURE_REFERENCE_TIME,
    windowHours: DEFAULT_WINDOW_HOURS,
  },
  {
    id: 'recency_bias_75',
    n: 75,
    seed: 75,
    distribution: 'pareto',
    timestamps: 'recency',
    referenceTime: FIXTURE_REFERENCE_TIME,
    windowHours: DEFAULT_WINDOW_HOURS,
  },
  {
    id: 'uniform_50',
    n: 50,
    seed: 50,
    distribution: 'uniform',
    timestamps: 'uniform',
    referenceTime: FIXTURE_REFERENCE_TIME,
    windowHours: DEFAULT_WINDOW_HOURS,
  },
]

/** Shares and ranges of each importance distribution (the Ada study's definitions). */
const DISTRIBUTION_BANDS: Record<ImportanceDistribution, ReadonlyArray<{share: number; low: number; high: number}>> = {
  pareto: [
    {share: 0.8, low: 0, high: 0.3},
    {share: 0.2, low: 0.7, high: 1},
  ],
  balanced: [
    {share: 0.25, low: 0.7, high: 1},
    {share: 0.5, low: 0.3, high: 0.7},
    {share: 0.25, low: 0, high: 0.3},
  ],
  uniform: [{share: 1, low: 0, high: 1}],
}

/** surprise = SURPRISE_TRUTH_SLOPE x truth + U(0, SURPRISE_NOISE): informative, not a copy of the label. */
const SURPRISE_TRUTH_SLOPE = 0.7
const SURPRISE_NOISE = 0.3
/** Burst pattern: this many bursts, each with this spread (standard deviation, hours). */
const BURSTS = 4
const BURST_SD_HOURS = 6
/** Recency pattern: ages are exponential with mean window / RECENCY_MEAN_DIVISOR. */
const RECENCY_MEAN_DIVISOR = 6
/** Chance that a low-importance turn repeats an earlier low-importance turn word for word. */
const REPEAT_PROBABILITY = 0.35
/** Importance below which a turn counts as low for repetition. */
const LOW_IMPORTANCE = 0.3
/** Query-topic words in a turn: about truth x this many (so relevance tracks importance, noisily). */
const MAX_TOPIC_WORDS = 6
/** Decimal places kept in generated values, so fixtures stay readable and exact. */
const DECIMALS = 4

const TOPICS: readonly (readonly string[])[] = [
  ['flight', 'passport', 'hotel', 'booking', 'airport', 'visa', 'itinerary', 'luggage', 'layover', 'boarding'],
  ['budget', 'invoice', 'payment', 'refund', 'account', 'balance', 'transfer', 'receipt', 'expense', 'salary'],
  ['deploy', 'server', 'database', 'migration', 'outage', 'latency', 'cluster', 'rollback', 'pipeline', 'monitoring'],
  [
    'doctor',
    'appointment',
    'prescription',
    'allergy',
    'therapy',
    'symptoms',
    'clinic',
    'dosage',
    'insurance',
    'checkup',
  ],
  ['birthday', 'gift', 'party', 'cake', 'invitation', 'venue', 'guests', 'celebration', 'surprise', 'anniversary'],
  [
    'contract',
    'deadline',
    'client',
    'proposal',
    'meeting',
    'negotiation',
    'signature',
    'milestone',
    'deliverable',
    'review',
  ],
  ['garden', 'tomatoes', 'compost', 'seedlings', 'watering', 'pruning', 'greenhouse', 'soil', 'harvest', 'fertilizer'],
  ['marathon', 'training', 'injury', 'stretching', 'pace', 'sneakers', 'recovery', 'interval', 'hydration', 'coach'],
]
const FILLER = [
  'sounds good to me',
  'thanks for letting me know',
  'let me think about it',
  'sure thing',
  'haha that is funny',
  'talk to you later',
  'got it',
  'okay see you then',
  'nice, thanks',
  'no worries at all',
  'good morning',
  'have a nice evening',
]
const CONNECTIVES = [
  'remember',
  'note',
  'important',
  'we',
  'should',
  'check',
  'the',
  'next',
  'plan',
  'about',
  'update',
  'on',
]

export function generateImportanceDataset(o: SyntheticOptions): Dataset {
  checkImportanceGenerator({n: o.n, window_hours: o.windowHours}, 'synthetic options')
  const refMs = Date.parse(o.referenceTime)
  if (!Number.isFinite(refMs))
    throw new InputError('synthetic options: referenceTime', 'an ISO-8601 UTC time', o.referenceTime)
  const rng = new Rng(o.seed)
  const truths = rng.fork('truth').shuffle(drawTruths(o.distribution, o.n, rng.fork('truth-values')))
  const ages = drawAges(o.timestamps, o.n, o.windowHours, rng.fork('time'))
  // chronological order: oldest first, so ids read like a conversation log
  const order = ages.map((_, i) => i).sort((a, b) => ages[b] - ages[a] || a - b)

  // Topic drift: the conversation moves through a sequence of topics over the window.
  const topicRng = rng.fork('topics')
  const topicSequence = topicRng.shuffle(TOPICS.map((_, i) => i)).slice(0, 3)
  const queries = topicSequence.map((topic, k) => ({
    id: `q${k + 1}`,
    text: `What matters about the ${TOPICS[topic].slice(0, 3).join(', ')}?`,
  }))
  const textRng = rng.fork('text')
  const surpriseRng = rng.fork('surprise')
  const lowTexts: string[] = []
  const turns: DatasetTurn[] = order.map((i, position) => {
    const truth = round(truths[i])
    const phase = Math.min(topicSequence.length - 1, Math.floor((position / o.n) * topicSequence.length))
    const text = turnText(truth, TOPICS[topicSequence[phase]], lowTexts, textRng)
    const timeMs = refMs - Math.round(ages[i] * 60) * 60_000 // whole minutes
    return {
      id: `t${String(position + 1).padStart(3, '0')}`,
      time: new Date(timeMs).toISOString().replace('.000Z', 'Z'),
      text,
      surprise: round(SURPRISE_TRUTH_SLOPE * truth + surpriseRng.uniform(0, SURPRISE_NOISE)),
      query: queries[phase].id,
      truth,
    }
  })
  return {
    kt_dataset: DATASET_FORMAT_VERSION,
    id: o.id,
    description: `Synthetic: ${o.n} turns, ${o.distribution} importance, ${o.timestamps} timestamps, topic drift over ${topicSequence.length} topics, seed ${o.seed}.`,
    reference_time: o.referenceTime,
    generator: {
      kind: 'importance',
      n: o.n,
      seed: o.seed,
      distribution: o.distribution,
      timestamps: o.timestamps,
      window_hours: o.windowHours,
    },
    queries,
    turns,
  }
}

/** Exact shares (rounded counts, remainder to the last band), values uniform within each band. */
function drawTruths(distribution: ImportanceDistribution, n: number, rng: Rng): number[] {
  const bands = DISTRIBUTION_BANDS[distribution]
  const out: number[] = []
  bands.forEach((band, k) => {
    const count = k === bands.length - 1 ? n - out.length : Math.round(band.share * n)
    for (let j = 0; j < count; j++) out.push(rng.uniform(band.low, band.high))
  })
  return out
}

function drawAges(pattern: TimePattern, n: number, window: number, rng: Rng): number[] {
  const clamp = (h: number) => Math.min(window, Math.max(0, h))
  if (pattern === 'uniform') return Array.from({length: n}, () => rng.uniform(0, window))
  if (pattern === 'recency')
    return Array.from({length: n}, () => clamp(-Math.log(1 - rng.next()) * (window / RECENCY_MEAN_DIVISOR)))
  const centers = Array.from({length: BURSTS}, () => rng.uniform(0, window))
  return Array.from({length: n}, () => clamp(centers[rng.int(BURSTS)] + rng.normal(0, BURST_SD_HOURS)))
}

function turnText(truth: number, topic: readonly string[], lowTexts: string[], rng: Rng): string {
  if (truth < LOW_IMPORTANCE && lowTexts.length > 0 && rng.next() < REPEAT_PROBABILITY)
    return lowTexts[rng.int(lowTexts.length)]
  const topicWords = Math.round(truth * MAX_TOPIC_WORDS + rng.uniform(-1, 1))
  const words: string[] = []
  for (let k = 0; k < topicWords; k++) words.push(topic[rng.int(topic.length)])
  for (let k = 0; k < 2 + rng.int(4); k++) words.push(CONNECTIVES[rng.int(CONNECTIVES.length)])
  if (truth < LOW_IMPORTANCE) words.push(...FILLER[rng.int(FILLER.length)].split(' '))
  const text = rng.shuffle(words).join(' ')
  const sentence = text.charAt(0).toUpperCase() + text.slice(1) + '.'
  if (truth < LOW_IMPORTANCE) lowTexts.push(sentence)
  return sentence
}

function round(x: number): number {
  const f = 10 ** DECIMALS
  return Math.round(x * f) / f
}
