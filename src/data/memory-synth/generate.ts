import {Rng} from '../../util/rng.js'
import {MS_PER_DAY, formatLocomoDate} from '../conversations/dates.js'
import {
  CITIES,
  CLOSERS,
  FILLERS,
  FIRST_NAMES,
  HOBBIES,
  JOBS,
  OPENER_REPLIES,
  OPENERS,
  PET_KINDS,
  PET_NAMES,
  RELATIONS,
  REPLIES,
} from './vocabulary.js'

/**
 * A seeded synthetic multi-session conversation generator with gold evidence: two speakers,
 * attributes that change over time (city, job), a pet, hobbies, and a relative whose facts are
 * spread over two sessions (multi-hop chains). Questions carry LoCoMo categories and evidence
 * dia_ids; the output is LoCoMo-shaped JSON, so every kt loader and `kt eval` read it as they read
 * LoCoMo. Everything is a function of the options (the seed included): same options, same bytes.
 */
export interface MemorySynthOptions {
  readonly seed: number
  /** Number of conversations (LoCoMo samples). */
  readonly conversations?: number
  /** Sessions per conversation (at least MIN_SESSIONS). */
  readonly sessions?: number
  /** Typical turns per session; the actual count varies by +-25% and grows to fit the planned facts. */
  readonly turnsPerSession?: number
  /** First session's day (ISO date, UTC); sessions follow 3-21 days apart. Pinned so output never depends on today. */
  readonly startDate?: string
  /**
   * Add this many pseudo-words, Zipf-distributed over a seeded lexicon, to every filler turn, so
   * large benchmark corpora get realistic posting-list lengths. 0 (default) for readable fixtures.
   */
  readonly noiseWords?: number
}

const MEMORY_SYNTH_DEFAULTS = {
  conversations: 2,
  sessions: 12,
  turnsPerSession: 14,
  startDate: '2023-01-09',
  noiseWords: 0,
} as const
/** Facts are spread over the sessions, so there must be enough of them. */
export const MIN_SESSIONS = 6
/** Days between consecutive sessions: uniform integer in [MIN, MAX]. */
const SESSION_GAP_DAYS = {min: 3, max: 21}
/** Session start times fall between 8:00 and 21:59 UTC. */
const SESSION_HOURS = {first: 8, count: 14}
const TURN_COUNT_JITTER = 0.25
/** Size of the pseudo-word lexicon and its Zipf exponent (word frequency ~ 1/rank^s, Zipf 1949). */
const NOISE_LEXICON = 20_000
const ZIPF_EXPONENT = 1.07

/** A LoCoMo-shaped sample (see ../shared/locomo/README.md). */
interface LocomoTurn {
  speaker: string
  dia_id: string
  text: string
}
interface LocomoQa {
  question: string
  answer?: string
  adversarial_answer?: string
  evidence: string[]
  category: 1 | 2 | 3 | 4 | 5
}
export interface LocomoSample {
  sample_id: string
  conversation: Record<string, string | LocomoTurn[]>
  qa: LocomoQa[]
}

const CATEGORY = {multiHop: 1, temporal: 2, openDomain: 3, singleHop: 4, adversarial: 5} as const

/** A planned fact: the speaker says `text` in `session`; `onTurn` learns its dia_id. */
interface PlannedFact {
  readonly session: number
  readonly speaker: 0 | 1
  readonly text: string
  readonly onTurn: (diaId: string) => void
}

interface Person {
  readonly name: string
  readonly relation: string
  readonly relative: string
  readonly relativeCity: string
  readonly relativeJob: readonly [string, string]
  readonly pet: {kind: string; name: string}
  readonly cities: readonly string[]
  readonly jobs: ReadonlyArray<readonly [string, string]>
  readonly hobbies: ReadonlyArray<(typeof HOBBIES)[number]>
}

export function generateMemoryDataset(options: MemorySynthOptions): LocomoSample[] {
  const o = {...MEMORY_SYNTH_DEFAULTS, ...options}
  if (!Number.isInteger(o.sessions) || o.sessions < MIN_SESSIONS)
    throw new RangeError(`memory synth: sessions must be an integer >= ${MIN_SESSIONS}, got ${o.sessions}`)
  const root = new Rng(o.seed)
  const lexicon = o.noiseWords > 0 ? new NoiseLexicon(root.fork('lexicon')) : undefined
  return Array.from({length: o.conversations}, (_, c) =>
    generateConversation(`synth-${o.seed}-${c + 1}`, root.fork(`conversation ${c}`), o, lexicon),
  )
}

function generateConversation(
  id: string,
  rng: Rng,
  o: Required<MemorySynthOptions>,
  lexicon: NoiseLexicon | undefined,
): LocomoSample {
  const names = rng.fork('names').shuffle([...FIRST_NAMES])
  const people: [Person, Person] = [
    makePerson(rng.fork('a'), names[0], names[2]),
    makePerson(rng.fork('b'), names[1], names[3]),
  ]
  const times = sessionTimes(rng.fork('times'), o.sessions, o.startDate)
  const facts: PlannedFact[] = []
  const qa: LocomoQa[] = []
  const dateOf = (diaId: string): string => formatDay(times[Number(diaId.slice(1, diaId.indexOf(':'))) - 1])
  people.forEach((p, who) =>
    planFacts(rng.fork(`facts ${who}`), p, people[1 - who], who as 0 | 1, o.sessions, facts, qa, dateOf),
  )
  const conversation: Record<string, string | LocomoTurn[]> = {speaker_a: people[0].name, speaker_b: people[1].name}
  const fill = rng.fork('fill')
  for (let s = 0; s < o.sessions; s++) {
    const sessionFacts = facts.filter((f) => f.session === s)
    const target = Math.max(
      sessionFacts.length * 2 + 4,
      Math.round(o.turnsPerSession * (1 + TURN_COUNT_JITTER * (2 * fill.next() - 1))),
    )
    conversation[`session_${s + 1}_date_time`] = formatLocomoDate(times[s])
    conversation[`session_${s + 1}`] = renderSession(fill, s, people, sessionFacts, target, lexicon, o.noiseWords)
  }
  return {sample_id: id, conversation, qa: qa.map(ordered)}
}

function makePerson(rng: Rng, name: string, relative: string): Person {
  const cities = rng.shuffle([...CITIES])
  const jobs = rng.shuffle([...JOBS])
  const hobbies = rng.shuffle([...HOBBIES])
  return {
    name,
    relation: RELATIONS[rng.int(RELATIONS.length)],
    relative,
    relativeCity: cities[3],
    relativeJob: jobs[2],
    pet: {kind: PET_KINDS[rng.int(PET_KINDS.length)], name: PET_NAMES[rng.int(PET_NAMES.length)]},
    cities: cities.slice(0, 2),
    jobs: jobs.slice(0, 2),
    hobbies: hobbies.slice(0, 2),
  }
}

/** A question with LoCoMo's key order and its evidence in conversation order. */
function ordered(q: LocomoQa): LocomoQa {
  const evidence = [...q.evidence].sort((a, b) => compareDiaIds(a, b))
  if (q.category === CATEGORY.adversarial)
    return {question: q.question, evidence, category: q.category, adversarial_answer: q.adversarial_answer}
  return {question: q.question, answer: q.answer, evidence, category: q.category}
}

function compareDiaIds(a: string, b: string): number {
  const [sa, ta] = a.slice(1).split(':').map(Number)
  const [sb, tb] = b.slice(1).split(':').map(Number)
  return sa - sb || ta - tb
}

/** "a" or "an" before a word (by its first letter; enough for the job list). */
function article(word: string): string {
  return /^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`
}

/** Distinct sessions in [low, high), in increasing order. */
function pickSessions(rng: Rng, count: number, low: number, high: number): number[] {
  const pool: number[] = []
  for (let s = low; s < high; s++) pool.push(s)
  return rng
    .shuffle(pool)
    .slice(0, count)
    .sort((a, b) => a - b)
}

/**
 * Plans one person's facts over the sessions and the questions about them. Each question's
 * evidence is filled in when its facts are rendered (their dia_ids are known only then).
 */
function planFacts(
  rng: Rng,
  p: Person,
  other: Person,
  who: 0 | 1,
  sessions: number,
  facts: PlannedFact[],
  qa: LocomoQa[],
  dateOf: (diaId: string) => string,
): void {
  const say = (session: number, text: string, ...refs: Array<(id: string) => void>): void => {
    facts.push({session, speaker: who, text, onTurn: (id) => refs.forEach((r) => r(id))})
  }
  /** A question whose evidence slots are filled as facts render. */
  const ask = (
    question: string,
    category: LocomoQa['category'],
    slots: number,
    answer: (ids: string[]) => string,
  ): Array<(id: string) => void> => {
    const q: LocomoQa = {question, evidence: new Array<string>(slots).fill(''), category}
    qa.push(q)
    let filled = 0
    return Array.from({length: slots}, (_, i) => (id: string) => {
      q.evidence[i] = id
      if (++filled === slots) {
        if (category === CATEGORY.adversarial) q.adversarial_answer = answer(q.evidence)
        else q.answer = answer(q.evidence)
      }
    })
  }
  const half = Math.floor(sessions / 2)
  // City: lives in one, moves to another later (a changing attribute).
  const [cityIntro] = pickSessions(rng, 1, 0, 2)
  const move = half + rng.int(sessions - half)
  const [moveNow] = ask(`Where does ${p.name} live now?`, CATEGORY.singleHop, 1, () => p.cities[1])
  const [moveWhen] = ask(`When did ${p.name} move to ${p.cities[1]}?`, CATEGORY.temporal, 1, (ids) => dateOf(ids[0]))
  say(cityIntro, `I have been living in ${p.cities[0]} for a few years now, I love the old town.`)
  say(move, `Big news: we finally moved to ${p.cities[1]}! Boxes everywhere.`, moveNow, moveWhen)
  // Job: one job, then a change.
  const [jobStart, jobChange] = pickSessions(rng, 2, 0, sessions)
  const [jobNow] = ask(`What does ${p.name} do for work now?`, CATEGORY.singleHop, 1, () => p.jobs[1][0])
  const [jobWhen] = ask(`When did ${p.name} start working as ${article(p.jobs[1][0])}?`, CATEGORY.temporal, 1, (ids) =>
    dateOf(ids[0]),
  )
  say(jobStart, `These days I work as ${article(p.jobs[0][0])} ${p.jobs[0][1]}.`)
  say(
    jobChange,
    `I quit my old job and started as ${article(p.jobs[1][0])} ${p.jobs[1][1]} this week.`,
    jobNow,
    jobWhen,
  )
  // Pet: adopted, then an anecdote naming only the pet (a two-hop chain).
  const [adopt, anecdote] = pickSessions(rng, 2, 0, sessions)
  const [petName] = ask(`What is the name of ${p.name}'s ${p.pet.kind}?`, CATEGORY.singleHop, 1, () => p.pet.name)
  const [petChain1, petChain2] = ask(
    `What did ${p.name}'s ${p.pet.kind} chew up?`,
    CATEGORY.multiHop,
    2,
    () => 'a pair of sneakers',
  )
  say(adopt, `I adopted a ${p.pet.kind} from the shelter, we named it ${p.pet.name}.`, petName, petChain1)
  say(anecdote, `${p.pet.name} chewed up my new sneakers while I was out, unbelievable.`, petChain2)
  // Relative: where they live, later their new job without the relation word (multi-hop).
  const [relIntro, relJob] = pickSessions(rng, 2, 0, sessions)
  const [relCity] = ask(
    `In which city does ${p.name}'s ${p.relation} live?`,
    CATEGORY.singleHop,
    1,
    () => p.relativeCity,
  )
  const [relChain1, relChain2] = ask(
    `What job did ${p.name}'s ${p.relation} get?`,
    CATEGORY.multiHop,
    2,
    () => p.relativeJob[0],
  )
  say(
    relIntro,
    `My ${p.relation} ${p.relative} lives in ${p.relativeCity}, we visit each other every summer.`,
    relCity,
    relChain1,
  )
  say(relJob, `${p.relative} got hired as ${article(p.relativeJob[0])} ${p.relativeJob[1]}, so proud.`, relChain2)
  // Hobbies: each started in one session, with an achievement later that does not name it.
  const gather = ask(`What hobbies has ${p.name} picked up?`, CATEGORY.multiHop, p.hobbies.length, () =>
    p.hobbies.map((h) => h.activity).join(', '),
  )
  // Adversarial: this person's first hobby attributed to the other speaker (LoCoMo category 5).
  const [adversarial] = ask(
    `When did ${other.name} start ${p.hobbies[0].activity}?`,
    CATEGORY.adversarial,
    1,
    () => `${other.name} did not; ${p.name} did`,
  )
  p.hobbies.forEach((h, i) => {
    const [start, made] = pickSessions(rng, 2, 0, sessions)
    const [when] = ask(`When did ${p.name} start ${h.activity}?`, CATEGORY.temporal, 1, (ids) => dateOf(ids[0]))
    const [infer1, infer2] = ask(
      `Would ${p.name} enjoy ${h.related}?`,
      CATEGORY.openDomain,
      2,
      () => `Likely yes; ${p.name} does ${h.activity}`,
    )
    const refs = i === 0 ? [when, infer1, gather[i], adversarial] : [when, infer1, gather[i]]
    say(start, `Guess what, I ${h.start}.`, ...refs)
    say(made, `I ${h.made} yesterday!`, infer2)
  })
}

/** Session start times: pinned first day, 3-21 days apart, a whole minute between 8:00 and 21:59 UTC. */
function sessionTimes(rng: Rng, sessions: number, startDate: string): number[] {
  let day = Date.parse(`${startDate}T00:00:00Z`)
  if (Number.isNaN(day)) throw new RangeError(`memory synth: startDate must be an ISO date, got ${startDate}`)
  const out: number[] = []
  for (let s = 0; s < sessions; s++) {
    if (s > 0) day += (SESSION_GAP_DAYS.min + rng.int(SESSION_GAP_DAYS.max - SESSION_GAP_DAYS.min + 1)) * MS_PER_DAY
    out.push(day + (SESSION_HOURS.first + rng.int(SESSION_HOURS.count)) * 3_600_000 + rng.int(60) * 60_000)
  }
  return out
}

/** "8 May 2023": how LoCoMo answers temporal questions. */
function formatDay(time: number): string {
  const full = formatLocomoDate(time)
  return full.slice(full.indexOf(' on ') + 4).replace(',', '')
}

/**
 * One session: an opener and its reply, the planned facts each followed by the other speaker's
 * reply, small talk in between, and a closer; speakers alternate where the plan allows.
 */
function renderSession(
  rng: Rng,
  s: number,
  people: [Person, Person],
  facts: PlannedFact[],
  target: number,
  lexicon: NoiseLexicon | undefined,
  noiseWords: number,
): LocomoTurn[] {
  const turns: LocomoTurn[] = []
  const push = (who: 0 | 1, text: string): string => {
    const id = `D${s + 1}:${turns.length + 1}`
    turns.push({speaker: people[who].name, dia_id: id, text})
    return id
  }
  const opener = (s % 2) as 0 | 1
  push(opener, pick(rng, OPENERS).replace('{other}', people[1 - opener].name))
  push((1 - opener) as 0 | 1, pick(rng, OPENER_REPLIES))
  const fillerSlots = Math.max(0, target - 3 - facts.length * 2)
  const order = rng.shuffle([
    ...facts.map((f) => ({fact: f as PlannedFact | undefined})),
    ...Array.from({length: Math.ceil(fillerSlots / 2)}, () => ({fact: undefined})),
  ])
  for (const {fact} of order) {
    if (fact) {
      fact.onTurn(push(fact.speaker, fact.text))
      const reply = pick(rng, REPLIES)
      push(
        (1 - fact.speaker) as 0 | 1,
        rng.next() < 0.3 ? `${reply} ${people[fact.speaker].name}, you deserve it.` : reply,
      )
    } else {
      const who = rng.int(2) as 0 | 1
      const noise = lexicon ? ` ${lexicon.words(rng, noiseWords)}` : ''
      push(who, `${pick(rng, FILLERS)}${noise}`)
      push((1 - who) as 0 | 1, pick(rng, REPLIES))
    }
  }
  push(rng.int(2) as 0 | 1, pick(rng, CLOSERS))
  return turns
}

function pick<T>(rng: Rng, list: readonly T[]): T {
  return list[rng.int(list.length)]
}

/** Seeded pronounceable pseudo-words with Zipf-distributed frequencies (benchmark corpora only). */
class NoiseLexicon {
  private readonly words_: string[]
  private readonly cumulative: Float64Array

  constructor(rng: Rng) {
    const syllables = [
      'ka',
      'lo',
      'mi',
      'ren',
      'to',
      'sa',
      'vu',
      'del',
      'pi',
      'nor',
      'ga',
      'shi',
      'bre',
      'tam',
      'qui',
      'fen',
      'ju',
      'zo',
      'lat',
      'mer',
    ]
    const seen = new Set<string>()
    this.words_ = []
    while (this.words_.length < NOISE_LEXICON) {
      const n = 2 + rng.int(3)
      let w = ''
      for (let i = 0; i < n; i++) w += syllables[rng.int(syllables.length)]
      if (!seen.has(w)) {
        seen.add(w)
        this.words_.push(w)
      }
    }
    this.cumulative = new Float64Array(NOISE_LEXICON)
    let total = 0
    for (let r = 0; r < NOISE_LEXICON; r++) {
      total += 1 / Math.pow(r + 1, ZIPF_EXPONENT)
      this.cumulative[r] = total
    }
    for (let r = 0; r < NOISE_LEXICON; r++) this.cumulative[r] /= total
  }

  words(rng: Rng, count: number): string {
    const out: string[] = []
    for (let i = 0; i < count; i++) {
      const u = rng.next()
      let lo = 0
      let hi = NOISE_LEXICON - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (this.cumulative[mid] < u) lo = mid + 1
        else hi = mid
      }
      out.push(this.words_[lo])
    }
    return out.join(' ')
  }
}

/** The dataset as JSON text: two-space indentation and a final newline (stable bytes). */
export function memoryDatasetJson(samples: readonly LocomoSample[]): string {
  return `${JSON.stringify(samples, null, 2)}\n`
}
