// A scripted ACP agent that speaks protocol v2 (the published draft) as raw JSON-RPC lines, for
// acp-gate's end-to-end tests. No SDK: the point is the wire shapes.
//
//   node v2-agent.mjs [--answer-version N]
//
// `initialize` is answered with version N (default: the version offered, at most 2).
// `session/new` opens session "v2-session"; `session/resume` and `session/load` reopen the one
// named. Each prompt asks, one after another, and reports each answer in an
// agent_message_chunk line "STEP <name> <answer>":
//   edit      a `tool_call` subject: an edit of src/lib.rs (allowed by the default chain)
//   rm        a `command` subject: `rm -rf ~` (denied)
//   cargo     a `command` subject: `cargo test` (allowed)
//   untitled  no subject: the title alone (asked about)
//   unknown   a subject of a type acp-gate does not know, titled like an allowed command
//   openenum  the edit again, offering allow only under an implementation-specific kind
//   broken    a `command` subject without its `cwd` (unreadable)
//   named     a `tool_call` subject whose tool call's `name` is `Deploy`
// then ends the turn. The prompt "withdraw" asks about `terraform apply` (asked about), then
// withdraws that request with `$/cancel_request` unless it was answered within 300 ms, and
// reports what it was answered; "elicit" asks the user a question (`elicitation/create`) and
// reports the action; "hello" asks nothing.
import { createInterface } from "node:readline";

const args = process.argv.slice(2);
const answerVersion = args[0] === "--answer-version" ? Number(args[1]) : null;
let cwd = process.cwd();
let nextId = 1;
const pending = new Map();

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

function request(method, params) {
  const id = `agent-${nextId++}`;
  send({ id, method, params });
  return { id, answer: new Promise((resolve) => pending.set(id, resolve)) };
}

function say(sessionId, text) {
  send({
    method: "session/update",
    params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${text}\n` } } },
  });
}

const options = [
  { optionId: "allow-once", name: "Allow", kind: "allow_once" },
  { optionId: "allow-always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
  { optionId: "_vendor-later", name: "Later", kind: "_vendor_defer" },
];

function describe(message) {
  if (message.error) return `error:${message.error.message}`;
  const outcome = message.result.outcome;
  return outcome.outcome === "selected" ? `selected:${outcome.optionId}` : outcome.outcome;
}

async function ask(sessionId, name, params) {
  const { answer } = request("session/request_permission", { sessionId, options, ...params });
  say(sessionId, `STEP ${name} ${describe(await answer)}`);
}

async function prompt(sessionId, text) {
  if (text === "withdraw") {
    const { id, answer } = request("session/request_permission", {
      sessionId,
      title: "terraform apply",
      subject: { type: "command", command: "terraform apply", cwd },
      options,
    });
    const timer = setTimeout(() => send({ method: "$/cancel_request", params: { requestId: id } }), 300);
    const answered = await answer;
    clearTimeout(timer);
    say(sessionId, `STEP withdraw ${describe(answered)}`);
    return;
  }
  if (text === "elicit") {
    const { answer } = request("elicitation/create", {
      sessionId,
      mode: "form",
      message: "Which branch should I push to?",
      requestedSchema: { type: "object", properties: { branch: { type: "string" } }, required: ["branch"] },
    });
    const answered = await answer;
    say(sessionId, `STEP elicit ${answered.error ? "error" : answered.result.action}`);
    return;
  }
  if (text === "hello") return;
  const edit = {
    toolCallId: "call-edit",
    title: "Edit src/lib.rs",
    kind: "edit",
    rawInput: { file_path: `${cwd}/src/lib.rs`, old_string: "old", new_string: "new" },
  };
  // W3C trace context of the agent's span, to be joined with the decision.
  const _meta = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "acme=1" };
  await ask(sessionId, "edit", { title: "Edit src/lib.rs", subject: { type: "tool_call", toolCall: edit }, _meta });
  await ask(sessionId, "rm", { title: "rm -rf ~", subject: { type: "command", command: "rm -rf ~", cwd, toolCallId: "call-rm" } });
  await ask(sessionId, "cargo", { title: "cargo test", subject: { type: "command", command: "cargo test", cwd, terminalId: "term-1" } });
  await ask(sessionId, "untitled", { title: "Tidy up the repository", description: "removes what looks unused" });
  await ask(sessionId, "unknown", { title: "cargo test", subject: { type: "_vendor_sandboxed_job", job: { image: "x" } } });
  const vendorOnly = [
    { optionId: "_vendor-allow", name: "Allow", kind: "_vendor_allow" },
    { optionId: "reject", name: "Reject", kind: "reject_once" },
  ];
  const { answer } = request("session/request_permission", {
    sessionId,
    title: "Edit src/lib.rs",
    subject: { type: "tool_call", toolCall: edit },
    options: vendorOnly,
  });
  say(sessionId, `STEP openenum ${describe(await answer)}`);
  await ask(sessionId, "broken", { title: "ls", subject: { type: "command", command: "ls" } });
  await ask(sessionId, "named", {
    title: "Ship it",
    subject: { type: "tool_call", toolCall: { toolCallId: "call-deploy", title: "Ship it", kind: "other", name: "Deploy" } },
  });
}

const lines = createInterface({ input: process.stdin });
lines.on("line", async (line) => {
  const message = JSON.parse(line);
  if (message.method === undefined) {
    pending.get(message.id)?.(message);
    pending.delete(message.id);
    return;
  }
  const { id, method, params } = message;
  switch (method) {
    case "initialize": {
      const version = answerVersion ?? Math.min(params.protocolVersion, 2);
      send({ id, result: { protocolVersion: version, info: { name: "v2-agent", version: "1.0.0" }, capabilities: {} } });
      break;
    }
    case "session/new":
      cwd = params.cwd;
      send({ id, result: { sessionId: "v2-session" } });
      break;
    case "session/resume":
    case "session/load":
      cwd = params.cwd;
      say(params.sessionId, `RESUMED ${method} ${params.sessionId}`);
      send({ id, result: {} });
      break;
    case "session/prompt":
      await prompt(params.sessionId, params.prompt[0].text);
      send({ id, result: { stopReason: "end_turn" } });
      break;
    default:
      if (id !== undefined) send({ id, error: { code: -32601, message: `no ${method}` } });
  }
});
