"""Your engine behind kt's http protocol (engine.json, evaluate.kind "http"): one POST per trial.

kt POSTs {"config", "budget", "tier", "trial_id", "seed"} and expects a JSON object of metrics.
This server evaluates a trial by running eval.py with the trial's parameters in its environment
(MEMENGINE_<NAME>, e.g. bm25.k1 -> MEMENGINE_BM25_K1), so eval.py stays the one evaluation.
Start it before kt search, and leave it running:   python3 server.py --port 8765
"""
import argparse
import json
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))


def evaluate(request):
    env = dict(os.environ, KT_TIER=str(request.get("tier") or ""), KT_BUDGET=str(request.get("budget") or ""))
    for name, value in (request.get("config") or {}).items():
        env["MEMENGINE_" + name.upper().replace(".", "_")] = str(value)
    done = subprocess.run([sys.executable, "eval.py"], cwd=HERE, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: kt reuses the connection
    # one TCP segment per reply: without it every reply waits on Nagle plus a delayed ACK (~40 ms)
    disable_nagle_algorithm = True

    def do_POST(self):
        try:
            body, status = evaluate(json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))).encode(), 200
        except Exception as e:  # the trial fails with this message; the server keeps serving
            body, status = json.dumps({"error": f"{type(e).__name__}: {e}"}).encode(), 500
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    port = parser.parse_args().port
    print(f"engine on http://127.0.0.1:{port}", file=sys.stderr, flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
