// An exec: subject for delta-suite in JavaScript: @huggingface/tokenizers (tokenizers.js) behind the JSON-lines
// protocol v1 (subjects/exec_protocol.py). Run by the suite as:
//   fuzz --tokenizer qwen3 --subject "exec:node examples/node-subject/server.mjs"
// after `npm install` in this folder. One request per line on stdin, one answer per line on stdout.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Tokenizer } from "@huggingface/tokenizers";

const pkg = JSON.parse(readFileSync(new URL("./node_modules/@huggingface/tokenizers/package.json", import.meta.url)));
let tokenizer = null;
const sessions = new Map();
let nextSession = 1;

const ids = (text) => Array.from(tokenizer.encode(text, { add_special_tokens: false }).ids, Number);

function answer(request) {
  switch (request.op) {
    case "hello": {
      const files = request.tokenizer;
      const json = JSON.parse(readFileSync(files.tokenizer_json, "utf8"));
      const config = files.tokenizer_config_json ? JSON.parse(readFileSync(files.tokenizer_config_json, "utf8")) : {};
      tokenizer = new Tokenizer(json, config);
      return { ok: true, protocol: 1, name: "tokenizers.js", version: pkg.version, paths: ["encode", "session"] };
    }
    case "encode":
      return { ok: true, ids: ids(request.text) };
    case "session_open": // a session re-encodes the whole grown text each call (no state to go wrong)
      sessions.set(nextSession, true);
      return { ok: true, session: nextSession++ };
    case "session_encode":
      if (!sessions.has(request.session)) return { ok: false, error: "KeyError", message: "no such session" };
      return { ok: true, ids: ids(request.text) };
    case "session_close":
      sessions.delete(request.session);
      return { ok: true };
    case "bye":
      process.stdout.write(JSON.stringify({ ok: true }) + "\n", () => process.exit(0));
      return null;
    default:
      return { ok: false, error: "ValueError", message: `unknown op ${request.op}` };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (err) {
    reply = { ok: false, error: err.name || "Error", message: String(err.message || err) };
  }
  if (reply !== null) process.stdout.write(JSON.stringify(reply) + "\n");
});
lines.on("close", () => process.exit(0));
