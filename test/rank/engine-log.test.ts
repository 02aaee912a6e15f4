import {describe, expect, it} from 'vitest'
import {parseMemoryDataset} from '../../src/data/conversations/load.js'
import {defaultRetrievalConfig} from '../../src/engine/retrieval/engine.js'
import {CANDIDATE_FEATURES} from '../../src/engine/retrieval/space.js'
import {engineFeatureLogs} from '../../src/rank/engine-log.js'
import {engineReranker} from '../../src/rank/apply.js'
import {fromSavedModel, readModel} from '../../src/rank/model.js'
import {RetrievalEngine} from '../../src/engine/retrieval/engine.js'
import {candidateFeatures} from '../../src/engine/retrieval/features.js'
import {parseFeatureLog} from '../../src/rank/parse.js'
import {layoutNames, rerankerInputs} from '../../src/rank/query-features.js'
import {runTrainReport} from '../../src/rank/report.js'
import {deploy} from '../../src/rank/deploy.js'
import {DEFAULT_LAMBDAMART, predictRow} from '../../src/rank/lambdamart.js'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

/** A small LoCoMo-format dataset written for this test: three conversations about hobbies. */
function conversation(id: string, a: string, b: string, topic: string, place: string, thing: string) {
  return {
    sample_id: id,
    conversation: {
      speaker_a: a,
      speaker_b: b,
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        {speaker: a, dia_id: 'D1:1', text: `I started ${topic} classes last week.`},
        {speaker: b, dia_id: 'D1:2', text: `Nice! Where are the ${topic} classes?`},
        {speaker: a, dia_id: 'D1:3', text: `At the studio near ${place}.`},
        {speaker: b, dia_id: 'D1:4', text: 'Sounds lovely, good luck.'},
      ],
      session_2_date_time: '12:05 am on 1 June, 2023',
      session_2: [
        {speaker: b, dia_id: 'D2:1', text: `How is the ${topic} going?`},
        {speaker: a, dia_id: 'D2:2', text: `I made a ${thing} for my sister Cleo.`},
        {speaker: b, dia_id: 'D2:3', text: `A ${thing}! She must love it.`},
      ],
    },
    qa: [
      {question: `Where does ${a} take ${topic} classes?`, answer: place, evidence: ['D1:3'], category: 4},
      {question: `What did ${a} make for Cleo?`, answer: thing, evidence: ['D2:2'], category: 1},
      {question: `When did ${a} start ${topic}?`, answer: 'May 2023', evidence: ['D1:1'], category: 2},
    ],
  }
}

const text = JSON.stringify([
  conversation('c1', 'Ann', 'Bo', 'pottery', 'Lake Merritt', 'vase'),
  conversation('c2', 'Dee', 'Eli', 'painting', 'the harbour', 'portrait'),
  conversation('c3', 'Fay', 'Gus', 'weaving', 'the old mill', 'scarf'),
])
const dataset = parseMemoryDataset('hobbies.json', text, {format: 'locomo'})

describe('engine feature logs', () => {
  const logs = engineFeatureLogs(dataset, defaultRetrievalConfig(), {pool: 5, seed: 3, testConversations: ['c2']})
  const parsed = Object.fromEntries(logs.splits.map((s) => [s.split, parseFeatureLog(s.text, `${s.split}.jsonl`)]))

  it("writes kt feature logs with the engine's twelve features and its fused score", () => {
    for (const split of ['train', 'valid', 'test']) {
      expect(parsed[split].featureNames).toEqual([...CANDIDATE_FEATURES])
      expect(parsed[split].engineScores?.length).toBe(parsed[split].labels.length)
      expect(parsed[split].pool).toBe(5)
    }
    expect(logs.splits.map((s) => s.queries)).toEqual([4, 2, 3])
    expect(logs.splits.reduce((n, s) => n + s.candidates, 0)).toBe(9 * 5)
  })

  it('labels exactly the evidence turns 1 and holds out the chosen conversation', () => {
    const test = logs.splits.find((s) => s.split === 'test')!
    expect(test.conversations).toEqual(['c2'])
    for (const s of logs.splits.filter((x) => x.split !== 'test')) expect(s.conversations).not.toContain('c2')
    const evidence: Record<string, string> = {q0: 'D1:3', q1: 'D2:2', q2: 'D1:1'}
    for (const line of logs.splits.flatMap((s) => s.text.trim().split('\n'))) {
      const record = JSON.parse(line) as {qid: string; doc: string; label: number}
      expect(record.label).toBe(record.doc === evidence[record.qid.split('/')[1]] ? 1 : 0)
    }
  })

  it('is deterministic and feeds kt rerank train, which then reports the engine as a baseline', () => {
    const again = engineFeatureLogs(dataset, defaultRetrievalConfig(), {pool: 5, seed: 3, testConversations: ['c2']})
    expect(again.splits.map((s) => s.text)).toEqual(logs.splits.map((s) => s.text))
    const dir = mkdtempSync(join(tmpdir(), 'kt-rank-log-'))
    for (const s of logs.splits) writeFileSync(join(dir, `${s.split}.jsonl`), s.text)
    const report = runTrainReport({
      files: {train: join(dir, 'train.jsonl'), test: join(dir, 'test.jsonl')},
      params: {...DEFAULT_LAMBDAMART, trees: 3, minDataInLeaf: 2},
      seed: 1,
    })
    expect(Object.keys(report.baselines.engine!)).toEqual(['train', 'test'])
    expect(report.importance.map((f) => f.feature).sort()).toEqual([...CANDIDATE_FEATURES].sort())
    const stacked = runTrainReport({
      files: {train: join(dir, 'train.jsonl'), test: join(dir, 'test.jsonl')},
      params: {...DEFAULT_LAMBDAMART, trees: 3, minDataInLeaf: 2},
      seed: 1,
      engineScoreFeature: true,
    })
    expect(stacked.importance.map((f) => f.feature)).toContain('engine_score')
    expect(Object.keys(stacked.baseline_models.linear.weights)).toEqual([...CANDIDATE_FEATURES, 'engine_score'])
    const letor = join(dir, 'plain.txt')
    writeFileSync(letor, '1 qid:1 1:1\n0 qid:1 1:0\n')
    expect(() =>
      runTrainReport({files: {train: letor}, params: DEFAULT_LAMBDAMART, seed: 1, engineScoreFeature: true}),
    ).toThrow(/plain.txt: expected a kt feature log with engine_score on every line/)
  })

  it("a saved model reranks the engine's candidate rows by its packed scores", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kt-rank-apply-'))
    for (const s of logs.splits) writeFileSync(join(dir, `${s.split}.jsonl`), s.text)
    const modelPath = join(dir, 'model.json')
    runTrainReport({
      files: {train: join(dir, 'train.jsonl')},
      params: {...DEFAULT_LAMBDAMART, trees: 5, minDataInLeaf: 2},
      seed: 1,
      save: modelPath,
      engineScoreFeature: true,
    })
    const reranker = engineReranker(readModel(modelPath), modelPath)
    expect(reranker.usesEngineScore).toBe(true)
    const engine = new RetrievalEngine(dataset.conversations[0])
    const rows = candidateFeatures(engine, 'Where does Ann take pottery classes?', defaultRetrievalConfig(), 5)
    const reranked = reranker.rerank(rows)
    expect(reranked.map((r) => r.row.id).sort()).toEqual(rows.map((r) => r.id).sort())
    for (let i = 1; i < reranked.length; i++) expect(reranked[i - 1].score).toBeGreaterThanOrEqual(reranked[i].score)
    // Exactly the trainer's own prediction on the same row.
    const row = Float64Array.from([...rows[0].features, rows[0].score])
    expect(reranker.scoreAll(rows)[0]).toBe(predictRow(fromSavedModel(readModel(modelPath)), row, 0))
    const letorModel = {...readModel(modelPath), feature_names: ['1', '2']}
    expect(() => engineReranker(letorModel, 'm.json')).toThrow(
      /m.json field feature_names: expected the engine's features/,
    )
  })

  it('logs query-level columns with the code the reranker runs at query time: logged rows score like served ones', () => {
    const withQuery = engineFeatureLogs(dataset, defaultRetrievalConfig(), {
      pool: 5,
      seed: 3,
      testConversations: ['c2'],
      queryFeatures: ['qmax', 'qrank'],
    })
    const dir = mkdtempSync(join(tmpdir(), 'kt-rank-qf-'))
    for (const s of withQuery.splits) writeFileSync(join(dir, `${s.split}.jsonl`), s.text)
    const train = parseFeatureLog(withQuery.splits[0].text, 'train.jsonl')
    expect(train.featureNames).toEqual(layoutNames({queryFeatures: ['qmax', 'qrank'], engineScore: false}))
    const modelPath = join(dir, 'model.json')
    runTrainReport({
      files: {train: join(dir, 'train.jsonl'), valid: join(dir, 'valid.jsonl'), test: join(dir, 'test.jsonl')},
      params: {...DEFAULT_LAMBDAMART, trees: 5, minDataInLeaf: 2},
      seed: 1,
      save: modelPath,
      engineScoreFeature: true,
    })
    const saved = readModel(modelPath)
    // the deploy gate re-scores on the held-out log (the recorded test file): engine score appended, columns by name, the same number as training
    expect(deploy(join(dir, 'registry'), modelPath).candidate_ndcg10).toBe(saved.metrics.test['ndcg@10'])
    const heldOut = parseFeatureLog(withQuery.splits[2].text, join(dir, 'test.jsonl'))
    expect(() => deploy(join(dir, 'registry2'), modelPath, {holdout: {...heldOut, pool: 9}})).toThrow(
      `${join(dir, 'test.jsonl')} field pool: expected 5, the pool ${modelPath}'s query-level columns were computed over, got 9`,
    )
    // the log's pool, which the rank and max columns were computed over, is saved with the model
    expect(saved.pool).toBe(5)
    const reranker = engineReranker(saved, modelPath)
    expect(reranker.layout).toEqual({queryFeatures: ['qmax', 'qrank'], engineScore: true})
    // every test-split query: the trainer's prediction on the logged line = the served score
    const test = parseFeatureLog(withQuery.splits[2].text, 'test.jsonl')
    const width = test.featureNames.length
    const trainer = fromSavedModel(saved)
    const engine = new RetrievalEngine(dataset.conversations.find((c) => c.id === 'c2')!)
    const questions = dataset.questions.filter((q) => q.conversation === 'c2')
    expect(test.queryIds).toEqual(questions.map((q) => q.id))
    questions.forEach((q, i) => {
      const rows = candidateFeatures(engine, q.text, defaultRetrievalConfig(), 5)
      const loggedRows = test.features.subarray(test.queryOffsets[i] * width, test.queryOffsets[i + 1] * width)
      expect(Array.from(rerankerInputs(rows, {queryFeatures: ['qmax', 'qrank'], engineScore: false}))).toEqual(
        Array.from(loggedRows),
      )
      const served = reranker.scoreAll(rows)
      for (let d = test.queryOffsets[i]; d < test.queryOffsets[i + 1]; d++) {
        const logged = Float64Array.from([...test.features.subarray(d * width, (d + 1) * width), test.engineScores![d]])
        expect(served[d - test.queryOffsets[i]]).toBe(predictRow(trainer, logged, 0))
      }
    })
  })

  it('rejects an unknown held-out conversation', () => {
    expect(() =>
      engineFeatureLogs(dataset, defaultRetrievalConfig(), {pool: 5, seed: 3, testConversations: ['c9']}),
    ).toThrow(/--test-conversations: expected conversations with scored questions \(c1, c2, c3\), got c9/)
  })
})
