// Your engine behind kt's http protocol (engine.json, evaluate.kind "http"): one POST per trial.
// kt POSTs {config, budget, tier, trial_id, seed} and expects a JSON object of metrics. This server
// evaluates a trial by running eval.mjs with the trial's parameters in its environment
// (NODEMEM_<NAME>, e.g. bm25.k1 -> NODEMEM_BM25_K1), so eval.mjs stays the one evaluation.
// Start it before kt search, and leave it running:   node server.mjs --port 8765
import {execFile} from 'node:child_process'
import {createServer} from 'node:http'
import {fileURLToPath} from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))
const portFlag = process.argv.indexOf('--port')
const port = portFlag > 0 ? Number(process.argv[portFlag + 1]) : 8765

function evaluate(request) {
  const env = {...process.env, KT_TIER: String(request.tier ?? ''), KT_BUDGET: String(request.budget ?? '')}
  for (const [name, value] of Object.entries(request.config ?? {}))
    env[`NODEMEM_${name.toUpperCase().replaceAll('.', '_')}`] = String(value)
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['eval.mjs'], {cwd: here, env}, (error, stdout) =>
      error ? reject(error) : resolve(stdout.trim().split('\n').at(-1)),
    ),
  )
}

createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', async () => {
    let body
    try {
      body = await evaluate(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      res.writeHead(200, {'content-type': 'application/json'})
    } catch (error) {
      // the trial fails with this message; the server keeps serving
      body = JSON.stringify({error: String(error)})
      res.writeHead(500, {'content-type': 'application/json'})
    }
    res.end(body)
  })
}).listen(port, '127.0.0.1', () => process.stderr.write(`engine on http://127.0.0.1:${port}\n`))
