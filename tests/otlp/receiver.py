"""An OTLP/HTTP receiver for acp-gate's tests, built on the official OpenTelemetry protocol
definitions (the `opentelemetry-proto` package, generated from opentelemetry-proto's .proto
files). It takes POST /v1/logs and /v1/traces with JSON bodies, parses each strictly into
ExportLogsServiceRequest / ExportTraceServiceRequest (a field the protocol does not define, or a
value of the wrong type, is refused with 400, as a collector would), and appends one JSON line
per request to the file it is given: the path, the headers, and the request as the protocol
reads it. Prints the port it listens on, then serves until killed.

    python3 tests/otlp/receiver.py OUT.jsonl
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

MESSAGES = {"/v1/logs": ExportLogsServiceRequest, "/v1/traces": ExportTraceServiceRequest}
OUT = sys.argv[1]


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        message = MESSAGES.get(self.path)
        if message is None:
            return self.answer(404, {"error": f"no such signal: {self.path}"})
        try:
            parsed = json_format.Parse(body, message())
        except json_format.ParseError as error:
            return self.answer(400, {"error": str(error)})
        line = {
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "content_type": self.headers.get("content-type", ""),
            # As the protocol reads it: ids in hex, enums by name, 64-bit integers as strings.
            "request": json_format.MessageToDict(parsed),
        }
        with open(OUT, "a") as out:
            out.write(json.dumps(line) + "\n")
        self.answer(200, {})

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
