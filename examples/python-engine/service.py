"""memengine as a retrieval service: the engine only stores and ranks; kt brings the benchmark.

kt drives three messages (src/adapters/retrieval-service.ts):

    reset  {}                                                      -> {"ok": true}
    ingest {"conversation_id", "turns": [{id, speaker, text, time}], "config"} -> {"ok": true, "turns": n}
    search {"conversation_id", "query", "k", "config"}             -> {"ids": [turn ids, best first], "cost_ms": c}

`time` is an ISO 8601 UTC string or null; `config` holds the trial's parameter values (names as in
engine.json). Two transports, standard library only:

    python3 service.py --port 8765          HTTP: POST /reset, /ingest, /search (ThreadingHTTPServer, 127.0.0.1)
    python3 service.py --stdio              JSON lines: {"op": "search", ...} in, one JSON line out

`cost_ms` is the search's cost by a model over its counted work (COST_MODEL_MS), so a study of
engine.service.json (`"latency": "cost_model"`) ranks configurations by latency the same way on
every run and machine; kt keeps its own wall-clock timings apart.

A request that cannot be served answers {"error": "..."} (kt fails that trial with the message).
With --watch-stdin the HTTP server exits when its stdin closes, so it never outlives the kt that
started it (even one killed with kill -9).
"""
import argparse
import json
import os
import sys
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memengine import MemoryEngine  # noqa: E402  (the engine core, shared with eval.py)


def epoch_seconds(time):
    """memengine measures age in seconds since the epoch; a turn without a time is oldest."""
    if time is None:
        return 0.0
    if isinstance(time, (int, float)):
        return float(time)
    return datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp()


# ms per unit of counted work (memengine.search): a least-squares fit of the fastest of 7 wall
# times of 480 searches against that work, by calibrate_cost.py (python3 3.11, the kt build VM,
# 2026-12-02, R^2 0.994). A model of this engine's work, not a measurement of any one run.
COST_MODEL_MS = {"base": 0.0031, "turns": 0.00031, "scanned": 0.000052, "fused": 0.00047}


def cost_ms(work):
    return COST_MODEL_MS["base"] + sum(COST_MODEL_MS[k] * work[k] for k in ("turns", "scanned", "fused"))


class Service:
    """The three messages over one MemoryEngine; one message at a time (the engine is not thread-safe)."""

    def __init__(self):
        self.engine = MemoryEngine()
        self.lock = threading.Lock()

    def handle(self, op, msg):
        with self.lock:
            if op == "reset":
                self.engine.reset()
                return {"ok": True}
            if op == "ingest":
                turns = [{"id": t["id"], "speaker": t.get("speaker") or "", "text": t["text"], "time": epoch_seconds(t.get("time"))} for t in msg["turns"]]
                self.engine.ingest(msg["conversation_id"], turns)
                return {"ok": True, "turns": len(turns)}
            if op == "search":
                cid = msg["conversation_id"]
                if cid not in self.engine.indexes:
                    return {"error": f"conversation {cid!r} was not ingested"}
                work = {}
                ids = self.engine.search(cid, msg["query"], int(msg["k"]), msg.get("config") or {}, work)
                return {"ids": ids, "cost_ms": cost_ms(work)}
            return {"error": f"unknown message {op!r} (reset, ingest or search)"}

    def reply(self, op, msg):
        try:
            return self.handle(op, msg)
        except (KeyError, TypeError, ValueError) as e:
            return {"error": f"{op}: {type(e).__name__}: {e}"}


def serve_http(service, port, watch_stdin):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: kt sends every message over one connection
        # one TCP segment per reply: headers and body written apart would wait on delayed ACKs (~40 ms)
        disable_nagle_algorithm = True
        wbufsize = -1

        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            try:
                msg = json.loads(self.rfile.read(length) or b"{}")
                out = service.reply(self.path.strip("/"), msg)
                status = 200
            except json.JSONDecodeError as e:
                out, status = {"error": f"request is not JSON: {e}"}, 400
            body = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # quiet: kt keeps the last stderr lines for errors only
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    if watch_stdin:
        def watch():
            sys.stdin.read()  # returns at EOF: the parent is gone
            server.shutdown()
        threading.Thread(target=watch, daemon=True).start()
    print(f"memengine service on http://127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


def serve_stdio(service):
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            out = service.reply(msg.pop("op", None), msg)
        except json.JSONDecodeError as e:
            out = {"error": f"message is not JSON: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, help="serve HTTP on 127.0.0.1:PORT")
    parser.add_argument("--stdio", action="store_true", help="serve JSON lines on stdin/stdout")
    parser.add_argument("--watch-stdin", action="store_true", help="HTTP: exit when stdin closes")
    args = parser.parse_args()
    service = Service()
    if args.stdio:
        serve_stdio(service)
    elif args.port is not None:
        serve_http(service, args.port, args.watch_stdin)
    else:
        parser.error("give --port PORT or --stdio")


if __name__ == "__main__":
    main()
