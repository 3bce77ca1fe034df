// {{name}}: an acp-gate permission plugin. Asks before any command that mentions one of the
// words in its config; abstains on everything else.
//
// WIT types in JavaScript (componentize-qjs): records are objects with camelCase keys, enums
// are strings ("execute"), a verdict is { tag: "ask", val: "why" } or { tag: "abstain" }, and
// throwing a string returns the `err` case (the host then applies on_error).

import log from "acp-gate:plugin/log@0.1.0";

export const handler = {
  evaluate(request, configText) {
    const config = JSON.parse(configText);
    const words = config.words ?? [];
    if (!Array.isArray(words)) throw "invalid [handler.config]: `words` must be a list";
    if (request.kind !== "execute" || !request.command) return { tag: "abstain" };
    const text = request.command.shell ?? (request.command.argv ?? []).join(" ");
    const word = words.find((w) => text.includes(w));
    if (word === undefined) return { tag: "abstain" };
    log.write("info", `matched \`${word}\``);
    return { tag: "ask", val: `the command mentions \`${word}\`` };
  },
};
