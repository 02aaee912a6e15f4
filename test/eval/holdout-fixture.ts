/**
 * A small LoCoMo-format dataset written for the held-out validation tests (no LoCoMo text): each
 * conversation states a few rare facts early ("Ana keeps a quokka called Ziggurat") and then
 * repeats common words ("Ana mentioned the weekend plans again") in many later turns. The
 * questions name the rare word, so a lexical ranking finds the fact, while a configuration that
 * ranks the text-matching turns by recency alone buries it under the later chatter.
 */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

const NAMES = [
  ['Cy', 'Dee'],
  ['Al', 'Bea'],
  ['Ed', 'Fay'],
  ['Jo', 'Hal'],
  ['Bo', 'Ivy'],
  ['Lu', 'Kai'],
] as const
const RARE = [
  'ziggurat',
  'quokka',
  'marimba',
  'origami',
  'sextant',
  'kayak',
  'fondue',
  'glacier',
  'tuba',
  'bonsai',
  'falcon',
  'lantern',
]
const SESSIONS = 6
const TURNS_PER_SESSION = 10
const FACTS = 8

/** Conversations whose speakers have longer names: BAD_CONFIG happens to keep their facts (a partial loss, for margin tests). */
const LONG_NAMES = [
  ['Ana', 'Bert'],
  ['Olga', 'Emil'],
  ['Rosa', 'Theo'],
] as const

/**
 * Writes the dataset into `dir` and returns its path and conversation ids: `conversations` on
 * which BAD_CONFIG loses every fact, then `kept` on which it loses none.
 */
export function writeHoldoutFixture(
  dir: string,
  conversations = 6,
  kept = 0,
  name = 'holdout-fixture.json',
): {file: string; ids: string[]} {
  const samples = []
  for (let c = 0; c < conversations + kept; c++) {
    const [a, b] = c < conversations ? NAMES[c % NAMES.length] : LONG_NAMES[(c - conversations) % LONG_NAMES.length]
    const conversation: Record<string, unknown> = {speaker_a: a, speaker_b: b}
    const qa = []
    let fact = 0
    for (let s = 1; s <= SESSIONS; s++) {
      conversation[`session_${s}_date_time`] = `10:00 am on ${s + 1} March, 2023`
      const turns = []
      for (let t = 1; t <= TURNS_PER_SESSION; t++) {
        const speaker = t % 2 === 1 ? a : b
        const id = `D${s}:${t}`
        // the facts sit in the first two sessions, the chatter everywhere after them
        if (s <= 2 && t % 2 === 1 && fact < FACTS) {
          const word = RARE[(fact + c) % RARE.length]
          turns.push({
            speaker,
            dia_id: id,
            text: `${a} mentioned that the ${word} number ${fact + 1} is kept in the shed.`,
          })
          qa.push({
            question: `Did ${a} mention the weekend plans again, or where the ${word} number ${fact + 1} is kept?`,
            answer: 'in the shed',
            evidence: [id],
            category: 4,
          })
          fact++
        } else
          turns.push({
            speaker,
            dia_id: id,
            text: `${a} mentioned the weekend plans again: plans, plans and more weekend plans, where the number of plans kept growing.`,
          })
      }
      conversation[`session_${s}`] = turns
    }
    samples.push({sample_id: `hold-${c + 1}`, conversation, qa})
  }
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(samples))
  return {file, ids: samples.map((s) => s.sample_id)}
}

/**
 * A deliberately bad configuration (found by sampling the space on this fixture): the graph
 * dominates the fused score, seeded by only two text matches with a high firing threshold and
 * PageRank mixed in, so facts the two seeds miss drop out of the top 10.
 */
export const BAD_CONFIG = {
  'bm25.k1': 2.47,
  'bm25.b': 0.276,
  'seeds.count': 2,
  'seeds.entity': 0.844,
  'spread.retention': 0.849,
  'spread.max_depth': 3,
  'spread.fan_out': 55,
  'spread.threshold': 0.247,
  'spread.inhibition': 0.07,
  'edge.episodic': 0.335,
  'edge.semantic': 0.141,
  'edge.temporal': 0.031,
  'edge.hierarchical': 0.619,
  'edge.associative': 0.709,
  'actr.decay': 0.377,
  'actr.alpha': 0.1,
  'ppr.enabled': true,
  'ppr.teleport': 0.459,
  'ppr.iterations': 10,
  'ppr.mix': 0.817,
  'fusion.bm25': 0.16,
  'fusion.vector': 0.18,
  'fusion.graph': 0.66,
  'speaker.boost': 0.523,
  'router.enabled': false,
} as const

/** A reasonable configuration: more weight on BM25 than the defaults give it, the rest unchanged. */
export const GOOD_CONFIG = {'bm25.k1': 1.2, 'fusion.bm25': 0.6, 'fusion.vector': 0.2, 'fusion.graph': 0.2} as const
